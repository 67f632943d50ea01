//===- Reduction.cpp - Reference argmax and reductions over axes ----------===//
//
// Sums are taken in double, so that the oracle is more accurate than any float kernel;
// i32 sums are exact there below 2^53 and then wrap to 32 bits, as the compiled
// kernel's arithmetic does.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

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

llvm::Expected<HostTensor> kiln::reference::reduce(const HostTensor &input,
                                                   llvm::ArrayRef<int64_t> axes,
                                                   bool keepDim, ReduceKind kind) {
  const char *name = kind == ReduceKind::Sum    ? "reduce_sum"
                     : kind == ReduceKind::Mean ? "reduce_mean"
                                                : "reduce_max";
  int64_t rank = static_cast<int64_t>(input.shape.size());
  Shape kept = input.shape; // the result's shape with keepDim
  int64_t count = 1;        // elements per result element
  for (int64_t axis : axes) {
    if (axis < 0 || axis >= rank)
      return makeError(std::string(name) + " axis " + std::to_string(axis) +
                       " is out of range for " + shapeToString(input.shape));
    count *= input.shape[axis];
    kept[axis] = 1;
  }
  int64_t outputs = product(kept);
  if (kind == ReduceKind::Max && count == 0 && outputs > 0)
    return makeError(std::string(name) + " over axes of size 0 of " +
                     shapeToString(input.shape) + " has no element to take");
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> acc(outputs, kind == ReduceKind::Max ? -inf : 0.0);
  Shape strides = rowMajorStrides(kept);
  for (int64_t axis : axes)
    strides[axis] = 0;
  int64_t flat = 0;
  forEachIndex(input.shape, [&](llvm::ArrayRef<int64_t> index) {
    double x = input.isInt ? double(input.i32[flat]) : double(input.f32[flat]);
    ++flat;
    double &a = acc[dot(index, strides)];
    if (kind != ReduceKind::Max)
      a += x;
    else if (std::isnan(x) || x > a)
      a = std::isnan(a) ? a : x;
  });
  Shape shape;
  for (int64_t d = 0; d < rank; ++d)
    if (keepDim || !llvm::is_contained(axes, d))
      shape.push_back(kept[d]);
  if (input.isInt) {
    HostTensor out = HostTensor::ints(shape);
    for (int64_t i = 0; i < outputs; ++i)
      out.i32[i] =
          static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(acc[i])));
    return out;
  }
  HostTensor out = HostTensor::floats(shape);
  for (int64_t i = 0; i < outputs; ++i)
    out.f32[i] =
        static_cast<float>(kind == ReduceKind::Mean ? acc[i] / double(count) : acc[i]);
  return out;
}
