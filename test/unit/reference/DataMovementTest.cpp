//===- DataMovementTest.cpp - reshape, transpose, slice, concat in the interpreter ===//

#include "ReferenceTestUtil.h"

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceReshape = ReferenceTest;
using ReferenceTranspose = ReferenceTest;
using ReferenceSlice = ReferenceTest;
using ReferenceConcat = ReferenceTest;

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

TEST_F(ReferenceSlice, MiddleAxisOfDynamicTensor) {
  // One head's features: x[:, :, 2:5] of [B, S, 6].
  parse(R"mlir(
    func @f(%x: tensor<?x?x6xf32>) -> tensor<?x?x3xf32> {
      %0 = kiln.slice %x {axis = 2 : i64, start = 2 : i64, end = 5 : i64}
          : (tensor<?x?x6xf32>) -> tensor<?x?x3xf32>
      kiln.return %0 : tensor<?x?x3xf32>
    })mlir");
  const int batch = 2, seq = 3;
  std::vector<float> x = randomFloats(batch * seq * 6, 45);
  HostTensor out = runUnary(HostTensor::floats({batch, seq, 6}, x));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{batch, seq, 3}));
  ASSERT_EQ(out.f32.size(), size_t(batch * seq * 3));
  for (int r = 0; r < batch * seq; ++r)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(out.f32[r * 3 + j], x[r * 6 + 2 + j]);
}

TEST_F(ReferenceSlice, DynamicAxisOfTokenIds) {
  // The first two tokens of each sequence, from a dynamic sequence dimension.
  parse(R"mlir(
    func @f(%x: tensor<?x?xi32>) -> tensor<?x2xi32> {
      %0 = kiln.slice %x {axis = 1 : i64, start = 1 : i64, end = 3 : i64}
          : (tensor<?x?xi32>) -> tensor<?x2xi32>
      kiln.return %0 : tensor<?x2xi32>
    })mlir");
  HostTensor out = runUnary(HostTensor::ints({2, 4}, {5, 6, 7, 8, 9, 10, 11, 12}));
  EXPECT_TRUE(out.isInt);
  EXPECT_EQ(out.i32, (std::vector<int32_t>{6, 7, 10, 11}));
}

TEST_F(ReferenceSlice, PastTheEndOfADynamicDimensionIsAnError) {
  parse(R"mlir(
    func @f(%x: tensor<?x?xf32>) -> tensor<?x2xf32> {
      %0 = kiln.slice %x {axis = 1 : i64, start = 1 : i64, end = 3 : i64}
          : (tensor<?x?xf32>) -> tensor<?x2xf32>
      kiln.return %0 : tensor<?x2xf32>
    })mlir");
  HostTensor x = HostTensor::floats({2, 2}, randomFloats(4, 46));
  EXPECT_TRUE(contains(runError("f", {{"arg0", x}}),
                       "slice [1, 3) does not fit dimension 1 of [2, 2]"));
}

TEST_F(ReferenceConcat, ThreeOperandsAlongTheMiddleAxis) {
  parse(R"mlir(
    func @f(%a: tensor<2x?x3xf32>, %b: tensor<2x1x3xf32>, %c: tensor<2x?x3xf32>)
        -> tensor<2x?x3xf32> {
      %0 = kiln.concat %a, %b, %c {axis = 1 : i64}
          : (tensor<2x?x3xf32>, tensor<2x1x3xf32>, tensor<2x?x3xf32>) -> tensor<2x?x3xf32>
      kiln.return %0 : tensor<2x?x3xf32>
    })mlir");
  std::vector<float> a = randomFloats(2 * 2 * 3, 47), b = randomFloats(2 * 1 * 3, 48),
                     c = randomFloats(2 * 3 * 3, 49);
  TensorMap result = runOk("f", {{"arg0", HostTensor::floats({2, 2, 3}, a)},
                                 {"arg1", HostTensor::floats({2, 1, 3}, b)},
                                 {"arg2", HostTensor::floats({2, 3, 3}, c)}});
  const HostTensor &out = result["result0"];
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 6, 3}));
  ASSERT_EQ(out.f32.size(), 36u);
  // Position j of the joined axis comes from a (j < 2), b (j == 2) or c (j > 2).
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 6; ++j)
      for (int k = 0; k < 3; ++k) {
        float expected = j < 2    ? a[(i * 2 + j) * 3 + k]
                         : j == 2 ? b[i * 3 + k]
                                  : c[(i * 3 + (j - 3)) * 3 + k];
        EXPECT_EQ(out.f32[(i * 6 + j) * 3 + k], expected) << i << ", " << j << ", " << k;
      }
}

TEST_F(ReferenceConcat, AppendsATokenAlongTheLastAxis) {
  parse(R"mlir(
    func @f(%ys: tensor<?x?xi32>, %next: tensor<?x1xi32>) -> tensor<?x?xi32> {
      %0 = kiln.concat %ys, %next {axis = 1 : i64}
          : (tensor<?x?xi32>, tensor<?x1xi32>) -> tensor<?x?xi32>
      kiln.return %0 : tensor<?x?xi32>
    })mlir");
  HostTensor out = runBinary(HostTensor::ints({2, 3}, {1, 4, 6, 1, 9, 2}),
                             HostTensor::ints({2, 1}, {7, 3}));
  EXPECT_TRUE(out.isInt);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(out.i32, (std::vector<int32_t>{1, 4, 6, 7, 1, 9, 2, 3}));
}

TEST_F(ReferenceConcat, DynamicSizesThatDoNotFitAreAnError) {
  parse(R"mlir(
    func @f(%a: tensor<?x2xf32>, %b: tensor<?x2xf32>) -> tensor<?x4xf32> {
      %0 = kiln.concat %a, %b {axis = 1 : i64}
          : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<?x4xf32>
      kiln.return %0 : tensor<?x4xf32>
    })mlir");
  HostTensor a = HostTensor::floats({2, 2}, randomFloats(4, 50));
  HostTensor b = HostTensor::floats({3, 2}, randomFloats(6, 51));
  std::string error = runError("f", {{"arg0", a}, {"arg1", b}});
  EXPECT_TRUE(contains(error, "concat operand [3, 2] does not fit operand #0 [2, 2]"));
}

} // namespace
