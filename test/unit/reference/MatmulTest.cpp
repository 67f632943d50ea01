//===- MatmulTest.cpp - kiln.matmul in the interpreter --------------------===//
//
// Expected products are computed from the logical matrices; the test then stores them
// transposed where a flag says so, so the flags are checked against their meaning.
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

#include "llvm/Support/FormatVariadic.h"

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceMatmul = ReferenceTest;

/// Row-major [rows, cols] -> [cols, rows].
std::vector<float> transposed(const std::vector<float> &m, int rows, int cols) {
  std::vector<float> t(m.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      t[c * rows + r] = m[r * cols + c];
  return t;
}

TEST_F(ReferenceMatmul, HandComputed2x2) {
  parse(R"mlir(
    func @f(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = kiln.matmul %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      kiln.return %0 : tensor<2x2xf32>
    })mlir");
  HostTensor out = runBinary(HostTensor::floats({2, 2}, {1, 2, 3, 4}),
                             HostTensor::floats({2, 2}, {5, 6, 7, 8}));
  EXPECT_EQ(out.f32, (std::vector<float>{19, 22, 43, 50}));
}

/// (transpose_lhs, transpose_rhs).
class ReferenceMatmulFlags : public ReferenceTest,
                             public ::testing::WithParamInterface<std::pair<bool, bool>> {
};

TEST_P(ReferenceMatmulFlags, MatchesLogicalProduct) {
  auto [tl, tr] = GetParam();
  const int m = 3, k = 5, n = 4;
  std::string lhsType = tl ? "tensor<5x3xf32>" : "tensor<3x5xf32>";
  std::string rhsType = tr ? "tensor<4x5xf32>" : "tensor<5x4xf32>";
  parse(llvm::formatv(R"mlir(
    func @f(%a: {0}, %b: {1}) -> tensor<3x4xf32> {
      %0 = kiln.matmul %a, %b {{transpose_lhs = {2}, transpose_rhs = {3}}
          : ({0}, {1}) -> tensor<3x4xf32>
      kiln.return %0 : tensor<3x4xf32>
    })mlir",
                      lhsType, rhsType, tl, tr)
            .str());
  std::vector<float> a = randomFloats(m * k, 11), b = randomFloats(k * n, 12);
  std::vector<double> expected(m * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int c = 0; c < k; ++c)
        expected[i * n + j] += double(a[i * k + c]) * b[c * n + j];
  HostTensor lhs = tl ? HostTensor::floats({k, m}, transposed(a, m, k))
                      : HostTensor::floats({m, k}, a);
  HostTensor rhs = tr ? HostTensor::floats({n, k}, transposed(b, k, n))
                      : HostTensor::floats({k, n}, b);
  HostTensor out = runBinary(lhs, rhs);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{m, n}));
  expectClose(out.f32, expected, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(AllFlags, ReferenceMatmulFlags,
                         ::testing::Values(std::pair{false, false},
                                           std::pair{true, false}, std::pair{false, true},
                                           std::pair{true, true}));

TEST_F(ReferenceMatmul, BatchDimsBroadcast) {
  // [2, 1, 3, 4] x [5, 4, 6] -> [2, 5, 3, 6]: the lhs repeats over the rhs batch and
  // the rhs over the lhs's leading batch dim.
  parse(R"mlir(
    func @f(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32> {
      %0 = kiln.matmul %a, %b
          : (tensor<2x1x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x5x3x6xf32>
      kiln.return %0 : tensor<2x5x3x6xf32>
    })mlir");
  std::vector<float> a = randomFloats(2 * 3 * 4, 13), b = randomFloats(5 * 4 * 6, 14);
  std::vector<double> expected;
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 5; ++q)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 6; ++j) {
          double sum = 0;
          for (int c = 0; c < 4; ++c)
            sum += double(a[(p * 3 + i) * 4 + c]) * b[(q * 4 + c) * 6 + j];
          expected.push_back(sum);
        }
  HostTensor out =
      runBinary(HostTensor::floats({2, 1, 3, 4}, a), HostTensor::floats({5, 4, 6}, b));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{2, 5, 3, 6}));
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferenceMatmul, AttentionScoresWithTransposedKeys) {
  // q [B, H, T, d] x k [B, H, S, d]^T -> [B, H, T, S], batch dims equal and dynamic.
  parse(R"mlir(
    func @f(%q: tensor<?x2x3x4xf32>, %k: tensor<?x2x5x4xf32>) -> tensor<?x2x3x5xf32> {
      %0 = kiln.matmul %q, %k {transpose_rhs = true}
          : (tensor<?x2x3x4xf32>, tensor<?x2x5x4xf32>) -> tensor<?x2x3x5xf32>
      kiln.return %0 : tensor<?x2x3x5xf32>
    })mlir");
  const int batch = 2, heads = 2, t = 3, s = 5, d = 4;
  std::vector<float> q = randomFloats(batch * heads * t * d, 15);
  std::vector<float> k = randomFloats(batch * heads * s * d, 16);
  std::vector<double> expected;
  for (int bh = 0; bh < batch * heads; ++bh)
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < s; ++j) {
        double sum = 0;
        for (int c = 0; c < d; ++c)
          sum += double(q[(bh * t + i) * d + c]) * k[(bh * s + j) * d + c];
        expected.push_back(sum);
      }
  HostTensor out = runBinary(HostTensor::floats({batch, heads, t, d}, q),
                             HostTensor::floats({batch, heads, s, d}, k));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{batch, heads, t, s}));
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferenceMatmul, LinearLayerWithParametersAndNamedOutputs) {
  // y = relu(x W^T + b) and z = 0.5 * y, as a DSL `linear` lowers.
  parse(R"mlir(
    func @f(%x: tensor<?x4xf32> {kiln.name = "x", kiln.dims = ["B", ""]})
        -> (tensor<?x3xf32> {kiln.name = "y"}, tensor<?x3xf32> {kiln.name = "z"}) {
      %w = kiln.parameter "fc.weight" : tensor<3x4xf32>
      %b = kiln.parameter "fc.bias" : tensor<3xf32>
      %0 = kiln.matmul %x, %w {transpose_rhs = true}
          : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
      %1 = kiln.add %0, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      %2 = kiln.relu %1 : tensor<?x3xf32>
      %3 = kiln.scale %2 {factor = 0.5 : f32} : tensor<?x3xf32>
      kiln.return %2, %3 : tensor<?x3xf32>, tensor<?x3xf32>
    })mlir");
  std::vector<float> x = randomFloats(8, 17), w = randomFloats(12, 18),
                     b = randomFloats(3, 19);
  TensorMap out = runOk("f", {{"x", HostTensor::floats({2, 4}, x)}},
                        {{"fc.weight", HostTensor::floats({3, 4}, w)},
                         {"fc.bias", HostTensor::floats({3}, b)}});
  ASSERT_EQ(out.size(), 2u);
  ASSERT_TRUE(out.count("y") && out.count("z"));
  std::vector<double> y, z;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      double sum = 0;
      for (int c = 0; c < 4; ++c)
        sum += double(x[i * 4 + c]) * w[j * 4 + c];
      float pre = float(sum) + b[j];
      y.push_back(pre > 0 ? pre : 0);
      z.push_back(0.5 * y.back());
    }
  EXPECT_EQ(out["y"].shape, (std::vector<int64_t>{2, 3}));
  expectClose(out["y"].f32, y, 1e-6);
  expectClose(out["z"].f32, z, 1e-6);
}

} // namespace
