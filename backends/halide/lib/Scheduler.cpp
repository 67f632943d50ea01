//===- Scheduler.cpp - Picking each kernel's schedule by target -----------===//
//
// The dispatch from kernel descriptions to the schedule family of the target.
//
//===----------------------------------------------------------------------===//

#include "Scheduler.h"
#include "SchedulesCpu.h"
#include "SchedulesCuda.h"

#include <type_traits>

using namespace kiln::halide_backend;

namespace {

/// The error for a GPU API other than CUDA, which no schedule family serves.
llvm::Error noGpuSchedule(const char *kind, const Halide::Target &target) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "the Halide backend has no GPU schedule for %s kernels on target %s (only CUDA "
      "has a GPU schedule family)",
      kind, target.to_string().c_str());
}

} // namespace

Halide::Func kiln::halide_backend::outputOf(const KernelDescription &kernel) {
  return std::visit([](const auto &k) { return k.output; }, kernel);
}

llvm::Error kiln::halide_backend::schedule(llvm::ArrayRef<KernelDescription> stages,
                                           const Halide::Target &target,
                                           CodegenRequests &codegen) {
  for (const KernelDescription &stage : stages) {
    llvm::Error error = std::visit(
        [&](const auto &kernel) -> llvm::Error {
          if (target.has_feature(Halide::Target::CUDA))
            return cuda::schedule(kernel, target);
          if (target.has_gpu_feature())
            return noGpuSchedule(kernel.kind, target);
          if constexpr (std::is_same_v<std::decay_t<decltype(kernel)>, MatmulKernel> ||
                        std::is_same_v<std::decay_t<decltype(kernel)>, AttentionKernel>)
            cpu::schedule(kernel, target, codegen);
          else
            cpu::schedule(kernel, target);
          return llvm::Error::success();
        },
        stage);
    if (error)
      return error;
    if (&stage != &stages.back())
      outputOf(stage).compute_root();
  }
  return llvm::Error::success();
}

llvm::Expected<AttentionTiles>
kiln::halide_backend::chooseAttentionTiles(const Halide::Target &target, int64_t queries,
                                           int64_t keys, int64_t valueDim) {
  if (target.has_feature(Halide::Target::CUDA))
    return cuda::chooseAttentionTiles(target, queries, keys, valueDim);
  if (target.has_gpu_feature())
    return noGpuSchedule(AttentionKernel::kind, target);
  return cpu::chooseAttentionTiles(target, queries, keys, valueDim);
}

std::optional<std::pair<AttentionTiles, int64_t>>
kiln::halide_backend::chooseFewQueriesTiles(const Halide::Target &target, int64_t queries,
                                            int64_t keys, int64_t valueDim) {
  // The CUDA family keeps its one form: its query tiles are 32 rows or fewer
  // (SchedulesCudaAttention.cpp), and no GPU has been lent to measure a second one.
  if (target.has_gpu_feature())
    return std::nullopt;
  return cpu::chooseFewQueriesTiles(target, queries, keys, valueDim);
}

int64_t kiln::halide_backend::chooseFewRowsLimit(const Halide::Target &target,
                                                 int64_t columns) {
  // The CUDA family's tiled product serves any row count; only its static decode rows
  // take the matrix-vector form.
  if (target.has_gpu_feature())
    return 0;
  return cpu::chooseFewRowsLimit(target, columns);
}

int64_t kiln::halide_backend::chooseWeightPanelWidth(const Halide::Target &target) {
  // The CUDA family's tiles read the weight's rows as they are stored.
  if (target.has_gpu_feature())
    return 0;
  return cpu::chooseWeightPanelWidth(target);
}

bool kiln::halide_backend::chooseLhsRowsInPlace(const Halide::Target &target) {
  // The CUDA family stages its tiles in shared memory.
  if (target.has_gpu_feature())
    return false;
  return cpu::chooseLhsRowsInPlace(target);
}

bool kiln::halide_backend::chooseCollapsedRows(const Halide::Target &target) {
  // The CUDA family's schedules were written for, and measured at, rows in sequences.
  if (target.has_gpu_feature())
    return false;
  return cpu::chooseCollapsedRows(target);
}
