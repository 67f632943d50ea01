//===- TaskPool.cpp - The threads a model's parallel loops run on ---------===//
//
// A job is a range of tasks that the caller and the workers claim one at a time from a
// shared counter; the caller returns when every claimed task has finished. Workers
// spin (with pause) between jobs for kSpin, then sleep on wake_ until the next one.
//
//===----------------------------------------------------------------------===//

#include "TaskPool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <immintrin.h>
#include <pthread.h>

namespace kiln::rt {

namespace {

// How long an idle worker spins before it sleeps: above the host-side gaps between the
// kernels of a run and between the decode steps of a generation (microseconds to tens
// of them), so that a generation pays no wake-up after its first kernel; and short, as a
// spinning thread on a busy machine loses the scheduler's favour that a woken sleeper
// has and then arrives late to the next loop (measured 1 ms: a decode step 30% slower
// than Halide's pool while two compile jobs shared the 2 cores).
constexpr std::chrono::microseconds kSpin{100};

// state_: generation (20 bits) | task count (22 bits) | next task (22 bits).
constexpr int kCountBits = 22;
constexpr uint64_t kCountMask = (uint64_t(1) << kCountBits) - 1;
constexpr int kMaxTasks = int(kCountMask); // larger loops run as several jobs

uint64_t pack(uint64_t generation, uint64_t count, uint64_t next) {
  return generation << (2 * kCountBits) | count << kCountBits | next;
}
uint64_t generationOf(uint64_t state) { return state >> (2 * kCountBits); }
int countOf(uint64_t state) { return int(state >> kCountBits & kCountMask); }
int nextOf(uint64_t state) { return int(state & kCountMask); }

// Whether this thread is running a task (a worker always is): a loop it starts runs
// here alone.
thread_local bool tInTask = false;

int defaultThreads() {
  if (const char *env = std::getenv("HL_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n > 0)
      return n;
  }
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

int runSerially(void *userContext, halide_task_t task, int min, int size,
                uint8_t *closure) {
  for (int i = min; i < min + size; ++i)
    if (int rc = task(userContext, i, closure))
      return rc;
  return 0;
}

} // namespace

TaskPool &TaskPool::instance() {
  // Never destroyed: workers may still spin while the process exits.
  static TaskPool *pool = new TaskPool;
  return *pool;
}

int TaskPool::parallelFor(void *userContext, halide_task_t task, int min, int size,
                          uint8_t *closure) {
  return instance().run(userContext, task, min, size, closure);
}

void TaskPool::setThreads(int threads) {
  int wanted = (threads > 0 ? threads : defaultThreads()) - 1;
  std::lock_guard<std::mutex> lock(spawn_);
  workersWanted_.store(wanted);
  workersWanted_.notify_all();
  while (int(workers_.size()) < wanted) {
    int index = int(workers_.size());
    workers_.emplace_back([this, index] { work(index); });
    // Named as top and debuggers show it, from here so that it has the name at once.
    pthread_setname_np(workers_.back().native_handle(), "kiln-worker");
    workers_.back().detach();
  }
}

int TaskPool::run(void *userContext, halide_task_t task, int min, int size,
                  uint8_t *closure) {
  if (size <= 1 || tInTask || workersWanted_.load(std::memory_order_relaxed) == 0)
    return runSerially(userContext, task, min, size, closure);
  // Another thread's loop (a second session's kernel) finishes first: both would
  // share the same cores anyway.
  std::lock_guard<std::mutex> lock(submit_);
  for (; size > 0; min += kMaxTasks, size -= kMaxTasks) {
    int count = std::min(size, kMaxTasks);
    task_.store(task, std::memory_order_relaxed);
    userContext_.store(userContext, std::memory_order_relaxed);
    closure_.store(closure, std::memory_order_relaxed);
    min_.store(min, std::memory_order_relaxed);
    done_.store(0, std::memory_order_relaxed);
    uint64_t generation = generationOf(state_.load(std::memory_order_relaxed)) + 1;
    generation &= (uint64_t(1) << (64 - 2 * kCountBits)) - 1;
    state_.store(pack(generation, uint64_t(count), 0)); // seq_cst: see waitForJob
    if (sleepers_.load() > 0) {
      wake_.fetch_add(1);
      wake_.notify_all();
    }
    tInTask = true;
    drain(generation);
    tInTask = false;
    awaitWorkers(count);
    if (int rc = status_.exchange(0, std::memory_order_relaxed))
      return rc;
  }
  return 0;
}

void TaskPool::awaitWorkers(int count) {
  // The workers' last tasks are short, as the caller took its share; but a worker
  // descheduled in one must not have the caller spin for the scheduler's time slice.
  for (int spins = 0; spins < 4096; ++spins) {
    if (done_.load(std::memory_order_acquire) == count)
      return;
    _mm_pause();
  }
  callerSleeps_.store(true); // seq_cst, as the workers' increment of done_ and load of it
  for (int done = done_.load(); done < count; done = done_.load())
    done_.wait(done);
  callerSleeps_.store(false, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_acquire);
}

void TaskPool::drain(uint64_t generation) {
  uint64_t state = state_.load(std::memory_order_acquire);
  while (generationOf(state) == generation && nextOf(state) < countOf(state)) {
    if (!state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;
    // Claimed: the job cannot end before this task does, so its fields hold.
    if (status_.load(std::memory_order_relaxed) == 0) {
      int rc = task_.load(std::memory_order_relaxed)(
          userContext_.load(std::memory_order_relaxed),
          min_.load(std::memory_order_relaxed) + nextOf(state),
          closure_.load(std::memory_order_relaxed));
      if (rc) {
        int none = 0;
        status_.compare_exchange_strong(none, rc, std::memory_order_relaxed);
      }
    }
    done_.fetch_add(1); // seq_cst: see awaitWorkers
    if (callerSleeps_.load())
      done_.notify_all();
    state = state_.load(std::memory_order_acquire);
  }
}

void TaskPool::work(int index) {
  tInTask = true;
  // No job seen yet: one published before this thread ran is joined at once.
  uint64_t seen = ~uint64_t(0);
  for (;;) {
    seen = waitForJob(seen, index);
    if (index < workersWanted_.load(std::memory_order_relaxed))
      drain(seen);
  }
}

uint64_t TaskPool::waitForJob(uint64_t seen, int index) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point until = Clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    // A worker beyond the wanted count sleeps until setThreads() wants it.
    if (int wanted = workersWanted_.load(); index >= wanted) {
      workersWanted_.wait(wanted);
      until = Clock::now() + kSpin;
      continue;
    }
    uint64_t generation = generationOf(state_.load(std::memory_order_acquire));
    if (generation != seen)
      return generation;
    if (i % 256 || Clock::now() < until) {
      _mm_pause();
      continue;
    }
    // Read wake_ before announcing the sleep and checking state_ again (all seq_cst, as
    // the submitter's store of state_ and load of sleepers_): either this check sees
    // the new job, or the submitter sees a sleeper and bumps wake_ past `ticket`.
    uint32_t ticket = wake_.load();
    sleepers_.fetch_add(1);
    if (generationOf(state_.load()) == seen)
      wake_.wait(ticket);
    sleepers_.fetch_sub(1);
    until = Clock::now() + kSpin;
  }
}

} // namespace kiln::rt
