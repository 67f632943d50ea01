// WeightConversionTest.cpp - the element conversions of load-time weight conversion
// against values worked out by hand: bf16 rounding ties, NaN and infinities, f16
// subnormals, int8 rows (zero, ties, amax at exactly +-127, non-finite), and panels
// (every element, the last panel's zero padding included).
#include "WeightConversion.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace kiln::rt;

namespace {

float fromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Packs `source` ([rows, k] f32) into panels of `width` over a NaN-filled buffer, so
/// that an element it does not write shows, and checks each against the definition.
void expectPanels(const std::vector<float> &source, const void *bytes, kiln_dtype dtype,
                  int64_t rows, int64_t k, int64_t width) {
  const int64_t panels = (rows + width - 1) / width;
  std::vector<float> dst(size_t(panels * k * width), NAN);
  packPanels(bytes, dtype, rows, k, width, panels, dst.data());
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t c = 0; c < k; ++c)
      for (int64_t w = 0; w < width; ++w) {
        int64_t r = p * width + w;
        float got = dst[size_t((p * k + c) * width + w)];
        float want = r < rows ? source[size_t(r * k + c)] : 0.0f;
        ASSERT_EQ(got, want) << kiln_dtype_name(dtype) << " " << rows << "x" << k
                             << " width " << width << " at [" << p << "][" << c << "]["
                             << w << "]";
        if (r >= rows) { // +0, not -0
          ASSERT_FALSE(std::signbit(got));
        }
      }
}

struct PanelCase {
  int64_t rows, k, width;
};
// A partial last panel, fewer rows than one panel, whole panels, one row, width 1.
constexpr PanelCase kPanelCases[] = {{150, 7, 64}, {10, 5, 64}, {128, 3, 64}, {37, 9, 16},
                                     {16, 4, 16},  {1, 3, 16},  {5, 2, 1}};

} // namespace

TEST(WeightConversion, BF16RoundsToNearestTiesToEven) {
  EXPECT_EQ(f32ToBF16(1.0f), 0x3F80);
  // Exactly between 0x3F80 and 0x3F81: to the even one, below.
  EXPECT_EQ(f32ToBF16(fromBits(0x3F808000)), 0x3F80);
  // Exactly between 0x3F81 and 0x3F82: to the even one, above.
  EXPECT_EQ(f32ToBF16(fromBits(0x3F818000)), 0x3F82);
  EXPECT_EQ(f32ToBF16(fromBits(0x3F808001)), 0x3F81); // just above halfway
  EXPECT_EQ(f32ToBF16(fromBits(0x3F807FFF)), 0x3F80); // just below
  EXPECT_EQ(f32ToBF16(-0.0f), 0x8000);
  EXPECT_EQ(f32ToBF16(fromBits(0x00000001)), 0x0000); // tiny subnormal rounds to +0
  EXPECT_EQ(f32ToBF16(fromBits(0x7F7FFFFF)), 0x7F80); // FLT_MAX rounds up to +inf
}

TEST(WeightConversion, BF16KeepsInfinitiesAndNaNs) {
  EXPECT_EQ(f32ToBF16(INFINITY), 0x7F80);
  EXPECT_EQ(f32ToBF16(-INFINITY), 0xFF80);
  // A NaN whose payload lies only in the low bits would round into an infinity.
  uint16_t low = f32ToBF16(fromBits(0x7F800001));
  EXPECT_TRUE(std::isnan(bf16ToF32(low))) << std::hex << low;
  uint16_t negative = f32ToBF16(fromBits(0xFFFFFFFF));
  EXPECT_TRUE(std::isnan(bf16ToF32(negative)));
  EXPECT_TRUE(std::signbit(bf16ToF32(negative)));
  EXPECT_EQ(f32ToBF16(fromBits(0x7FC00000)), 0x7FC0);
}

TEST(WeightConversion, BF16WidensExactly) {
  EXPECT_EQ(bf16ToF32(0x3F80), 1.0f);
  EXPECT_EQ(bf16ToF32(0xC040), -3.0f);
  EXPECT_EQ(bf16ToF32(0x0001), fromBits(0x00010000));  // subnormal
  for (uint32_t bits = 0; bits < 0x10000; bits += 7) { // every 7th value round trips
    if (!std::isnan(bf16ToF32(uint16_t(bits)))) {
      EXPECT_EQ(f32ToBF16(bf16ToF32(uint16_t(bits))), bits);
    }
  }
}

TEST(WeightConversion, F16WidensExactly) {
  EXPECT_EQ(f16ToF32(0x3C00), 1.0f);
  EXPECT_EQ(f16ToF32(0xC000), -2.0f);
  EXPECT_EQ(f16ToF32(0x7BFF), 65504.0f);                 // largest finite
  EXPECT_EQ(f16ToF32(0x0400), std::ldexp(1.0f, -14));    // smallest normal
  EXPECT_EQ(f16ToF32(0x0001), std::ldexp(1.0f, -24));    // smallest subnormal
  EXPECT_EQ(f16ToF32(0x03FF), std::ldexp(1023.0f, -24)); // largest subnormal
  EXPECT_EQ(f16ToF32(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::signbit(f16ToF32(0x8000)));
  EXPECT_EQ(f16ToF32(0x7C00), INFINITY);
  EXPECT_EQ(f16ToF32(0xFC00), -INFINITY);
  EXPECT_TRUE(std::isnan(f16ToF32(0x7E00)));
  EXPECT_TRUE(std::isnan(f16ToF32(0x7C01)));
}

TEST(WeightConversion, WidenReadsEachSourceDType) {
  const uint16_t half[3] = {0x3C00, 0xB800, 0x0001};  // 1, -0.5, 2^-24
  const uint16_t brain[3] = {0x3F80, 0xBF00, 0x4040}; // 1, -0.5, 3
  const float single[3] = {1.5f, -2.0f, 0.25f};
  float out[3];
  widenToF32(half, KILN_DTYPE_F16, 3, out);
  EXPECT_EQ(std::vector<float>(out, out + 3),
            (std::vector<float>{1.0f, -0.5f, std::ldexp(1.0f, -24)}));
  widenToF32(brain, KILN_DTYPE_BF16, 3, out);
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{1.0f, -0.5f, 3.0f}));
  widenToF32(single, KILN_DTYPE_F32, 3, out);
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{1.5f, -2.0f, 0.25f}));
}

