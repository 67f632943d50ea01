//===- Elementwise.cpp - Reference kernels of elementwise kiln ops --------===//

#include "Kernels.h"

#include <cmath>

using namespace kiln::reference;

llvm::Expected<HostTensor>
kiln::reference::binary(const HostTensor &lhs, const HostTensor &rhs,
                        llvm::function_ref<float(float, float)> combine) {
  llvm::Expected<Shape> shape = broadcastShapes(lhs.shape, rhs.shape);
  if (!shape)
    return shape.takeError();
  Shape lhsStrides = broadcastStrides(lhs.shape, shape->size());
  Shape rhsStrides = broadcastStrides(rhs.shape, shape->size());
  HostTensor out = HostTensor::floats(*shape);
  int64_t i = 0;
  forEachIndex(*shape, [&](llvm::ArrayRef<int64_t> index) {
    out.f32[i++] =
        combine(lhs.f32[dot(index, lhsStrides)], rhs.f32[dot(index, rhsStrides)]);
  });
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
