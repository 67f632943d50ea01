//===- SchedulesCuda.cpp - CUDA schedules of the data-movement kernels ----===//
//
// Pointwise kernels map Halide dimension 0 (contiguous) to the threads of a block, so
// that a warp reads and writes consecutive floats (coalesced), and every outer
// dimension, fused, to the blocks: one launch per kernel whatever its rank. Tails are
// GuardWithIf, since most extents are dynamic.
//
//===----------------------------------------------------------------------===//

#include "SchedulesCuda.h"

using namespace Halide;
using namespace kiln::halide_backend;

llvm::Error cuda::noSchedule(const char *kind, const Target &target) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "the Halide backend has no CUDA schedule for %s kernels yet (target %s)", kind,
      target.to_string().c_str());
}

llvm::Error cuda::schedule(const PointwiseKernel &kernel, const Target &target) {
  Func output = kernel.output;
  if (output.has_update_definition())
    return noSchedule("pointwise (with an update)", target);
  Var outer("outer"), lane("lane");
  output.split(kernel.vars[0], outer, lane, 128, TailStrategy::GuardWithIf);
  for (size_t d = 1; d < kernel.vars.size(); ++d) {
    Var fused("fused");
    output.fuse(outer, kernel.vars[d], fused);
    outer = fused;
  }
  output.gpu_blocks(outer).gpu_threads(lane);
  return llvm::Error::success();
}

llvm::Error cuda::schedule(const TransposeKernel &, const Target &target) {
  return noSchedule(TransposeKernel::kind, target);
}

llvm::Error cuda::schedule(const ConcatKernel &, const Target &target) {
  return noSchedule(ConcatKernel::kind, target);
}
