//===- Pipelines.cpp - The pass pipelines of Kiln -------------------------===//
//
// The only place pipelines are assembled, so that kiln-opt, the model compiler and the
// tests run the same sequence.
//
//===----------------------------------------------------------------------===//

#include "kiln/passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void kiln::buildDefaultPipeline(OpPassManager &pm, const PipelineOptions &) {
  OpPassManager &perEntry = pm.nest<FuncOp>();
  perEntry.addPass(createCheckShapesPass());
  // Folders of kiln ops merge chained scales, transposes and reshapes.
  perEntry.addPass(createCanonicalizerPass());
  perEntry.addPass(createCSEPass());
}

void kiln::registerAllKilnPasses() {
  registerKilnPasses();
  PassPipelineRegistration<>(
      "kiln-default-pipeline", "the pipeline every model goes through",
      [](OpPassManager &pm) { buildDefaultPipeline(pm); });
}
