//===- Passes.h - Kiln's passes and pipelines -------------------*- C++ -*-===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace kiln {

std::unique_ptr<mlir::Pass> createCheckShapesPass();
/// kiln-fuse-attention; with `remarks`, a remark at each kiln.softmax left unfused.
std::unique_ptr<mlir::Pass> createFuseAttentionPass();
std::unique_ptr<mlir::Pass> createFuseAttentionPass(bool remarks);
/// kiln-fuse-kernels; with `remarks`, a remark at each op left outside a group.
std::unique_ptr<mlir::Pass> createFuseKernelsPass();
std::unique_ptr<mlir::Pass> createFuseKernelsPass(bool remarks);
class FusionOp;
/// The op whose schedule the kernel of a kiln.fusion group takes (its linear, matmul,
/// layer_norm or rms_norm, as kiln-fuse-kernels forms groups; a linear that a
/// normalisation's group computes first is not it), or null for a chain of elementwise
/// ops.
mlir::Operation *fusionAnchor(FusionOp fusion);
/// kiln-pack-projections; with `remarks`, a remark at each linear over a weight slice
/// left unpacked.
std::unique_ptr<mlir::Pass> createPackProjectionsPass();
std::unique_ptr<mlir::Pass> createPackProjectionsPass(bool remarks);
/// kiln-print-graph: the entry points as Graphviz DOT on stdout (GraphDot.h).
std::unique_ptr<mlir::Pass> createPrintGraphPass();

/// Turns on the remarks of every fusion pass that runs from now on, whatever its own
/// option says: what kiln-opt's `--kiln-fusion-remarks` sets.
void setFusionRemarksEverywhere(bool enabled);
bool fusionRemarksEverywhere();

/// Options of the default pipeline.
struct PipelineOptions {
  /// Print the module after every pass to stderr.
  bool printAfterEach = false;
  /// Run kiln-fuse-attention (off: the same pipeline without the fusion, to compare).
  bool fuseAttention = true;
  /// Run kiln-pack-projections (off: the same pipeline without packing, to compare).
  bool packProjections = true;
  /// Run kiln-fuse-kernels (off: every op its own kernel).
  bool fuseKernels = true;
  /// A remark at each kiln.softmax the attention fusion leaves, at each linear over a
  /// weight slice left unpacked, and at each op the kernel fusion leaves outside a group,
  /// saying why.
  bool fusionRemarks = false;
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
