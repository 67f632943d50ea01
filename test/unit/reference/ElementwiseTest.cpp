//===- ElementwiseTest.cpp - add, mul, scale and relu in the interpreter --===//

#include "ReferenceTestUtil.h"

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceElementwise = ReferenceTest;

TEST_F(ReferenceElementwise, AddSameShape) {
  parse(R"mlir(
    func @f(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = kiln.add %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      kiln.return %0 : tensor<2x3xf32>
    })mlir");
  std::vector<float> x = randomFloats(6, 1), y = randomFloats(6, 2);
  HostTensor out =
      runBinary(HostTensor::floats({2, 3}, x), HostTensor::floats({2, 3}, y));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(out.f32.size(), 6u);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out.f32[i], x[i] + y[i]);
}

TEST_F(ReferenceElementwise, AddBroadcastsTrailingVector) {
  parse(R"mlir(
    func @f(%x: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
      %0 = kiln.add %x, %b : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
      kiln.return %0 : tensor<2x3x4xf32>
    })mlir");
  std::vector<float> x = randomFloats(24, 3), b = randomFloats(4, 4);
  HostTensor out =
      runBinary(HostTensor::floats({2, 3, 4}, x), HostTensor::floats({4}, b));
  ASSERT_EQ(out.f32.size(), 24u);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(out.f32[(i * 3 + j) * 4 + k], x[(i * 3 + j) * 4 + k] + b[k]);
}

TEST_F(ReferenceElementwise, AddBroadcastsSizeOneDimsOfBothOperands) {
  // [2, 1, 4] + [3, 1] -> [2, 3, 4]: each operand is stretched along the other's dims.
  parse(R"mlir(
    func @f(%x: tensor<2x1x4xf32>, %y: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
      %0 = kiln.add %x, %y : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xf32>
      kiln.return %0 : tensor<2x3x4xf32>
    })mlir");
  std::vector<float> x = randomFloats(8, 5), y = randomFloats(3, 6);
  HostTensor out =
      runBinary(HostTensor::floats({2, 1, 4}, x), HostTensor::floats({3, 1}, y));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 3, 4}));
  ASSERT_EQ(out.f32.size(), 24u);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(out.f32[(i * 3 + j) * 4 + k], x[i * 4 + k] + y[j]);
}

TEST_F(ReferenceElementwise, SubIsOrderedAndBroadcasts) {
  // [3, 1] - [2, 1, 4] -> [2, 3, 4]: the lhs minus the rhs, whichever is broadcast.
  parse(R"mlir(
    func @f(%y: tensor<3x1xf32>, %x: tensor<2x1x4xf32>) -> tensor<2x3x4xf32> {
      %0 = kiln.sub %y, %x : (tensor<3x1xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
      kiln.return %0 : tensor<2x3x4xf32>
    })mlir");
  std::vector<float> y = randomFloats(3, 11), x = randomFloats(8, 12);
  HostTensor out =
      runBinary(HostTensor::floats({3, 1}, y), HostTensor::floats({2, 1, 4}, x));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 3, 4}));
  ASSERT_EQ(out.f32.size(), 24u);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(out.f32[(i * 3 + j) * 4 + k], y[j] - x[i * 4 + k]);
}

TEST_F(ReferenceElementwise, MulOuterProductByBroadcasting) {
  parse(R"mlir(
    func @f(%x: tensor<3x1xf32>, %y: tensor<1x4xf32>) -> tensor<3x4xf32> {
      %0 = kiln.mul %x, %y : (tensor<3x1xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
      kiln.return %0 : tensor<3x4xf32>
    })mlir");
  HostTensor out = runBinary(HostTensor::floats({3, 1}, {1, 2, 3}),
                             HostTensor::floats({1, 4}, {10, 20, 30, 40}));
  EXPECT_EQ(out.f32,
            (std::vector<float>{10, 20, 30, 40, 20, 40, 60, 80, 30, 60, 90, 120}));
}

TEST_F(ReferenceElementwise, MulWithDynamicBatch) {
  parse(R"mlir(
    func @f(%x: tensor<?x4xf32>, %g: tensor<4xf32>) -> tensor<?x4xf32> {
      %0 = kiln.mul %x, %g : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
      kiln.return %0 : tensor<?x4xf32>
    })mlir");
  std::vector<float> x = randomFloats(20, 7), g = randomFloats(4, 8);
  HostTensor out = runBinary(HostTensor::floats({5, 4}, x), HostTensor::floats({4}, g));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{5, 4}));
  ASSERT_EQ(out.f32.size(), 20u);
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 4; ++k)
      EXPECT_EQ(out.f32[i * 4 + k], x[i * 4 + k] * g[k]);
}

TEST_F(ReferenceElementwise, ScaleMultipliesEveryElement) {
  parse(R"mlir(
    func @f(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
      %0 = kiln.scale %x {factor = 0.125 : f32} : tensor<2x5xf32>
      kiln.return %0 : tensor<2x5xf32>
    })mlir");
  std::vector<float> x = randomFloats(10, 9);
  HostTensor out = runUnary(HostTensor::floats({2, 5}, x));
  ASSERT_EQ(out.f32.size(), 10u);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(out.f32[i], x[i] * 0.125f);
}

TEST_F(ReferenceElementwise, ReluZeroesNegativesOnly) {
  parse(R"mlir(
    func @f(%x: tensor<12xf32>) -> tensor<12xf32> {
      %0 = kiln.relu %x : tensor<12xf32>
      kiln.return %0 : tensor<12xf32>
    })mlir");
  std::vector<float> x = randomFloats(12, 10);
  HostTensor out = runUnary(HostTensor::floats({12}, x));
  ASSERT_EQ(out.f32.size(), 12u);
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(out.f32[i], x[i] > 0 ? x[i] : 0.0f) << "x = " << x[i];
}

} // namespace
