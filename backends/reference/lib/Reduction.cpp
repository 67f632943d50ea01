//===- Reduction.cpp - Reference kernel of kiln.argmax --------------------===//

#include "Kernels.h"

#include <cmath>

using namespace kiln::reference;

llvm::Expected<HostTensor> kiln::reference::argmax(const HostTensor &input,
                                                   int64_t axis) {
  llvm::Expected<AxisLines> lines = axisLines(input.shape, axis, "argmax");
  if (!lines)
    return lines.takeError();
  Shape outShape = input.shape;
  outShape.erase(outShape.begin() + axis);
  HostTensor out = HostTensor::ints(outShape);
  if (lines->length == 0 && out.numElements() > 0)
    return makeError("argmax along axis " + std::to_string(axis) + " of " +
                     shapeToString(input.shape) + " has no element to pick");
  for (int64_t o = 0; o < lines->outer; ++o)
    for (int64_t i = 0; i < lines->inner; ++i) {
      int64_t best = 0;
      float bestValue = input.f32[lines->at(o, i, 0)];
      for (int64_t j = 1; j < lines->length && !std::isnan(bestValue); ++j) {
        float v = input.f32[lines->at(o, i, j)];
        // Strictly greater keeps the first of equal values; a NaN beats every number.
        if (std::isnan(v) || v > bestValue) {
          best = j;
          bestValue = v;
        }
      }
      out.i32[o * lines->inner + i] = static_cast<int32_t>(best);
    }
  return out;
}
