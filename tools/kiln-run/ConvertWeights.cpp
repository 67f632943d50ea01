//===- ConvertWeights.cpp - Weights stored in the model's precision -------===//
//
// Converting at every load costs time (quantizing the base model's 104 MB); a file
// holding each parameter as the model reads it maps instead. The runtime did the
// conversion when it opened --weights: this writes what it holds.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "DriverError.h"
#include "Options.h"

#include "kiln/runtime.hpp"

#include <cstdio>

namespace kiln::driver {

void convertWeights(const Options &options) {
  if (options.weights.empty())
    throw DriverError(
        "--convert-weights needs the weights to convert: pass --weights FILE");
  kiln::Model model = kiln::Model::open(options.model);
  kiln::Weights weights = kiln::Weights::open(model, options.weights);
  std::vector<kiln::TensorArg> tensors;
  uint64_t bytes = 0;
  for (size_t i = 0; i < kiln_weights_parameter_count(weights.get()); ++i) {
    kiln_tensor t;
    kiln::check(kiln_weights_parameter(weights.get(), i, &t));
    std::vector<int64_t> shape(t.shape, t.shape + t.rank);
    bytes += uint64_t(kiln::elementCount(shape)) * kiln_dtype_size(t.dtype);
    tensors.push_back({t.name, t.dtype, std::move(shape), t.data});
  }
  kiln::writeSafetensors(options.convertWeights, tensors);
  std::printf("wrote %zu parameters (%.1f MB, %s weights) of model '%s' to %s\n",
              tensors.size(), double(bytes) / 1e6,
              kiln_model_weight_precision(model.get()), model.name().c_str(),
              options.convertWeights.c_str());
}

} // namespace kiln::driver
