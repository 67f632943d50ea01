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
  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape)
      if (__builtin_mul_overflow(n, d, &n))
        return INT64_MAX;
    return n;
  }
  // The bytes of the tensor at elementSize bytes an element, or false when a size is
  // negative or the product overflows 64 bits.
  bool byteCount(size_t elementSize, uint64_t &bytes) const {
    bytes = elementSize;
    for (int64_t d : shape)
      if (d < 0 || __builtin_mul_overflow(bytes, uint64_t(d), &bytes))
        return false;
    return true;
  }
  // Element i as a double (exact for i32; i64 beyond 2^53 rounds, fine for printing).
  double at(int64_t i) const;
};

std::string formatShape(const std::vector<int64_t> &shape);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_HOSTTENSOR_H
