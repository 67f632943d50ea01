//===- LowerTestSupport.h - The fixture of the lowering tests ---*- C++ -*-===//
//
// Shared by LowerTest.cpp and LowerLayersTest.cpp: a test lowers one op, JIT-compiles
// its kernel once with the op's dynamic extents symbolic, realizes it for several
// shapes, and compares with the reference interpreter on the same one-op module:
// integers exactly, floats to max|a - b| / max|b| <= 1e-5, where infinities and NaNs
// must sit at the same elements.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_HALIDE_LOWERTESTSUPPORT_H
#define KILN_TEST_UNIT_HALIDE_LOWERTESTSUPPORT_H

#include "KernelHarness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace kiln::halide_backend::test {

inline constexpr double kTolerance = 1e-5;

/// max|a - b| / max|b| over the finite elements of `expected` (the difference when
/// they are all zeros); NaN, failing any tolerance, when an element is NaN or infinite
/// on one side and not the same on the other.
inline double relativeError(const HostTensor &actual, const HostTensor &expected) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < expected.f32.size(); ++i) {
    double a = actual.f32[i], b = expected.f32[i];
    if (std::isnan(a) != std::isnan(b) || (std::isinf(b) && a != b) ||
        (std::isinf(a) && a != b))
      return std::numeric_limits<double>::quiet_NaN();
    if (!std::isfinite(b))
      continue;
    diff = std::max(diff, std::abs(a - b));
    scale = std::max(scale, std::abs(b));
  }
  return scale == 0 ? diff : diff / scale;
}

/// The MLIR type of a tensor of `dims` ("?x512") and `element` ("f32", "bf16", "i8").
inline std::string tensor(const std::string &dims, const char *element = "f32") {
  return "tensor<" + dims + "x" + element + ">";
}

inline std::string shapeString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Integers uniform in [lo, hi], reproducible from `seed`.
inline HostTensor randomInts(Shape shape, unsigned seed, int32_t lo, int32_t hi) {
  HostTensor t = HostTensor::ints(std::move(shape));
  t.i32 = randomValues<int32_t>(t.numElements(), seed,
                                std::uniform_int_distribution<int32_t>(lo, hi));
  return t;
}

/// A post-norm feed-forward block as one group over [?, ?, D] rows: linear to `hidden`,
/// ReLU, linear back to D, the residual add and layer_norm.
inline std::string feedForwardNorm(int64_t d, int64_t hidden) {
  std::string x = "tensor<?x?x" + std::to_string(d) + "xf32>";
  std::string h = "tensor<?x?x" + std::to_string(hidden) + "xf32>";
  std::string w1 = "tensor<" + std::to_string(hidden) + "x" + std::to_string(d) + "xf32>";
  std::string b1 = "tensor<" + std::to_string(hidden) + "xf32>";
  std::string w2 = "tensor<" + std::to_string(d) + "x" + std::to_string(hidden) + "xf32>";
  std::string v = "tensor<" + std::to_string(d) + "xf32>";
  return "kiln.fusion %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 : (" + x + ", " +
         w1 + ", " + b1 + ", " + w2 + ", " + v + ", " + v + ", " + v + ") -> " + x +
         " {\n^bb0(%x: " + x + ", %w1: " + w1 + ", %b1: " + b1 + ", %w2: " + w2 +
         ", %b2: " + v + ", %g: " + v + ", %be: " + v +
         "):\n  %l = kiln.linear %x, %w1, %b1 : (" + x + ", " + w1 + ", " + b1 + ") -> " +
         h + "\n  %r = kiln.relu %l : " + h + "\n  %m = kiln.linear %r, %w2, %b2 : (" +
         h + ", " + w2 + ", " + v + ") -> " + x + "\n  %s = kiln.add %x, %m : (" + x +
         ", " + x + ") -> " + x +
         "\n  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (" + x + ", " +
         v + ", " + v + ") -> " + x + "\n  kiln.yield %n : " + x + "\n}";
}

class HalideLower : public ::testing::Test {
protected:
  /// Lowers and compiles the op `op` of a module with `argTypes` -> `resultType`.
  void load(const std::vector<std::string> &argTypes, const std::string &resultType,
            const std::string &op) {
    std::string error = harness.load(oneOpModule(argTypes, resultType, op));
    ASSERT_TRUE(error.empty()) << error;
  }

  /// Runs the kernel and the interpreter on `inputs`, compares them and returns the
  /// kernel's result.
  HostTensor check(const std::vector<HostTensor> &inputs) {
    std::string error;
    HostTensor expected = harness.reference(inputs, error);
    EXPECT_TRUE(error.empty()) << error;
    if (!error.empty())
      return {};
    HostTensor actual = harness.run(inputs, expected.shape);
    std::string shapes;
    for (const HostTensor &t : inputs)
      shapes += shapeString(t.shape) + " ";
    if (expected.isInt)
      EXPECT_EQ(actual.i32, expected.i32) << "inputs " << shapes;
    else
      EXPECT_LE(relativeError(actual, expected), kTolerance) << "inputs " << shapes;
    return actual;
  }

  /// The message of the error the kernel fails with on `inputs`, "" when it runs.
  std::string runError(const std::vector<HostTensor> &inputs, const Shape &outShape) {
    try {
      harness.run(inputs, outShape);
    } catch (const Halide::Error &e) {
      return e.what();
    }
    return "";
  }

  /// check() on fresh random inputs of `shapes`.
  void checkRandom(const std::vector<Shape> &shapes) {
    std::vector<HostTensor> inputs;
    for (const Shape &shape : shapes)
      inputs.push_back(randomTensor(shape, seed++));
    check(inputs);
  }

  KernelHarness harness;
  unsigned seed = 1;
};

/// A path in the tests' temporary folder for this process's file `name`: ctest runs
/// each test in a process of its own, two or more at once, and a shared name let one
/// test read or remove another's file.
/// Sets KILN_CPU_TUNE (CpuTuning.h) for a scope, then restores it.
class ScopedCpuTune {
public:
  explicit ScopedCpuTune(const char *core) {
    if (const char *old = std::getenv("KILN_CPU_TUNE"))
      previous = old;
    setenv("KILN_CPU_TUNE", core, 1);
  }
  ~ScopedCpuTune() {
    if (previous)
      setenv("KILN_CPU_TUNE", previous->c_str(), 1);
    else
      unsetenv("KILN_CPU_TUNE");
  }

private:
  std::optional<std::string> previous;
};

inline std::string scratchPath(const std::string &name) {
  return ::testing::TempDir() + "/" + std::to_string(::getpid()) + "_" + name;
}

/// The text of the file at `path`, which is then removed.
inline std::string takeFile(const std::string &path) {
  std::ifstream file(path);
  std::string text((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  return text;
}

/// The Halide statement of `harness`'s kernel, as text.
inline std::string loweredStmt(KernelHarness &harness) {
  std::string path = scratchPath("lowered_kernel.stmt");
  std::vector<Halide::Argument> args(harness.kernel.inputs.begin(),
                                     harness.kernel.inputs.end());
  harness.pipeline.compile_to_lowered_stmt(path, args, Halide::Text);
  return takeFile(path);
}

} // namespace kiln::halide_backend::test

#endif // KILN_TEST_UNIT_HALIDE_LOWERTESTSUPPORT_H
