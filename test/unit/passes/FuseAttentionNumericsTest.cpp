//===- FuseAttentionNumericsTest.cpp - Fusing never changes the results ---===//
//
// Each form of attention kiln-fuse-attention accepts, and a small Transformer built with
// the nn library, run by the reference interpreter before and after the default
// pipeline on the same random inputs and weights: the fusion must have happened (no
// kiln.softmax left) and the outputs must agree to f32 rounding,
// ‖fused − unfused‖ / ‖unfused‖ <= 1e-5.
//
//===----------------------------------------------------------------------===//

#include "NumericsTestUtil.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/nn/Transformer.h"
#include "kiln/ir/KilnDialect.h"
#include "kiln/passes/Passes.h"

#include "mlir/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace kiln::test;
using kiln::reference::HostTensor;
using kiln::reference::TensorMap;

namespace {

/// Runs every entry of `module` unfused (as written) and after the default pipeline;
/// expects `attention` kiln.attention ops and no softmax after it, and equal outputs.
void expectFusionKeepsResults(ModuleOp module, int attention) {
  OwningOpRef<ModuleOp> fused = module.clone();
  PassManager pm(module.getContext());
  kiln::buildDefaultPipeline(pm);
  ASSERT_TRUE(succeeded(pm.run(*fused)));
  int attentionOps = 0, softmaxOps = 0;
  fused->walk([&](kiln::AttentionOp) { ++attentionOps; });
  fused->walk([&](kiln::SoftmaxOp) { ++softmaxOps; });
  EXPECT_EQ(attentionOps, attention);
  EXPECT_EQ(softmaxOps, 0);

  std::mt19937 rng(5);
  TensorMap parameters = randomParameters(module, rng);
  int compared =
      compareOutputs(module, *fused, parameters, rng,
                     [](StringRef entry, const std::string &output, double error) {
                       EXPECT_LE(error, 1e-5) << entry.str() << " output " << output;
                     });
  EXPECT_GT(compared, 0);
}

class FuseAttentionNumerics : public ::testing::Test {
protected:
  FuseAttentionNumerics() { context.loadDialect<kiln::KilnDialect>(); }

  void check(StringRef text, int attention) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(module) << text.str();
    expectFusionKeepsResults(*module, attention);
  }

  MLIRContext context;
};

TEST_F(FuseAttentionNumerics, MaskedFillOfABooleanPaddingMaskDivisionAndTransposedK) {
  check(R"mlir(
    func @f(%q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
            %k: tensor<?x2x?x4xf32> {kiln.name = "k", kiln.dims = ["B", "", "S", ""]},
            %v: tensor<?x2x?x3xf32> {kiln.name = "v", kiln.dims = ["B", "", "S", ""]},
            %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"]}) -> tensor<?x2x?x3xf32> {
      %kt = kiln.transpose %k {permutation = [0, 1, 3, 2]} : (tensor<?x2x?x4xf32>) -> tensor<?x2x4x?xf32>
      %s = kiln.matmul %q, %kt : (tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32>
      %d = kiln.constant dense<2.0> : tensor<f32>
      %c = kiln.div %s, %d : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
      %pm = kiln.padding_mask %len, %k {axis = 2 : i64} : (tensor<?xi32>, tensor<?x2x?x4xf32>) -> tensor<?x?xi1>
      %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xi1>) -> tensor<?x1x1x?xi1>
      %a = kiln.masked_fill %c, %m {value = 0xFF800000 : f32} : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x2x?x?xf32>
      %p = kiln.softmax %a {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x3xf32>) -> tensor<?x2x?x3xf32>
      kiln.return %o : tensor<?x2x?x3xf32>
    })mlir",
        1);
}

