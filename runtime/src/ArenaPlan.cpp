//===- ArenaPlan.cpp - Offsets of an entry's temporaries in one arena -----===//
//
// Greedy-by-size placement with best fit, as TensorFlow Lite's and XLA's planners do: a
// few hundred temporaries per entry, planned once per set of bound dimensions, so the
// quadratic scan costs microseconds and only on a new shape.
//
//===----------------------------------------------------------------------===//

#include "ArenaPlan.h"

#include "TempBlock.h"

#include <algorithm>
#include <numeric>

namespace kiln::rt {

static uint64_t aligned(uint64_t bytes) {
  return (bytes + kTempAlignment - 1) / kTempAlignment * kTempAlignment;
}

static bool liveTogether(const ArenaRequest &a, const ArenaRequest &b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

ArenaPlan planArena(const std::vector<ArenaRequest> &requests) {
  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t(0));
  // Largest first; ties in step order, so that the plan does not depend on the sort.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes)
      return requests[a].bytes > requests[b].bytes;
    return requests[a].firstStep < requests[b].firstStep;
  });
  std::vector<size_t> placed, neighbours;
  for (size_t i : order) {
    uint64_t size = aligned(requests[i].bytes);
    if (size == 0)
      continue;
    neighbours.clear();
    for (size_t j : placed)
      if (liveTogether(requests[i], requests[j]))
        neighbours.push_back(j);
    std::sort(neighbours.begin(), neighbours.end(),
              [&](size_t a, size_t b) { return plan.offsets[a] < plan.offsets[b]; });
    uint64_t end = 0, best = UINT64_MAX, bestGap = UINT64_MAX;
    for (size_t j : neighbours) {
      uint64_t gap = plan.offsets[j] > end ? plan.offsets[j] - end : 0;
      if (gap >= size && gap < bestGap) {
        best = end;
        bestGap = gap;
      }
      end = std::max(end, plan.offsets[j] + aligned(requests[j].bytes));
    }
    plan.offsets[i] = best != UINT64_MAX ? best : end;
    plan.bytes = std::max(plan.bytes, plan.offsets[i] + size);
    placed.push_back(i);
  }
  return plan;
}

} // namespace kiln::rt
