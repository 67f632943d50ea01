//===- LayersTest.cpp - linear, gelu, log_softmax and argmax in the interpreter ===//
//
// Expected values are computed here from the definitions, by another route where there
// is one: GELU through erfc, log_softmax as the log of a plain softmax, argmax with
// std::max_element.
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceLinear = ReferenceTest;
using ReferenceGelu = ReferenceTest;
using ReferenceLogSoftmax = ReferenceTest;
using ReferenceArgmax = ReferenceTest;

const float kInf = std::numeric_limits<float>::infinity();

TEST_F(ReferenceLinear, WeightIsStoredOutByIn) {
  parse(R"mlir(
    func @f(%x: tensor<?x?x4xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>)
        -> tensor<?x?x3xf32> {
      %0 = kiln.linear %x, %w, %b
          : (tensor<?x?x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x?x3xf32>
      kiln.return %0 : tensor<?x?x3xf32>
    })mlir");
  const int batch = 2, seq = 3, in = 4, out = 3;
  std::vector<float> x = randomFloats(batch * seq * in, 201);
  std::vector<float> w = randomFloats(out * in, 202);
  std::vector<float> b = randomFloats(out, 203);
  TensorMap result = runOk("f", {{"arg0", HostTensor::floats({batch, seq, in}, x)},
                                 {"arg1", HostTensor::floats({out, in}, w)},
                                 {"arg2", HostTensor::floats({out}, b)}});
  const HostTensor &y = result["result0"];
  EXPECT_EQ(y.shape, (std::vector<int64_t>{batch, seq, out}));
  // Transpose W into [in, out] first, then an ordinary row-times-matrix product.
  std::vector<double> wt(in * out);
  for (int o = 0; o < out; ++o)
    for (int i = 0; i < in; ++i)
      wt[i * out + o] = w[o * in + i];
  std::vector<double> expected;
  for (int r = 0; r < batch * seq; ++r)
    for (int o = 0; o < out; ++o) {
      double sum = 0.0;
      for (int i = 0; i < in; ++i)
        sum += x[r * in + i] * wt[i * out + o];
      expected.push_back(sum + b[o]);
    }
  expectClose(y.f32, expected, 1e-6);
}

TEST_F(ReferenceLinear, RuntimeFeatureMismatchIsAnError) {
  parse(R"mlir(
    func @f(%x: tensor<2x?xf32>, %w: tensor<3x4xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = kiln.linear %x, %w, %b
          : (tensor<2x?xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      kiln.return %0 : tensor<2x3xf32>
    })mlir");
  std::string error =
      runError("f", {{"arg0", HostTensor::floats({2, 5}, randomFloats(10, 204))},
                     {"arg1", HostTensor::floats({3, 4}, randomFloats(12, 205))},
                     {"arg2", HostTensor::floats({3}, randomFloats(3, 206))}});
  EXPECT_TRUE(contains(error, "'kiln.linear'"));
  EXPECT_TRUE(
      contains(error, "linear input [2, 5], weight [3, 4] and bias [3] do not fit"));
}

TEST_F(ReferenceGelu, ExactErfForm) {
  parse(R"mlir(
    func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
      %0 = kiln.gelu %x : tensor<?xf32>
      kiln.return %0 : tensor<?xf32>
    })mlir");
  std::vector<float> x = randomFloats(64, 207, -5.0f, 5.0f);
  HostTensor out = runUnary(HostTensor::floats({64}, x));
  std::vector<double> expected;
  // Phi(x) = erfc(-x / sqrt 2) / 2.
  for (float v : x)
    expected.push_back(v * 0.5 * std::erfc(-v / std::sqrt(2.0)));
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferenceGelu, KnownValues) {
  parse(R"mlir(
    func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = kiln.gelu %x : tensor<3xf32>
      kiln.return %0 : tensor<3xf32>
    })mlir");
  // x * Phi(x) for x = 1, -1, 2 (Phi from tables: 0.841344746, 0.158655254, 0.977249868).
  HostTensor out = runUnary(HostTensor::floats({3}, {1.0f, -1.0f, 2.0f}));
  expectClose(out.f32, {0.841344746, -0.158655254, 1.954499736}, 1e-6);
}

TEST_F(ReferenceGelu, FarNegativeTailKeepsItsDigits) {
  parse(R"mlir(
    func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = kiln.gelu %x : tensor<2xf32>
      kiln.return %0 : tensor<2xf32>
    })mlir");
  // 1 + erf(x / sqrt 2) cancels completely here; Phi(-8) = 6.220960574e-16 and
  // Phi(-10) = 7.619853024e-24 from tables.
  HostTensor out = runUnary(HostTensor::floats({2}, {-8.0f, -10.0f}));
  EXPECT_NEAR(out.f32[0] / (-8.0 * 6.220960574e-16), 1.0, 1e-6);
  EXPECT_NEAR(out.f32[1] / (-10.0 * 7.619853024e-24), 1.0, 1e-6);
}

