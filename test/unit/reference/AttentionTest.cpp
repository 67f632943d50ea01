//===- AttentionTest.cpp - kiln.attention against the graph it replaces ---===//
//
// The interpreter's kiln.attention kernel and the unfused graph (matmul, scale, mask,
// softmax, matmul), run op by op by the same interpreter, must agree to f32 rounding:
// ‖fused − unfused‖ / ‖unfused‖ <= 1e-5, over sequence lengths from 1 to 2048, each
// kind of mask, fully masked rows and scores large enough that exp() magnifies every
// rounding. Both graphs live in one module and read the same inputs.
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

#include <cmath>
#include <limits>
#include <regex>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

enum class Mask { None, Padding, Causal, Explicit };

/// What a case runs: q [B, H, Tq, D], k and v [B, H, Tk, D].
struct Case {
  int64_t batch, heads, queries, keys, dim;
  Mask mask;
  /// Inputs are uniform in [-range, range): 30 makes scores in the thousands.
  float range = 2.0f;
};

std::string describe(const Case &c) {
  const char *masks[] = {"NoMask", "Padding", "Causal", "Explicit"};
  return "B" + std::to_string(c.batch) + "H" + std::to_string(c.heads) + "Tq" +
         std::to_string(c.queries) + "Tk" + std::to_string(c.keys) + "D" +
         std::to_string(c.dim) + masks[static_cast<int>(c.mask)] +
         (c.range > 2.0f ? "LargeScores" : "");
}

/// The module for a case: @unfused and @fused, with the same inputs. `@MASK@` in the
/// body is replaced by how each builds its mask.
std::string moduleText(const Case &c) {
  std::string h = std::to_string(c.heads), d = std::to_string(c.dim);
  std::string qkv = "tensor<?x" + h + "x?x" + d + "xf32>";
  std::string scores = "tensor<?x" + h + "x?x?xf32>";
  std::string args =
      "(%q: " + qkv + " {kiln.name = \"q\", kiln.dims = [\"B\", \"\", \"T\", \"\"]}, " +
      "%k: " + qkv + " {kiln.name = \"k\", kiln.dims = [\"B\", \"\", \"S\", \"\"]}, " +
      "%v: " + qkv + " {kiln.name = \"v\", kiln.dims = [\"B\", \"\", \"S\", \"\"]}, " +
      "%len: tensor<?xi32> {kiln.name = \"len\", kiln.dims = [\"B\"]}, " +
      "%em: tensor<?x?xf32> {kiln.name = \"mask\", kiln.dims = [\"T\", \"S\"]}) -> " +
      qkv;
  // The padding mask is built from the lengths, the explicit one handed in; the causal
  // mask is kiln.causal_mask in the unfused graph and an attribute of the fused op.
  std::string padding =
      "%pm = kiln.padding_mask %len, %k {axis = 2 : i64} : (tensor<?xi32>, " + qkv +
      ") -> tensor<?x?xf32>\n"
      "  %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> "
      "tensor<?x1x1x?xf32>\n";
  std::string maskType =
      c.mask == Mask::Padding ? "tensor<?x1x1x?xf32>" : "tensor<?x?xf32>";
  std::string unfusedMask, fusedMask, fusedOperand, fusedAttrs;
  if (c.mask == Mask::Padding) {
    unfusedMask = fusedMask = padding;
    fusedOperand = ", %m";
  } else if (c.mask == Mask::Causal) {
    unfusedMask =
        "%m = kiln.causal_mask %q {axis = 2 : i64} : (" + qkv + ") -> tensor<?x?xf32>\n";
    fusedAttrs = ", causal = true";
  } else if (c.mask == Mask::Explicit) {
    unfusedMask = "%m = kiln.scale %em {factor = 1.0 : f32} : tensor<?x?xf32>\n";
    fusedMask = unfusedMask;
    fusedOperand = ", %m";
  }
  std::string addMask = c.mask == Mask::None
                            ? "%a = kiln.scale %c {factor = 1.0 : f32} : " + scores + "\n"
                            : "%a = kiln.add %c, %m : (" + scores + ", " + maskType +
                                  ") -> " + scores + "\n";
  std::string fusedTypes = "(" + qkv + ", " + qkv + ", " + qkv +
                           (fusedOperand.empty() ? "" : ", " + maskType) + ")";
  return "func @unfused" + args + " {\n  " + unfusedMask +
         "  %s = kiln.matmul %q, %k {transpose_rhs = true} : (" + qkv + ", " + qkv +
         ") -> " + scores + "\n" +
         "  %c = kiln.scale %s {factor = 0.25 : f32} : " + scores + "\n  " + addMask +
         "  %p = kiln.softmax %a {axis = 3 : i64} : " + scores +
         "\n  %o = kiln.matmul %p, %v : (" + scores + ", " + qkv + ") -> " + qkv +
         "\n  kiln.return %o : " + qkv + "\n}\n" + "func @fused" + args + " {\n  " +
         fusedMask + "  %o = kiln.attention %q, %k, %v" + fusedOperand +
         " {scale = 0.25 : f32" + fusedAttrs + "} : " + fusedTypes + " -> " + qkv +
         "\n  kiln.return %o : " + qkv + "\n}\n";
}

