//===- SchedulesCuda.h - The CUDA schedule family ---------------*- C++ -*-===//
//
// One schedule per kind of kernel description for a target with the CUDA feature,
// chosen by Scheduler.cpp over the same descriptions as the CPU family: the algorithm
// is untouched, only loops are mapped to blocks and threads. SchedulesCuda.cpp
// (pointwise, transpose, concat), SchedulesCudaMatmul.cpp, SchedulesCudaRows.cpp (row
// reductions and reductions over axes), SchedulesCudaAttention.cpp and
// SchedulesCudaQuantized.cpp. A schedule
// returns an error naming what it cannot map (never a host loop launching one kernel
// per element).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_SCHEDULESCUDA_H
#define KILN_BACKENDS_HALIDE_SCHEDULESCUDA_H

#include "Schedules.h"
#include "SchedulesAttention.h"

#include "llvm/Support/Error.h"

namespace kiln::halide_backend::cuda {

llvm::Error schedule(const PointwiseKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const TransposeKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const MatmulKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const SoftmaxKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const LayerNormKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const RmsNormKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const ArgmaxKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const ReduceKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const ConcatKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const AttentionKernel &kernel, const Halide::Target &target);
llvm::Error schedule(const QuantizedLinearKernel &kernel, const Halide::Target &target);

/// The attention tiles for a CUDA target (see chooseAttentionTiles in Scheduler.h).
llvm::Expected<AttentionTiles> chooseAttentionTiles(const Halide::Target &target,
                                                    int64_t queries, int64_t keys,
                                                    int64_t valueDim);

/// The error of a kind of kernel that has no CUDA schedule (yet).
llvm::Error noSchedule(const char *kind, const Halide::Target &target);

/// Maps `loops` (innermost first) of `stage` to one launch: loops[0], whose static
/// extent is `innerExtent` (or kDynamicExtent), to the threads, the rest to the blocks.
void mapToGrid(Halide::Stage stage, std::vector<Halide::VarOrRVar> loops,
               int64_t innerExtent);

} // namespace kiln::halide_backend::cuda

#endif // KILN_BACKENDS_HALIDE_SCHEDULESCUDA_H
