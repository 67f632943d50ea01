//===- Pipelines.cpp - The pass pipelines of Kiln -------------------------===//
//
// The only place pipelines are assembled, so that kiln-opt, the model compiler and the
// tests run the same sequence.
//
//===----------------------------------------------------------------------===//

#include "kiln/passes/Passes.h"

#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::buildDefaultPipeline(OpPassManager &pm, const PipelineOptions &options) {
  OpPassManager &perEntry = pm.nest<FuncOp>();
  perEntry.addPass(createCheckShapesPass());
  // Folders of kiln ops merge chained scales, transposes and reshapes, which leaves the
  // fusion one scale to read.
  perEntry.addPass(createCanonicalizerPass());
  if (options.fuseAttention)
    perEntry.addPass(createFuseAttentionPass(options.fusionRemarks));
  // After the fusion, which reads each projection's head split on its own.
  if (options.packProjections)
    perEntry.addPass(createPackProjectionsPass(options.fusionRemarks));
  // Merges what the fusion rebuilt once per layer (additive forms of boolean masks).
  perEntry.addPass(createCSEPass());
}

namespace {
/// `--kiln-default-pipeline=fusion-remarks=1`.
struct DefaultPipelineOptions : public PassPipelineOptions<DefaultPipelineOptions> {
  Option<bool> fusionRemarks{
      *this, "fusion-remarks",
      llvm::cl::desc("a remark at each kiln.softmax left unfused, with the reason"),
      llvm::cl::init(false)};
};
} // namespace

void kiln::registerAllKilnPasses() {
  registerKilnPasses();
  PassPipelineRegistration<DefaultPipelineOptions>(
      "kiln-default-pipeline", "the pipeline every model goes through",
      [](OpPassManager &pm, const DefaultPipelineOptions &cl) {
        PipelineOptions options;
        options.fusionRemarks = cl.fusionRemarks;
        buildDefaultPipeline(pm, options);
      });
}
