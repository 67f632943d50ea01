//===- PlanGroupsTest.cpp - Kernel groups cut the base model's kernel count ===//
//
// Builds models/transformer_base.cpp with the DSL, runs the default pipeline with and
// without kiln-fuse-kernels, and plans both: the kernels each entry runs (its steps)
// and the distinct kernels the model compiles. Groups must cut decode_step's steps by
// at least the elementwise passes and linears they absorb, and identical layers must
// still share one kernel per group kind.
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

Planned planBase(bool fuseKernels) {
  kiln::dsl::Model model = buildTransformerBase();
  EXPECT_TRUE(model.ok());
  mlir::PassManager pm(&model.context());
  kiln::PipelineOptions options;
  options.fuseKernels = fuseKernels;
  kiln::buildDefaultPipeline(pm, options);
  EXPECT_TRUE(mlir::succeeded(pm.run(model.module())));
  mlir::FailureOr<ModelPlan> plan = planModel(model.module(), "transformer_base");
  EXPECT_TRUE(mlir::succeeded(plan));
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
  // Per decoder layer (6): bias+ReLU into the first FFN linear, the residual add into
  // each of the three LayerNorms and the linear before it (two output projections and
  // the second FFN linear) as its first stage; the embedding's scale and position add
  // are one.
  EXPECT_LE(fused.steps["decode_step"] + 6 * 7, unfused.steps["decode_step"]);
  // Per encoder layer: ReLU, two residual adds and their linears.
  EXPECT_LE(fused.steps["encode"] + 6 * 5, unfused.steps["encode"]);
  // The six identical layers share their groups' kernels.
  EXPECT_GT(fused.fusionKernels, 0u);
  EXPECT_GE(fused.mostGroupUses, 6u);
  EXPECT_LE(fused.kernels, unfused.kernels);
}

} // namespace
