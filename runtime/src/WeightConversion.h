//===- WeightConversion.h - Converting weights at load time -----*- C++ -*-===//
//
// The element conversions behind loading a checkpoint into a reduced-precision model
// (docs/precision.md): f16 and bf16 widen to f32 exactly, f32 rounds to bf16 to nearest
// even, rows of f32 quantize to int8 with one scale each, bit for bit as
// kiln.quantized_linear's reference defines them, and a matrix is re-laid out as the
// column panels that the CPU matrix products read.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_WEIGHTCONVERSION_H
#define KILN_RUNTIME_WEIGHTCONVERSION_H

#include "kiln/runtime.h"

#include <cstddef>
#include <cstdint>

namespace kiln::rt {

/// The f32 value of an IEEE binary16 (exact: subnormals, infinities, NaN payloads).
float f16ToF32(uint16_t bits);
/// The f32 value of a bfloat16 (exact: its upper 16 bits).
float bf16ToF32(uint16_t bits);
/// `value` rounded to the nearest bfloat16, ties to even; a NaN stays a (quiet) NaN of
/// the same sign, where plain rounding could carry its payload into an infinity.
uint16_t f32ToBF16(float value);

/// Widens `count` elements of `src` (F32, F16 or BF16) to f32.
void widenToF32(const void *src, kiln_dtype dtype, size_t count, float *dst);

/// Quantizes one row of `count` values: amax = max |row|, q[i] = amax == 0 ? 0 :
/// round_half_even(row[i] * (127 / amax)) clamped to [-127, 127]; returns the scale,
/// amax / 127, or NaN (q unspecified) when the row holds a NaN or an infinity. Each f32
/// operation rounds as written.
float quantizeRow(const float *row, size_t count, int8_t *q);

/// Lays out the row-major [rows, k] matrix `src` (F32, F16 or BF16, widened exactly) as
/// `panels` column panels of `width` rows: dst[p][c][w] = src[p * width + w][c], and 0
/// past the last row, since the kernels multiply the whole last panel. `panels` must be
/// ceil(rows / width); dst holds panels * k * width floats. `src` needs no alignment.
void packPanels(const void *src, kiln_dtype dtype, int64_t rows, int64_t k, int64_t width,
                int64_t panels, float *dst);

} // namespace kiln::rt

#endif // KILN_RUNTIME_WEIGHTCONVERSION_H
