//===- FuseAttentionModelsTest.cpp - The shipped models fuse completely ---===//
//
// Builds models/transformer_base.cpp and models/demo.cpp with the DSL, runs the
// default pipeline and counts what came out: every attention of the paper's model must
// become one kiln.attention (6 encoder self-attentions; 6 causal self-attentions and 6
// cross-attentions in decode), with no kiln.softmax left and no remark about one.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/ModelBuilder.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <map>

kiln::dsl::Model buildDemo();
kiln::dsl::Model buildTransformerBase();

namespace {

/// What one entry point holds after the pipeline.
struct EntryCounts {
  int attention = 0;
  int causal = 0;
  int withMask = 0;
  int softmax = 0;
  int causalMaskOps = 0;
  std::vector<float> scales;
};

/// Runs the default pipeline (with fusion remarks) on `model`; per entry, what is left.
std::map<std::string, EntryCounts> runPipeline(const kiln::dsl::Model &model,
                                               std::vector<std::string> &remarks) {
  mlir::MLIRContext &context = model.context();
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    // The kernel groups' remarks (every op left outside a group) are not this test's.
    if (llvm::StringRef(d.str()).contains("not fused into kiln.attention"))
      remarks.push_back(d.str());
    return mlir::success();
  });
  mlir::PassManager pm(&context);
  kiln::PipelineOptions options;
  options.fusionRemarks = true;
  kiln::buildDefaultPipeline(pm, options);
  EXPECT_TRUE(mlir::succeeded(pm.run(model.module())));
  std::map<std::string, EntryCounts> counts;
  for (mlir::FuncOp func : model.module().getOps<mlir::FuncOp>()) {
    EntryCounts &c = counts[func.getName().str()];
    func.walk([&](kiln::AttentionOp op) {
      ++c.attention;
      c.causal += op.causal();
      c.withMask += op.mask() != nullptr;
      c.scales.push_back(op.scale().convertToFloat());
    });
    func.walk([&](kiln::SoftmaxOp) { ++c.softmax; });
    func.walk([&](kiln::CausalMaskOp) { ++c.causalMaskOps; });
  }
  return counts;
}

TEST(FuseAttentionModels, TransformerBaseFusesAllEighteenAttentions) {
  kiln::dsl::Model model = buildTransformerBase();
  ASSERT_TRUE(model.ok());
  std::vector<std::string> remarks;
  std::map<std::string, EntryCounts> counts = runPipeline(model, remarks);
  EXPECT_TRUE(remarks.empty()) << remarks.front();

  const EntryCounts &encode = counts["encode"];
  EXPECT_EQ(encode.attention, 6);
  EXPECT_EQ(encode.withMask, 6); // the source padding mask
  EXPECT_EQ(encode.causal, 0);
  EXPECT_EQ(encode.softmax, 0);

  const EntryCounts &decode = counts["decode"];
  EXPECT_EQ(decode.attention, 12);
  EXPECT_EQ(decode.causal, 6);   // self-attention: the causal mask became an attribute
  EXPECT_EQ(decode.withMask, 6); // cross-attention: the memory's padding mask
  EXPECT_EQ(decode.softmax, 0);
  EXPECT_EQ(decode.causalMaskOps, 0)
      << "the causal mask should have gone with the fusion";

  // Incremental decoding: the one new position attends to the whole cache (no mask).
  const EntryCounts &step = counts["decode_step"];
  EXPECT_EQ(step.attention, 12);
  EXPECT_EQ(step.causal, 0);
  EXPECT_EQ(step.withMask, 6); // cross-attention: the memory's padding mask
  EXPECT_EQ(step.softmax, 0);

  // d_model 512 over 8 heads: 1/sqrt(64).
  for (const auto &entry : counts)
    for (float scale : entry.second.scales)
      EXPECT_EQ(scale, 0.125f);
}

TEST(FuseAttentionModels, DemoFusesItsAttention) {
  kiln::dsl::Model model = buildDemo();
  ASSERT_TRUE(model.ok());
  std::vector<std::string> remarks;
  std::map<std::string, EntryCounts> counts = runPipeline(model, remarks);
  EXPECT_TRUE(remarks.empty()) << remarks.front();
  const EntryCounts &forward = counts["forward"];
  EXPECT_EQ(forward.attention, 1);
  EXPECT_EQ(forward.softmax, 0);
  EXPECT_EQ(forward.withMask, 0);
  ASSERT_EQ(forward.scales.size(), 1u);
  EXPECT_EQ(forward.scales[0], 0.25f); // 1/sqrt(16)
}

TEST(FuseAttentionModels, WithoutFusionThePipelineKeepsEverySoftmax) {
  kiln::dsl::Model model = buildTransformerBase();
  ASSERT_TRUE(model.ok());
  mlir::PassManager pm(&model.context());
  kiln::PipelineOptions options;
  options.fuseAttention = false;
  kiln::buildDefaultPipeline(pm, options);
  ASSERT_TRUE(mlir::succeeded(pm.run(model.module())));
  int softmax = 0, attention = 0;
  model.module().walk([&](kiln::SoftmaxOp) { ++softmax; });
  model.module().walk([&](kiln::AttentionOp) { ++attention; });
  EXPECT_EQ(softmax, 30); // 18 in encode and decode, 12 in decode_step
  EXPECT_EQ(attention, 0);
}

} // namespace
