//===- States.cpp - Reference kv_append ------------------------------------===//
//
// The one state op with arithmetic on indices; the interpreter keeps the states
// themselves (Interpreter.cpp).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

using namespace kiln::reference;

llvm::Expected<HostTensor> kiln::reference::kvAppend(HostTensor &cache,
                                                     const HostTensor &value,
                                                     int64_t axis, int64_t capacity,
                                                     int64_t position) {
  llvm::Expected<AxisLines> valueLines = axisLines(value.shape, axis, "kv_append");
  if (!valueLines)
    return valueLines.takeError();
  Shape expected = value.shape;
  expected[axis] = capacity;
  if (cache.isInt || cache.shape != expected)
    return makeError("the cache has shape " + shapeToString(cache.shape) +
                     " but a value " + shapeToString(value.shape) + " with capacity " +
                     std::to_string(capacity) + " along axis " + std::to_string(axis) +
                     " needs " + shapeToString(expected));
  if (position < 0 || position >= capacity)
    return makeError("position " + std::to_string(position) +
                     " is outside the cache's capacity [0, " + std::to_string(capacity) +
                     ")");
  AxisLines lines = *valueLines;
  lines.length = capacity;
  // The value's lines along the axis have length 1: line (o, i) is its element o*inner+i.
  for (int64_t o = 0; o < lines.outer; ++o)
    for (int64_t i = 0; i < lines.inner; ++i)
      cache.f32[lines.at(o, i, position)] = value.f32[o * lines.inner + i];
  return slice(cache, axis, 0, position + 1);
}
