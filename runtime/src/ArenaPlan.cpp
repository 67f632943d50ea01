//===- ArenaPlan.cpp - Offsets of an entry's temporaries in one arena -----===//
//
// Greedy-by-size placement with best fit, as TensorFlow Lite's and XLA's planners do. The
// conflicts between live ranges are found once per entry; a plan then visits, for each
// temporary, only those it conflicts with.
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

ArenaPlanner::ArenaPlanner(const std::vector<LiveRange> &ranges)
    : ranges_(ranges), conflicts_(ranges.size()) {
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (ranges[i].firstStep <= ranges[j].lastStep &&
          ranges[j].firstStep <= ranges[i].lastStep) {
        conflicts_[i].push_back(uint32_t(j));
        conflicts_[j].push_back(uint32_t(i));
      }
}

ArenaPlan ArenaPlanner::plan(const std::vector<uint64_t> &bytes) const {
  size_t n = ranges_.size();
  ArenaPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  // Largest first; ties in step order, then index order, so the plan is deterministic.
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (bytes[a] != bytes[b])
      return bytes[a] > bytes[b];
    if (ranges_[a].firstStep != ranges_[b].firstStep)
      return ranges_[a].firstStep < ranges_[b].firstStep;
    return a < b;
  });
  std::vector<bool> placed(n, false);
  std::vector<uint32_t> neighbours;
  for (uint32_t i : order) {
    uint64_t size = aligned(bytes[i]);
    if (size == 0)
      continue;
    neighbours.clear();
    for (uint32_t j : conflicts_[i])
      if (placed[j])
        neighbours.push_back(j);
    std::sort(neighbours.begin(), neighbours.end(),
              [&](uint32_t a, uint32_t b) { return plan.offsets[a] < plan.offsets[b]; });
    uint64_t end = 0, best = UINT64_MAX, bestGap = UINT64_MAX;
    for (uint32_t j : neighbours) {
      uint64_t gap = plan.offsets[j] > end ? plan.offsets[j] - end : 0;
      if (gap >= size && gap < bestGap) {
        best = end;
        bestGap = gap;
      }
      end = std::max(end, plan.offsets[j] + aligned(bytes[j]));
    }
    plan.offsets[i] = best != UINT64_MAX ? best : end;
    plan.bytes = std::max(plan.bytes, plan.offsets[i] + size);
    placed[i] = true;
  }
  return plan;
}

} // namespace kiln::rt