TEST_F(ReferenceLogSoftmax, IsTheLogOfSoftmaxAlongTheAxis) {
  parse(R"mlir(
    func @f(%x: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
      %0 = kiln.log_softmax %x {axis = 1 : i64} : tensor<?x?x?xf32>
      kiln.return %0 : tensor<?x?x?xf32>
    })mlir");
  // Along the middle axis, so the lines are strided.
  const int a = 2, n = 5, c = 3;
  std::vector<float> x = randomFloats(a * n * c, 208, -6.0f, 6.0f);
  HostTensor out = runUnary(HostTensor::floats({a, n, c}, x));
  EXPECT_EQ(out.shape, (std::vector<int64_t>{a, n, c}));
  std::vector<double> expected(x.size());
  for (int i = 0; i < a; ++i)
    for (int k = 0; k < c; ++k) {
      double sum = 0.0;
      for (int j = 0; j < n; ++j)
        sum += std::exp(double(x[(i * n + j) * c + k]));
      for (int j = 0; j < n; ++j)
        expected[(i * n + j) * c + k] =
            std::log(std::exp(double(x[(i * n + j) * c + k])) / sum);
    }
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferenceLogSoftmax, LargeLogitsDoNotOverflow) {
  parse(R"mlir(
    func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %0 = kiln.log_softmax %x {axis = 0 : i64} : tensor<3xf32>
      kiln.return %0 : tensor<3xf32>
    })mlir");
  // exp(1000) overflows; shifted by the max the result is log_softmax([0, -1, -2]).
  HostTensor out = runUnary(HostTensor::floats({3}, {1000.0f, 999.0f, 998.0f}));
  double logSum = std::log(1.0 + std::exp(-1.0) + std::exp(-2.0));
  expectClose(out.f32, {-logSum, -1.0 - logSum, -2.0 - logSum}, 1e-6);
}

TEST_F(ReferenceLogSoftmax, MaskedKeysAndFullyMaskedRows) {
  parse(R"mlir(
    func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = kiln.log_softmax %x {axis = 1 : i64} : tensor<2x3xf32>
      kiln.return %0 : tensor<2x3xf32>
    })mlir");
  // Row 0: one masked key stays -inf, the others normalise over themselves. Row 1: all
  // masked gives -inf everywhere (the log of softmax's 0), not NaN.
  HostTensor out =
      runUnary(HostTensor::floats({2, 3}, {0.5f, -kInf, -0.25f, -kInf, -kInf, -kInf}));
  ASSERT_EQ(out.f32.size(), 6u);
  double logSum = std::log(std::exp(0.5) + std::exp(-0.25));
  EXPECT_NEAR(out.f32[0], 0.5 - logSum, 1e-6);
  EXPECT_EQ(out.f32[1], -kInf);
  EXPECT_NEAR(out.f32[2], -0.25 - logSum, 1e-6);
  for (int j = 3; j < 6; ++j)
    EXPECT_EQ(out.f32[j], -kInf) << "element " << j;
}

TEST_F(ReferenceArgmax, PicksTheLargestAlongTheAxis) {
  parse(R"mlir(
    func @f(%x: tensor<?x?x?xf32>) -> tensor<?x?xi32> {
      %0 = kiln.argmax %x {axis = 2 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?xi32>
      kiln.return %0 : tensor<?x?xi32>
    })mlir");
  const int batch = 3, seq = 4, vocabulary = 11;
  std::vector<float> x = randomFloats(batch * seq * vocabulary, 209);
  HostTensor out = runUnary(HostTensor::floats({batch, seq, vocabulary}, x));
  EXPECT_TRUE(out.isInt);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{batch, seq}));
  std::vector<int32_t> expected;
  for (int r = 0; r < batch * seq; ++r) {
    auto row = x.begin() + r * vocabulary;
    expected.push_back(std::max_element(row, row + vocabulary) - row);
  }
  EXPECT_EQ(out.i32, expected);
}

TEST_F(ReferenceArgmax, LeadingAxisTiesAndNaN) {
  parse(R"mlir(
    func @f(%x: tensor<3x4xf32>) -> tensor<4xi32> {
      %0 = kiln.argmax %x {axis = 0 : i64} : (tensor<3x4xf32>) -> tensor<4xi32>
      kiln.return %0 : tensor<4xi32>
    })mlir");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Columns: a clear maximum in row 2; a tie of rows 0 and 2 (the first wins); a NaN in
  // row 1 (it wins, as in PyTorch); all -inf (the first).
  HostTensor out =
      runUnary(HostTensor::floats({3, 4}, {0.5f, 0.75f, 0.25f, -kInf, -1.0f, 0.5f, nan,
                                           -kInf, 2.0f, 0.75f, 3.0f, -kInf}));
  EXPECT_EQ(out.i32, (std::vector<int32_t>{2, 0, 1, 0}));
}

} // namespace