TEST_F(FuseAttentionNumerics, BooleanCausalMaskAndScaledQuery) {
  check(R"mlir(
    func @f(%q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
            %k: tensor<?x2x?x4xf32> {kiln.name = "k", kiln.dims = ["B", "", "T", ""]},
            %v: tensor<?x2x?x4xf32> {kiln.name = "v", kiln.dims = ["B", "", "T", ""]}) -> tensor<?x2x?x4xf32> {
      %c = kiln.constant dense<0.5> : tensor<1x1x1x1xf32>
      %qs = kiln.mul %c, %q : (tensor<1x1x1x1xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      %s = kiln.matmul %qs, %k {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
      %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<?x2x?x4xf32>) -> tensor<?x?xi1>
      %a = kiln.masked_fill %s, %cm {value = 0xFF800000 : f32} : (tensor<?x2x?x?xf32>, tensor<?x?xi1>) -> tensor<?x2x?x?xf32>
      %p = kiln.softmax %a {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      kiln.return %o : tensor<?x2x?x4xf32>
    })mlir",
        1);
}

TEST_F(FuseAttentionNumerics, ThreeDimensionalFormMaskFirstAndMultipliedScores) {
  check(R"mlir(
    func @f(%q: tensor<?x?x8xf32> {kiln.name = "q", kiln.dims = ["B", "T", ""]},
            %k: tensor<?x?x8xf32> {kiln.name = "k", kiln.dims = ["B", "S", ""]},
            %v: tensor<?x?x8xf32> {kiln.name = "v", kiln.dims = ["B", "S", ""]},
            %m: tensor<?x?xf32> {kiln.name = "m", kiln.dims = ["T", "S"]}) -> tensor<?x?x8xf32> {
      %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x?xf32>
      %c = kiln.constant dense<0.3> : tensor<f32>
      %x = kiln.mul %s, %c : (tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
      %a = kiln.add %m, %x : (tensor<?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
      %p = kiln.softmax %a {axis = 2 : i64} : tensor<?x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x?x?xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      kiln.return %o : tensor<?x?x8xf32>
    })mlir",
        1);
}

TEST_F(FuseAttentionNumerics, CausalPlusPaddingAndMaskUnderTheScale) {
  // Decoder self-attention masking both the future and the padding: the causal mask
  // becomes the attribute, the padding mask the operand. The second attention adds its
  // mask before scaling, which is exact for a 0 / -inf mask and a positive scale.
  check(R"mlir(
    func @f(%q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
            %v: tensor<?x2x?x4xf32> {kiln.name = "v", kiln.dims = ["B", "", "T", ""]},
            %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"]})
        -> (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) {
      %pm = kiln.padding_mask %len, %q {axis = 2 : i64} : (tensor<?xi32>, tensor<?x2x?x4xf32>) -> tensor<?x?xf32>
      %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
      %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<?x2x?x4xf32>) -> tensor<?x?xf32>
      %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
      %c = kiln.scale %s {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
      %a = kiln.add %c, %cm : (tensor<?x2x?x?xf32>, tensor<?x?xf32>) -> tensor<?x2x?x?xf32>
      %b = kiln.add %a, %m : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
      %p = kiln.softmax %b {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      %s2 = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
      %a2 = kiln.add %s2, %m : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
      %c2 = kiln.scale %a2 {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
      %p2 = kiln.softmax %c2 {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o2 = kiln.matmul %p2, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      kiln.return %o, %o2 : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
    })mlir",
        2);
}

TEST_F(FuseAttentionNumerics, KeysStoredTransposedGetATranspose) {
  // kt is [B, H, d, S] as it comes: the fused op needs K [B, H, S, d].
  check(R"mlir(
    func @f(%q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
            %kt: tensor<?x2x4x?xf32> {kiln.name = "kt", kiln.dims = ["B", "", "", "S"]},
            %v: tensor<?x2x?x4xf32> {kiln.name = "v", kiln.dims = ["B", "", "S", ""]}) -> tensor<?x2x?x4xf32> {
      %s = kiln.matmul %q, %kt : (tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32>
      %p = kiln.softmax %s {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      kiln.return %o : tensor<?x2x?x4xf32>
    })mlir",
        1);
}

kiln::dsl::Model buildTinyTransformer() {
  kiln::dsl::ModelBuilder m("tiny");
  kiln::dsl::nn::Transformer transformer(m, "transformer",
                                         kiln::dsl::nn::TransformerConfig::tiny());
  transformer.declareEntries(m);
  return m.finish();
}

TEST(FuseAttentionNumericsModels, SmallTransformerEncodeAndDecode) {
  kiln::dsl::Model model = buildTinyTransformer();
  ASSERT_TRUE(model.ok());
  // 2 encoder self-attentions; 2 causal self- and 2 cross-attentions in decode; 2 self-
  // (over the cache) and 2 cross-attentions in decode_step.
  expectFusionKeepsResults(model.module(), 10);
}

} // namespace
