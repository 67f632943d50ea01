// ApiWeights.cpp - the C boundary for weights: argument checks, then the work in
// Weights.
#include "Error.h"
#include "Model.h"
#include "Session.h"
#include "Weights.h"

using namespace kiln::rt;

namespace {

const Weights *unwrap(const kiln_weights *weights) {
  return reinterpret_cast<const Weights *>(weights);
}

} // namespace

extern "C" {

KILN_API kiln_status *kiln_weights_open(const kiln_model *model,
                                        const char *safetensors_path,
                                        kiln_weights **out_weights) {
  if (out_weights)
    *out_weights = nullptr;
  return guard([&] {
    if (!model || !safetensors_path || !out_weights)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "kiln_weights_open: model, safetensors_path and out_weights must not be NULL");
    *out_weights = reinterpret_cast<kiln_weights *>(new Weights(
        reinterpret_cast<const Model *>(model)->manifest(), safetensors_path));
  });
}

KILN_API void kiln_weights_retain(kiln_weights *weights) {
  if (weights)
    reinterpret_cast<Weights *>(weights)->refs.fetch_add(1);
}

KILN_API void kiln_weights_release(kiln_weights *weights) {
  releaseWeights(reinterpret_cast<Weights *>(weights));
}

KILN_API void kiln_weights_get_stats(const kiln_weights *weights,
                                     kiln_weights_stats *out) {
  if (out)
    *out = weights ? unwrap(weights)->stats() : kiln_weights_stats{};
}

KILN_API size_t kiln_weights_parameter_count(const kiln_weights *weights) {
  return weights ? unwrap(weights)->parameterCount() : 0;
}

KILN_API kiln_status *kiln_weights_parameter(const kiln_weights *weights, size_t index,
                                             kiln_tensor *out_tensor) {
  return guard([&] {
    if (!weights || !out_tensor)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_weights_parameter: NULL argument");
    if (index >= unwrap(weights)->parameterCount())
      fail(KILN_STATUS_NOT_FOUND, "parameter index ", index, " out of range (",
           unwrap(weights)->parameterCount(), " parameters)");
    *out_tensor = unwrap(weights)->tensor(index);
  });
}

} // extern "C"
