//===- TempBlock.h - Aligned memory for temporaries -------------*- C++ -*-===//
//
// 64-byte aligned heap memory for temporaries and states.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TEMPBLOCK_H
#define KILN_RUNTIME_TEMPBLOCK_H

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

constexpr size_t kTempAlignment = 64; // a cache line and an AVX-512 vector

// 64-byte aligned heap memory that only grows (reserve keeps a block that is big enough).
class TempBlock {
public:
  TempBlock() = default;
  ~TempBlock();
  TempBlock(const TempBlock &) = delete;
  TempBlock &operator=(const TempBlock &) = delete;
  // Returns true when it had to allocate; the old contents are lost then. Throws
  // RESOURCE_EXHAUSTED.
  bool reserve(size_t bytes);
  void reset();
  void swap(TempBlock &other) noexcept;
  void *data() const { return data_; }
  uint8_t *bytes() const { return static_cast<uint8_t *>(data_); }
  size_t capacity() const { return capacity_; }

private:
  void *data_ = nullptr;
  size_t capacity_ = 0;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_TEMPBLOCK_H
