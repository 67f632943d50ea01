//===- WeightArenaTest.cpp - Memory for converted weights -----------------===//
//
// WeightArena hands out 64-byte aligned, disjoint blocks from slabs that start on a
// huge-page boundary, a block larger than a slab in a slab of its own.
//
//===----------------------------------------------------------------------===//

#include "WeightArena.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

using kiln::rt::WeightArena;

namespace {

uintptr_t address(const void *p) { return reinterpret_cast<uintptr_t>(p); }

TEST(WeightArena, BlocksAreAlignedDisjointAndWritable) {
  WeightArena arena;
  // Odd sizes, a zero, and one past the minimum slab, which takes a slab of its own.
  const std::vector<size_t> sizes = {
      1, 0, 63, 64, 65, 4096 + 3, size_t(3) << 20, WeightArena::kMinSlab + 5, 100};
  std::vector<std::pair<uintptr_t, size_t>> blocks;
  for (size_t i = 0; i < sizes.size(); ++i) {
    void *p = arena.allocate(sizes[i]);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(address(p) % 64, 0u) << "block " << i;
    // Every byte is ours to write, and keeps what was written.
    std::memset(p, int(i + 1), sizes[i]);
    blocks.push_back({address(p), sizes[i]});
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto *bytes = reinterpret_cast<const unsigned char *>(blocks[i].first);
    EXPECT_TRUE(
        std::all_of(bytes, bytes + sizes[i], [&](unsigned char b) { return b == i + 1; }))
        << "block " << i;
  }
  std::sort(blocks.begin(), blocks.end());
  for (size_t i = 1; i < blocks.size(); ++i)
    EXPECT_GE(blocks[i].first, blocks[i - 1].first + blocks[i - 1].second);
  // Two slabs: the first, and the oversized block's, whole huge pages, whose tail holds
  // the 100 bytes after it.
  const size_t oversized = (WeightArena::kMinSlab + 64 + WeightArena::kHugePage - 1) /
                           WeightArena::kHugePage * WeightArena::kHugePage;
  EXPECT_EQ(arena.mappedBytes(), WeightArena::kMinSlab + oversized);
}

TEST(WeightArena, SlabsStartOnAHugePage) {
  WeightArena arena;
  void *first = arena.allocate(100);
  EXPECT_EQ(address(first) % WeightArena::kHugePage, 0u);
  void *own = arena.allocate(WeightArena::kMinSlab); // does not fit beside the first
  EXPECT_EQ(address(own) % WeightArena::kHugePage, 0u);
}

TEST(WeightArena, ImpossibleSizesThrowBadAlloc) {
  WeightArena arena;
  EXPECT_THROW(arena.allocate(SIZE_MAX), std::bad_alloc);
  EXPECT_THROW(arena.allocate(SIZE_MAX / 2 + 1), std::bad_alloc);
  EXPECT_EQ(arena.mappedBytes(), 0u);
}

} // namespace
