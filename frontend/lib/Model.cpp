//===- Model.cpp - The result of building a model -------------------------===//

#include "kiln/frontend/ModelBuilder.h"

using namespace kiln::dsl;

std::string BuildError::str() const {
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) +
         ": error: " + message;
}

void Model::printErrors(llvm::raw_ostream &os) const {
  for (const BuildError &e : errors_)
    os << e.str() << "\n";
}
