//===- ArenaPlan.h - Offsets of an entry's temporaries in one arena -*- C++ -*-===//
//
// The runtime half of memory planning: given each temporary's size (known once the
// entry's dimensions are bound) and its live range of steps (from the manifest), place
// the temporaries in one block so that two whose ranges overlap never share a byte.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ARENAPLAN_H
#define KILN_RUNTIME_ARENAPLAN_H

#include <cstdint>
#include <vector>

namespace kiln::rt {

/// One temporary to place: its size, and the steps it is live over (inclusive).
struct ArenaRequest {
  uint64_t bytes;
  int firstStep, lastStep;
};

/// Where each request starts in the arena, in bytes (a multiple of kTempAlignment), and
/// how big the arena must be.
struct ArenaPlan {
  std::vector<uint64_t> offsets;
  uint64_t bytes = 0;
};

/// Greedy by size, best fit: the largest temporaries are placed first, each in the
/// smallest gap left between the temporaries already placed that are live at the same
/// time as it, or above them all when no gap fits. A temporary of 0 bytes takes none.
ArenaPlan planArena(const std::vector<ArenaRequest> &requests);

} // namespace kiln::rt

#endif // KILN_RUNTIME_ARENAPLAN_H
