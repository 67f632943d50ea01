//===- TransformerDecodingTest.cpp - The Transformer's decoding entries ---===//
//
// nn::Transformer::declareEntries adds decode_start and decode_step for incremental
// decoding: the states they write and read, named after the layers, their inputs, and
// that the default pipeline fuses every attention of a step (the self-attention over
// the cache has no mask, the cross-attention the source's padding mask). The numerics
// (a step equals decode's last position) are tested on the compiled translator in
// test/unit/generate.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/nn/Transformer.h"

#include "kiln/ir/KilnOps.h"
#include "kiln/passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

nn::TransformerConfig tinyConfig(bool normFirst) {
  nn::TransformerConfig config = nn::TransformerConfig::tiny();
  config.normFirst = normFirst;
  return config;
}

Model buildTiny(bool normFirst) {
  ModelBuilder m("tiny");
  nn::Transformer transformer(m, "transformer", tinyConfig(normFirst));
  transformer.declareEntries(m);
  return m.finish();
}

mlir::FuncOp entry(const Model &model, llvm::StringRef name) {
  return model.module().lookupSymbol<mlir::FuncOp>(name);
}

template <typename OpTy> std::vector<std::string> stateNames(mlir::FuncOp func) {
  std::vector<std::string> names;
  func.walk([&](OpTy op) { names.push_back(op.name().str()); });
  return names;
}

TEST(TransformerDecoding, DecodeStartWritesEveryLayersStates) {
  Model model = buildTiny(/*normFirst=*/false);
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::vector<std::string> entries;
  for (mlir::FuncOp func : model.module().getOps<mlir::FuncOp>())
    entries.push_back(func.getName().str());
  EXPECT_EQ(entries, (std::vector<std::string>{"encode", "decode", "decode_start",
                                               "decode_step"}));

  mlir::FuncOp start = entry(model, "decode_start");
  EXPECT_EQ(start.getNumArguments(), 2u); // memory, src_lengths
  EXPECT_EQ(start.getType().getNumResults(), 0u);
  const std::string l0 = "transformer.decoder.layers.0.",
                    l1 = "transformer.decoder.layers.1.";
  // The memory's padding mask once for every layer, then each layer's keys and values.
  const std::string mask = "transformer.decoder.memory_mask";
  EXPECT_EQ(stateNames<StateWriteOp>(start),
            (std::vector<std::string>{
                mask, l0 + "multihead_attn.memory_k", l0 + "multihead_attn.memory_v",
                l1 + "multihead_attn.memory_k", l1 + "multihead_attn.memory_v"}));
  EXPECT_EQ(
      stateNames<StateAllocOp>(start),
      (std::vector<std::string>{l0 + "self_attn.k_cache", l0 + "self_attn.v_cache",
                                l1 + "self_attn.k_cache", l1 + "self_attn.v_cache"}));
  std::string text = printed(model);
  // [B, H, maxDecodeLength, d_k]; the memory's keys and values are [B, H, S, d_k].
  EXPECT_NE(text.find("kiln.state_alloc \"" + l0 +
                      "self_attn.k_cache\" {dims = [\"B\", \"\", "
                      "\"\", \"\"]} : tensor<?x2x8x8xf32>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kiln.state_write \"" + l0 + "multihead_attn.memory_k\", %"),
            std::string::npos);
  start.walk([&](StateWriteOp op) {
    // [B, 1, 1, S] for the mask, [B, H, S, d_k] for keys and values.
    EXPECT_EQ(op.value().getType().cast<mlir::RankedTensorType>().getShape(),
              op.name() == mask ? llvm::makeArrayRef<int64_t>({-1, 1, 1, -1})
                                : llvm::makeArrayRef<int64_t>({-1, 2, -1, 8}))
        << op.name().str();
  });
}

TEST(TransformerDecoding, DecodeStepTakesOneTokenAPositionAndTheSourceLengths) {
  Model model = buildTiny(/*normFirst=*/false);
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  mlir::FuncOp step = entry(model, "decode_step");
  std::string text = printed(model);
  EXPECT_NE(
      text.find("func @decode_step(%arg0: tensor<?x1xi32> {kiln.bounds = [\"0\", "
                "\"19\"], kiln.dims = [\"B\", \"\"], kiln.name = \"tgt_ids\"}, %arg1: "
                "tensor<i32> {kiln.bounds = [\"0\", \"7\"], kiln.dims = [], kiln.name = "
                "\"step\", kiln.value_dim = \"P\"}, %arg2: tensor<?xi32> {kiln.bounds = "
                "[\"1\", \"S\"], kiln.dims = [\"B\"], kiln.name = \"src_lengths\"}) -> "
                "(tensor<?x20xf32> {kiln.name = \"logits\"})"),
      std::string::npos)
      << text;
  const std::string l0 = "transformer.decoder.layers.0.",
                    l1 = "transformer.decoder.layers.1.";
  EXPECT_EQ(
      stateNames<KvAppendOp>(step),
      (std::vector<std::string>{l0 + "self_attn.k_cache", l0 + "self_attn.v_cache",
                                l1 + "self_attn.k_cache", l1 + "self_attn.v_cache"}));
  // The padding mask is decode_start's, read once: no step rebuilds it.
  EXPECT_EQ(stateNames<StateReadOp>(step),
            (std::vector<std::string>{
                "transformer.decoder.memory_mask", l0 + "multihead_attn.memory_k",
                l0 + "multihead_attn.memory_v", l1 + "multihead_attn.memory_k",
                l1 + "multihead_attn.memory_v"}));
  int masks = 0;
  step.walk([&](PaddingMaskOp) { ++masks; });
  EXPECT_EQ(masks, 0);
  step.walk([](KvAppendOp op) {
    EXPECT_EQ(op.axis(), 2u);
    EXPECT_EQ(op.capacity(), 8u);
    EXPECT_EQ(op.position(), "P");
  });
  // The step's position encoding: reshape(step, [1]) -> sinusoid.
  EXPECT_NE(
      text.find("kiln.reshape %arg1 {shape = [1]} : (tensor<i32>) -> tensor<1xi32>"),
      std::string::npos)
      << text;
}

