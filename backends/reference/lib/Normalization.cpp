//===- Normalization.cpp - Reference softmax, layer_norm and rms_norm ----===//
//
// Sums, means and variances are taken in double so that the oracle is more accurate
// than any float kernel compared against it.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace kiln::reference;

llvm::Expected<HostTensor> kiln::reference::softmax(const HostTensor &input,
                                                    int64_t axis) {
  int64_t rank = input.shape.size();
  if (axis < 0 || axis >= rank)
    return makeError("softmax axis " + std::to_string(axis) + " is out of range for " +
                     shapeToString(input.shape));
  llvm::ArrayRef<int64_t> shape = input.shape;
  int64_t outer = product(shape.take_front(axis));
  int64_t length = shape[axis];
  int64_t inner = product(shape.drop_front(axis + 1));
  HostTensor out = HostTensor::floats(input.shape);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * length * inner + i;
      auto x = [&](int64_t j) { return double(input.f32[base + j * inner]); };
      auto y = [&](int64_t j) -> float & { return out.f32[base + j * inner]; };
      double max = -inf;
      bool hasNaN = false;
      for (int64_t j = 0; j < length; ++j) {
        hasNaN |= std::isnan(x(j));
        max = std::max(max, x(j));
      }
      if (hasNaN || max == -inf) {
        // Every element -inf is a fully masked row: 0, and never (-inf) - (-inf).
        float fill = hasNaN ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
        for (int64_t j = 0; j < length; ++j)
          y(j) = fill;
        continue;
      }
      double sum = 0.0;
      for (int64_t j = 0; j < length; ++j)
        sum += std::exp(x(j) - max);
      for (int64_t j = 0; j < length; ++j)
        y(j) = static_cast<float>(std::exp(x(j) - max) / sum);
    }
  return out;
}

llvm::Expected<HostTensor> kiln::reference::logSoftmax(const HostTensor &input,
                                                       int64_t axis) {
  llvm::Expected<AxisLines> lines = axisLines(input.shape, axis, "log_softmax");
  if (!lines)
    return lines.takeError();
  HostTensor out = HostTensor::floats(input.shape);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t o = 0; o < lines->outer; ++o)
    for (int64_t i = 0; i < lines->inner; ++i) {
      auto x = [&](int64_t j) { return double(input.f32[lines->at(o, i, j)]); };
      auto y = [&](int64_t j) -> float & { return out.f32[lines->at(o, i, j)]; };
      double max = -inf;
      bool hasNaN = false;
      for (int64_t j = 0; j < lines->length; ++j) {
        hasNaN |= std::isnan(x(j));
        max = std::max(max, x(j));
      }
      if (hasNaN || max == -inf) {
        // A fully masked row is -inf, the log of softmax's 0; never (-inf) - (-inf).
        float fill = hasNaN ? std::numeric_limits<float>::quiet_NaN()
                            : -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < lines->length; ++j)
          y(j) = fill;
        continue;
      }
      double sum = 0.0;
      for (int64_t j = 0; j < lines->length; ++j)
        sum += std::exp(x(j) - max);
      double logSum = std::log(sum);
      for (int64_t j = 0; j < lines->length; ++j)
        y(j) = static_cast<float>(x(j) - max - logSum);
    }
  return out;
}

/// Checks the 1-D `parameters` of normalisation `op` against the last dimension of
/// `input`, as the shape rule does; returns that dimension.
static llvm::Expected<int64_t> normalizedFeatures(
    const char *op, const HostTensor &input,
    std::initializer_list<std::pair<const char *, const HostTensor *>> parameters) {
  if (input.shape.empty())
    return makeError(std::string(op) + " needs an input of rank >= 1");
  int64_t features = input.shape.back();
  for (const auto &[name, p] : parameters)
    if (p->shape != Shape{features})
      return makeError(std::string(op) + " " + name + " has shape " +
                       shapeToString(p->shape) + ", expected [" +
                       std::to_string(features) + "] to match the last dimension of " +
                       shapeToString(input.shape));
  return features;
}

llvm::Expected<HostTensor> kiln::reference::layerNorm(const HostTensor &input,
                                                      const HostTensor &gamma,
                                                      const HostTensor &beta,
                                                      float epsilon) {
  llvm::Expected<int64_t> checked =
      normalizedFeatures("layer_norm", input, {{"gamma", &gamma}, {"beta", &beta}});
  if (!checked)
    return checked.takeError();
  int64_t features = *checked;
  HostTensor out = HostTensor::floats(input.shape);
  int64_t rows = features == 0 ? 0 : input.numElements() / features;
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = &input.f32[r * features];
    double mean = 0.0;
    for (int64_t j = 0; j < features; ++j)
      mean += x[j];
    mean /= features;
    // Two passes, so the variance never goes negative through cancellation.
    double var = 0.0;
    for (int64_t j = 0; j < features; ++j)
      var += (x[j] - mean) * (x[j] - mean);
    var /= features;
    double invStd = 1.0 / std::sqrt(var + double(epsilon));
    for (int64_t j = 0; j < features; ++j)
      out.f32[r * features + j] = static_cast<float>(
          (x[j] - mean) * invStd * double(gamma.f32[j]) + double(beta.f32[j]));
  }
  return out;
}

llvm::Expected<HostTensor> kiln::reference::rmsNorm(const HostTensor &input,
                                                    const HostTensor &gamma,
                                                    float epsilon) {
  llvm::Expected<int64_t> features =
      normalizedFeatures("rms_norm", input, {{"gamma", &gamma}});
  if (!features)
    return features.takeError();
  HostTensor out = HostTensor::floats(input.shape);
  int64_t d = *features;
  int64_t rows = d == 0 ? 0 : input.numElements() / d;
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = &input.f32[r * d];
    double squares = 0.0;
    for (int64_t j = 0; j < d; ++j)
      squares += double(x[j]) * double(x[j]);
    double invRms = 1.0 / std::sqrt(squares / d + double(epsilon));
    for (int64_t j = 0; j < d; ++j)
      out.f32[r * d + j] = static_cast<float>(x[j] * invRms * double(gamma.f32[j]));
  }
  return out;
}
