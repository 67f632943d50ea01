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
  // After packing, so that a packed projection converts its rows as one weight; before
  // the kernel fusion, whose groups anchor on the products it leaves.
  if (options.weights != "f32")
    pm.addPass(createWeightPrecisionPass(options.weights, options.fusionRemarks));
  // On the ops that run, before they are grouped: attention fused, projections packed.
  pm.nest<FuncOp>().addPass(createTrimPaddingPass(options.fusionRemarks));
  // After CSE, so that a value computed once per layer counts its readers once.
  if (options.fuseKernels)
    pm.nest<FuncOp>().addPass(createFuseKernelsPass(options.fusionRemarks));
}

namespace {
/// `--kiln-default-pipeline='fusion-remarks=1 fuse-kernels=0 weights=int8'`.
struct DefaultPipelineOptions : public PassPipelineOptions<DefaultPipelineOptions> {
  Option<bool> fusionRemarks{
      *this, "fusion-remarks",
      llvm::cl::desc("a remark at each op left unfused, with the reason"),
      llvm::cl::init(false)};
  Option<bool> fuseKernels{
      *this, "fuse-kernels",
      llvm::cl::desc("group ops into kiln.fusion kernels (kiln-fuse-kernels)"),
      llvm::cl::init(true)};
  Option<std::string> weights{
      *this, "weights",
      llvm::cl::desc("the precision of linear weights: f32, bf16 or int8 "
                     "(kiln-weight-precision)"),
      llvm::cl::init("f32")};
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
        options.weights = cl.weights;
        buildDefaultPipeline(pm, options);
      });
}