/// ‖a − b‖ / ‖b‖, both finite; NaN where either holds a NaN.
double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i]))
      return std::numeric_limits<double>::quiet_NaN();
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return norm == 0.0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

class FusedVsUnfused : public ReferenceTest, public ::testing::WithParamInterface<Case> {
protected:
  /// Runs both graphs on the same random inputs; `lengths` overrides the random ones.
  void compare(std::vector<int32_t> lengths = {}) {
    const Case &c = GetParam();
    parse(moduleText(c));
    TensorMap inputs;
    unsigned seed = 7;
    auto random = [&](std::vector<int64_t> shape) {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      return HostTensor::floats(shape, randomFloats(n, seed++, -c.range, c.range));
    };
    inputs["q"] = random({c.batch, c.heads, c.queries, c.dim});
    inputs["k"] = random({c.batch, c.heads, c.keys, c.dim});
    inputs["v"] = random({c.batch, c.heads, c.keys, c.dim});
    if (lengths.empty())
      lengths = randomInts(c.batch, 99, 1, static_cast<int32_t>(c.keys));
    inputs["len"] = HostTensor::ints({c.batch}, lengths);
    // Explicit: the bottom-right causal mask of a decode step that has Tk - Tq keys of
    // past context, plus one key every query ignores.
    HostTensor explicitMask = HostTensor::floats({c.queries, c.keys});
    for (int64_t i = 0; i < c.queries; ++i)
      for (int64_t j = 0; j < c.keys; ++j)
        explicitMask.f32[i * c.keys + j] =
            j > i + (c.keys - c.queries) || (j == 0 && c.keys > 1) ? -kInf : 0.0f;
    inputs["mask"] = explicitMask;

    TensorMap unfused = runOk("unfused", inputs);
    TensorMap fused = runOk("fused", inputs);
    ASSERT_EQ(unfused.size(), 1u);
    ASSERT_EQ(fused.size(), 1u);
    fusedOut = fused.begin()->second;
    unfusedOut = unfused.begin()->second;
    ASSERT_EQ(fusedOut.shape, unfusedOut.shape);
    EXPECT_LE(relativeError(fusedOut.f32, unfusedOut.f32), 1e-5) << describe(c);
  }

  HostTensor fusedOut, unfusedOut;
};

TEST_P(FusedVsUnfused, AgreeOnRandomInputs) { compare(); }

/// Padding cases only: a length of 0 masks every key of a sequence.
using FullyMaskedRow = FusedVsUnfused;

TEST_P(FullyMaskedRow, IsZeroInBothGraphs) {
  const Case &c = GetParam();
  // Sequence 0 has no keys at all: every score of its rows is -inf.
  std::vector<int32_t> lengths(c.batch, static_cast<int32_t>(c.keys));
  lengths[0] = 0;
  compare(lengths);
  int64_t perSequence = c.heads * c.queries * c.dim;
  for (int64_t i = 0; i < perSequence; ++i)
    ASSERT_EQ(fusedOut.f32[i], 0.0f) << "element " << i;
}

