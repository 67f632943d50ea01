//===- TaskPrefetch.h - A run of parallel tasks prefetching the next -*- C++ -*-===//
//
// A decode step's attention (the few-queries form) is one small task per batch entry
// and head: a few queries against that head's cached keys and values, a 16 KB block of
// each at 64 positions of 64 channels, which the step's weights have long since pushed
// out of the caches. Each task computes little and waits for its rows from DRAM, so a
// schedule that runs the tasks in runs has each task prefetch the next task's rows of
// the run. Halide's `prefetch` directive cannot say it: placed at the task loop, its
// footprint is that of an offset iteration of the fused loop, which bounds inference
// widens to every head of the batch entry (eight times the rows). The pass adds the
// prefetches to the lowered statement, finding the loop by name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_TASKPREFETCH_H
#define KILN_BACKENDS_HALIDE_TASKPREFETCH_H

#include "Halide.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::halide_backend {

/// A buffer whose rows (Halide dimension 1, from 0) every task reads whole.
struct TaskRows {
  std::string buffer;
  /// Elements of a row (dimension 0, contiguous), and the rows a task reads: 0 for the
  /// buffer's extent along dimension 1 at run time.
  int64_t rowElements = 0, rows = 0;
};

/// Where the pass finds the tasks, and what each reads.
struct TaskPrefetchLoops {
  /// The serial loop over the tasks of one run: its lowered name ends in "." + this.
  std::string taskLoop;
  std::vector<TaskRows> reads;
};

/// The pass that has each task but a run's last prefetch, before it begins, the rows
/// that the next task of its run reads: the task's first load of each buffer, at the
/// next task, plus whole rows at the buffer's row stride.
std::shared_ptr<Halide::Internal::IRMutator>
makeNextTaskPrefetchPass(const TaskPrefetchLoops &loops);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_TASKPREFETCH_H
