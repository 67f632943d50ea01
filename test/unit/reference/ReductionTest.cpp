//===- ReductionTest.cpp - reduce_sum, reduce_mean, reduce_max in the interpreter ===//
//
// Each reduction against sums and maxima written out in the test from index
// arithmetic, over middle, outer and several axes, with and without keep_dim.
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

#include <cmath>
#include <limits>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceReduce = ReferenceTest;

const float kInf = std::numeric_limits<float>::infinity();

TEST_F(ReferenceReduce, SumOverTheMiddleAxisKeepsItAsOne) {
  parse(R"mlir(
    func @f(%x: tensor<2x?x4xf32>) -> tensor<2x1x4xf32> {
      %0 = kiln.reduce_sum %x {axes = [1], keep_dim = true}
          : (tensor<2x?x4xf32>) -> tensor<2x1x4xf32>
      kiln.return %0 : tensor<2x1x4xf32>
    })mlir");
  std::vector<float> x = randomFloats(2 * 3 * 4, 51);
  HostTensor out = runUnary(HostTensor::floats({2, 3, 4}, x));
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k)
      expected.push_back(double(x[i * 12 + k]) + x[i * 12 + 4 + k] + x[i * 12 + 8 + k]);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 1, 4}));
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferenceReduce, MeanOverTheOuterAndLastAxes) {
  // Axes written out of order and negative: the op's canonical form is [0, 2].
  parse(R"mlir(
    func @f(%x: tensor<3x2x5xf32>) -> tensor<2xf32> {
      %0 = kiln.reduce_mean %x {axes = [-1, 0]} : (tensor<3x2x5xf32>) -> tensor<2xf32>
      kiln.return %0 : tensor<2xf32>
    })mlir");
  std::vector<float> x = randomFloats(30, 52);
  HostTensor out = runUnary(HostTensor::floats({3, 2, 5}, x));
  std::vector<double> expected(2, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 5; ++k)
        expected[j] += x[i * 10 + j * 5 + k] / 15.0;
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2}));
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferenceReduce, MaxPropagatesNaNAndKeepsMinusInfinity) {
  parse(R"mlir(
    func @f(%x: tensor<3x4xf32>) -> tensor<3xf32> {
      %0 = kiln.reduce_max %x {axes = [1]} : (tensor<3x4xf32>) -> tensor<3xf32>
      kiln.return %0 : tensor<3xf32>
    })mlir");
  float nan = std::nanf("");
  HostTensor out = runUnary(HostTensor::floats(
      {3, 4}, {1, 7, -2, 3, -kInf, -kInf, -kInf, -kInf, 5, nan, 9, 1}));
  ASSERT_EQ(out.f32.size(), 3u);
  EXPECT_EQ(out.f32[0], 7.0f);
  EXPECT_EQ(out.f32[1], -kInf);
  EXPECT_TRUE(std::isnan(out.f32[2]));
}

TEST_F(ReferenceReduce, IntegerSumAndMaxOverEveryAxis) {
  parse(R"mlir(
    func @f(%x: tensor<2x3xi32>) -> (tensor<i32>, tensor<1x1xi32>) {
      %0 = kiln.reduce_sum %x {axes = [0, 1]} : (tensor<2x3xi32>) -> tensor<i32>
      %1 = kiln.reduce_max %x {axes = [0, 1], keep_dim = true}
          : (tensor<2x3xi32>) -> tensor<1x1xi32>
      kiln.return %0, %1 : tensor<i32>, tensor<1x1xi32>
    })mlir");
  TensorMap out = runOk("f", {{"arg0", HostTensor::ints({2, 3}, {4, -9, 2, 11, 0, -3})}});
  EXPECT_EQ(out["result0"].shape, std::vector<int64_t>{});
  EXPECT_EQ(out["result0"].i32, std::vector<int32_t>{5});
  EXPECT_EQ(out["result1"].shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(out["result1"].i32, std::vector<int32_t>{11});
}

TEST_F(ReferenceReduce, EmptyAxes) {
  // No elements: the sum is 0, the mean NaN (0 / 0), the max an error.
  parse(R"mlir(
    func @f(%x: tensor<2x?xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %0 = kiln.reduce_sum %x {axes = [1]} : (tensor<2x?xf32>) -> tensor<2xf32>
      %1 = kiln.reduce_mean %x {axes = [1]} : (tensor<2x?xf32>) -> tensor<2xf32>
      kiln.return %0, %1 : tensor<2xf32>, tensor<2xf32>
    }
    func @g(%x: tensor<2x?xf32>) -> tensor<2xf32> {
      %0 = kiln.reduce_max %x {axes = [1]} : (tensor<2x?xf32>) -> tensor<2xf32>
      kiln.return %0 : tensor<2xf32>
    })mlir");
  TensorMap out = runOk("f", {{"arg0", HostTensor::floats({2, 0})}});
  EXPECT_EQ(out["result0"].f32, (std::vector<float>{0, 0}));
  EXPECT_TRUE(std::isnan(out["result1"].f32[0]));
  EXPECT_TRUE(contains(runError("g", {{"arg0", HostTensor::floats({2, 0})}}),
                       "reduce_max over axes of size 0 of [2, 0]"));
}

} // namespace
