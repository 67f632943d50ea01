//===- QuantizationTest.cpp - bf16 and int8 weights in the interpreter -----===//
//
// Converted parameters (kiln-weight-precision's) and kiln.quantized_linear. The hand
// cases use values whose scales are powers of two, so every f32 step is exact and the
// expected numbers can be checked on paper, ties to even included; the random cases
// compare with products computed here in double, within the quantization error bound.
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

#include <algorithm>
#include <cmath>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceQuantizedLinear = ReferenceTest;
using ReferenceConvertedWeights = ReferenceTest;

/// `x` rounded to 8 significant bits, ties to even: bf16's rounding of a normal f32,
/// by another route than the interpreter's bit arithmetic.
float bf16Rounded(float x) {
  int exponent;
  double mantissa = std::frexp(x, &exponent); // in [0.5, 1)
  return static_cast<float>(
      std::ldexp(std::nearbyint(std::ldexp(mantissa, 8)), exponent - 8));
}

TEST_F(ReferenceQuantizedLinear, HandComputed) {
  // Row 0: max 127, so the activation factor is 1 (2.5 -> 2 and -3.5 -> -4 are ties).
  // Row 1: all zero, so only the bias is left. Row 2: max 254, factor 0.5, row scale 2
  // (5 -> 2.5 -> 2, -7 -> -3.5 -> -4).
  parse(R"mlir(
    func @f(%x: tensor<3x4xf32>, %b: tensor<2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
      %w = kiln.parameter "w" {source = "src", conversion = "int8"} : tensor<2x4xi8>
      %s = kiln.parameter "s" {source = "src", conversion = "int8_scale"} : tensor<2xf32>
      %0 = kiln.quantized_linear %x, %w, %s, %b
          : (tensor<3x4xf32>, tensor<2x4xi8>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
      %1 = kiln.quantized_linear %x, %w, %s
          : (tensor<3x4xf32>, tensor<2x4xi8>, tensor<2xf32>) -> tensor<3x2xf32>
      kiln.return %0, %1 : tensor<3x2xf32>, tensor<3x2xf32>
    })mlir");
  TensorMap out = runOk("f",
                        {{"arg0", HostTensor::floats({3, 4}, {127, 2.5, -3.5, 0.5, 0, 0,
                                                              0, 0, 5, -7, 0, -254})},
                         {"arg1", HostTensor::floats({2}, {1, -2})}},
                        {{"w", HostTensor::ints({2, 4}, {1, 2, 3, 4, -127, 0, 10, 0})},
                         {"s", HostTensor::floats({2}, {0.5, 2})}});
  // Row 0: q = [127, 2, -4, 0]; acc = [119, -16169]; times [1 * 0.5, 1 * 2].
  // Row 2: q = [2, -4, 0, -127]; acc = [-514, -254]; times [2 * 0.5, 2 * 2].
  EXPECT_EQ(out["result0"].f32, (std::vector<float>{60.5, -32340, 1, -2, -513, -1018}));
  EXPECT_EQ(out["result1"].f32, (std::vector<float>{59.5, -32338, 0, 0, -514, -1016}));
}

TEST_F(ReferenceQuantizedLinear, MatchesLinearOverDequantizedWeight) {
  // Only the activations' rounding separates the two: |x - q a / 127| <= a / 254 for
  // each element, so |error[m, o]| <= (a[m] / 254) sum_i |dequantized[o, i]|, plus f32
  // rounding of the sums.
  parse(R"mlir(
    func @f(%x: tensor<?x?x64xf32>) -> tensor<?x?x16xf32> {
      %w = kiln.parameter "w.int8" {source = "w", conversion = "int8"} : tensor<16x64xi8>
      %s = kiln.parameter "w.int8.scale" {source = "w", conversion = "int8_scale"}
          : tensor<16xf32>
      %b = kiln.parameter "b" : tensor<16xf32>
      %0 = kiln.quantized_linear %x, %w, %s, %b
          : (tensor<?x?x64xf32>, tensor<16x64xi8>, tensor<16xf32>, tensor<16xf32>)
          -> tensor<?x?x16xf32>
      kiln.return %0 : tensor<?x?x16xf32>
    })mlir");
  const int rows = 2 * 3, in = 64, out = 16;
  std::vector<float> x = randomFloats(rows * in, 901);
  std::vector<float> w = randomFloats(out * in, 902, -0.5f, 0.5f);
  std::vector<float> b = randomFloats(out, 903);
  // The weights are converted here, so the interpreter's own conversion is not what
  // the bound is measured against.
  std::vector<int32_t> q(out * in);
  std::vector<float> scale(out);
  for (int o = 0; o < out; ++o) {
    float amax = 0;
    for (int i = 0; i < in; ++i)
      amax = std::max(amax, std::abs(w[o * in + i]));
    for (int i = 0; i < in; ++i)
      q[o * in + i] = static_cast<int32_t>(std::nearbyint(w[o * in + i] * (127 / amax)));
    scale[o] = amax / 127;
  }
  TensorMap result = runOk("f", {{"arg0", HostTensor::floats({2, 3, in}, x)}},
                           {{"w.int8", HostTensor::ints({out, in}, q)},
                            {"w.int8.scale", HostTensor::floats({out}, scale)},
                            {"b", HostTensor::floats({out}, b)}});
  const HostTensor &y = result["result0"];
  ASSERT_EQ(y.shape, (std::vector<int64_t>{2, 3, out}));
  double errorNorm = 0, norm = 0;
  for (int m = 0; m < rows; ++m) {
    double amax = 0;
    for (int i = 0; i < in; ++i)
      amax = std::max(amax, double(std::abs(x[m * in + i])));
    for (int o = 0; o < out; ++o) {
      double expected = b[o], magnitude = std::abs(b[o]), weightSum = 0;
      for (int i = 0; i < in; ++i) {
        double dequantized = double(q[o * in + i]) * scale[o];
        expected += x[m * in + i] * dequantized;
        magnitude += std::abs(x[m * in + i] * dequantized);
        weightSum += std::abs(dequantized);
      }
      double error = std::abs(y.f32[m * out + o] - expected);
      EXPECT_LE(error, amax / 254 * weightSum + 1e-6 * magnitude)
          << "at row " << m << ", output " << o;
      errorNorm += error * error;
      norm += expected * expected;
    }
  }
  // Quantized, yet close: the relative error of the whole result is well under 1%.
  EXPECT_LT(std::sqrt(errorNorm / norm), 1e-2);
  EXPECT_GT(errorNorm, 0.0) << "the activations were not quantized";
}

TEST_F(ReferenceQuantizedLinear, InputFeatureMismatchIsAnError) {
  parse(R"mlir(
    func @f(%x: tensor<2x?xf32>) -> tensor<2x3xf32> {
      %w = kiln.parameter "w" {source = "w", conversion = "int8"} : tensor<3x4xi8>
      %s = kiln.parameter "w.scale" {source = "w", conversion = "int8_scale"}
          : tensor<3xf32>
      %0 = kiln.quantized_linear %x, %w, %s
          : (tensor<2x?xf32>, tensor<3x4xi8>, tensor<3xf32>) -> tensor<2x3xf32>
      kiln.return %0 : tensor<2x3xf32>
    })mlir");
  std::string error =
      runError("f", {{"arg0", HostTensor::floats({2, 5}, randomFloats(10, 904))}},
               {{"w", HostTensor::floats({3, 4}, randomFloats(12, 905))}});
  EXPECT_TRUE(contains(error, "'kiln.quantized_linear'"));
  EXPECT_TRUE(contains(error, "input [2, 5], weight [3, 4], weight_scale [3] and bias "
                              "none do not fit together"));
}

/// A module that shows converted weights through products with the identity: the int8
/// weight (with unit scales, and with its own), and row 1 of a bf16 weight.
class ReferenceConvertedWeightsFromSource : public ReferenceTest {
protected:
  void SetUp() override {
    parse(R"mlir(
      func @f(%eye: tensor<4x4xf32>, %zero: tensor<4xf32>)
          -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x1xf32>) {
        %q = kiln.parameter "w.int8" {source = "w", conversion = "int8"} : tensor<2x4xi8>
        %s = kiln.parameter "w.int8.scale" {source = "w", conversion = "int8_scale"}
            : tensor<2xf32>
        %h = kiln.parameter "h.bf16" {source = "h", conversion = "bf16", rows = [1, 2]}
            : tensor<1x4xbf16>
        %qs = kiln.quantized_linear %eye, %q, %s
            : (tensor<4x4xf32>, tensor<2x4xi8>, tensor<2xf32>) -> tensor<4x2xf32>
        %one = kiln.parameter "one" : tensor<2xf32>
        %qv = kiln.quantized_linear %eye, %q, %one
            : (tensor<4x4xf32>, tensor<2x4xi8>, tensor<2xf32>) -> tensor<4x2xf32>
        %hv = kiln.matmul %eye, %h {transpose_rhs = true}
            : (tensor<4x4xf32>, tensor<1x4xbf16>) -> tensor<4x1xf32>
        kiln.return %qs, %qv, %hv : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x1xf32>
      })mlir");
  }

  /// The error of a run on the identity with `parameters` and the unit scales.
  std::string errorWith(TensorMap parameters) {
    parameters.emplace("one", HostTensor::floats({2}, {1, 1}));
    return runError("f", identity(), parameters);
  }

  TensorMap identity() {
    return {{"arg0", HostTensor::floats(
                         {4, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1})},
            {"arg1", HostTensor::floats({4})}};
  }
};

