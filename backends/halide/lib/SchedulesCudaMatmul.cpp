//===- SchedulesCudaMatmul.cpp - CUDA schedules of matmul and linear ------===//

#include "SchedulesCuda.h"

using namespace Halide;
using namespace kiln::halide_backend;

llvm::Error cuda::schedule(const MatmulKernel &, const Target &target) {
  return noSchedule(MatmulKernel::kind, target);
}
