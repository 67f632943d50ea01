//===- Passes.h - Kiln's passes and pipelines -------------------*- C++ -*-===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace kiln {

std::unique_ptr<mlir::Pass> createCheckShapesPass();

/// Options of the default pipeline.
struct PipelineOptions {
  /// Print the module after every pass to stderr.
  bool printAfterEach = false;
};

/// Fills `pm` with the pipeline every model goes through between the DSL and the
/// backends. This is the only place pipelines are assembled.
void buildDefaultPipeline(mlir::OpPassManager &pm, const PipelineOptions &options = {});

/// Registers every Kiln pass and the pipeline `kiln-default-pipeline`, for kiln-opt.
void registerAllKilnPasses();

#define GEN_PASS_REGISTRATION
#include "kiln/passes/Passes.h.inc"

} // namespace kiln

#endif // KILN_PASSES_PASSES_H
