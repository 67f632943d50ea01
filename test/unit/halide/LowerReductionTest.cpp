//===- LowerReductionTest.cpp - rms_norm and reductions over axes, lowered ===//
//
// rms_norm (alone and with a residual add as its prologue) and reduce_sum /
// reduce_mean / reduce_max over the last axis, a middle axis and several axes, against
// the reference interpreter (which sums in double) to max|a - b| / max|b| <= 1e-5 on
// fresh random inputs; rows of a few thousand elements check the f32 accumulation
// order. The -inf and NaN cases, and empty axes, are checked element by element.
//
//===----------------------------------------------------------------------===//

#include "LowerTestSupport.h"

#include <cmath>
#include <limits>

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

TEST_F(HalideLower, RmsNormStaticAndDynamicFeatures) {
  load({"tensor<?x?x512xf32>", "tensor<512xf32>"}, "tensor<?x?x512xf32>",
       "kiln.rms_norm %arg0, %arg1 {epsilon = 1.0e-06 : f32} : "
       "(tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>");
  for (Shape s : {Shape{1, 1, 512}, Shape{2, 7, 512}})
    checkRandom({s, {512}});
  load({"tensor<?x?xf32>", "tensor<?xf32>"}, "tensor<?x?xf32>",
       "kiln.rms_norm %arg0, %arg1 {epsilon = 1.0e-02 : f32} : "
       "(tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>");
  for (int64_t d : {1, 17, 3000})
    checkRandom({{5, d}, {d}});
}

TEST_F(HalideLower, FusedResidualAddRmsNorm) {
  // The residual add is the prologue, recomputed in both passes over the row.
  load({"tensor<?x?x48xf32>", "tensor<?x?x48xf32>", "tensor<48xf32>"},
       "tensor<?x?x48xf32>",
       "kiln.fusion %arg0, %arg1, %arg2 : (tensor<?x?x48xf32>, tensor<?x?x48xf32>, "
       "tensor<48xf32>) -> tensor<?x?x48xf32> {\n"
       "^bb0(%x: tensor<?x?x48xf32>, %y: tensor<?x?x48xf32>, %g: tensor<48xf32>):\n"
       "  %s = kiln.add %x, %y : (tensor<?x?x48xf32>, tensor<?x?x48xf32>) -> "
       "tensor<?x?x48xf32>\n"
       "  %n = kiln.rms_norm %s, %g {epsilon = 1.0e-6 : f32} : "
       "(tensor<?x?x48xf32>, tensor<48xf32>) -> tensor<?x?x48xf32>\n"
       "  kiln.yield %n : tensor<?x?x48xf32>\n}");
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 7}, {4, 20}})
    checkRandom({{b, s, 48}, {b, s, 48}, {48}});
}

TEST_F(HalideLower, ReduceSumLastAxisLongRows) {
  // Rows of up to 4096 positive elements: no cancellation hides the accumulation error.
  load({"tensor<?x?xf32>"}, "tensor<?xf32>",
       "kiln.reduce_sum %arg0 {axes = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>");
  for (Shape s : {Shape{1, 1}, Shape{3, 17}, Shape{5, 3001}, Shape{2, 4096}})
    check({randomTensor(s, seed++, 0.0f, 1.0f)});
  checkRandom({{4, 100}});
}

TEST_F(HalideLower, ReduceMeanMiddleAxisKeepDim) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x1x?xf32>",
       "kiln.reduce_mean %arg0 {axes = [1], keep_dim = true} : (tensor<?x?x?xf32>) -> "
       "tensor<?x1x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 7, 19}, Shape{3, 2000, 33}})
    check({randomTensor(s, seed++, 0.0f, 1.0f)});
}

