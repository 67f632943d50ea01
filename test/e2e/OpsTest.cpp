//===- OpsTest.cpp - Every op, compiled by Halide, against the reference ---===//
//
// Each model was compiled once, at build time, by its NAME-gen (kiln_add_model); each
// test loads it once and runs it at several shapes: sizes of 1, sizes that are not
// multiples of the vector width, batches above 1.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "models/Models.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace kiln::e2e;

TEST(OpsTest, Matmul) {
  Harness h(modelLibrary("e2e_matmul"), buildMatmulModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims : {Dims{{"B", 1}, {"M", 1}, {"K", 1}, {"N", 1}, {"H", 1}},
                           Dims{{"B", 2}, {"M", 5}, {"K", 17}, {"N", 3}, {"H", 3}},
                           Dims{{"B", 3}, {"M", 16}, {"K", 33}, {"N", 20}, {"H", 2}},
                           Dims{{"B", 1}, {"M", 37}, {"K", 64}, {"N", 19}, {"H", 1}}})
    EXPECT_EQ(h.check(dims), 9u);
}

TEST(OpsTest, AddSubAndMulBroadcast) {
  Harness h(modelLibrary("e2e_elementwise"), buildElementwiseModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}, {"D", 1}}, Dims{{"B", 2}, {"S", 7}, {"D", 33}},
        Dims{{"B", 3}, {"S", 16}, {"D", 48}}, Dims{{"B", 1}, {"S", 50}, {"D", 17}}})
    EXPECT_EQ(h.check(dims), 10u);
}

TEST(OpsTest, WhereCastAndIntegerArithmetic) {
  Harness h(modelLibrary("e2e_select"), buildSelectModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}}, Dims{{"B", 2}, {"S", 7}}, Dims{{"B", 3}, {"S", 33}}})
    EXPECT_EQ(h.check(dims), 8u);
}

TEST(OpsTest, ScaleAndRelu) {
  Harness h(modelLibrary("e2e_unary"), buildUnaryModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}, {"D", 1}}, Dims{{"B", 2}, {"S", 9}, {"D", 31}},
        Dims{{"B", 4}, {"S", 3}, {"D", 64}}})
    EXPECT_EQ(h.check(dims), 3u);
}

TEST(OpsTest, ElementwiseMath) {
  Harness h(modelLibrary("e2e_math"), buildMathModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}, {"D", 1}}, Dims{{"B", 2}, {"S", 9}, {"D", 31}},
        Dims{{"B", 3}, {"S", 4}, {"D", 64}}}) {
    EXPECT_EQ(h.check(dims), 8u);
    EXPECT_EQ(h.check(dims, "saturating"), 4u);
  }
}

TEST(OpsTest, SaturatingMathFarOut) {
  Harness h(modelLibrary("e2e_math"), buildMathModel);
  ASSERT_TRUE(h.ok());
  // |y| up to 100 before the model's scaling: tanh and sigmoid at +-1 and 0, silu and
  // gelu_tanh at x or tiny negatives, never NaN from an overflowing intermediate.
  auto edit = [](const std::string &, kiln::reference::HostTensor &t) {
    for (float &v : t.f32)
      v *= 100.0f;
  };
  EXPECT_EQ(h.check({{"B", 2}, {"S", 5}, {"D", 33}}, "saturating", edit), 4u);
}

TEST(OpsTest, RotaryAtArbitraryPositions) {
  Harness h(modelLibrary("e2e_math"), buildMathModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"H", 1}, {"T", 1}}, Dims{{"B", 2}, {"H", 3}, {"T", 7}},
        Dims{{"B", 1}, {"H", 4}, {"T", 40}}})
    EXPECT_EQ(h.check(dims, "rotary"), 2u);
}

TEST(OpsTest, SoftmaxOnEveryAxis) {
  Harness h(modelLibrary("e2e_softmax"), buildSoftmaxModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}, {"T", 1}}, Dims{{"B", 2}, {"S", 3}, {"T", 17}},
        Dims{{"B", 3}, {"S", 5}, {"T", 64}}, Dims{{"B", 1}, {"S", 9}, {"T", 100}}})
    EXPECT_EQ(h.check(dims), 3u);
}

TEST(OpsTest, SoftmaxOfLargeAndMaskedValues) {
  Harness h(modelLibrary("e2e_softmax"), buildSoftmaxModel);
  ASSERT_TRUE(h.ok());
  // Large magnitudes overflow a softmax that forgets to subtract the max; a row of -inf
  // (every key masked) must give 0, not NaN, along the last axis.
  float inf = std::numeric_limits<float>::infinity();
  auto edit = [inf](const std::string &, kiln::reference::HostTensor &t) {
    for (float &v : t.f32)
      v *= 80.0f;
    int64_t row = t.shape.back();
    for (int64_t i = 0; i < row; ++i)
      t.f32[i] = -inf;
  };
  EXPECT_EQ(h.check({{"B", 2}, {"S", 3}, {"T", 21}}, "forward", edit), 3u);
}

TEST(OpsTest, LayerNorm) {
  Harness h(modelLibrary("e2e_layer_norm"), buildLayerNormModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims : {Dims{{"B", 1}, {"S", 1}, {"D", 1}, {"N", 1}},
                           Dims{{"B", 2}, {"S", 7}, {"D", 33}, {"N", 5}},
                           Dims{{"B", 3}, {"S", 4}, {"D", 64}, {"N", 19}}})
    EXPECT_EQ(h.check(dims), 2u);
}

/// rms_norm with a residual prologue and with a weight; a sum over the last axis, a mean
/// over a middle one (keepDim), a max over the outer and last: all dims dynamic, rows of
/// up to a few thousand elements.
TEST(OpsTest, RmsNormAndReductions) {
  Harness h(modelLibrary("e2e_reduction"), buildReductionModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims : {Dims{{"B", 1}, {"S", 1}, {"D", 1}, {"N", 1}},
                           Dims{{"B", 2}, {"S", 7}, {"D", 33}, {"N", 5}},
                           Dims{{"B", 2}, {"S", 3}, {"D", 3000}, {"N", 19}}})
    EXPECT_EQ(h.check(dims), 5u);
}

/// Reshapes, transposes and slices: views (also at an offset into a weight) and kernels.
TEST(OpsTest, ReshapeAndTranspose) {
  Harness h(modelLibrary("e2e_data_movement"), buildDataMovementModel);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims : {Dims{{"B", 1}, {"S", 1}, {"M", 1}, {"N", 1}},
                           Dims{{"B", 2}, {"S", 5}, {"M", 17}, {"N", 3}},
                           Dims{{"B", 3}, {"S", 16}, {"M", 40}, {"N", 33}}})
    EXPECT_EQ(h.check(dims), 9u);
}
