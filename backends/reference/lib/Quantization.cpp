//===- Quantization.cpp - Reference int8 and bf16 weights and their product -===//
//
// kiln.quantized_linear and the conversions of a converted kiln.parameter, written
// as the op's description and the parameter's contract state them, f32 operation by
// f32 operation: the oracle the Halide kernels and the runtime's load-time conversion
// are checked against. One helper quantizes a row for both: weights and activations
// follow the same symmetric rule.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace kiln::reference;

/// Quantizes `row` symmetrically to [-127, 127] into `out` and returns max|row|:
/// q = amax == 0 ? 0 : round_half_even(x * (127 / amax)), in f32 and the current
/// (default: to nearest, ties to even) rounding mode.
static float quantizeRow(llvm::ArrayRef<float> row, int32_t *out) {
  float amax = 0.0f;
  for (float x : row)
    amax = std::max(amax, std::fabs(x));
  float factor = amax == 0.0f ? 0.0f : 127.0f / amax;
  for (size_t i = 0; i < row.size(); ++i)
    out[i] = static_cast<int32_t>(
        std::clamp(std::nearbyint(row[i] * factor), -127.0f, 127.0f));
  return amax;
}

float kiln::reference::roundToBf16(float x) {
  if (std::isnan(x))
    return x;
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  // Adding 0x7fff plus the lowest kept bit carries into the kept half exactly when the
  // dropped half is above one half, or equal to it with an odd kept half.
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}

bool kiln::reference::isBf16Value(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return (bits & 0xffffu) == 0;
}

llvm::Expected<HostTensor> kiln::reference::convertWeight(const HostTensor &source,
                                                          llvm::StringRef conversion,
                                                          int64_t start, int64_t end,
                                                          int64_t panelWidth) {
  if (source.isInt || source.isI64 || source.shape.empty())
    return makeError("the source must be an f32 tensor of rank >= 1, got " +
                     std::string(source.isInt   ? "i32"
                                 : source.isI64 ? "i64"
                                                : "f32") +
                     " " + shapeToString(source.shape));
  int64_t rows = source.shape[0];
  if (start < 0 || start >= end || end > rows)
    return makeError("rows [" + std::to_string(start) + ", " + std::to_string(end) +
                     ") are outside the source's " + std::to_string(rows) + " rows");
  int64_t width = source.numElements() / rows;
  llvm::ArrayRef<float> data(source.f32.data() + start * width, (end - start) * width);
  Shape shape = source.shape;
  shape[0] = end - start;
  if (conversion == "bf16") {
    HostTensor out = HostTensor::floats(shape);
    llvm::transform(data, out.f32.begin(), roundToBf16);
    return out;
  }
  if (conversion == "panels") {
    if (shape.size() != 2 || panelWidth < 1)
      return makeError("panels of width " + std::to_string(panelWidth) +
                       " need a rank-2 source, got " + shapeToString(source.shape));
    int64_t count = shape[0], panels = (count + panelWidth - 1) / panelWidth;
    HostTensor out = HostTensor::floats({panels, width, panelWidth});
    for (int64_t r = 0; r < count; ++r)
      for (int64_t k = 0; k < width; ++k)
        out.f32[((r / panelWidth) * width + k) * panelWidth + r % panelWidth] =
            data[r * width + k];
    return out;
  }
  if (conversion != "int8" && conversion != "int8_scale")
    return makeError("unknown conversion '" + conversion +
                     "' (expected bf16, int8, int8_scale or panels)");
  HostTensor values = HostTensor::ints(shape);
  HostTensor scales = HostTensor::floats({end - start});
  for (int64_t r = 0; r < end - start; ++r)
    scales.f32[r] =
        quantizeRow(data.slice(r * width, width), &values.i32[r * width]) / 127.0f;
  return conversion == "int8" ? values : scales;
}

llvm::Expected<HostTensor> kiln::reference::quantizedLinear(const HostTensor &input,
                                                            const HostTensor &weight,
                                                            const HostTensor &scale,
                                                            const HostTensor *bias) {
  if (input.shape.empty() || weight.shape.size() != 2 || scale.shape.size() != 1 ||
      (bias && bias->shape.size() != 1))
    return makeError("quantized_linear needs input [..., in], weight [out, in], "
                     "weight_scale [out] and bias [out], got " +
                     shapeToString(input.shape) + ", " + shapeToString(weight.shape) +
                     ", " + shapeToString(scale.shape) + " and " +
                     (bias ? shapeToString(bias->shape) : "none"));
  int64_t out = weight.shape[0], in = weight.shape[1];
  if (input.shape.back() != in || scale.shape[0] != out ||
      (bias && bias->shape[0] != out))
    return makeError("quantized_linear input " + shapeToString(input.shape) +
                     ", weight " + shapeToString(weight.shape) + ", weight_scale " +
                     shapeToString(scale.shape) + " and bias " +
                     (bias ? shapeToString(bias->shape) : "none") +
                     " do not fit together");
  // The op promises exact int32 sums: at most 127 * 127 per product.
  if (in > std::numeric_limits<int32_t>::max() / (127 * 127))
    return makeError("quantized_linear over " + std::to_string(in) +
                     " input features could overflow its int32 sums");
  Shape outShape = input.shape;
  outShape.back() = out;
  HostTensor result = HostTensor::floats(outShape);
  int64_t rows = product(llvm::ArrayRef<int64_t>(input.shape).drop_back());
  std::vector<int32_t> q(in);
  for (int64_t m = 0; m < rows; ++m) {
    float amax =
        quantizeRow(llvm::ArrayRef<float>(input.f32).slice(m * in, in), q.data());
    float rowScale = amax / 127.0f;
    for (int64_t o = 0; o < out; ++o) {
      int32_t acc = 0;
      for (int64_t i = 0; i < in; ++i)
        acc += q[i] * weight.i32[o * in + i];
      float y = static_cast<float>(acc) * (rowScale * scale.f32[o]);
      result.f32[m * out + o] = bias ? y + bias->f32[o] : y;
    }
  }
  return result;
}
