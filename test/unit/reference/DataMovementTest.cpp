//===- DataMovementTest.cpp - reshape and transpose in the interpreter ----===//

#include "ReferenceTestUtil.h"

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceReshape = ReferenceTest;
using ReferenceTranspose = ReferenceTest;

TEST_F(ReferenceReshape, KeepsDynamicDimAndSplitsLast) {
  // [B, 6] -> [B, 2, 3] with 0 = keep: the row-major data is unchanged.
  parse(R"mlir(
    func @f(%x: tensor<?x6xf32>) -> tensor<?x2x3xf32> {
      %0 = kiln.reshape %x {shape = [0, 2, 3]} : (tensor<?x6xf32>) -> tensor<?x2x3xf32>
      kiln.return %0 : tensor<?x2x3xf32>
    })mlir");
  std::vector<float> x = randomFloats(24, 41);
  HostTensor out = runUnary(HostTensor::floats({4, 6}, x));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{4, 2, 3}));
  EXPECT_EQ(out.f32, x);
}

TEST_F(ReferenceReshape, InfersMinusOneFromElementCount) {
  parse(R"mlir(
    func @f(%x: tensor<?x6xf32>) -> tensor<?x4xf32> {
      %0 = kiln.reshape %x {shape = [-1, 4]} : (tensor<?x6xf32>) -> tensor<?x4xf32>
      kiln.return %0 : tensor<?x4xf32>
    })mlir");
  std::vector<float> x = randomFloats(12, 42);
  HostTensor out = runUnary(HostTensor::floats({2, 6}, x));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(out.f32, x);
}

TEST_F(ReferenceReshape, ReshapesTokenIds) {
  parse(R"mlir(
    func @f(%x: tensor<2x3xi32>) -> tensor<6xi32> {
      %0 = kiln.reshape %x {shape = [6]} : (tensor<2x3xi32>) -> tensor<6xi32>
      kiln.return %0 : tensor<6xi32>
    })mlir");
  HostTensor out = runUnary(HostTensor::ints({2, 3}, {7, 1, 9, 4, 4, 2}));
  EXPECT_TRUE(out.isInt);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(out.i32, (std::vector<int32_t>{7, 1, 9, 4, 4, 2}));
}

TEST_F(ReferenceTranspose, Rank3Rotation) {
  // Result dim i is input dim permutation[i]: out[a][b][c] = in[b][c][a].
  parse(R"mlir(
    func @f(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
      %0 = kiln.transpose %x {permutation = [2, 0, 1]}
          : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
      kiln.return %0 : tensor<4x2x3xf32>
    })mlir");
  std::vector<float> x = randomFloats(24, 43);
  HostTensor out = runUnary(HostTensor::floats({2, 3, 4}, x));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{4, 2, 3}));
  ASSERT_EQ(out.f32.size(), 24u);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(out.f32[(a * 2 + b) * 3 + c], x[(b * 3 + c) * 4 + a]);
}

TEST_F(ReferenceTranspose, SplitHeadsPattern) {
  // [B, S, H, d] -> [B, H, S, d] with a dynamic batch and sequence.
  parse(R"mlir(
    func @f(%x: tensor<?x?x2x3xf32>) -> tensor<?x2x?x3xf32> {
      %0 = kiln.transpose %x {permutation = [0, 2, 1, 3]}
          : (tensor<?x?x2x3xf32>) -> tensor<?x2x?x3xf32>
      kiln.return %0 : tensor<?x2x?x3xf32>
    })mlir");
  const int batch = 2, seq = 4, heads = 2, d = 3;
  std::vector<float> x = randomFloats(batch * seq * heads * d, 44);
  HostTensor out = runUnary(HostTensor::floats({batch, seq, heads, d}, x));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{batch, heads, seq, d}));
  ASSERT_EQ(out.f32.size(), x.size());
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int s = 0; s < seq; ++s)
        for (int c = 0; c < d; ++c)
          EXPECT_EQ(out.f32[((b * heads + h) * seq + s) * d + c],
                    x[((b * seq + s) * heads + h) * d + c]);
}

TEST_F(ReferenceTranspose, TransposesTokenIds) {
  parse(R"mlir(
    func @f(%x: tensor<2x3xi32>) -> tensor<3x2xi32> {
      %0 = kiln.transpose %x {permutation = [1, 0]} : (tensor<2x3xi32>) -> tensor<3x2xi32>
      kiln.return %0 : tensor<3x2xi32>
    })mlir");
  HostTensor out = runUnary(HostTensor::ints({2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(out.isInt);
  EXPECT_EQ(out.i32, (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

} // namespace
