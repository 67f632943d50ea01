//===- Lower.h - kiln ops as Halide pipelines -------------------*- C++ -*-===//
//
// Each op that becomes a kernel as a Halide Func over ImageParams: its algorithm
// (Lower*.cpp, one per op family) with the schedule that Scheduler.h picks for the
// target applied. Halide dimension 0 is the last (contiguous) tensor dimension, so a
// tensor [B, S, D] is indexed f(d, s, b).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_LOWER_H
#define KILN_BACKENDS_HALIDE_LOWER_H

#include "Schedules.h"

#include "Halide.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace kiln::halide_backend {

/// One op as a scheduled Halide pipeline. The kernel's arguments, in call order, are
/// `inputs` (one per operand, in operand order) followed by the output buffer (named
/// "result"). Every buffer must be dense row-major with minimum 0 and the op's static
/// extents (except a strided view: an operand that is a kv_append result, and
/// kv_append's own output; see stridedViewAxis in LowerSupport.h); the dynamic extents of
/// the output and of non-broadcast operand dimensions must agree. The kernel checks all
/// of this and fails with a Halide error otherwise.
struct LoweredKernel {
  std::vector<Halide::ImageParam> inputs;
  Halide::Func output;
  /// What its schedules ask of its code generation: passes over the lowered
  /// statement, the level its prefetches fill.
  CodegenRequests codegen;
};

/// The pipeline that compiles `kernel`, with its lowering passes.
Halide::Pipeline pipelineOf(const LoweredKernel &kernel);

/// Whether `op` becomes a kernel: whether it has a lowering (parameters, reshapes,
/// state_alloc, state_read and the terminator do not).
bool needsKernel(mlir::Operation *op);

/// For an op that needs a kernel, a string that is equal for two ops exactly when they
/// can share a kernel: op name, attributes and operand/result types (static dims and
/// element types), and which operands are strided views.
std::string kernelSignature(mlir::Operation *op);

/// Whether the kernel of embedding `op` checks each id, as the IR does not prove them all
/// rows of the table (ValueRange.h); its kernel's name ends in "_checked".
bool embeddingChecksIds(mlir::Operation *op);

/// Lowers `op` for `target`; emits an error at the op and fails when it cannot: when
/// the op has no lowering, or the target no schedule for it.
mlir::FailureOr<LoweredKernel> lowerOp(mlir::Operation *op, const Halide::Target &target);

/// The kernel that makes `count` kv_appends of `op`'s kernel signature, and of one
/// shape, in one call: the inputs are each one's value, then the outputs each one's
/// positions of its cache, in the same order.
mlir::FailureOr<LoweredKernel> lowerKvAppends(KvAppendOp op, unsigned count,
                                              const Halide::Target &target);

/// The signature of, and the kernel that copies, a strided view (a kv_append result)
/// into a dense buffer of its shape: how an entry returns one.
std::string denseCopySignature(mlir::Value value);
mlir::FailureOr<LoweredKernel> lowerDenseCopy(mlir::Value value,
                                              const Halide::Target &target);

/// Stores each f32 weight that only products read as its transpose in column panels
/// of `width` (a kiln.parameter with conversion "panels" and a kiln.unpack_panels that
/// the products read); a `width` of 0 leaves the module as it is. WeightPanels.cpp.
mlir::LogicalResult packWeightPanels(mlir::ModuleOp module, int64_t width);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_LOWER_H
