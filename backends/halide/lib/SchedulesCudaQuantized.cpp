//===- SchedulesCudaQuantized.cpp - CUDA schedule of quantized_linear -----===//
//
// None yet: the int8 weights of kiln.quantized_linear are a CPU form (x86 VNNI); a
// model compiled for a CUDA target keeps its weights in f32 or bf16
// (kiln-weight-precision). Lowering one for CUDA is the scheduler's error naming the
// kind of kernel, never a host loop.
//
//===----------------------------------------------------------------------===//

#include "SchedulesCuda.h"

using namespace kiln::halide_backend;

llvm::Error cuda::schedule(const QuantizedLinearKernel &, const Halide::Target &target) {
  return noSchedule(QuantizedLinearKernel::kind, target);
}
