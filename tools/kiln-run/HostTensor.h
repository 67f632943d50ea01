//===- HostTensor.h - A tensor kiln-run owns --------------------*- C++ -*-===//
//
// The inputs kiln-run read or generated and the outputs it saves, as plain bytes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_HOSTTENSOR_H
#define KILN_TOOLS_KILN_RUN_HOSTTENSOR_H

#include "kiln/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::driver {

struct HostTensor {
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  // The number of elements; INT64_MAX when the product of the sizes overflows (no tensor
  // that exists has that many), so a shape read from a file cannot wrap to a small count.
  // A size of 0 makes the product 0 whatever the others, in any order.
  int64_t count() const {
    if (isEmpty())
      return 0;
    int64_t n = 1;
    for (int64_t d : shape)
      if (__builtin_mul_overflow(n, d, &n))
        return INT64_MAX;
    return n;
  }
  // The bytes of the tensor at elementSize bytes an element, or false when a size is
  // negative or the product overflows 64 bits. Like count(), 0 for any shape with a size
  // of 0: a file's [2^62, 0] of i4 holds 0 bytes, and so does the i64 tensor read from
  // it.
  bool byteCount(size_t elementSize, uint64_t &bytes) const {
    for (int64_t d : shape)
      if (d < 0)
        return false;
    bytes = isEmpty() ? 0 : elementSize;
    for (int64_t d : shape)
      if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes))
        return false;
    return true;
  }
  bool isEmpty() const {
    for (int64_t d : shape)
      if (d == 0)
        return true;
    return false;
  }
  // Element i as a double (exact for i32; i64 beyond 2^53 rounds, fine for printing).
  double at(int64_t i) const;
};

std::string formatShape(const std::vector<int64_t> &shape);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_HOSTTENSOR_H
