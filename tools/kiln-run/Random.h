//===- Random.h - Reproducible random numbers -------------------*- C++ -*-===//
//
// A seeded generator whose sequence is the same on every platform (unlike
// std::uniform_real_distribution), so --seed reproduces inputs and weights anywhere.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_RANDOM_H
#define KILN_TOOLS_KILN_RUN_RANDOM_H

#include <cstdint>

namespace kiln::driver {

class Random {
public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() { // splitmix64
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi).
  float uniform(float lo, float hi) {
    float unit = float(next() >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * unit;
  }
  int64_t integer(int64_t lo, int64_t hi) {
    return lo + int64_t(next() % uint64_t(hi - lo));
  }
  // Uniform in [lo, hi], lo <= hi; any int64 range, the full one included.
  int64_t inclusive(int64_t lo, int64_t hi) {
    uint64_t span = uint64_t(hi) - uint64_t(lo) + 1; // 0: all 2^64 values
    uint64_t r = next();
    return int64_t(uint64_t(lo) + (span ? r % span : r));
  }

private:
  uint64_t state_;
};

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_RANDOM_H
