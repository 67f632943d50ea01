//===- SchedulesCpu.h - The CPU schedule family -----------------*- C++ -*-===//
//
// One schedule per kind of kernel description, for any CPU target (the target
// supplies the vector width), chosen by Scheduler.cpp: SchedulesCpu.cpp (pointwise,
// transpose, row reductions, reductions over axes, concat), SchedulesCpuMatmul.cpp
// (which picks the panel or the dot form, SchedulesCpuMatmulPanel.cpp and
// SchedulesCpuMatmulDot.cpp), SchedulesCpuAttention.cpp and SchedulesCpuQuantized.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_SCHEDULESCPU_H
#define KILN_BACKENDS_HALIDE_SCHEDULESCPU_H

#include "Schedules.h"
#include "SchedulesAttention.h"

#include <optional>
#include <utility>

namespace kiln::halide_backend::cpu {

void schedule(const PointwiseKernel &kernel, const Halide::Target &target);
void schedule(const TransposeKernel &kernel, const Halide::Target &target);
void schedule(const MatmulKernel &kernel, const Halide::Target &target,
              CodegenRequests &codegen);
void schedule(const SoftmaxKernel &kernel, const Halide::Target &target);
void schedule(const LayerNormKernel &kernel, const Halide::Target &target);
void schedule(const RmsNormKernel &kernel, const Halide::Target &target);
void schedule(const ArgmaxKernel &kernel, const Halide::Target &target);
void schedule(const ReduceKernel &kernel, const Halide::Target &target);
void schedule(const ConcatKernel &kernel, const Halide::Target &target);
void schedule(const AttentionKernel &kernel, const Halide::Target &target,
              CodegenRequests &codegen);
void schedule(const QuantizedLinearKernel &kernel, const Halide::Target &target);

/// The attention tiles for a CPU target (see chooseAttentionTiles in Scheduler.h).
AttentionTiles chooseAttentionTiles(const Halide::Target &target, int64_t queries,
                                    int64_t keys, int64_t valueDim);

/// The few-queries form's tiles and limit for a CPU target (see chooseFewQueriesTiles
/// in Scheduler.h).
std::optional<std::pair<AttentionTiles, int64_t>>
chooseFewQueriesTiles(const Halide::Target &target, int64_t queries, int64_t keys,
                      int64_t valueDim);

/// The few-rows limit for a CPU target (see chooseFewRowsLimit in Scheduler.h).
int64_t chooseFewRowsLimit(const Halide::Target &target, int64_t columns);
/// The weight panel width for a CPU target (see chooseWeightPanelWidth in Scheduler.h).
int64_t chooseWeightPanelWidth(const Halide::Target &target);
/// Whether a CPU target's products read lhs rows in place (see chooseLhsRowsInPlace in
/// Scheduler.h).
bool chooseLhsRowsInPlace(const Halide::Target &target);
/// Whether a CPU target's row-wise kernels run over their rows as one dimension (see
/// chooseCollapsedRows in Scheduler.h).
bool chooseCollapsedRows(const Halide::Target &target);

} // namespace kiln::halide_backend::cpu

#endif // KILN_BACKENDS_HALIDE_SCHEDULESCPU_H
