//===- WeightArena.h - Memory for converted weights -------------*- C++ -*-===//
//
// The memory that holds a model's weights converted at load time (bf16, int8, column
// panels, realigned copies), handed out 64-byte aligned from slabs that the kernel is
// asked to back with transparent huge pages (madvise MADV_HUGEPAGE, 2 MB pages).
// Products that stream a weight from DRAM (decode steps, short encodes) read it faster
// from 2 MB pages than from 4 KB ones: docs/benchmarks.md, "converted weights on huge
// pages". Where the kernel has no huge pages to give, the slabs are plain memory.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_WEIGHTARENA_H
#define KILN_RUNTIME_WEIGHTARENA_H

#include <cstddef>
#include <vector>

namespace kiln::rt {

class WeightArena {
public:
  WeightArena() = default;
  ~WeightArena();
  WeightArena(const WeightArena &) = delete;
  WeightArena &operator=(const WeightArena &) = delete;

  /// `bytes` of memory, 64-byte aligned, valid while the arena lives. Throws
  /// std::bad_alloc when the system has no memory to map.
  void *allocate(size_t bytes);
  /// The bytes mapped for slabs (virtual: pages never written cost nothing).
  size_t mappedBytes() const;

  /// Slabs are whole huge pages, at least this many bytes, so that a model's many
  /// tensors share a few of them.
  static constexpr size_t kHugePage = size_t(2) << 20, kMinSlab = size_t(32) << 20;

private:
  struct Slab {
    char *base;
    size_t size, used;
  };
  std::vector<Slab> slabs_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_WEIGHTARENA_H
