//===- Scheduler.h - The one place a kernel's schedule is chosen -*- C++ -*-===//
//
// Every op's algorithm (Lower*.cpp) ends in kernel descriptions (Schedules.h,
// SchedulesAttention.h) and schedules nothing itself; `schedule` applies the schedule
// that the target's family has for each description: the CPU family (SchedulesCpu.h)
// or, for a target with the CUDA feature, the CUDA family (SchedulesCuda.h), over the
// same descriptions; no algorithm changes. A kind of kernel that a family cannot
// schedule is an error naming it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_SCHEDULER_H
#define KILN_BACKENDS_HALIDE_SCHEDULER_H

#include "Schedules.h"
#include "SchedulesAttention.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <utility>
#include <variant>

namespace kiln::halide_backend {

/// Any kernel description.
using KernelDescription =
    std::variant<PointwiseKernel, TransposeKernel, MatmulKernel, SoftmaxKernel,
                 LayerNormKernel, RmsNormKernel, ArgmaxKernel, ReduceKernel, ConcatKernel,
                 AttentionKernel, QuantizedLinearKernel>;

/// The Func that `kernel` computes.
Halide::Func outputOf(const KernelDescription &kernel);

/// Schedules the stages of one kernel's pipeline for `target`, producers first: every
/// stage but the last is computed whole (at root) before the next one reads it. Fails,
/// naming the kind of kernel, when the target has no schedule for one of them. Adds the
/// lowering passes and prefetch levels that the schedules ask for to `codegen`.
llvm::Error schedule(llvm::ArrayRef<KernelDescription> stages,
                     const Halide::Target &target, CodegenRequests &codegen);

/// The tiles that an attention kernel's algorithm is written for (see
/// SchedulesAttention.h), as `target`'s attention schedule wants them; `queries`,
/// `keys` and `valueDim` are static extents or kDynamicExtent. Fails as `schedule` does.
llvm::Expected<AttentionTiles> chooseAttentionTiles(const Halide::Target &target,
                                                    int64_t queries, int64_t keys,
                                                    int64_t valueDim);

/// The smaller tiles of an attention kernel's few-queries form
/// (AttentionKernel::fewQueriesForm) and the most queries that take it, where
/// `target`'s family has one for these extents; std::nullopt otherwise.
std::optional<std::pair<AttentionTiles, int64_t>>
chooseFewQueriesTiles(const Halide::Target &target, int64_t queries, int64_t keys,
                      int64_t valueDim);

/// The most rows for which a `transpose_rhs` product of `columns` (static, or
/// kDynamicExtent) and a run-time row count takes `target`'s few-rows form
/// (MatmulKernel::fewRowsForm); 0: the family schedules every row count one way.
int64_t chooseFewRowsLimit(const Halide::Target &target, int64_t columns);

/// The width of the column panels in which `target`'s products store a 2-D f32
/// `transpose_rhs` weight (kiln.unpack_panels, packWeightPanels); 0: the family reads
/// weights as the checkpoint stores them.
int64_t chooseWeightPanelWidth(const Halide::Target &target);

/// Whether `target`'s matmul schedules read a register tile's lhs rows in place instead
/// of staging them (MatmulKernel::lhsRowsInPlace).
bool chooseLhsRowsInPlace(const Halide::Target &target);

/// Whether `target`'s row-wise kernels run over their rows collapsed into one dimension
/// (KernelPlan::collapsedRows).
bool chooseCollapsedRows(const Halide::Target &target);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_SCHEDULER_H
