//===- DecoderSupport.cpp - What every decoder of libkiln_generate needs --===//

#include "DecoderSupport.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln {

void logSoftmaxRows(const float *logits, int64_t rows, int64_t v, int64_t stride,
                    std::vector<double> &out) {
  out.resize(size_t(rows * v));
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = logits + r * stride;
    double maxLogit = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < v; ++i)
      maxLogit = std::max(maxLogit, double(row[i]));
    double sum = 0;
    for (int64_t i = 0; i < v; ++i)
      sum += std::exp(double(row[i]) - maxLogit);
    double logSum = maxLogit + std::log(sum);
    for (int64_t i = 0; i < v; ++i)
      out[size_t(r * v + i)] = double(row[i]) - logSum;
  }
}

int64_t vocabularyOf(const Model &model, const std::string &entry,
                     const std::string &name) {
  for (const TensorInfo &out : model.outputs(entry))
    if (out.name == name && !out.shape.empty() && out.shape.back() > 0)
      return out.shape.back();
  throw Error(KILN_STATUS_INVALID_MODEL, "entry '" + entry + "' has no '" + name +
                                             "' output with a static vocabulary size");
}

int64_t capacityOf(const Model &model, const std::string &entry,
                   const std::string &input) {
  std::vector<TensorInfo> inputs = model.inputs(entry);
  size_t index = 0;
  check(kiln_model_find_entry(model.get(), entry.c_str(), &index));
  int64_t capacity = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].name != input || !inputs[i].hasBounds)
      continue;
    // Bounds that name dims leave the capacity unknown.
    int64_t lo = 0, hi = 0;
    kiln_status *status =
        kiln_model_input_bounds(model.get(), index, i, nullptr, nullptr, 0, &lo, &hi);
    if (!status)
      capacity = hi + 1;
    kiln_status_free(status);
  }
  return capacity;
}

} // namespace kiln
