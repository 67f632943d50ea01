//===- Elementwise.cpp - Reference kernels of elementwise kiln ops --------===//

#include "Kernels.h"

#include <cmath>

using namespace kiln::reference;

llvm::Expected<HostTensor>
kiln::reference::binary(const HostTensor &lhs, const HostTensor &rhs,
                        llvm::function_ref<float(float, float)> combine,
                        llvm::function_ref<uint64_t(uint64_t, uint64_t)> combineInts) {
  llvm::Expected<Shape> shape = broadcastShapes(lhs.shape, rhs.shape);
  if (!shape)
    return shape.takeError();
  if ((lhs.isInt || lhs.isI64) && !combineInts)
    return makeError("takes f32 operands only");
  Shape lhsStrides = broadcastStrides(lhs.shape, shape->size());
  Shape rhsStrides = broadcastStrides(rhs.shape, shape->size());
  HostTensor out = emptyLike(lhs, *shape);
  forEachIndex(*shape, [&](llvm::ArrayRef<int64_t> index) {
    int64_t l = dot(index, lhsStrides), r = dot(index, rhsStrides);
    // Converting the unsigned result back keeps its low bits (C++20): wrapping.
    if (lhs.isInt)
      out.i32.push_back(static_cast<int32_t>(combineInts(
          static_cast<uint64_t>(lhs.i32[l]), static_cast<uint64_t>(rhs.i32[r]))));
    else if (lhs.isI64)
      out.i64.push_back(static_cast<int64_t>(combineInts(
          static_cast<uint64_t>(lhs.i64[l]), static_cast<uint64_t>(rhs.i64[r]))));
    else
      out.f32.push_back(combine(lhs.f32[l], rhs.f32[r]));
  });
  return out;
}

llvm::Expected<HostTensor> kiln::reference::where(const HostTensor &condition,
                                                  const HostTensor &onTrue,
                                                  const HostTensor &onFalse) {
  llvm::Expected<Shape> values = broadcastShapes(onTrue.shape, onFalse.shape);
  if (!values)
    return values.takeError();
  llvm::Expected<Shape> shape = broadcastShapes(condition.shape, *values);
  if (!shape)
    return shape.takeError();
  Shape conditionStrides = broadcastStrides(condition.shape, shape->size());
  Shape trueStrides = broadcastStrides(onTrue.shape, shape->size());
  Shape falseStrides = broadcastStrides(onFalse.shape, shape->size());
  HostTensor out = emptyLike(onTrue, *shape);
  forEachIndex(*shape, [&](llvm::ArrayRef<int64_t> index) {
    if (condition.i32[dot(index, conditionStrides)] != 0)
      appendElement(out, onTrue, dot(index, trueStrides));
    else
      appendElement(out, onFalse, dot(index, falseStrides));
  });
  return out;
}

/// `x` truncated toward zero, or `lo` when it is NaN or outside [lo, hi]. hi + 1.0 is
/// 2^31 or 2^63 exactly (INT64_MAX rounds up to 2^63 as a double).
static int64_t truncateInto(float x, int64_t lo, int64_t hi) {
  double d = x;
  return d >= static_cast<double>(lo) && d < static_cast<double>(hi) + 1.0
             ? static_cast<int64_t>(d)
             : lo;
}

HostTensor kiln::reference::cast(const HostTensor &input, NumericType to) {
  int64_t n = input.numElements();
  auto intAt = [&](int64_t i) -> int64_t {
    return input.isInt ? input.i32[i] : input.i64[i];
  };
  bool fromFloat = !input.isInt && !input.isI64;
  switch (to) {
  case NumericType::F32: {
    HostTensor out = HostTensor::floats(input.shape);
    for (int64_t i = 0; i < n; ++i)
      out.f32[i] = fromFloat ? input.f32[i] : static_cast<float>(intAt(i));
    return out;
  }
  case NumericType::I32: {
    HostTensor out = HostTensor::ints(input.shape);
    for (int64_t i = 0; i < n; ++i)
      out.i32[i] = static_cast<int32_t>(
          fromFloat ? truncateInto(input.f32[i], INT32_MIN, INT32_MAX) : intAt(i));
    return out;
  }
  case NumericType::I64:
    break;
  }
  HostTensor out = HostTensor::longs(input.shape);
  for (int64_t i = 0; i < n; ++i)
    out.i64[i] = fromFloat ? truncateInto(input.f32[i], INT64_MIN, INT64_MAX) : intAt(i);
  return out;
}

llvm::Expected<HostTensor> kiln::reference::maskedFill(const HostTensor &input,
                                                       const HostTensor &mask,
                                                       float value) {
  llvm::Expected<Shape> shape = broadcastShapes(input.shape, mask.shape);
  if (!shape)
    return shape.takeError();
  if (*shape != input.shape)
    return makeError("masked_fill mask " + shapeToString(mask.shape) +
                     " would enlarge the input " + shapeToString(input.shape));
  Shape maskStrides = broadcastStrides(mask.shape, shape->size());
  HostTensor out = input;
  int64_t i = 0;
  forEachIndex(*shape, [&](llvm::ArrayRef<int64_t> index) {
    if (mask.i32[dot(index, maskStrides)] != 0)
      out.f32[i] = value;
    ++i;
  });
  return out;
}

HostTensor kiln::reference::scale(const HostTensor &input, float factor) {
  HostTensor out = input;
  for (float &x : out.f32)
    x *= factor;
  return out;
}

HostTensor kiln::reference::relu(const HostTensor &input) {
  HostTensor out = input;
  // Written so that NaN passes through, as in PyTorch.
  for (float &x : out.f32)
    x = x < 0.0f ? 0.0f : x;
  return out;
}

HostTensor kiln::reference::gelu(const HostTensor &input) {
  HostTensor out = input;
  // The exact (erf) form, in double so the oracle is more accurate than what it checks.
  // Written with erfc: 1 + erf(t) = erfc(-t) does not cancel for very negative x, where
  // 1 + erf loses every digit (x < -6).
  for (float &x : out.f32)
    x = static_cast<float>(0.5 * double(x) * std::erfc(-double(x) / std::sqrt(2.0)));
  return out;
}

HostTensor kiln::reference::unary(const HostTensor &input,
                                  llvm::function_ref<double(double)> f) {
  HostTensor out = input;
  for (float &x : out.f32)
    x = static_cast<float>(f(x));
  return out;
}

double kiln::reference::sigmoid(double x) {
  // e^-|x| never overflows; for x < 0, sigmoid(x) = e^x / (1 + e^x).
  double e = std::exp(-std::abs(x));
  return x >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

double kiln::reference::silu(double x) { return x * sigmoid(x); }

double kiln::reference::geluTanh(double x) {
  // 1 + tanh(u) = 2 sigmoid(2u), which does not cancel for very negative x.
  double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
  return x * sigmoid(2.0 * u);
}
