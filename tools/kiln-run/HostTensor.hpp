// HostTensor.hpp - a tensor kiln-run owns: inputs it read or generated, outputs it saves.
#pragma once

#include "kiln/runtime.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::driver {

// kiln-run's own failures (bad files, bad specs); main prints them and exits 1.
struct DriverError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct HostTensor {
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  int64_t count() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  // Element i as a double (exact for i32; i64 beyond 2^53 rounds, fine for printing).
  double at(int64_t i) const;
};

std::string formatShape(const std::vector<int64_t> &shape);

} // namespace kiln::driver
