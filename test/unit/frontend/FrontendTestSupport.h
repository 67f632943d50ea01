//===- FrontendTestSupport.h - Helpers shared by the frontend tests -*- C++ -*-===//
//
// The printed module of a model, and the check that a model failed with one error at a
// given line.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_FRONTEND_FRONTENDTESTSUPPORT_H
#define KILN_TEST_UNIT_FRONTEND_FRONTENDTESTSUPPORT_H

#include "kiln/frontend/Kiln.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

namespace kiln::dsl::frontend_test {

/// The textual MLIR of `model`'s module.
inline std::string printed(const Model &model) {
  std::string s;
  llvm::raw_string_ostream os(s);
  model.module().print(os);
  return os.str();
}

/// The single error of `model`, which must be at `line` and contain `part`.
inline void expectOneErrorAt(const Model &model, unsigned line, const std::string &part) {
  ASSERT_FALSE(model.ok());
  ASSERT_EQ(model.errors().size(), 1u) << model.errors()[0].str();
  const BuildError &error = model.errors()[0];
  EXPECT_EQ(error.line, line) << error.str();
  EXPECT_NE(error.message.find(part), std::string::npos)
      << "\"" << error.message << "\" does not contain \"" << part << "\"";
}

} // namespace kiln::dsl::frontend_test

#endif // KILN_TEST_UNIT_FRONTEND_FRONTENDTESTSUPPORT_H
