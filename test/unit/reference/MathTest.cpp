//===- MathTest.cpp - exp, log, tanh, ..., rotary in the interpreter -----===//

#include "ReferenceTestUtil.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

/// Runs `kiln.<op> {attributes}` on `x` ([N], dynamic) and returns the result.
class ReferenceMath : public ReferenceTest {
protected:
  std::vector<float> apply(const std::string &op, const std::vector<float> &x,
                           const std::string &attributes = "") {
    parse("func @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n  %0 = kiln." + op + " %x " +
          attributes + " : tensor<?xf32>\n  kiln.return %0 : tensor<?xf32>\n}");
    return runUnary(HostTensor::floats({static_cast<int64_t>(x.size())}, x)).f32;
  }

  /// `op` of random x in [lo, hi] against `definition` in double, by relative error.
  void expectDefinition(const std::string &op, const std::function<double(double)> &f,
                        float lo, float hi, const std::string &attributes = "") {
    std::vector<float> x = randomFloats(256, 301, lo, hi);
    std::vector<float> out = apply(op, x, attributes);
    ASSERT_EQ(out.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i)
      expectRelative(out[i], f(x[i]), op + " of " + std::to_string(x[i]));
  }

  static void expectRelative(float actual, double expected, const std::string &what) {
    EXPECT_LE(std::abs(actual - expected), 1e-7 * std::abs(expected))
        << what << ": got " << actual << ", expected " << expected;
  }
};

double sigmoidOf(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST_F(ReferenceMath, EachOpIsItsDefinition) {
  expectDefinition(
      "neg", [](double x) { return -x; }, -4, 4);
  expectDefinition(
      "exp", [](double x) { return std::exp(x); }, -20, 20);
  expectDefinition(
      "log", [](double x) { return std::log(x); }, 1e-3f, 50);
  expectDefinition(
      "tanh", [](double x) { return std::tanh(x); }, -5, 5);
  expectDefinition("sigmoid", sigmoidOf, -20, 20);
  expectDefinition(
      "sqrt", [](double x) { return std::sqrt(x); }, 0, 100);
  expectDefinition(
      "rsqrt", [](double x) { return 1.0 / std::sqrt(x); }, 1e-4f, 100);
  expectDefinition(
      "silu", [](double x) { return x * sigmoidOf(x); }, -20, 20);
  expectDefinition(
      "gelu_tanh",
      [](double x) {
        return 0.5 * x *
               (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
      },
      -4, 4);
}

TEST_F(ReferenceMath, PowOfEveryExponentKind) {
  for (float exponent : {3.0f, 2.0f, 1.0f, 0.5f, -0.5f, -1.5f, 1.7f})
    expectDefinition(
        "pow", [&](double x) { return std::pow(x, double(exponent)); }, 0.01f, 9,
        "{exponent = " + std::to_string(exponent) + " : f32}");
  // An integer exponent takes negative bases.
  expectDefinition(
      "pow", [](double x) { return x * x * x; }, -3, 3, "{exponent = 3.0 : f32}");
}

TEST_F(ReferenceMath, GeluTanhMatchesPyTorch) {
  // With python3-torch, in double (in f32 PyTorch loses digits to 1 + tanh for x < 0;
  // by x = -6 its double does too, so the list stops at -4):
  //   x = torch.tensor([-4., -3., -1., -.5, .1, 1., 2.5, 8.], dtype=torch.float64)
  //   torch.nn.functional.gelu(x, approximate="tanh")
  std::vector<float> x = {-4.0f, -3.0f, -1.0f, -0.5f, 0.1f, 1.0f, 2.5f, 8.0f};
  std::vector<double> torch = {-7.024594819e-05, -3.637392082e-03, -1.588080094e-01,
                               -1.542859902e-01, 5.398275105e-02,  8.411919906e-01,
                               2.484915734e+00,  8.000000000e+00};
  std::vector<float> out = apply("gelu_tanh", x);
  ASSERT_EQ(out.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i)
    // 0.1f is not 0.1: its gelu differs by 1e-9 relative.
    EXPECT_LE(std::abs(out[i] - torch[i]), 2e-7 * std::abs(torch[i])) << "x = " << x[i];
}

TEST_F(ReferenceMath, LimitsAreInfiniteOrExactNeverNaN) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(apply("log", {0.0f})[0], -inf);
  EXPECT_EQ(apply("exp", {100.0f})[0], inf);
  EXPECT_EQ(apply("exp", {-200.0f})[0], 0.0f);
  EXPECT_EQ(apply("rsqrt", {0.0f})[0], inf);
  EXPECT_EQ(apply("tanh", {-50.0f, 50.0f}), (std::vector<float>{-1.0f, 1.0f}));
  EXPECT_EQ(apply("sigmoid", {-1000.0f, 1000.0f}), (std::vector<float>{0.0f, 1.0f}));
  // The small tails keep their digits: e^-80 and -80 e^-80.
  expectRelative(apply("sigmoid", {-80.0f})[0], std::exp(-80.0), "sigmoid(-80)");
  expectRelative(apply("silu", {-80.0f})[0], -80.0 * std::exp(-80.0), "silu(-80)");
  EXPECT_EQ(apply("silu", {1e30f})[0], 1e30f);
  EXPECT_TRUE(std::isnan(apply("log", {-1.0f})[0]));
}

using ReferenceRotary = ReferenceTest;

/// The rotary of q [2, 3, 8] at positions [3] by its definition: pair (a, b) of row t
/// turned by positions[t] * base^(-2i / 8).
std::vector<double> rotaryDefinition(const std::vector<float> &q,
                                     const std::vector<int32_t> &positions, double base,
                                     bool interleaved) {
  std::vector<double> out(q.begin(), q.end());
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int i = 0; i < 4; ++i) {
        double theta = positions[t] / std::pow(base, 2.0 * i / 8);
        int row = (b * 3 + t) * 8;
        int first = row + (interleaved ? 2 * i : i);
        int second = row + (interleaved ? 2 * i + 1 : i + 4);
        out[first] = q[first] * std::cos(theta) - q[second] * std::sin(theta);
        out[second] = q[second] * std::cos(theta) + q[first] * std::sin(theta);
      }
  return out;
}

