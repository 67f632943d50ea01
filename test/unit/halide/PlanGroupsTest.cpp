//===- PlanGroupsTest.cpp - Kernel groups cut the base model's kernel count ===//
//
// Builds models/transformer_base.cpp with the DSL, runs the default pipeline with and
// without kiln-fuse-kernels, and plans both: the kernels each entry runs (its steps)
// and the distinct kernels the model compiles. Groups must cut decode_step's steps by
// at least the elementwise passes and linears they absorb, and identical layers must
// still share one kernel per group kind. With bf16 weights the converted parameters are
// read in place: the same steps, no bf16 buffer but a parameter.
//
//===----------------------------------------------------------------------===//

#include "Plan.h"

#include "kiln/frontend/ModelBuilder.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <iostream>
#include <map>

kiln::dsl::Model buildTransformerBase();

namespace {

using namespace kiln::halide_backend;

struct Planned {
  std::map<std::string, size_t> steps;
  size_t kernels = 0;
  size_t fusionKernels = 0;
  /// The most steps that call one group's kernel.
  unsigned mostGroupUses = 0;
};

/// `model` (the base model) through the default pipeline with `options`, planned. The
/// plan's kernels point at the module's ops, so `model` must outlive it.
mlir::FailureOr<ModelPlan> planBaseWith(kiln::dsl::Model &model,
                                        const kiln::PipelineOptions &options,
                                        bool collapseRows = false) {
  EXPECT_TRUE(model.ok());
  mlir::PassManager pm(&model.context());
  kiln::buildDefaultPipeline(pm, options);
  EXPECT_TRUE(mlir::succeeded(pm.run(model.module())));
  mlir::FailureOr<ModelPlan> plan = planModel(model.module(), "transformer_base",
                                              /*layoutRemarks=*/false, collapseRows);
  EXPECT_TRUE(mlir::succeeded(plan));
  return plan;
}

Planned planBase(bool fuseKernels) {
  kiln::PipelineOptions options;
  options.fuseKernels = fuseKernels;
  kiln::dsl::Model model = buildTransformerBase();
  mlir::FailureOr<ModelPlan> plan = planBaseWith(model, options);
  Planned planned;
  if (mlir::failed(plan))
    return planned;
  for (const EntryPlan &entry : plan->entries)
    planned.steps[entry.name] = entry.steps.size();
  planned.kernels = plan->kernels.size();
  for (const KernelPlan &kernel : plan->kernels)
    if (llvm::isa<kiln::FusionOp>(kernel.op)) {
      ++planned.fusionKernels;
      planned.mostGroupUses = std::max(planned.mostGroupUses, kernel.uses);
    }
  return planned;
}

TEST(PlanGroups, TransformerBaseRunsFewerKernels) {
  Planned unfused = planBase(false), fused = planBase(true);
  for (const auto &[entry, steps] : fused.steps)
    std::cout << entry << ": " << unfused.steps[entry] << " kernels unfused, " << steps
              << " with kernel groups\n";
  std::cout << "distinct kernels: " << unfused.kernels << " unfused, " << fused.kernels
            << " with groups (" << fused.fusionKernels << " of them groups)\n";
  // Per decoder layer (6): bias+ReLU into the first FFN linear, which with them is a
  // stage before the second; the residual add into each of the three LayerNorms and the
  // linear before it (two output projections and the second FFN linear) as its stage.
  // The input layer (gather, sinusoid, scale, position add) is one kernel, and the
  // final LayerNorm is the logits product's first stage.
  EXPECT_LE(fused.steps["decode_step"] + 6 * 8 + 4, unfused.steps["decode_step"]);
  // The memory's padding mask is decode_start's state, which the step reads, and each
  // layer's k and v appends are one call (issue 11's goal: at most 50).
  EXPECT_LE(fused.steps["decode_step"], 50u);
  // Per encoder layer: ReLU and the first FFN linear, two residual adds and their
  // linears; the input layer, its range of positions included, is one kernel.
  EXPECT_LE(fused.steps["encode"] + 6 * 6 + 4, unfused.steps["encode"]);
  // The six identical layers share their groups' kernels.
  EXPECT_GT(fused.fusionKernels, 0u);
  EXPECT_GE(fused.mostGroupUses, 6u);
  EXPECT_LE(fused.kernels, unfused.kernels);
}

TEST(PlanGroups, TransformerBaseWithBf16WeightsReadsThemInPlace) {
  kiln::PipelineOptions options;
  kiln::dsl::Model f32Model = buildTransformerBase(), bf16Model = buildTransformerBase();
  mlir::FailureOr<ModelPlan> f32 = planBaseWith(f32Model, options);
  options.weights = "bf16";
  mlir::FailureOr<ModelPlan> bf16 = planBaseWith(bf16Model, options);
  ASSERT_TRUE(mlir::succeeded(f32) && mlir::succeeded(bf16));
  EXPECT_EQ(f32->weights, "");
  EXPECT_EQ(bf16->weights, "bf16");
  // Every bf16 parameter says what it is converted from; the rows of a slice of a
  // packed projection are its own size.
  size_t converted = 0;
  for (const TensorPlan &parameter : bf16->parameters) {
    if (parameter.dtype != "bf16")
      continue;
    ++converted;
    EXPECT_EQ(parameter.conversion, "bf16") << parameter.name;
    EXPECT_FALSE(parameter.source.empty()) << parameter.name;
    if (!parameter.rows.empty())
      EXPECT_EQ(kiln::SymDim::fixed(parameter.rows[1] - parameter.rows[0]),
                parameter.shape[0])
          << parameter.name;
  }
  // At least the four linears of each of the 6 encoder and 6 decoder layers (the
  // decoder's cross-attention has two more weights).
  EXPECT_GE(converted, 4u * 12);
  // The kernels read the converted weights in place: the same steps as at f32, and no
  // buffer but a parameter holds bf16.
  ASSERT_EQ(bf16->entries.size(), f32->entries.size());
  for (size_t e = 0; e < bf16->entries.size(); ++e) {
    EXPECT_EQ(bf16->entries[e].steps.size(), f32->entries[e].steps.size())
        << bf16->entries[e].name;
    for (const BufferPlan &buffer : bf16->entries[e].buffers)
      if (buffer.dtype == "bf16")
        EXPECT_EQ(buffer.kind, BufferPlan::Kind::Parameter) << bf16->entries[e].name;
  }
}

TEST(PlanGroups, TransformerBaseEncoderKernelsRunOverTheirRowsCollapsed) {
  kiln::PipelineOptions options;
  kiln::dsl::Model plainModel = buildTransformerBase(),
                   collapsedModel = buildTransformerBase();
  mlir::FailureOr<ModelPlan> plain = planBaseWith(plainModel, options);
  mlir::FailureOr<ModelPlan> collapsed =
      planBaseWith(collapsedModel, options, /*collapseRows=*/true);
  ASSERT_TRUE(mlir::succeeded(plain) && mlir::succeeded(collapsed));
  EXPECT_EQ(collapsed->kernels.size(), plain->kernels.size());
  for (size_t e = 0; e < collapsed->entries.size(); ++e) {
    const EntryPlan &entry = collapsed->entries[e];
    ASSERT_EQ(entry.steps.size(), plain->entries[e].steps.size()) << entry.name;
    // The same buffers, and a [rows, D] view for each row tensor a collapsed kernel
    // reads or writes: only views are new.
    size_t views = 0;
    for (const StepPlan &step : entry.steps)
      if (collapsed->kernels[step.kernel].collapsedRows)
        for (int arg : step.args) {
          const BufferPlan &buffer = entry.buffers[arg];
          if (buffer.kind != BufferPlan::Kind::View || buffer.shape.size() != 2 ||
              buffer.shape[0].isStatic())
            continue;
          ++views;
          // The batch times the sequence (S in encode, T in decode).
          EXPECT_TRUE(llvm::StringRef(buffer.shape[0].expr).startswith("B*"))
              << entry.name << ": " << buffer.shape[0].expr;
          EXPECT_EQ(entry.buffers[buffer.index].shape.size(), 3u) << entry.name;
        }
    EXPECT_EQ(entry.buffers.size(), plain->entries[e].buffers.size() + views)
        << entry.name;
    if (entry.name == "encode") {
      // Per layer: the q/k/v linear (an input and a result), the output projection's
      // group (its input, the residual and the result) and the feed-forward's (input,
      // result); not the final layer norm, which has no product.
      EXPECT_EQ(views, 6u * (2 + 3 + 2));
    }
    if (entry.name == "decode_step") {
      // A step's rows are [B, 1, D]: nothing to collapse.
      EXPECT_EQ(views, 0u);
    }
  }
  size_t collapsedKernels = 0;
  for (const KernelPlan &kernel : collapsed->kernels)
    collapsedKernels += kernel.collapsedRows;
  EXPECT_GT(collapsedKernels, 0u);
}

} // namespace
