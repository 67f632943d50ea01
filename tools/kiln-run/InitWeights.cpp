//===- InitWeights.cpp - Random weights for a model -----------------------===//

#include "Commands.h"

#include "HostTensor.h"
#include "Options.h"
#include "Random.h"

#include "kiln/runtime.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kiln::driver {

void initWeights(const Options &options) {
  kiln::Model model = kiln::Model::open(options.model);
  std::vector<kiln::TensorInfo> params = model.parameters();
  std::vector<HostTensor> data(params.size());
  std::vector<kiln::TensorArg> tensors;
  Random rng(options.seed);
  int64_t values = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    HostTensor &t = data[i];
    t.dtype = params[i].dtype;
    t.shape = params[i].shape;
    t.bytes.resize(size_t(t.count()) * kiln_dtype_size(t.dtype));
    // Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) keeps activations O(1) through deep
    // stacks.
    int64_t fanIn = t.shape.empty() ? 1 : std::max<int64_t>(t.shape.back(), 1);
    float scale = float(options.scale.value_or(1.0 / std::sqrt(double(fanIn))));
    for (int64_t k = 0; k < t.count(); ++k) {
      if (t.dtype == KILN_DTYPE_F32)
        reinterpret_cast<float *>(t.bytes.data())[k] = rng.uniform(-scale, scale);
      else if (t.dtype == KILN_DTYPE_I32)
        reinterpret_cast<int32_t *>(t.bytes.data())[k] = int32_t(rng.integer(0, 10));
      else
        reinterpret_cast<int64_t *>(t.bytes.data())[k] = rng.integer(0, 10);
    }
    values += t.count();
    tensors.push_back({params[i].name, t.dtype, t.shape, t.bytes.data()});
  }
  kiln::writeSafetensors(options.initWeights, tensors);
  std::printf("wrote %zu parameters (%lld values) of model '%s' to %s\n", params.size(),
              static_cast<long long>(values), model.name().c_str(),
              options.initWeights.c_str());
}

} // namespace kiln::driver