TEST_F(ReferenceConvertedWeightsFromSource, HandComputed) {
  // int8: row 0 has max 254, so q = round_half_even(w * 0.5) (2.5 -> 2, 31.75 -> 32,
  // -3.5 -> -4) and its scale is 2; row 1 is zero (q = 0, scale 0). bf16 (row 1 of h):
  // 1 + 2^-8 ties to 1, 1 + 3 * 2^-8 ties to 1 + 2^-6, 1 + 2^-8 + 2^-20 rounds up to
  // 1 + 2^-7.
  float r = 1.0f / 256;
  TensorMap out =
      runOk("f", identity(),
            {{"w", HostTensor::floats({2, 4}, {5, 63.5, -254, -7, 0, 0, 0, 0})},
             {"h", HostTensor::floats({2, 4}, {7, 7, 7, 7, 1 + r, 1 + 3 * r,
                                               1 + r + std::ldexp(1.0f, -20), -3})},
             {"one", HostTensor::floats({2}, {1, 1})}});
  // With the identity as input each row j quantizes to 127 e_j, with row scale 1 / 127.
  std::vector<float> withScale, withUnitScale;
  for (int q : {2, 32, -127, -4}) {
    withScale.insert(withScale.end(), {float(127 * q) * ((1.0f / 127) * 2), 0});
    withUnitScale.insert(withUnitScale.end(), {float(127 * q) * (1.0f / 127), 0});
  }
  EXPECT_EQ(out["result0"].f32, withScale);
  EXPECT_EQ(out["result1"].f32, withUnitScale);
  EXPECT_EQ(out["result2"].f32, (std::vector<float>{1, 1 + 4 * r, 1 + 2 * r, -3}));
}

