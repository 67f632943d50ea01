//===- WeightArena.cpp - Memory for converted weights ---------------------===//

#include "WeightArena.h"

#include <cstdint>
#include <new>
#include <sys/mman.h>

namespace kiln::rt {

namespace {

constexpr size_t kAlignment = 64;

size_t roundUp(size_t value, size_t to) { return (value + to - 1) / to * to; }

} // namespace

void *WeightArena::allocate(size_t bytes) {
  if (bytes > SIZE_MAX / 2) // no such mapping, and the roundings below would wrap
    throw std::bad_alloc();
  bytes = roundUp(bytes ? bytes : 1, kAlignment);
  if (slabs_.empty() || slabs_.back().size - slabs_.back().used < bytes) {
    const size_t size = roundUp(bytes > kMinSlab ? bytes : kMinSlab, kHugePage);
    // Map a huge page more than needed and keep the aligned part, so that the slab
    // starts on a 2 MB boundary, where the kernel can back it with whole huge pages.
    const size_t mapped = size + kHugePage;
    void *raw = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
      throw std::bad_alloc();
    char *start = static_cast<char *>(raw);
    char *base =
        reinterpret_cast<char *>(roundUp(reinterpret_cast<size_t>(start), kHugePage));
    if (base > start)
      ::munmap(start, size_t(base - start));
    if (char *end = base + size; end < start + mapped)
      ::munmap(end, size_t(start + mapped - end));
    // Advice only: without transparent huge pages the slab is plain memory.
    ::madvise(base, size, MADV_HUGEPAGE);
    slabs_.push_back({base, size, 0});
  }
  Slab &slab = slabs_.back();
  void *block = slab.base + slab.used;
  slab.used += bytes;
  return block;
}

size_t WeightArena::mappedBytes() const {
  size_t total = 0;
  for (const Slab &slab : slabs_)
    total += slab.size;
  return total;
}

WeightArena::~WeightArena() {
  for (const Slab &slab : slabs_)
    ::munmap(slab.base, slab.size);
}

} // namespace kiln::rt
