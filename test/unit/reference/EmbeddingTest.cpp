//===- EmbeddingTest.cpp - Embeddings, positions and masks in the interpreter -===//
//
// Expected values come from the ops' definitions, written here another way where there
// is one (the sinusoid's frequency as exp(-2i/D * ln 10000) rather than a power).
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

#include <cmath>
#include <limits>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceEmbedding = ReferenceTest;
using ReferencePositions = ReferenceTest;
using ReferenceMasks = ReferenceTest;

const float kInf = std::numeric_limits<float>::infinity();

TEST_F(ReferenceEmbedding, GathersRowsOfTheTable) {
  parse(R"mlir(
    func @f(%table: tensor<7x5xf32>, %ids: tensor<?x?xi32>) -> tensor<?x?x5xf32> {
      %0 = kiln.embedding %table, %ids
          : (tensor<7x5xf32>, tensor<?x?xi32>) -> tensor<?x?x5xf32>
      kiln.return %0 : tensor<?x?x5xf32>
    })mlir");
  const int vocabulary = 7, features = 5, batch = 2, seq = 3;
  std::vector<float> table = randomFloats(vocabulary * features, 101);
  std::vector<int32_t> ids = randomInts(batch * seq, 102, 0, vocabulary - 1);
  HostTensor out = runBinary(HostTensor::floats({vocabulary, features}, table),
                             HostTensor::ints({batch, seq}, ids));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{batch, seq, features}));
  ASSERT_EQ(out.f32.size(), size_t(batch * seq * features));
  for (int t = 0; t < batch * seq; ++t)
    for (int d = 0; d < features; ++d)
      EXPECT_EQ(out.f32[t * features + d], table[ids[t] * features + d])
          << "token " << t << " (id " << ids[t] << "), feature " << d;
}

TEST_F(ReferenceEmbedding, OutOfRangeIdIsAnErrorNamingIt) {
  parse(R"mlir(
    func @f(%table: tensor<4x2xf32>, %ids: tensor<2x3xi32>) -> tensor<2x3x2xf32> {
      %0 = kiln.embedding %table, %ids
          : (tensor<4x2xf32>, tensor<2x3xi32>) -> tensor<2x3x2xf32>
      kiln.return %0 : tensor<2x3x2xf32>
    })mlir");
  HostTensor table = HostTensor::floats({4, 2}, randomFloats(8, 103));
  std::string error = runError(
      "f", {{"arg0", table}, {"arg1", HostTensor::ints({2, 3}, {1, 2, 3, 0, 4, 1})}});
  EXPECT_TRUE(contains(error, "'kiln.embedding'"));
  EXPECT_TRUE(contains(error, "embedding of 'table' (4 rows): index 4 out of range "
                              "(ids element [1, 1])"));
  EXPECT_TRUE(
      contains(runError("f", {{"arg0", table},
                              {"arg1", HostTensor::ints({2, 3}, {1, -1, 3, 0, 2, 1})}}),
               "index -1 out of range (ids element [0, 1])"));
}