const Case kCases[] = {
    // Lengths 1, 7, 64, 513 with each mask; 2048 with one head.
    {2, 2, 1, 1, 16, Mask::None},
    {2, 2, 7, 7, 16, Mask::None},
    {2, 2, 64, 64, 16, Mask::None},
    {1, 2, 513, 513, 16, Mask::None},
    {2, 2, 1, 1, 16, Mask::Padding},
    {2, 2, 7, 7, 16, Mask::Padding},
    {2, 2, 64, 64, 16, Mask::Padding},
    {2, 2, 513, 513, 16, Mask::Padding},
    {2, 2, 1, 1, 16, Mask::Causal},
    {2, 2, 7, 7, 16, Mask::Causal},
    {2, 2, 64, 64, 16, Mask::Causal},
    {1, 2, 513, 513, 16, Mask::Causal},
    {1, 1, 2048, 2048, 16, Mask::Causal},
    {1, 2, 2048, 2048, 16, Mask::Padding},
    // Cross attention (Tq != Tk) and a decode step's bottom-right mask.
    {2, 2, 7, 64, 16, Mask::Padding},
    {2, 2, 3, 7, 8, Mask::Explicit},
    {2, 2, 1, 9, 8, Mask::Explicit},
    // Scores in the thousands: exp() magnifies any rounding of them.
    {2, 2, 64, 64, 64, Mask::Padding, 30.0f},
    {2, 2, 64, 64, 64, Mask::Causal, 30.0f},
    // No queries: q and the output are empty vectors the kernel must not index.
    {2, 2, 0, 7, 16, Mask::None},
    {2, 2, 0, 7, 16, Mask::Padding},
};

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return describe(info.param);
}

INSTANTIATE_TEST_SUITE_P(Reference, FusedVsUnfused, ::testing::ValuesIn(kCases),
                         caseName);

const Case kPaddingCases[] = {
    {2, 2, 1, 1, 16, Mask::Padding},
    {2, 2, 7, 7, 16, Mask::Padding},
    {2, 2, 7, 64, 16, Mask::Padding},
    {2, 2, 513, 513, 16, Mask::Padding},
};

INSTANTIATE_TEST_SUITE_P(Reference, FullyMaskedRow, ::testing::ValuesIn(kPaddingCases),
                         caseName);

using ReferenceAttention = ReferenceTest;

/// One query row [1, 1, 1, 2] over three keys with the given additive mask row.
const char *kOneRow = R"mlir(
    func @f(%q: tensor<1x1x1x2xf32>, %k: tensor<1x1x3x2xf32>, %v: tensor<1x1x3x2xf32>,
            %m: tensor<3xf32>) -> tensor<1x1x1x2xf32> {
      %0 = kiln.attention %q, %k, %v, %m {scale = 1.0 : f32, masked_row_value = 7.0 : f32}
          : (tensor<1x1x1x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<3xf32>)
          -> tensor<1x1x1x2xf32>
      kiln.return %0 : tensor<1x1x1x2xf32>
    })mlir";

TensorMap oneRowInputs(std::vector<float> mask) {
  return {
      {"arg0", HostTensor::floats({1, 1, 1, 2}, {1.0f, 2.0f})},
      {"arg1", HostTensor::floats({1, 1, 3, 2}, {0.5f, -1.0f, 2.0f, 0.0f, -3.0f, 1.0f})},
      {"arg2", HostTensor::floats({1, 1, 3, 2}, {1.0f, 10.0f, 2.0f, 20.0f, 3.0f, 30.0f})},
      {"arg3", HostTensor::floats({3}, std::move(mask))}};
}

TEST_F(ReferenceAttention, AllMinusInfRowGivesMaskedRowValue) {
  parse(kOneRow);
  TensorMap out = runOk("f", oneRowInputs({-kInf, -kInf, -kInf}));
  EXPECT_EQ(out["result0"].f32, (std::vector<float>{7.0f, 7.0f}));
}

TEST_F(ReferenceAttention, LargeFiniteNegativesAreUniformNotMasked) {
  // -1e30 everywhere is not a masked row: the softmax of equal scores is uniform, so
  // the result is the mean of v's rows, as an unfused softmax would give.
  parse(kOneRow);
  TensorMap out = runOk("f", oneRowInputs({-1e30f, -1e30f, -1e30f}));
  expectClose(out["result0"].f32, {2.0, 20.0}, 1e-6);
}

TEST_F(ReferenceAttention, NaNScoreMakesTheRowNaN) {
  parse(kOneRow);
  float nan = std::numeric_limits<float>::quiet_NaN();
  TensorMap out = runOk("f", oneRowInputs({0.0f, nan, 0.0f}));
  EXPECT_TRUE(std::isnan(out["result0"].f32[0]));
  EXPECT_TRUE(std::isnan(out["result0"].f32[1]));
}

