//===- TaskPool.h - The threads a model's parallel loops run on -*- C++ -*-===//
//
// What the runtime installs as halide_do_par_for in every model library it loads.
// Halide's own pool puts a worker to sleep on a condition variable as soon as it finds
// no task, so each parallel loop of a decode step (over 30 of its 66 kernels, each
// tens to hundreds of microseconds) starts with a futex wake-up of the other thread,
// and the caller runs the first tasks alone until it arrives. Here the workers spin
// between loops for a short while (kSpin) before they sleep, so that back-to-back kernels
// find them awake.
//
// One pool serves the process: every model library and session. A loop started while
// another runs (a second session's, on another thread) waits for it; one started from
// inside a task runs on that task's thread alone.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TASKPOOL_H
#define KILN_RUNTIME_TASKPOOL_H

#include <HalideRuntime.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace kiln::rt {

class TaskPool {
public:
  /// The process's pool; its threads start at the first setThreads() that needs them.
  static TaskPool &instance();

  /// halide_do_par_for's contract on instance(): runs task(userContext, i, closure) for
  /// every i in [min, min + size), returns 0 or a nonzero result of one of them (the
  /// tasks not yet started when one fails are skipped).
  static int parallelFor(void *userContext, halide_task_t task, int min, int size,
                         uint8_t *closure);

  /// The threads a loop runs on, its caller's included: 1 to 256, or 0 for
  /// HL_NUM_THREADS when it is set, else the number of cores (Halide's default).
  void setThreads(int threads);
  int threads() const { return workersWanted_.load(std::memory_order_relaxed) + 1; }

  TaskPool(const TaskPool &) = delete;
  TaskPool &operator=(const TaskPool &) = delete;

private:
  TaskPool() = default;
  int run(void *userContext, halide_task_t task, int min, int size, uint8_t *closure);
  /// Returns once `count` tasks of the job have finished.
  void awaitWorkers(int count);
  /// Claims and runs tasks of job `generation` until none is left to claim.
  void drain(uint64_t generation);
  void work(int index);
  /// Returns once a job other than `seen` is published; spins for kSpin first.
  uint64_t waitForJob(uint64_t seen, int index);

  // The job being run, published by one store of state_: its generation, task count
  // and next unclaimed task, packed so that a worker claims a task with one
  // compare-and-swap that fails if the job is no longer the one it saw.
  std::atomic<uint64_t> state_{0};
  std::atomic<halide_task_t> task_{nullptr};
  std::atomic<void *> userContext_{nullptr};
  std::atomic<uint8_t *> closure_{nullptr};
  std::atomic<int> min_{0};
  std::atomic<int> done_{0};
  std::atomic<int> status_{0};
  std::atomic<bool> callerSleeps_{false};

  std::mutex submit_; // held by the thread whose job the pool runs
  std::mutex spawn_;
  std::vector<std::thread> workers_;
  std::atomic<int> workersWanted_{0};
  // Sleeping workers wait on wake_, which the submitter bumps when any sleeps.
  std::atomic<uint32_t> wake_{0};
  std::atomic<int> sleepers_{0};
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_TASKPOOL_H
