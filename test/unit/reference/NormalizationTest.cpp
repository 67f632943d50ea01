//===- NormalizationTest.cpp - softmax, layer_norm, rms_norm in the interpreter ===//

#include "ReferenceTestUtil.h"

#include <cmath>
#include <limits>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceSoftmax = ReferenceTest;
using ReferenceLayerNorm = ReferenceTest;
using ReferenceRmsNorm = ReferenceTest;

const float kInf = std::numeric_limits<float>::infinity();

/// softmax of one row, from the definition exp(x_i) / sum_j exp(x_j) with the max
/// subtracted (only so the test itself does not overflow).
std::vector<double> softmaxRow(const std::vector<double> &row) {
  double max = *std::max_element(row.begin(), row.end());
  double sum = 0;
  for (double v : row)
    sum += std::exp(v - max);
  std::vector<double> out;
  for (double v : row)
    out.push_back(std::exp(v - max) / sum);
  return out;
}

const char *kSoftmaxLastAxis = R"mlir(
    func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = kiln.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
      kiln.return %0 : tensor<2x3xf32>
    })mlir";

TEST_F(ReferenceSoftmax, LastAxisOfRandomRows) {
  parse(R"mlir(
    func @f(%x: tensor<2x3x7xf32>) -> tensor<2x3x7xf32> {
      %0 = kiln.softmax %x {axis = 2 : i64} : tensor<2x3x7xf32>
      kiln.return %0 : tensor<2x3x7xf32>
    })mlir");
  std::vector<float> x = randomFloats(42, 21, -4.0f, 4.0f);
  HostTensor out = runUnary(HostTensor::floats({2, 3, 7}, x));
  std::vector<double> expected;
  for (int r = 0; r < 6; ++r) {
    std::vector<double> row(x.begin() + r * 7, x.begin() + (r + 1) * 7);
    for (double p : softmaxRow(row))
      expected.push_back(p);
  }
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferenceSoftmax, MiddleAxis) {
  // Along axis 1 of [2, 3, 4]: each (i, k) column of 3 elements sums to 1.
  parse(R"mlir(
    func @f(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
      %0 = kiln.softmax %x {axis = 1 : i64} : tensor<2x3x4xf32>
      kiln.return %0 : tensor<2x3x4xf32>
    })mlir");
  std::vector<float> x = randomFloats(24, 22, -4.0f, 4.0f);
  HostTensor out = runUnary(HostTensor::floats({2, 3, 4}, x));
  std::vector<double> expected(24);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      std::vector<double> column;
      for (int j = 0; j < 3; ++j)
        column.push_back(x[(i * 3 + j) * 4 + k]);
      std::vector<double> p = softmaxRow(column);
      for (int j = 0; j < 3; ++j)
        expected[(i * 3 + j) * 4 + k] = p[j];
    }
  expectClose(out.f32, expected, 1e-6);
}

TEST_F(ReferenceSoftmax, FullyMaskedRowIsZeroNotNaN) {
  parse(kSoftmaxLastAxis);
  HostTensor out =
      runUnary(HostTensor::floats({2, 3}, {-kInf, -kInf, -kInf, 0.5f, 1.5f, -1.0f}));
  ASSERT_EQ(out.f32.size(), 6u);
  for (int j = 0; j < 3; ++j)
    EXPECT_EQ(out.f32[j], 0.0f);
  expectClose({out.f32.begin() + 3, out.f32.end()}, softmaxRow({0.5, 1.5, -1.0}), 1e-6);
}

TEST_F(ReferenceSoftmax, PartlyMaskedRowIgnoresMaskedKeys) {
  parse(kSoftmaxLastAxis);
  HostTensor out =
      runUnary(HostTensor::floats({2, 3}, {1.0f, -kInf, 2.0f, -kInf, 3.0f, -kInf}));
  double e1 = std::exp(1.0), e2 = std::exp(2.0);
  expectClose(out.f32, {e1 / (e1 + e2), 0.0, e2 / (e1 + e2), 0.0, 1.0, 0.0}, 1e-6);
}

TEST_F(ReferenceSoftmax, LargeMagnitudesDoNotOverflow) {
  // exp(1000) and exp(3e38) overflow any float or double; only x - max is safe.
  parse(kSoftmaxLastAxis);
  HostTensor out = runUnary(
      HostTensor::floats({2, 3}, {1000.0f, 999.0f, -1000.0f, 3e38f, 3e38f, -3e38f}));
  double e = std::exp(-1.0);
  expectClose(out.f32, {1 / (1 + e), e / (1 + e), 0.0, 0.5, 0.5, 0.0}, 1e-6);
  for (float p : out.f32)
    EXPECT_TRUE(std::isfinite(p));
}

TEST_F(ReferenceSoftmax, NaNPropagatesToItsRow) {
  parse(kSoftmaxLastAxis);
  float nan = std::numeric_limits<float>::quiet_NaN();
  HostTensor out =
      runUnary(HostTensor::floats({2, 3}, {1.0f, nan, 2.0f, 0.0f, 0.0f, 0.0f}));
  ASSERT_EQ(out.f32.size(), 6u);
  for (int j = 0; j < 3; ++j) {
    EXPECT_TRUE(std::isnan(out.f32[j]));
    EXPECT_NEAR(out.f32[3 + j], 1.0 / 3.0, 1e-7);
  }
}

