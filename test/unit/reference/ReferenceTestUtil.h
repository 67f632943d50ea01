//===- ReferenceTestUtil.h - Shared helpers of the interpreter tests -*- C++ -*-===//
//
// Modules come from MLIR text so that each test shows the IR it runs; expected values
// are computed in the tests from the ops' definitions, never by the interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_REFERENCE_REFERENCETESTUTIL_H
#define KILN_TEST_UNIT_REFERENCE_REFERENCETESTUTIL_H

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/ir/KilnDialect.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser.h"

#include <gtest/gtest.h>

#include <random>
#include <type_traits>

namespace kiln::reference::test {

/// Uniform values in [lo, hi) (integers: [lo, hi]), reproducible from `seed`.
template <typename T> std::vector<T> randomValues(size_t n, unsigned seed, T lo, T hi) {
  using Distribution =
      std::conditional_t<std::is_integral_v<T>, std::uniform_int_distribution<T>,
                         std::uniform_real_distribution<T>>;
  std::mt19937 rng(seed);
  Distribution dist(lo, hi);
  std::vector<T> values(n);
  for (T &v : values)
    v = dist(rng);
  return values;
}

inline std::vector<float> randomFloats(size_t n, unsigned seed, float lo = -2.0f,
                                       float hi = 2.0f) {
  return randomValues<float>(n, seed, lo, hi);
}

inline std::vector<int32_t> randomInts(size_t n, unsigned seed, int32_t lo, int32_t hi) {
  return randomValues<int32_t>(n, seed, lo, hi);
}

/// Parses kiln MLIR text and runs its entry points.
class ReferenceTest : public ::testing::Test {
protected:
  ReferenceTest() { context.loadDialect<KilnDialect>(); }

  /// Parses `text` into `module`; a parse error fails the test.
  void parse(llvm::StringRef text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    ASSERT_TRUE(module) << "could not parse:\n" << text.str();
  }

  llvm::Expected<TensorMap> runEntry(llvm::StringRef entry, const TensorMap &inputs,
                                     const TensorMap &parameters = {}) {
    return run(*module, entry, inputs, parameters);
  }

  /// The outputs of a run expected to succeed (empty, with a test failure, if not).
  TensorMap runOk(llvm::StringRef entry, const TensorMap &inputs,
                  const TensorMap &parameters = {}) {
    llvm::Expected<TensorMap> result = runEntry(entry, inputs, parameters);
    if (!result) {
      ADD_FAILURE() << "run failed: " << llvm::toString(result.takeError());
      return {};
    }
    return std::move(*result);
  }

  /// The message of a run expected to fail.
  std::string runError(llvm::StringRef entry, const TensorMap &inputs,
                       const TensorMap &parameters = {}) {
    llvm::Expected<TensorMap> result = runEntry(entry, inputs, parameters);
    if (result) {
      ADD_FAILURE() << "run succeeded but an error was expected";
      return "";
    }
    return llvm::toString(result.takeError());
  }

  /// The single output of a run of `f` with one input `arg0` (and optionally `arg1`).
  HostTensor runUnary(const HostTensor &x) {
    TensorMap out = runOk("f", {{"arg0", x}});
    return out.count("result0") ? out["result0"] : HostTensor{};
  }
  HostTensor runBinary(const HostTensor &x, const HostTensor &y) {
    TensorMap out = runOk("f", {{"arg0", x}, {"arg1", y}});
    return out.count("result0") ? out["result0"] : HostTensor{};
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// Whether `text` contains `part`, showing both when it does not.
inline ::testing::AssertionResult contains(const std::string &text,
                                           const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\n  does not contain \"" << part << "\"";
}

/// Element-by-element comparison within `tolerance` relative to max(1, |expected|).
inline void expectClose(const std::vector<float> &actual,
                        const std::vector<double> &expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tolerance * std::max(1.0, std::abs(expected[i])))
        << "at element " << i;
}

} // namespace kiln::reference::test

#endif // KILN_TEST_UNIT_REFERENCE_REFERENCETESTUTIL_H
