//===- MathOpsTest.cpp - The DSL's elementwise math and rotary ops -------===//
//
// Each op's result shape and dtype in named dims, the op it builds, and each misuse
// reported at the line that wrote it.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/frontend/Kiln.h"

#include "kiln/ir/SymbolicShapes.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

TEST(FrontendMathOps, EachOpKeepsTheShapeAndBuildsItsOp) {
  ModelBuilder m("math");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 64});
  std::vector<std::pair<Tensor, std::string>> results = {
      {neg(x), "kiln.neg"},
      {-x, "kiln.neg"},
      {exp(x), "kiln.exp"},
      {log(x), "kiln.log"},
      {tanh(x), "kiln.tanh"},
      {sigmoid(x), "kiln.sigmoid"},
      {sqrt(x), "kiln.sqrt"},
      {rsqrt(x), "kiln.rsqrt"},
      {pow(x, 3.0f), "kiln.pow %arg0 {exponent = 3.000000e+00 : f32}"},
      {silu(x), "kiln.silu"},
      {geluTanh(x), "kiln.gelu_tanh"}};
  int i = 0;
  for (const auto &[result, op] : results) {
    EXPECT_EQ(toString(result.shape()), "[B, S, 64]") << op;
    EXPECT_EQ(result.dtype(), DType::F32) << op;
    e.output("y" + std::to_string(i++), result);
  }
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  for (const auto &[result, op] : results)
    EXPECT_NE(text.find(op + " "), std::string::npos) << op << " in\n" << text;
}

TEST(FrontendMathOps, MathOfIdsIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("S")});
  unsigned line = __LINE__ + 1;
  Tensor x = exp(ids);
  e.output("x", x);
  expectOneErrorAt(m.finish(), line, "exp needs f32 operands, got an i32 tensor [B, S]");
}

TEST(FrontendMathOps, NegationOfIdsIsAnErrorAtTheExpression) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B")});
  unsigned line = __LINE__ + 1;
  Tensor x = -ids;
  e.output("x", x);
  expectOneErrorAt(m.finish(), line, "neg needs f32 operands, got an i32 tensor [B]");
}

TEST(FrontendMathOps, RotaryKeepsTheShapeOfHeads) {
  ModelBuilder m("rope");
  Entry e = m.entry("f");
  Tensor q = e.input("q", DType::F32, {dyn("B"), 8, dyn("T"), 64});
  Tensor half = rotary(q, positions(q, 2));
  EXPECT_EQ(toString(half.shape()), "[B, 8, T, 64]");
  e.output("half", half);
  e.output("gptj", rotary(q, positions(q, 2), 500.0f, RotaryStyle::Interleaved));
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_NE(text.find("{base = 1.000000e+04 : f32, style = \"half\"}"), std::string::npos)
      << text;
  EXPECT_NE(text.find("{base = 5.000000e+02 : f32, style = \"interleaved\"}"),
            std::string::npos)
      << text;
}

TEST(FrontendMathOps, RotaryOfAnOddFeatureSizeIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor q = e.input("q", DType::F32, {dyn("B"), dyn("T"), 15});
  unsigned line = __LINE__ + 1;
  Tensor y = rotary(q, positions(q, 1));
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "rotary feature size D must be static, positive and even (pairs of "
                   "features rotate), got [B, T, 15]");
}

TEST(FrontendMathOps, RotaryPositionsOfAnotherLengthAreAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor q = e.input("q", DType::F32, {dyn("B"), dyn("T"), 16});
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("S")});
  unsigned line = __LINE__ + 1;
  Tensor y = rotary(q, positions(ids, 1));
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "rotary positions must be [T], one per row of the input [B, T, 16], "
                   "got [S]");
}

TEST(FrontendMathOps, RotaryOfFloatPositionsIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor q = e.input("q", DType::F32, {dyn("T"), 16});
  Tensor p = e.input("p", DType::F32, {dyn("T")});
  unsigned line = __LINE__ + 1;
  Tensor y = rotary(q, p);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "rotary needs positions of type i32, got an f32 tensor [T]");
}

} // namespace
