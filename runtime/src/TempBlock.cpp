// TempBlock.cpp - aligned allocation that reports failure as a status, never aborts.
#include "TempBlock.h"

#include "Error.h"

#include <cstdlib>
#include <utility>

namespace kiln::rt {

TempBlock::~TempBlock() { reset(); }

bool TempBlock::reserve(size_t bytes) {
  if (bytes > SIZE_MAX - kTempAlignment)
    fail(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot allocate a ", bytes, "-byte block");
  bytes = bytes == 0 ? kTempAlignment
                     : (bytes + kTempAlignment - 1) / kTempAlignment * kTempAlignment;
  if (bytes <= capacity_)
    return false;
  reset();
  data_ = std::aligned_alloc(kTempAlignment, bytes);
  if (!data_)
    fail(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory allocating a ", bytes,
         "-byte block (a temporary or a state)");
  capacity_ = bytes;
  return true;
}

void TempBlock::reset() {
  std::free(data_);
  data_ = nullptr;
  capacity_ = 0;
}

void TempBlock::swap(TempBlock &other) noexcept {
  std::swap(data_, other.data_);
  std::swap(capacity_, other.capacity_);
}

} // namespace kiln::rt
