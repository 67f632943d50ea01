// ArenaPlanTest.cpp - the arena planner: temporaries live at the same step never share a
// byte (checked on random lifetimes and sizes), offsets are aligned, and temporaries
// whose lifetimes do not overlap do share.
#include "ArenaPlan.h"
#include "TempBlock.h"

#include <gtest/gtest.h>

#include <random>

using namespace kiln::rt;

namespace {

// A temporary to place: its size and live range.
struct ArenaRequest {
  uint64_t bytes;
  int firstStep, lastStep;
};

ArenaPlan planArena(const std::vector<ArenaRequest> &requests) {
  std::vector<LiveRange> ranges;
  std::vector<uint64_t> bytes;
  for (const ArenaRequest &r : requests) {
    ranges.push_back({r.firstStep, r.lastStep});
    bytes.push_back(r.bytes);
  }
  return ArenaPlanner(ranges).plan(bytes);
}

// Fails on the first two requests live at one step whose byte ranges overlap, or that
// lie outside the arena or off the alignment.
void expectSound(const std::vector<ArenaRequest> &requests, const ArenaPlan &plan) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kTempAlignment, 0u) << "request " << i;
    EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.bytes) << "request " << i;
    for (size_t j = 0; j < i; ++j) {
      const ArenaRequest &a = requests[i], &b = requests[j];
      bool together = a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
      bool overlap = a.bytes && b.bytes && plan.offsets[i] < plan.offsets[j] + b.bytes &&
                     plan.offsets[j] < plan.offsets[i] + a.bytes;
      ASSERT_FALSE(together && overlap)
          << "requests " << j << " [" << b.firstStep << ", " << b.lastStep << "] at "
          << plan.offsets[j] << " (" << b.bytes << " bytes) and " << i << " ["
          << a.firstStep << ", " << a.lastStep << "] at " << plan.offsets[i] << " ("
          << a.bytes << " bytes)";
    }
  }
}

// The most bytes live at any one step: no plan can be smaller.
uint64_t peakLiveBytes(const std::vector<ArenaRequest> &requests, int steps) {
  uint64_t peak = 0;
  for (int s = 0; s < steps; ++s) {
    uint64_t live = 0;
    for (const ArenaRequest &r : requests)
      if (r.firstStep <= s && s <= r.lastStep)
        live += r.bytes;
    peak = std::max(peak, live);
  }
  return peak;
}

} // namespace

TEST(ArenaPlan, RandomLifetimesNeverShareLiveBytes) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 500; ++trial) {
    int steps = 1 + int(rng() % 40);
    size_t count = rng() % 60;
    std::vector<ArenaRequest> requests;
    for (size_t i = 0; i < count; ++i) {
      int first = int(rng() % uint64_t(steps));
      int last = first + int(rng() % uint64_t(steps - first));
      // Mostly unaligned sizes, some empty, some large.
      uint64_t bytes = rng() % 8 == 0 ? 0 : 1 + rng() % (rng() % 4 == 0 ? 100000 : 700);
      requests.push_back({bytes, first, last});
    }
    ArenaPlan plan = planArena(requests);
    SCOPED_TRACE("trial " + std::to_string(trial));
    expectSound(requests, plan);
    EXPECT_GE(plan.bytes, peakLiveBytes(requests, steps));
    if (HasFailure())
      return;
  }
}

TEST(ArenaPlan, DisjointLifetimesShareBytes) {
  // A chain a -> b -> c -> d, each read only by the next: a and c, b and d can share.
  std::vector<ArenaRequest> chain{{4096, 0, 1}, {4096, 1, 2}, {4096, 2, 3}, {4096, 3, 3}};
  ArenaPlan plan = planArena(chain);
  expectSound(chain, plan);
  EXPECT_EQ(plan.bytes, 2u * 4096);

  // Everything live at once: nothing shares, and sizes round up to the alignment.
  std::vector<ArenaRequest> together{{100, 0, 2}, {1, 1, 1}, {64, 0, 1}};
  plan = planArena(together);
  expectSound(together, plan);
  EXPECT_EQ(plan.bytes, 128u + 64 + 64);
}

TEST(ArenaPlan, SmallTemporaryFillsAGapLeftByLargerOnes) {
  // 0 and 1 are live together and need 2 KiB; 2 is live only with 1 and fits where 0 is.
  std::vector<ArenaRequest> requests{{1024, 0, 1}, {1024, 1, 3}, {512, 2, 3}};
  ArenaPlan plan = planArena(requests);
  expectSound(requests, plan);
  EXPECT_EQ(plan.bytes, 2048u);
}

TEST(ArenaPlan, EmptyRequestsTakeNoBytes) {
  ArenaPlan plan = planArena({{0, 0, 0}, {0, 0, 5}});
  EXPECT_EQ(plan.bytes, 0u);
  EXPECT_EQ(planArena({}).bytes, 0u);
}