/// Counts per entry after the default pipeline, with every fusion remark collected.
struct Fused {
  int attention = 0, withMask = 0, causal = 0, softmax = 0;
};

std::map<std::string, Fused> runPipeline(const Model &model,
                                         std::vector<std::string> &remarks) {
  mlir::ScopedDiagnosticHandler handler(&model.context(), [&](mlir::Diagnostic &d) {
    // The kernel groups' remarks (every op left outside a group) are not this test's.
    if (llvm::StringRef(d.str()).contains("not fused into kiln.attention"))
      remarks.push_back(d.str());
    return mlir::success();
  });
  mlir::PassManager pm(&model.context());
  PipelineOptions options;
  options.fusionRemarks = true;
  buildDefaultPipeline(pm, options);
  EXPECT_TRUE(mlir::succeeded(pm.run(model.module())));
  std::map<std::string, Fused> counts;
  for (mlir::FuncOp func : model.module().getOps<mlir::FuncOp>()) {
    Fused &c = counts[func.getName().str()];
    func.walk([&](AttentionOp op) {
      ++c.attention;
      c.withMask += op.mask() != nullptr;
      c.causal += op.causal();
    });
    func.walk([&](SoftmaxOp) { ++c.softmax; });
  }
  return counts;
}

class TransformerDecodingFusion : public ::testing::TestWithParam<bool> {};

TEST_P(TransformerDecodingFusion, EveryAttentionOfAStepFuses) {
  Model model = buildTiny(/*normFirst=*/GetParam());
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::vector<std::string> remarks;
  std::map<std::string, Fused> counts = runPipeline(model, remarks);
  EXPECT_TRUE(remarks.empty()) << remarks.front();
  const Fused &step = counts["decode_step"];
  EXPECT_EQ(step.attention, 4); // 2 layers x (self over the cache + cross)
  EXPECT_EQ(step.withMask, 2);  // the cross-attentions' source padding
  EXPECT_EQ(step.causal, 0);    // the last position sees the whole cache
  EXPECT_EQ(step.softmax, 0);
  EXPECT_EQ(counts["decode_start"].attention, 0);
  EXPECT_EQ(counts["decode"].attention, 4);
  // The passes keep every state op.
  int stateOps = 0;
  model.module().walk([&](mlir::Operation *op) {
    stateOps += mlir::isa<StateAllocOp, StateWriteOp, StateReadOp, KvAppendOp>(op);
  });
  EXPECT_EQ(stateOps, 18); // with the mask's write and read
}

INSTANTIATE_TEST_SUITE_P(PostAndPreNorm, TransformerDecodingFusion, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "NormFirst" : "PostNorm";
                         });

TEST(TransformerDecoding, EmbeddingAtAPositionIsOneRowOfTheSequence) {
  ModelBuilder m("embed");
  nn::Embedding embed(m, "embed", 20, 16);
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), 1}, {0, 19});
  Tensor position = e.valueInput("step", dyn("P"), {0, 7});
  Tensor x = embed.atPosition(ids, position);
  EXPECT_EQ(toString(x.shape()), "[B, 1, 16]");
  e.output("x", x);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_NE(text.find("kiln.sinusoid %"), std::string::npos) << text;
  EXPECT_NE(text.find("(tensor<1xi32>) -> tensor<1x16xf32>"), std::string::npos) << text;
}

/// operator() is heads() then attend(): the same graph, op for op.
TEST(TransformerDecoding, AttentionIsHeadsThenAttend) {
  auto build = [](bool split) {
    ModelBuilder m("mha");
    nn::MultiHeadAttention attention(m, "attn.", 16, 2);
    Entry e = m.entry("f");
    Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("T"), 16});
    Tensor y = e.input("y", DType::F32, {dyn("B"), dyn("S"), 16});
    Tensor mask = e.input("mask", DType::F32, {dyn("B"), 1, 1, dyn("S")});
    if (split) {
      Tensor q = attention.heads(x, 0);
      Tensor k = attention.heads(y, 1);
      Tensor v = attention.heads(y, 2);
      e.output("o", attention.attend(q, k, v, mask));
    } else {
      e.output("o", attention(x, y, y, mask));
    }
    Model model = m.finish();
    EXPECT_TRUE(model.ok());
    return printed(model);
  };
  EXPECT_EQ(build(true), build(false));
}

} // namespace
