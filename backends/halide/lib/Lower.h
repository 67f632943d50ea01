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
/// extents; the dynamic extents of the output and of non-broadcast operand dimensions
/// must agree. The kernel checks all of this and fails with a Halide error otherwise.
struct LoweredKernel {
  std::vector<Halide::ImageParam> inputs;
  Halide::Func output;
};

/// Whether `op` becomes a kernel (parameters, reshapes and the terminator do not).
bool needsKernel(mlir::Operation *op);

/// A string that is equal for two ops exactly when they can share a kernel: op name,
/// attributes and operand/result types (static dims and element types).
std::string kernelSignature(mlir::Operation *op);

/// Lowers `op` for `target`; emits an error at the op and fails when it cannot.
mlir::FailureOr<LoweredKernel> lowerOp(mlir::Operation *op, const Halide::Target &target);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_LOWER_H
