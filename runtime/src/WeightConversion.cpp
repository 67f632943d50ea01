//===- WeightConversion.cpp - Converting weights at load time -------------===//
//
// Bit manipulation rather than the compiler's _Float16/__bf16: the results are defined
// by the formats, not by which of those types a compiler offers on a target.
//
//===----------------------------------------------------------------------===//

#include "WeightConversion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace kiln::rt {
namespace {

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint32_t toBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

} // namespace

float f16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1F;
  uint32_t mantissa = h & 0x3FF;
  if (exponent == 0x1F) // infinity or NaN, payload kept
    return fromBits(sign | 0x7F800000 | mantissa << 13);
  if (exponent != 0)
    return fromBits(sign | (exponent + 112) << 23 | mantissa << 13);
  // Zero or subnormal: mantissa * 2^-24, exact in f32.
  float magnitude = float(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

float bf16ToF32(uint16_t bits) { return fromBits(uint32_t(bits) << 16); }

uint16_t f32ToBF16(float value) {
  uint32_t bits = toBits(value);
  if (std::isnan(value))
    return uint16_t(bits >> 16 | 0x0040); // quiet, never rounded into the exponent
  uint32_t lsb = (bits >> 16) & 1;
  return uint16_t((bits + 0x7FFF + lsb) >> 16);
}

void widenToF32(const void *src, kiln_dtype dtype, size_t count, float *dst) {
  if (dtype == KILN_DTYPE_F32) {
    std::memcpy(dst, src, count * 4);
    return;
  }
  // A loop per dtype, each free of calls, so that the compiler vectorizes them.
  const auto *half = static_cast<const uint8_t *>(src);
  auto bitsAt = [half](size_t i) {
    uint16_t bits;
    std::memcpy(&bits, half + 2 * i, 2); // sources may sit at odd offsets
    return bits;
  };
  if (dtype == KILN_DTYPE_BF16) {
    for (size_t i = 0; i < count; ++i)
      dst[i] = bf16ToF32(bitsAt(i));
    return;
  }
  for (size_t i = 0; i < count; ++i)
    dst[i] = f16ToF32(bitsAt(i));
}

float quantizeRow(const float *row, size_t count, int8_t *q) {
  float amax = 0;
  bool finite = true;
  for (size_t i = 0; i < count; ++i) { // compares, not std::fmax: that is a libm call
    finite &= std::isfinite(row[i]);
    float a = std::fabs(row[i]);
    amax = a > amax ? a : amax;
  }
  if (!finite)
    return NAN;
  if (amax == 0) {
    std::memset(q, 0, count);
    return 0;
  }
  // Adding and taking away 1.5 * 2^23 rounds |v| < 2^22 to an integer in the current
  // rounding mode, half to even by default: std::nearbyint without a libm call per
  // element (x86-64's baseline has no roundss).
  constexpr float kRound = 12582912.0f;
  const float inverse = 127.0f / amax;
  for (size_t i = 0; i < count; ++i) {
    float v = (row[i] * inverse + kRound) - kRound;
    q[i] = int8_t(v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v);
  }
  return amax / 127.0f;
}

void packPanels(const void *src, kiln_dtype dtype, int64_t rows, int64_t k, int64_t width,
                int64_t panels, float *dst) {
  const auto *bytes = static_cast<const uint8_t *>(src);
  const size_t rowBytes = size_t(k) * kiln_dtype_size(dtype);
  // Row by row, reading each once in order and widening it whole; the writes stride by
  // `width` instead, within one panel's [k][width] block.
  std::vector<float> row(static_cast<size_t>(k));
  for (int64_t p = 0; p < panels; ++p) {
    float *panel = dst + p * k * width;
    const int64_t filled = std::clamp(rows - p * width, int64_t(0), width);
    for (int64_t w = 0; w < filled; ++w) {
      widenToF32(bytes + size_t(p * width + w) * rowBytes, dtype, size_t(k), row.data());
      for (int64_t c = 0; c < k; ++c)
        panel[c * width + w] = row[size_t(c)];
    }
    for (int64_t c = 0; filled < width && c < k; ++c)
      std::fill(panel + c * width + filled, panel + (c + 1) * width, 0.0f);
  }
}

} // namespace kiln::rt
