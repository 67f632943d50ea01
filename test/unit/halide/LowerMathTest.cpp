//===- LowerMathTest.cpp - The math ops' kernels, element by element ------===//
//
// Beyond LowerTest's comparison with the interpreter (relative to the largest
// element), each math kernel element by element against its definition in double, and
// its limits: infinities where the function has them, saturation never NaN (Halide
// compiles with no-infinities fast-math flags, so an infinite intermediate is poison).
//
//===----------------------------------------------------------------------===//

#include "LowerTestSupport.h"

#include <cmath>
#include <functional>
#include <limits>

using namespace kiln::reference;
using namespace kiln::halide_backend::test;

namespace {

class HalideLowerMath : public HalideLower {
protected:
  /// The kernel of `kiln.<op> {attributes}` on `x` ([N]).
  std::vector<float> apply(const std::string &op, const std::vector<float> &x,
                           const std::string &attributes = "") {
    load({"tensor<?xf32>"}, "tensor<?xf32>",
         "kiln." + op + " %arg0 " + attributes + " : tensor<?xf32>");
    int64_t n = static_cast<int64_t>(x.size());
    return harness.run({HostTensor::floats({n}, x)}, {n}).f32;
  }

  /// The largest relative error of `op` against `f` over a sweep of [lo, hi].
  double worstRelativeError(const std::string &op, const std::function<double(double)> &f,
                            float lo, float hi, const std::string &attributes = "") {
    std::vector<float> x(20001);
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = lo + (hi - lo) * static_cast<float>(i) / (x.size() - 1);
    std::vector<float> y = apply(op, x, attributes);
    double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      double exact = f(x[i]);
      if (exact != 0)
        worst = std::max(worst, std::abs(y[i] - exact) / std::abs(exact));
    }
    return worst;
  }
};

double sigmoidOf(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST_F(HalideLowerMath, EachOpToAFewUlps) {
  struct Case {
    const char *op, *attributes;
    std::function<double(double)> definition;
    float lo, hi;
    double bound;
  };
  auto geluTanh = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  const Case cases[] = {
      // Halide's exp is its own polynomial: 3.3e-7 at worst.
      {"exp", "", [](double x) { return std::exp(x); }, -80, 80, 4e-7},
      {"log", "", [](double x) { return std::log(x); }, 1e-3f, 1e3f, 2e-7},
      {"tanh", "", [](double x) { return std::tanh(x); }, -10, 10, 6e-7},
      {"sigmoid", "", sigmoidOf, -80, 80, 4e-7},
      {"silu", "", [](double x) { return x * sigmoidOf(x); }, -80, 80, 4e-7},
      {"sqrt", "", [](double x) { return std::sqrt(x); }, 1e-6f, 1e6f, 1e-7},
      {"rsqrt", "", [](double x) { return 1 / std::sqrt(x); }, 1e-6f, 1e6f, 2e-7},
      {"pow", "{exponent = 1.7 : f32}",
       [](double x) { return std::pow(x, double(1.7f)); }, 1e-3f, 1e3f, 1e-7},
      {"pow", "{exponent = 3.0 : f32}", [](double x) { return x * x * x; }, -100, 100,
       1e-7},
      // For x < 0 the f32 rounding of u (~6e-8 relative) is multiplied by 2|u| in
      // sigmoid(2u) ~ e^2u: 1.1e-6 at worst over [-4, 10]. (PyTorch's f32 form,
      // through 1 + tanh(u), is 1e-5 off at x = -3.)
      {"gelu_tanh", "", geluTanh, -4, 10, 1.5e-6},
  };
  for (const Case &c : cases)
    EXPECT_LE(worstRelativeError(c.op, c.definition, c.lo, c.hi, c.attributes), c.bound)
        << c.op << " " << c.attributes;
}

TEST_F(HalideLowerMath, LimitsAreInfiniteOrSaturatedNeverNaN) {
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(apply("exp", {100.0f, -200.0f}), (std::vector<float>{inf, 0.0f}));
  EXPECT_EQ(apply("log", {0.0f})[0], -inf);
  EXPECT_EQ(apply("rsqrt", {0.0f})[0], inf);
  EXPECT_EQ(apply("tanh", {-50.0f, 50.0f}), (std::vector<float>{-1.0f, 1.0f}));
  EXPECT_EQ(apply("sigmoid", {-1000.0f, 1000.0f, -1e30f, 1e30f}),
            (std::vector<float>{0.0f, 1.0f, 0.0f, 1.0f}));
  EXPECT_EQ(apply("silu", {-1e30f, 1e30f}), (std::vector<float>{-0.0f, 1e30f}));
  EXPECT_EQ(apply("gelu_tanh", {-1e30f, 1e30f}), (std::vector<float>{-0.0f, 1e30f}));
}

TEST_F(HalideLowerMath, RotaryOfBothStylesAgainstTheInterpreter) {
  for (const char *style : {"half", "interleaved"}) {
    load({"tensor<?x?x?x32xf32>", "tensor<?xi32>"}, "tensor<?x?x?x32xf32>",
         std::string("kiln.rotary %arg0, %arg1 {base = 1.0e4 : f32, style = \"") + style +
             "\"} : (tensor<?x?x?x32xf32>, tensor<?xi32>) -> tensor<?x?x?x32xf32>");
    for (Shape s : {Shape{1, 1, 1, 32}, Shape{2, 3, 17, 32}})
      check({randomTensor(s, seed++), randomInts({s[2]}, seed++, 0, 4096)});
  }
}

} // namespace
