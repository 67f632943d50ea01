//===- TaskPoolTest.cpp - The pool that runs the kernels' parallel loops --===//
//
// TaskPool as a model's halide_do_par_for sees it: every task of a loop runs exactly
// once, on as many threads as setThreads() asks for; a failing task's code comes back
// and the next loop is unaffected; loops started from inside a task or by two threads
// at once still run every task.
//
//===----------------------------------------------------------------------===//

#include "TaskPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using kiln::rt::TaskPool;

namespace {

/// Counts the runs of each task index, from `min` on.
struct Counts {
  int min = 0;
  std::vector<std::atomic<int>> runs;
  Counts(int min, int size) : min(min), runs(size_t(size)) {}
  static int task(void *, int index, uint8_t *closure) {
    auto *self = reinterpret_cast<Counts *>(closure);
    self->runs[size_t(index - self->min)].fetch_add(1);
    return 0;
  }
};

void expectEachTaskOnce(int min, int size) {
  Counts counts(min, size);
  ASSERT_EQ(TaskPool::parallelFor(nullptr, Counts::task, min, size,
                                  reinterpret_cast<uint8_t *>(&counts)),
            0);
  for (int i = 0; i < size; ++i)
    ASSERT_EQ(counts.runs[size_t(i)].load(), 1) << "task " << min + i << " of " << size;
}

/// Each task waits (up to a second) until `want` distinct threads have run a task, so
/// that the loop can only finish early if the pool gives it that many threads.
struct Threads {
  int want = 0;
  std::mutex mutex;
  std::set<std::thread::id> seen;
  static int task(void *, int, uint8_t *closure) {
    auto *self = reinterpret_cast<Threads *>(closure);
    {
      std::lock_guard<std::mutex> lock(self->mutex);
      self->seen.insert(std::this_thread::get_id());
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (std::chrono::steady_clock::now() < deadline) {
      std::lock_guard<std::mutex> lock(self->mutex);
      if (int(self->seen.size()) >= self->want)
        break;
    }
    return 0;
  }
};

size_t threadsUsed(int threads, int tasks) {
  TaskPool::instance().setThreads(threads);
  Threads t;
  t.want = threads;
  EXPECT_EQ(TaskPool::parallelFor(nullptr, Threads::task, 0, tasks,
                                  reinterpret_cast<uint8_t *>(&t)),
            0);
  return t.seen.size();
}

} // namespace

TEST(TaskPoolTest, RunsEveryTaskOnce) {
  for (int threads : {1, 2, 4}) {
    TaskPool::instance().setThreads(threads);
    for (auto [min, size] : {std::pair{0, 0}, {0, 1}, {5, 7}, {-3, 64}, {0, 10000}})
      expectEachTaskOnce(min, size);
  }
}

TEST(TaskPoolTest, UsesTheThreadsAskedFor) {
  EXPECT_EQ(threadsUsed(1, 8), 1u);
  EXPECT_EQ(threadsUsed(3, 12), 3u);
  EXPECT_EQ(threadsUsed(2, 12), 2u); // fewer again: the third worker stays out
  EXPECT_EQ(TaskPool::instance().threads(), 2);
}

TEST(TaskPoolTest, ReturnsAFailingTasksCodeAndRecovers) {
  TaskPool::instance().setThreads(2);
  auto failAtSeven = [](void *, int index, uint8_t *) { return index == 7 ? -42 : 0; };
  EXPECT_EQ(TaskPool::parallelFor(nullptr, failAtSeven, 0, 100, nullptr), -42);
  expectEachTaskOnce(0, 100);
}

TEST(TaskPoolTest, RunsNestedAndConcurrentLoops) {
  TaskPool::instance().setThreads(2);
  // Every outer task starts an inner loop of 16 tasks over its own 16 counters.
  struct Nested {
    std::vector<std::atomic<int>> runs{std::vector<std::atomic<int>>(32 * 16)};
  } nested;
  auto outer = [](void *, int i, uint8_t *closure) {
    auto inner = [](void *context, int j, uint8_t *c) {
      reinterpret_cast<Nested *>(c)
          ->runs[size_t(*static_cast<int *>(context) * 16 + j)]++;
      return 0;
    };
    return TaskPool::parallelFor(&i, inner, 0, 16, closure);
  };
  ASSERT_EQ(
      TaskPool::parallelFor(nullptr, outer, 0, 32, reinterpret_cast<uint8_t *>(&nested)),
      0);
  for (size_t i = 0; i < nested.runs.size(); ++i)
    ASSERT_EQ(nested.runs[i].load(), 1) << i;

  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([] {
      for (int round = 0; round < 200; ++round)
        expectEachTaskOnce(round, 33);
    });
  for (std::thread &t : callers)
    t.join();
}
