//===- MaskOpsTest.cpp - Boolean masks, masked_fill, constants and div ----===//
//
// The DSL ops that real attention code writes besides the additive masks: boolean masks
// with masked_fill, scores divided by a constant sqrt(d_k). Shapes and dtypes in named
// dims, and misuse reported at the line that wrote it.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/frontend/Kiln.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

TEST(FrontendMasks, BooleanPaddingMaskMaskedFillAndDivision) {
  ModelBuilder m("attn");
  Entry e = m.entry("f");
  Tensor q = e.input("q", DType::F32, {dyn("B"), 2, dyn("S"), 4});
  Tensor len = e.input("len", DType::I32, {dyn("B")});
  Tensor pad = paddingMask(len, q, 2, MaskForm::Boolean);
  EXPECT_EQ(pad.dtype(), DType::Bool);
  EXPECT_EQ(toString(pad.shape()), "[B, S]");
  Tensor causal = causalMask(q, 2, MaskForm::Boolean);
  EXPECT_EQ(causal.dtype(), DType::Bool);
  EXPECT_EQ(toString(causal.shape()), "[S, S]");
  Tensor sqrtDk = constant(m, 2.0f);
  EXPECT_EQ(toString(sqrtDk.shape()), "[]");
  Tensor scores = matmul(q, q, false, true) / sqrtDk;
  EXPECT_EQ(toString(scores.shape()), "[B, 2, S, S]");
  const float inf = std::numeric_limits<float>::infinity();
  Tensor masked = maskedFill(scores, reshape(pad, {0, 1, 1, -1}), -inf);
  masked = maskedFill(masked, causal, -inf);
  EXPECT_EQ(toString(masked.shape()), "[B, 2, S, S]");
  EXPECT_EQ(masked.dtype(), DType::F32);
  e.output("y", matmul(softmax(masked), q));
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_NE(text.find("-> tensor<?x?xi1>"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.constant dense<2.000000e+00> : tensor<f32>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kiln.div"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.masked_fill"), std::string::npos) << text;
  EXPECT_NE(text.find("value = 0xFF800000 : f32"), std::string::npos) << text;
}

TEST(FrontendMasks, ConstantTensorsAndDiv) {
  ModelBuilder m("c");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 3});
  Tensor w = constant(m, {3}, {1.0f, 2.0f, 3.0f});
  Tensor ones = constant(m, {1, 1}, {0.5f});
  EXPECT_EQ(toString(w.shape()), "[3]");
  EXPECT_EQ(toString(ones.shape()), "[1, 1]");
  e.output("y", div(x, w) * ones);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_NE(
      text.find("dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("dense<5.000000e-01> : tensor<1x1xf32>"), std::string::npos)
      << text;
}

TEST(FrontendMasks, MaskedFillNeedsABooleanMask) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 4});
  unsigned line = __LINE__ + 1;
  Tensor y = maskedFill(x, x, 0.0f);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "masked_fill needs mask of type i1, got an f32 tensor");
}

TEST(FrontendMasks, MaskedFillMaskMayNotEnlargeTheInput) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S")});
  Tensor len = e.input("len", DType::I32, {dyn("B")});
  Tensor pad = paddingMask(len, x, 1, MaskForm::Boolean);
  Tensor row = slice(x, 0, 0, 1);
  unsigned line = __LINE__ + 1;
  Tensor y = maskedFill(row, pad, 0.0f);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "masked_fill: mask [B, S] does not broadcast to the input [1, S]");
}

TEST(FrontendMasks, BooleanInputOutputOrWeightIsAnError) {
  {
    ModelBuilder m("bad");
    Entry e = m.entry("f");
    unsigned line = __LINE__ + 1;
    Tensor b = e.input("m", DType::Bool, {dyn("B")});
    e.output("y", b);
    expectOneErrorAt(m.finish(), line, "input 'm' is boolean; masks exist only inside");
  }
  {
    ModelBuilder m("bad");
    Entry e = m.entry("f");
    Tensor x = e.input("x", DType::I32, {dyn("B"), dyn("S")});
    Tensor len = e.input("len", DType::I32, {dyn("B")});
    unsigned line = __LINE__ + 1;
    e.output("mask", paddingMask(len, x, 1, MaskForm::Boolean));
    expectOneErrorAt(m.finish(), line, "output 'mask' is boolean");
  }
  {
    ModelBuilder m("bad");
    unsigned line = __LINE__ + 1;
    Parameter p = m.parameter("m", {4}, DType::Bool);
    Entry e = m.entry("f");
    e.output("y", e.input("x", DType::F32, {4}));
    expectOneErrorAt(m.finish(), line, "parameter 'm' is boolean");
  }
}

TEST(FrontendMasks, ConstantNeedsOneValueOrOnePerElement) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {3});
  unsigned line = __LINE__ + 1;
  Tensor c = constant(m, {3}, {1.0f, 2.0f});
  e.output("y", x + c);
  expectOneErrorAt(m.finish(), line, "constant of shape [3] needs 1 or 3 values, got 2");
}

TEST(FrontendMasks, ConstantBeforeAnyEntryIsAnError) {
  ModelBuilder m("bad");
  unsigned line = __LINE__ + 1;
  Tensor c = constant(m, 1.0f);
  EXPECT_FALSE(c.valid());
  Entry e = m.entry("f");
  e.output("y", e.input("x", DType::F32, {3}));
  expectOneErrorAt(m.finish(), line, "before any entry point");
}

} // namespace
