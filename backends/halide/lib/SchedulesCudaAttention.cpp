//===- SchedulesCudaAttention.cpp - The CUDA schedule of fused attention --===//

#include "SchedulesCuda.h"

using namespace Halide;
using namespace kiln::halide_backend;

llvm::Error cuda::schedule(const AttentionKernel &, const Target &target) {
  return noSchedule(AttentionKernel::kind, target);
}

llvm::Expected<AttentionTiles> cuda::chooseAttentionTiles(const Target &target, int64_t,
                                                          int64_t, int64_t) {
  return noSchedule(AttentionKernel::kind, target);
}