TEST_F(ReferencePositions, RangeFollowsTheDynamicDimension) {
  parse(R"mlir(
    func @f(%x: tensor<?x?x3xf32>) -> tensor<?xi32> {
      %0 = kiln.range %x {axis = 1 : i64} : (tensor<?x?x3xf32>) -> tensor<?xi32>
      kiln.return %0 : tensor<?xi32>
    })mlir");
  HostTensor out = runUnary(HostTensor::floats({2, 6, 3}, randomFloats(36, 104)));
  EXPECT_TRUE(out.isInt);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{6}));
  EXPECT_EQ(out.i32, (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST_F(ReferencePositions, SinusoidMatchesThePaper) {
  parse(R"mlir(
    func @f(%p: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
      %0 = kiln.sinusoid %p : (tensor<?x?xi32>) -> tensor<?x?x8xf32>
      kiln.return %0 : tensor<?x?x8xf32>
    })mlir");
  const int rows = 2, cols = 5, dim = 8;
  std::vector<int32_t> positions = randomInts(rows * cols, 105, 1, 500);
  HostTensor out = runUnary(HostTensor::ints({rows, cols}, positions));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{rows, cols, dim}));
  std::vector<double> expected;
  for (int32_t p : positions)
    for (int k = 0; k < dim; ++k) {
      int i = k / 2;
      double frequency = std::exp(-(2.0 * i / dim) * std::log(10000.0));
      expected.push_back(k % 2 == 0 ? std::sin(p * frequency) : std::cos(p * frequency));
    }
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferencePositions, SinusoidOfRangeStartsAtZeroAndOne) {
  // Position 0 encodes as sin(0) = 0, cos(0) = 1 in every pair.
  parse(R"mlir(
    func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
      %p = kiln.range %x {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<?xi32>
      %0 = kiln.sinusoid %p : (tensor<?xi32>) -> tensor<?x4xf32>
      kiln.return %0 : tensor<?x4xf32>
    })mlir");
  HostTensor out = runUnary(HostTensor::floats({3, 4}, randomFloats(12, 106)));
  ASSERT_EQ(out.f32.size(), 12u);
  EXPECT_EQ(std::vector<float>(out.f32.begin(), out.f32.begin() + 4),
            (std::vector<float>{0, 1, 0, 1}));
  // Position 2, pair 1: angle 2 / 10000^(2/4) = 0.02.
  EXPECT_NEAR(out.f32[2 * 4 + 2], std::sin(0.02), 1e-7);
  EXPECT_NEAR(out.f32[2 * 4 + 3], std::cos(0.02), 1e-7);
}

TEST_F(ReferenceMasks, PaddingMaskIsZeroBeforeEachLength) {
  parse(R"mlir(
    func @f(%len: tensor<?xi32>, %ids: tensor<?x?xi32>) -> tensor<?x?xf32> {
      %0 = kiln.padding_mask %len, %ids {axis = 1 : i64}
          : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
      kiln.return %0 : tensor<?x?xf32>
    })mlir");
  const int batch = 4, keys = 6;
  std::vector<int32_t> lengths = randomInts(batch, 107, 1, keys);
  HostTensor out = runBinary(HostTensor::ints({batch}, lengths),
                             HostTensor::ints({batch, keys}, randomInts(24, 108, 1, 9)));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{batch, keys}));
  ASSERT_EQ(out.f32.size(), size_t(batch * keys));
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < keys; ++j)
      EXPECT_EQ(out.f32[b * keys + j], j < lengths[b] ? 0.0f : -kInf)
          << "row " << b << " (length " << lengths[b] << "), key " << j;
}

TEST_F(ReferenceMasks, PaddingMaskOfExtremeLengths) {
  // Length 0 masks every key, a length past the end none; bounds reject such inputs
  // at the entry, but the op itself stays defined.
  parse(R"mlir(
    func @f(%len: tensor<3xi32>, %x: tensor<3x2x4xf32>) -> tensor<3x4xf32> {
      %0 = kiln.padding_mask %len, %x {axis = 2 : i64}
          : (tensor<3xi32>, tensor<3x2x4xf32>) -> tensor<3x4xf32>
      kiln.return %0 : tensor<3x4xf32>
    })mlir");
  HostTensor out = runBinary(HostTensor::ints({3}, {0, 9, 2}),
                             HostTensor::floats({3, 2, 4}, randomFloats(24, 109)));
  EXPECT_EQ(out.f32, (std::vector<float>{-kInf, -kInf, -kInf, -kInf, 0, 0, 0, 0, 0, 0,
                                         -kInf, -kInf}));
}

TEST_F(ReferenceMasks, CausalMaskHidesTheFuture) {
  parse(R"mlir(
    func @f(%ids: tensor<?x?xi32>) -> tensor<?x?xf32> {
      %0 = kiln.causal_mask %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xf32>
      kiln.return %0 : tensor<?x?xf32>
    })mlir");
  const int n = 5;
  HostTensor out = runUnary(HostTensor::ints({2, n}, randomInts(2 * n, 110, 1, 9)));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{n, n}));
  ASSERT_EQ(out.f32.size(), size_t(n * n));
  for (int query = 0; query < n; ++query)
    for (int key = 0; key < n; ++key)
      EXPECT_EQ(out.f32[query * n + key], key > query ? -kInf : 0.0f)
          << "query " << query << ", key " << key;
}

} // namespace
