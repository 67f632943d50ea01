//===- ArenaPlan.h - Offsets of an entry's temporaries in one arena -*- C++ -*-===//
//
// The runtime half of memory planning: given each temporary's live range of steps (from
// the manifest) and its size (known once the entry's dimensions are bound), place the
// temporaries in one block so that two whose ranges overlap never share a byte.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARENAPLAN_H
#define KILN_RUNTIME_ARENAPLAN_H

#include <cstdint>
#include <vector>

namespace kiln::rt {

/// The steps a temporary is live over, inclusive.
struct LiveRange {
  int firstStep, lastStep;
};

/// Where each temporary starts in the arena, in bytes (a multiple of kTempAlignment), and
/// how big the arena must be.
struct ArenaPlan {
  std::vector<uint64_t> offsets;
  uint64_t bytes = 0;
};

/// Plans the arena of one entry's temporaries, whose live ranges are fixed, for sizes
/// that change with the bound dimensions. Greedy by size, best fit: the largest
/// temporaries are placed first, each in the smallest gap left between the temporaries
/// already placed that are live at a common step with it, or above them all when no gap
/// fits. A temporary of 0 bytes takes none.
class ArenaPlanner {
public:
  explicit ArenaPlanner(const std::vector<LiveRange> &ranges);

  /// `bytes[i]`: the size of temporary i, in the order of the ranges.
  ArenaPlan plan(const std::vector<uint64_t> &bytes) const;

private:
  std::vector<LiveRange> ranges_;
  /// Per temporary, the others live at a common step with it: only they constrain where
  /// it goes, which keeps a plan (once per new set of dimension values, every step of a
  /// decoding loop) well under quadratic.
  std::vector<std::vector<uint32_t>> conflicts_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_ARENAPLAN_H