TEST_F(ReferenceRotary, BothStylesAreTheirDefinition) {
  for (const char *style : {"half", "interleaved"}) {
    parse(std::string(R"mlir(
      func @f(%q: tensor<2x?x8xf32>, %p: tensor<?xi32>) -> tensor<2x?x8xf32> {
        %0 = kiln.rotary %q, %p {base = 100.0 : f32, style = ")mlir") +
          style + R"mlir("} : (tensor<2x?x8xf32>, tensor<?xi32>) -> tensor<2x?x8xf32>
        kiln.return %0 : tensor<2x?x8xf32>
      })mlir");
    std::vector<float> q = randomFloats(48, 311);
    std::vector<int32_t> positions = randomInts(3, 312, 0, 3000);
    HostTensor out =
        runBinary(HostTensor::floats({2, 3, 8}, q), HostTensor::ints({3}, positions));
    std::vector<double> expected =
        rotaryDefinition(q, positions, 100.0, std::string(style) == "interleaved");
    ASSERT_EQ(out.f32.size(), expected.size()) << style;
    for (size_t i = 0; i < expected.size(); ++i)
      EXPECT_NEAR(out.f32[i], expected[i], 1e-6) << style << " at " << i;
  }
}

TEST_F(ReferenceRotary, PositionZeroKeepsTheInput) {
  parse(R"mlir(
    func @f(%q: tensor<1x4xf32>, %p: tensor<1xi32>) -> tensor<1x4xf32> {
      %0 = kiln.rotary %q, %p {base = 1.0e4 : f32, style = "half"}
          : (tensor<1x4xf32>, tensor<1xi32>) -> tensor<1x4xf32>
      kiln.return %0 : tensor<1x4xf32>
    })mlir");
  std::vector<float> q = randomFloats(4, 313);
  EXPECT_EQ(runBinary(HostTensor::floats({1, 4}, q), HostTensor::ints({1}, {0})).f32, q);
}

} // namespace