TEST_F(ReferenceConvertedWeightsFromSource, PreConvertedTensorsAreUsedAsTheyAre) {
  TensorMap out =
      runOk("f", identity(),
            {{"w.int8", HostTensor::ints({2, 4}, {-127, 0, 1, 127, 0, 0, 0, 0})},
             {"w.int8.scale", HostTensor::floats({2}, {1, 1})},
             {"h.bf16", HostTensor::floats({1, 4}, {0.5, 2, -1.5, 3})},
             {"one", HostTensor::floats({2}, {1, 1})}});
  std::vector<float> expected;
  for (int q : {-127, 0, 1, 127})
    expected.insert(expected.end(), {static_cast<float>(127 * q) * (1.0f / 127), 0});
  EXPECT_EQ(out["result1"].f32, expected);
  EXPECT_EQ(out["result2"].f32, (std::vector<float>{0.5, 2, -1.5, 3}));
}

TEST_F(ReferenceConvertedWeightsFromSource, Int8OutsideTheSymmetricRangeIsAnError) {
  std::string error =
      errorWith({{"w.int8", HostTensor::ints({2, 4}, {0, 0, 0, 0, 0, -128, 0, 0})},
                 {"w.int8.scale", HostTensor::floats({2}, {1, 1})},
                 {"h", HostTensor::floats({2, 4})}});
  EXPECT_TRUE(contains(error, "parameter 'w.int8' has type tensor<2x4xi8> but element "
                              "[1, 1] (-128) is outside [-127, 127]"));
}

