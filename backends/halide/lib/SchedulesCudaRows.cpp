//===- SchedulesCudaRows.cpp - CUDA schedules of the reductions -----------===//

#include "SchedulesCuda.h"

using namespace Halide;
using namespace kiln::halide_backend;

llvm::Error cuda::schedule(const SoftmaxKernel &, const Target &target) {
  return noSchedule(SoftmaxKernel::kind, target);
}

llvm::Error cuda::schedule(const LayerNormKernel &, const Target &target) {
  return noSchedule(LayerNormKernel::kind, target);
}

llvm::Error cuda::schedule(const RmsNormKernel &, const Target &target) {
  return noSchedule(RmsNormKernel::kind, target);
}

llvm::Error cuda::schedule(const ArgmaxKernel &, const Target &target) {
  return noSchedule(ArgmaxKernel::kind, target);
}

llvm::Error cuda::schedule(const ReduceKernel &, const Target &target) {
  return noSchedule(ReduceKernel::kind, target);
}