const char *kLayerNorm = R"mlir(
    func @f(%x: tensor<?x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
      %0 = kiln.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32}
          : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
      kiln.return %0 : tensor<?x8xf32>
    })mlir";

/// (x - mean) / sqrt(var + eps) * gamma + beta over rows of `features`.
std::vector<double> layerNormRows(const std::vector<float> &x,
                                  const std::vector<float> &g,
                                  const std::vector<float> &b, int features, double eps) {
  std::vector<double> out;
  for (size_t r = 0; r < x.size() / features; ++r) {
    double mean = 0, var = 0;
    for (int j = 0; j < features; ++j)
      mean += x[r * features + j] / double(features);
    for (int j = 0; j < features; ++j)
      var += std::pow(x[r * features + j] - mean, 2) / features;
    for (int j = 0; j < features; ++j)
      out.push_back((x[r * features + j] - mean) / std::sqrt(var + eps) * g[j] + b[j]);
  }
  return out;
}

TEST_F(ReferenceLayerNorm, HandComputedRow) {
  // mean 2.5, biased variance 1.25: (x - 2.5) / sqrt(1.25) = ±0.4472136, ±1.3416408.
  parse(R"mlir(
    func @f(%x: tensor<1x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
      %0 = kiln.layer_norm %x, %g, %b {epsilon = 0.0 : f32}
          : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
      kiln.return %0 : tensor<1x4xf32>
    })mlir");
  TensorMap out = runOk("f", {{"arg0", HostTensor::floats({1, 4}, {1, 2, 3, 4})},
                              {"arg1", HostTensor::floats({4}, {1, 1, 2, 1})},
                              {"arg2", HostTensor::floats({4}, {0, 0, 0, 10})}});
  expectClose(out["result0"].f32, {-1.3416408, -0.4472136, 0.8944272, 11.3416408}, 1e-6);
}

TEST_F(ReferenceLayerNorm, RandomRowsWithGammaAndBeta) {
  parse(kLayerNorm);
  std::vector<float> x = randomFloats(5 * 8, 31, -3.0f, 3.0f), g = randomFloats(8, 32),
                     b = randomFloats(8, 33);
  TensorMap out = runOk("f", {{"arg0", HostTensor::floats({5, 8}, x)},
                              {"arg1", HostTensor::floats({8}, g)},
                              {"arg2", HostTensor::floats({8}, b)}});
  EXPECT_EQ(out["result0"].shape, (std::vector<int64_t>{5, 8}));
  expectClose(out["result0"].f32, layerNormRows(x, g, b, 8, 1e-5), 1e-5);
}

TEST_F(ReferenceLayerNorm, LargeOffsetKeepsPrecision) {
  // Values near 1e4 with spread ~1: a one-pass float E[x^2] - E[x]^2 loses every digit.
  parse(kLayerNorm);
  std::vector<float> x = randomFloats(2 * 8, 34, 9999.0f, 10001.0f);
  std::vector<float> ones(8, 1.0f), zeros(8, 0.0f);
  TensorMap out = runOk("f", {{"arg0", HostTensor::floats({2, 8}, x)},
                              {"arg1", HostTensor::floats({8}, ones)},
                              {"arg2", HostTensor::floats({8}, zeros)}});
  expectClose(out["result0"].f32, layerNormRows(x, ones, zeros, 8, 1e-5), 1e-5);
}

TEST_F(ReferenceRmsNorm, HandComputedRow) {
  // mean(x^2) = (1 + 4 + 4 + 16) / 4 = 6.25, rms 2.5: x / 2.5 * gamma.
  parse(R"mlir(
    func @f(%x: tensor<1x4xf32>, %g: tensor<4xf32>) -> tensor<1x4xf32> {
      %0 = kiln.rms_norm %x, %g {epsilon = 0.0 : f32}
          : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
      kiln.return %0 : tensor<1x4xf32>
    })mlir");
  HostTensor out = runBinary(HostTensor::floats({1, 4}, {1, -2, 2, 4}),
                             HostTensor::floats({4}, {1, 1, 3, 0.5}));
  expectClose(out.f32, {0.4, -0.8, 2.4, 0.8}, 1e-7);
}

TEST_F(ReferenceRmsNorm, RandomRowsWithEpsilon) {
  parse(R"mlir(
    func @f(%x: tensor<?x16xf32>, %g: tensor<16xf32>) -> tensor<?x16xf32> {
      %0 = kiln.rms_norm %x, %g {epsilon = 0.5 : f32}
          : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
      kiln.return %0 : tensor<?x16xf32>
    })mlir");
  std::vector<float> x = randomFloats(3 * 16, 41, -3.0f, 3.0f), g = randomFloats(16, 42);
  HostTensor out = runBinary(HostTensor::floats({3, 16}, x), HostTensor::floats({16}, g));
  // The definition, row by row, with the (large) epsilon inside the square root.
  std::vector<double> expected;
  for (int r = 0; r < 3; ++r) {
    double squares = 0;
    for (int j = 0; j < 16; ++j)
      squares += double(x[r * 16 + j]) * x[r * 16 + j];
    for (int j = 0; j < 16; ++j)
      expected.push_back(x[r * 16 + j] / std::sqrt(squares / 16 + 0.5) * g[j]);
  }
  EXPECT_EQ(out.shape, (std::vector<int64_t>{3, 16}));
  expectClose(out.f32, expected, 1e-6);
}

} // namespace
