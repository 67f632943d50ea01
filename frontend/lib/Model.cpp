//===- Model.cpp - The result of building a model -------------------------===//

#include "kiln/frontend/ModelBuilder.h"

using namespace kiln::dsl;

/// "FILE:LINE:COLUMN: SEVERITY: MESSAGE".
static std::string diagnosticLine(const BuildError &e, const char *severity) {
  return e.file + ":" + std::to_string(e.line) + ":" + std::to_string(e.column) + ": " +
         severity + ": " + e.message;
}

std::string BuildError::str() const {
  std::string text = diagnosticLine(*this, "error");
  for (const BuildError &note : notes)
    text += "\n" + diagnosticLine(note, "note");
  return text;
}

void Model::printErrors(llvm::raw_ostream &os) const {
  for (const BuildError &e : errors_)
    os << e.str() << "\n";
}
