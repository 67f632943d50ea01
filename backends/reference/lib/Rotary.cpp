//===- Rotary.cpp - Reference rotary position embedding -------------------===//

#include "Kernels.h"

#include <cmath>

using namespace kiln::reference;

llvm::Expected<HostTensor> kiln::reference::rotary(const HostTensor &input,
                                                   const HostTensor &positions,
                                                   double base, bool interleaved) {
  size_t rank = input.shape.size();
  if (rank < 2 || input.shape.back() % 2 != 0)
    return makeError("rotary input must be [..., T, D] with an even D, got " +
                     shapeToString(input.shape));
  int64_t rows = input.shape[rank - 2], features = input.shape.back(),
          half = features / 2;
  if (positions.shape != Shape{rows})
    return makeError("rotary positions must be [" + std::to_string(rows) + "], got " +
                     shapeToString(positions.shape));
  HostTensor out = input;
  // Every [T, D] matrix of the input, row t rotated by the angles of positions[t].
  for (int64_t row = 0; row < input.numElements() / features; ++row) {
    int64_t t = row % rows;
    const float *x = &input.f32[row * features];
    float *y = &out.f32[row * features];
    for (int64_t i = 0; i < half; ++i) {
      double angle = positions.i32[t] * std::pow(base, -2.0 * i / features);
      int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
      y[a] = static_cast<float>(x[a] * std::cos(angle) - x[b] * std::sin(angle));
      y[b] = static_cast<float>(x[b] * std::cos(angle) + x[a] * std::sin(angle));
    }
  }
  return out;
}