TEST_F(ReferenceAttention, CausalAlignsBottomRight) {
  // Tq = 1 against Tk = 3 (a decode step): the one query sees every key. Against
  // Tq = 3 the first query sees only key 0, whose v row it returns.
  parse(R"mlir(
    func @f(%q: tensor<1x3x2xf32>, %k: tensor<1x3x2xf32>, %v: tensor<1x3x2xf32>)
        -> (tensor<1x1x2xf32>, tensor<1x3x2xf32>) {
      %q1 = kiln.slice %q {axis = 1 : i64, start = 2 : i64, end = 3 : i64}
          : (tensor<1x3x2xf32>) -> tensor<1x1x2xf32>
      %0 = kiln.attention %q1, %k, %v {scale = 0.0 : f32, causal = true}
          : (tensor<1x1x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x1x2xf32>
      %1 = kiln.attention %q, %k, %v {scale = 0.0 : f32, causal = true}
          : (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
      kiln.return %0, %1 : tensor<1x1x2xf32>, tensor<1x3x2xf32>
    })mlir");
  HostTensor x = HostTensor::floats({1, 3, 2}, randomFloats(6, 3));
  HostTensor v = HostTensor::floats({1, 3, 2}, {1.0f, 10.0f, 2.0f, 20.0f, 3.0f, 30.0f});
  TensorMap out = runOk("f", {{"arg0", x}, {"arg1", x}, {"arg2", v}});
  // Scale 0 makes every visible score 0: uniform weights over the visible keys.
  expectClose(out["result0"].f32, {2.0, 20.0}, 1e-6);
  expectClose(out["result1"].f32, {1.0, 10.0, 1.5, 15.0, 2.0, 20.0}, 1e-6);
}

TEST_F(ReferenceAttention, BatchDimsBroadcastAndThreeDimensionalForm) {
  // k and v shared by both sequences ([1, Tk, d]) against q [2, Tq, d].
  parse(R"mlir(
    func @f(%q: tensor<2x4x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x3xf32>,
            %qq: tensor<2x4x8xf32>, %kk: tensor<2x5x8xf32>, %vv: tensor<2x5x3xf32>)
        -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>) {
      %0 = kiln.attention %q, %k, %v {scale = 0.5 : f32}
          : (tensor<2x4x8xf32>, tensor<1x5x8xf32>, tensor<1x5x3xf32>) -> tensor<2x4x3xf32>
      %1 = kiln.attention %qq, %kk, %vv {scale = 0.5 : f32}
          : (tensor<2x4x8xf32>, tensor<2x5x8xf32>, tensor<2x5x3xf32>) -> tensor<2x4x3xf32>
      kiln.return %0, %1 : tensor<2x4x3xf32>, tensor<2x4x3xf32>
    })mlir");
  std::vector<float> q = randomFloats(64, 1), k = randomFloats(40, 2),
                     v = randomFloats(15, 3);
  std::vector<float> kk = k, vv = v;
  kk.insert(kk.end(), k.begin(), k.end());
  vv.insert(vv.end(), v.begin(), v.end());
  TensorMap out = runOk("f", {{"arg0", HostTensor::floats({2, 4, 8}, q)},
                              {"arg1", HostTensor::floats({1, 5, 8}, k)},
                              {"arg2", HostTensor::floats({1, 5, 3}, v)},
                              {"arg3", HostTensor::floats({2, 4, 8}, q)},
                              {"arg4", HostTensor::floats({2, 5, 8}, kk)},
                              {"arg5", HostTensor::floats({2, 5, 3}, vv)}});
  EXPECT_EQ(out["result0"].f32, out["result1"].f32);
}

TEST_F(ReferenceAttention, MaskThatWouldEnlargeTheScoresIsAnError) {
  // The types leave the batch dynamic; at run time the mask's batch is 3, q's 2.
  parse(R"mlir(
    func @f(%q: tensor<?x4x8xf32>, %m: tensor<?x1x4xf32>) -> tensor<?x4x8xf32> {
      %0 = kiln.attention %q, %q, %q, %m {scale = 1.0 : f32}
          : (tensor<?x4x8xf32>, tensor<?x4x8xf32>, tensor<?x4x8xf32>, tensor<?x1x4xf32>)
          -> tensor<?x4x8xf32>
      kiln.return %0 : tensor<?x4x8xf32>
    })mlir");
  std::string error = runError("f", {{"arg0", HostTensor::floats({2, 4, 8})},
                                     {"arg1", HostTensor::floats({3, 1, 4})}});
  EXPECT_TRUE(contains(error, "do not broadcast")) << error;
}

} // namespace
