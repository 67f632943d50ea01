//===- Lower.h - kiln ops as Halide pipelines -------------------*- C++ -*-===//
//
// The algorithm of each op as a Halide Func over ImageParams, with its schedule applied
// (SchedulesCpu.cpp / SchedulesCuda.cpp). Halide dimension 0 is the last (contiguous)
// tensor dimension, so a tensor [B, S, D] is indexed f(d, s, b).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_LOWER_H
#define KILN_BACKENDS_HALIDE_LOWER_H

#include "Halide.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace kiln::halide_backend {

/// One op as a scheduled Halide pipeline. The kernel's arguments, in call order, are
/// `inputs` (one per operand, in operand order) followed by the output buffer (named
/// "result"). Every buffer must be dense row-major with minimum 0 and the op's static
/// extents (except a strided view: an operand that is a kv_append result, and
/// kv_append's own output; see stridedViewAxis); the dynamic extents of the output and
/// of non-broadcast operand dimensions must agree. The kernel checks all of this and
/// fails with a Halide error otherwise.
struct LoweredKernel {
  std::vector<Halide::ImageParam> inputs;
  Halide::Func output;
};

/// Whether `op` becomes a kernel (parameters, reshapes, state_alloc, state_read and the
/// terminator do not).
bool needsKernel(mlir::Operation *op);

/// For a value that the plan holds in a strided view, the tensor axis across which it
/// is not dense; None for a dense value. Only kv_append results are strided: a view of
/// the first P + 1 positions along `axis` of a cache with room for `capacity`. Its
/// strides are dense from `axis` inwards and larger outside it (they count capacity,
/// not P + 1), so a kernel that reads it pins only the inner ones.
llvm::Optional<int64_t> stridedViewAxis(mlir::Value value);

/// A string that is equal for two ops exactly when they can share a kernel: op name,
/// attributes and operand/result types (static dims and element types), and which
/// operands are strided views.
std::string kernelSignature(mlir::Operation *op);

/// Lowers `op` for `target`; emits an error at the op and fails when it cannot.
mlir::FailureOr<LoweredKernel> lowerOp(mlir::Operation *op, const Halide::Target &target);

/// The signature of, and the kernel that copies, a strided view (a kv_append result)
/// into a dense buffer of its shape: how an entry returns one.
std::string denseCopySignature(mlir::Value value);
mlir::FailureOr<LoweredKernel> lowerDenseCopy(mlir::Value value,
                                              const Halide::Target &target);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_LOWER_H
