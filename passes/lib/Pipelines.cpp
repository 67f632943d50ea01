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
  // After CSE, so that a value computed once per layer counts its readers once.
  if (options.fuseKernels)
    perEntry.addPass(createFuseKernelsPass(options.fusionRemarks));
}

namespace {
/// `--kiln-default-pipeline='fusion-remarks=1 fuse-kernels=0'`.
struct DefaultPipelineOptions : public PassPipelineOptions<DefaultPipelineOptions> {
  Option<bool> fusionRemarks{
      *this, "fusion-remarks",
      llvm::cl::desc("a remark at each op left unfused, with the reason"),
      llvm::cl::init(false)};
  Option<bool> fuseKernels{
      *this, "fuse-kernels",
      llvm::cl::desc("group ops into kiln.fusion kernels (kiln-fuse-kernels)"),
      llvm::cl::init(true)};
};
} // namespace

void kiln::registerAllKilnPasses() {
  registerKilnPasses();
  PassPipelineRegistration<DefaultPipelineOptions>(
      "kiln-default-pipeline", "the pipeline every model goes through",
      [](OpPassManager &pm, const DefaultPipelineOptions &cl) {
        PipelineOptions options;
        options.fusionRemarks = cl.fusionRemarks;
        options.fuseKernels = cl.fuseKernels;
        buildDefaultPipeline(pm, options);
      });
}
