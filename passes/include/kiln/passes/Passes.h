//===- Passes.h - Kiln's passes and pipelines -------------------*- C++ -*-===//

#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>

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
/// kiln-trim-padding; with `remarks`, a remark at the op that keeps an entry over all
/// its padding.
std::unique_ptr<mlir::Pass> createTrimPaddingPass();
std::unique_ptr<mlir::Pass> createTrimPaddingPass(bool remarks);
/// kiln-weight-precision: the weights of linears and tied output projections stored
/// as `weights` ("f32", "bf16" or "int8"); with `remarks`, a remark at each product
/// over a rank-2 weight that stays f32.
std::unique_ptr<mlir::Pass> createWeightPrecisionPass();
std::unique_ptr<mlir::Pass> createWeightPrecisionPass(llvm::StringRef weights,
                                                      bool remarks);
/// Whether `name` is a precision kiln-weight-precision knows (NAME-gen's --weights).
bool isWeightPrecision(llvm::StringRef name);
/// The precisions it knows, for messages.
inline constexpr llvm::StringLiteral kWeightPrecisionChoices = "f32, bf16 or int8";
/// The module attribute that records the precision the pass converted the weights to
/// (absent: f32); the manifest's "weights" carries it.
inline constexpr llvm::StringLiteral kWeightPrecisionAttr = "kiln.weights";

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
  /// The precision of the weights of linears and tied output projections: "f32" (as
  /// the checkpoint), "bf16" or "int8" (kiln-weight-precision).
  std::string weights = "f32";
  /// A remark at each kiln.softmax the attention fusion leaves, at each linear over a
  /// weight slice left unpacked, at each product whose weight stays f32 when `weights`
  /// is not, and at each op the kernel fusion leaves outside a group, saying why.
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