TEST_F(ReferenceConvertedWeightsFromSource, NonBf16ValueIsAnError) {
  std::string error =
      errorWith({{"w", HostTensor::floats({2, 4})},
                 {"h.bf16", HostTensor::floats({1, 4}, {1, 2, 1.1f, 4})}});
  EXPECT_TRUE(contains(error, "parameter 'h.bf16' has type tensor<1x4xbf16> but element "
                              "[0, 2] (1.10000002) is not a bf16 value"));
}

TEST_F(ReferenceConvertedWeightsFromSource, FloatDataForInt8IsAnError) {
  std::string error = errorWith(
      {{"w.int8", HostTensor::floats({2, 4})}, {"h", HostTensor::floats({2, 4})}});
  EXPECT_TRUE(contains(error, "parameter 'w.int8' holds f32 data but its type is "
                              "tensor<2x4xi8>"));
}

TEST_F(ReferenceConvertedWeightsFromSource, MissingSourceIsNamed) {
  std::string error = errorWith({{"w", HostTensor::floats({2, 4})}});
  EXPECT_TRUE(contains(error, "parameter 'h.bf16' is missing, and so is its source 'h'"));
}

TEST_F(ReferenceConvertedWeightsFromSource, SourceOfTheWrongShapeIsNamed) {
  std::string error =
      errorWith({{"w", HostTensor::floats({2, 5})}, {"h", HostTensor::floats({2, 4})}});
  EXPECT_TRUE(contains(error, "parameter 'w.int8' (int8 of 'w') has shape [2, 5] but its "
                              "type is tensor<2x4xi8>"));
}

TEST_F(ReferenceConvertedWeights, Bf16WeightsInLinearAndMatmulAreTheRoundedValues) {
  // A weight named after its source: the checkpoint's f32 tensor is converted.
  parse(R"mlir(
    func @f(%x: tensor<?x8xf32>, %b: tensor<5xf32>) -> (tensor<?x5xf32>, tensor<?x5xf32>) {
      %w = kiln.parameter "w" {source = "w", conversion = "bf16"} : tensor<5x8xbf16>
      %0 = kiln.linear %x, %w, %b
          : (tensor<?x8xf32>, tensor<5x8xbf16>, tensor<5xf32>) -> tensor<?x5xf32>
      %1 = kiln.matmul %x, %w {transpose_rhs = true}
          : (tensor<?x8xf32>, tensor<5x8xbf16>) -> tensor<?x5xf32>
      kiln.return %0, %1 : tensor<?x5xf32>, tensor<?x5xf32>
    })mlir");
  const int rows = 3, in = 8, out = 5;
  std::vector<float> x = randomFloats(rows * in, 906), w = randomFloats(out * in, 907);
  std::vector<float> b = randomFloats(out, 908);
  TensorMap result = runOk("f",
                           {{"arg0", HostTensor::floats({rows, in}, x)},
                            {"arg1", HostTensor::floats({out}, b)}},
                           {{"w", HostTensor::floats({out, in}, w)}});
  std::vector<double> withBias, withoutBias;
  for (int m = 0; m < rows; ++m)
    for (int o = 0; o < out; ++o) {
      double sum = 0;
      for (int i = 0; i < in; ++i)
        sum += double(x[m * in + i]) * bf16Rounded(w[o * in + i]);
      withBias.push_back(sum + b[o]);
      withoutBias.push_back(sum);
    }
  expectClose(result["result0"].f32, withBias, 1e-6);
  expectClose(result["result1"].f32, withoutBias, 1e-6);
}

} // namespace