TEST_F(HalideLower, ReduceSeveralAxes) {
  // The outer and the last axis (a strided sum per output element), and every axis.
  load({"tensor<?x?x?xf32>"}, "tensor<?xf32>",
       "kiln.reduce_sum %arg0 {axes = [0, 2]} : (tensor<?x?x?xf32>) -> tensor<?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{3, 5, 17}, Shape{4, 2, 600}})
    check({randomTensor(s, seed++, 0.0f, 1.0f)});
  load({"tensor<?x8xf32>"}, "tensor<f32>",
       "kiln.reduce_mean %arg0 {axes = [0, 1]} : (tensor<?x8xf32>) -> tensor<f32>");
  for (Shape s : {Shape{1, 8}, Shape{300, 8}})
    checkRandom({s});
  load({"tensor<?x?x?xf32>"}, "tensor<?x1x1xf32>",
       "kiln.reduce_max %arg0 {axes = [1, 2], keep_dim = true} : (tensor<?x?x?xf32>) -> "
       "tensor<?x1x1xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{3, 5, 17}})
    checkRandom({s});
}

TEST_F(HalideLower, ReduceMaxNaNAndMinusInfinity) {
  // Per row: a NaN (any lane), all -inf, an ordinary row; along the last axis (lanes
  // and a horizontal step) and along the outer axis (vectors across columns).
  for (bool lastAxis : {true, false}) {
    if (lastAxis)
      load({"tensor<?x?xf32>"}, "tensor<?xf32>",
           "kiln.reduce_max %arg0 {axes = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>");
    else
      load({"tensor<?x?xf32>"}, "tensor<?xf32>",
           "kiln.reduce_max %arg0 {axes = [0]} : (tensor<?x?xf32>) -> tensor<?xf32>");
    for (int64_t n : {1, 17, 100}) {
      HostTensor x = randomTensor({3, n}, seed++);
      auto at = [&](int64_t row, int64_t j) -> float & {
        return lastAxis ? x.f32[row * n + j] : x.f32[j * 3 + row];
      };
      if (!lastAxis)
        x.shape = {n, 3};
      at(0, n / 2) = std::nanf("");
      for (int64_t j = 0; j < n; ++j)
        at(1, j) = -kInf;
      HostTensor actual = check({x});
      ASSERT_EQ(actual.f32.size(), 3u);
      EXPECT_TRUE(std::isnan(actual.f32[0])) << n;
      EXPECT_EQ(actual.f32[1], -kInf) << n;
    }
  }
}

TEST_F(HalideLower, ReduceIntegers) {
  load({"tensor<?x?xi32>"}, "tensor<?xi32>",
       "kiln.reduce_sum %arg0 {axes = [1]} : (tensor<?x?xi32>) -> tensor<?xi32>");
  for (Shape s : {Shape{1, 1}, Shape{4, 33}})
    check({randomInts(s, seed++, -1000, 1000)});
  load({"tensor<?x?xi32>"}, "tensor<?xi32>",
       "kiln.reduce_max %arg0 {axes = [0]} : (tensor<?x?xi32>) -> tensor<?xi32>");
  for (Shape s : {Shape{1, 1}, Shape{9, 40}})
    check({randomInts(s, seed++, -1000, 1000)});
}

TEST_F(HalideLower, ReduceEmptyAxes) {
  load({"tensor<?x?xf32>"}, "tensor<?xf32>",
       "kiln.reduce_mean %arg0 {axes = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>");
  HostTensor mean = check({HostTensor::floats({3, 0})});
  ASSERT_EQ(mean.f32.size(), 3u);
  EXPECT_TRUE(std::isnan(mean.f32[0]));
  load({"tensor<?x?xf32>"}, "tensor<?xf32>",
       "kiln.reduce_max %arg0 {axes = [1]} : (tensor<?x?xf32>) -> tensor<?xf32>");
  std::string error = runError({HostTensor::floats({3, 0})}, {3});
  EXPECT_NE(error.find("reduce_max over axes of size 0"), std::string::npos) << error;
  EXPECT_EQ(runError({HostTensor::floats({0, 0})}, {0}), "");
}

} // namespace