TEST(WeightConversion, Int8ZeroRowIsZeroWithZeroScale) {
  const float row[4] = {0.0f, -0.0f, 0.0f, 0.0f};
  int8_t q[4] = {1, 1, 1, 1};
  EXPECT_EQ(quantizeRow(row, 4, q), 0.0f);
  EXPECT_EQ(std::vector<int8_t>(q, q + 4), (std::vector<int8_t>{0, 0, 0, 0}));
}

TEST(WeightConversion, Int8RoundsHalfToEven) {
  // amax 254: 127 / 254 = 0.5 exactly, so each product is exact and the ties are real.
  const float row[6] = {1, 3, 5, -254, 253, -7};
  int8_t q[6];
  EXPECT_EQ(quantizeRow(row, 6, q), 2.0f); // 254 / 127
  EXPECT_EQ(std::vector<int8_t>(q, q + 6), (std::vector<int8_t>{0, 2, 2, -127, 126, -4}));
}

TEST(WeightConversion, Int8AmaxMapsToExactly127) {
  // 127 / amax * amax rounds above 127 for some amax: the clamp must hold it at 127.
  for (float amax : {0.1f, 0.7f, 0.3f, 1e-30f, 3.3e30f, 0.0123f, 77.7f}) {
    const float row[3] = {amax * 0.25f, -amax, amax};
    int8_t q[3];
    float scale = quantizeRow(row, 3, q);
    EXPECT_EQ(scale, amax / 127.0f) << amax;
    EXPECT_EQ(q[1], -127) << amax;
    EXPECT_EQ(q[2], 127) << amax;
    EXPECT_EQ(q[0], int8_t(std::nearbyint(amax * 0.25f * (127.0f / amax)))) << amax;
  }
}

TEST(WeightConversion, Int8OfNonFiniteRowIsNaNScale) {
  int8_t q[2];
  const float withNaN[2] = {1.0f, NAN}, withInf[2] = {-INFINITY, 1.0f};
  EXPECT_TRUE(std::isnan(quantizeRow(withNaN, 2, q)));
  EXPECT_TRUE(std::isnan(quantizeRow(withInf, 2, q)));
}

TEST(WeightConversion, PanelsOfF32HoldEveryRowAndZeroPadding) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  for (const PanelCase &c : kPanelCases) {
    std::vector<float> source(size_t(c.rows * c.k));
    for (float &x : source)
      x = value(rng);
    expectPanels(source, source.data(), KILN_DTYPE_F32, c.rows, c.k, c.width);
  }
}

TEST(WeightConversion, PanelsWidenBF16AndF16Exactly) {
  std::mt19937 rng(12);
  for (const PanelCase &c : kPanelCases) {
    size_t n = size_t(c.rows * c.k);
    std::vector<uint16_t> brain(n), half(n);
    std::vector<float> brainValues(n), halfValues(n);
    for (size_t i = 0; i < n; ++i) {
      do // finite, so that the comparison is of values
        brain[i] = uint16_t(rng());
      while (!std::isfinite(bf16ToF32(brain[i])));
      do
        half[i] = uint16_t(rng());
      while (!std::isfinite(f16ToF32(half[i])));
      brainValues[i] = bf16ToF32(brain[i]);
      halfValues[i] = f16ToF32(half[i]);
    }
    expectPanels(brainValues, brain.data(), KILN_DTYPE_BF16, c.rows, c.k, c.width);
    expectPanels(halfValues, half.data(), KILN_DTYPE_F16, c.rows, c.k, c.width);
  }
}

TEST(WeightConversion, PanelsReadAMisalignedSource) {
  // Safetensors data may start at any byte.
  std::mt19937 rng(13);
  std::vector<float> source(37 * 5);
  for (float &x : source)
    x = float(rng() % 1000) - 500.0f;
  std::vector<uint8_t> bytes(source.size() * 4 + 1);
  std::memcpy(bytes.data() + 1, source.data(), source.size() * 4);
  expectPanels(source, bytes.data() + 1, KILN_DTYPE_F32, 37, 5, 16);
}

TEST(WeightConversion, PanelsByHand) {
  // 3 rows of 2, panels of 2: [[r0c0 r1c0] [r0c1 r1c1]], [[r2c0 0] [r2c1 0]].
  const float source[6] = {1, 2, 3, 4, 5, 6};
  float dst[8];
  std::memset(dst, 0xFF, sizeof dst);
  packPanels(source, KILN_DTYPE_F32, 3, 2, 2, 2, dst);
  EXPECT_EQ(std::vector<float>(dst, dst + 8),
            (std::vector<float>{1, 3, 2, 4, 5, 0, 6, 0}));
}
