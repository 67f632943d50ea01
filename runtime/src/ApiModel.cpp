// ApiModel.cpp - the C boundary for models and weights: argument checks, then the work in
// Model / Weights.
#include "Error.hpp"
#include "Model.hpp"
#include "Session.hpp"
#include "Weights.hpp"

using namespace kiln::rt;

namespace {

const Model* unwrap(const kiln_model* model) { return reinterpret_cast<const Model*>(model); }

const EntryDesc* entryAt(const kiln_model* model, size_t entry) {
  if (!model || entry >= unwrap(model)->manifest().entries.size())
    return nullptr;
  return &unwrap(model)->manifest().entries[entry];
}

kiln_status* tensorInfo(const kiln_model* model, size_t entry, size_t index,
                        kiln_tensor_info* out, bool input) {
  return guard([&] {
    if (!model || !out)
      fail(KILN_STATUS_INVALID_ARGUMENT, input ? "kiln_model_input_info" : "kiln_model_output_info",
           ": model and out_info must not be NULL");
    const EntryDesc* e = entryAt(model, entry);
    if (!e)
      fail(KILN_STATUS_NOT_FOUND, "entry index ", entry, " out of range (",
           unwrap(model)->manifest().entries.size(), " entries)");
    const auto& list = input ? e->inputs : e->outputs;
    if (index >= list.size())
      fail(KILN_STATUS_NOT_FOUND, "entry '", e->name, "' has ", list.size(),
           input ? " inputs" : " outputs", "; index ", index, " is out of range");
    *out = list[index].info();
  });
}

kiln_status* evalShape(const kiln_model* model, size_t entry, size_t index, bool input,
                       const char* const* names, const int64_t* values, size_t count,
                       int64_t* out) {
  return guard([&] {
    if (!model || (count > 0 && (!names || !values)))
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_", input ? "input" : "output",
           "_shape: NULL argument");
    const EntryDesc* e = entryAt(model, entry);
    if (!e)
      fail(KILN_STATUS_NOT_FOUND, "entry index ", entry, " out of range (",
           unwrap(model)->manifest().entries.size(), " entries)");
    const auto& list = input ? e->inputs : e->outputs;
    if (index >= list.size())
      fail(KILN_STATUS_NOT_FOUND, "entry '", e->name, "' has ", list.size(),
           input ? " inputs" : " outputs", "; index ", index, " is out of range");
    const TensorDesc& t = list[index];
    if (!t.dims.empty() && !out)
      fail(KILN_STATUS_INVALID_ARGUMENT, "out_shape is NULL");
    std::vector<int64_t> slots(e->dimNames.size(), -1);
    for (size_t i = 0; i < count; ++i)
      for (size_t s = 0; s < slots.size(); ++s)
        if (names[i] && e->dimNames[s] == names[i])
          slots[s] = values[i];
    for (size_t d = 0; d < t.dims.size(); ++d) {
      const DimExpr& expr = t.dims[d];
      for (size_t n = 0; n < expr.names().size(); ++n)
        if (slots[expr.slotOfName(n)] < 0)
          fail(KILN_STATUS_NOT_FOUND, "entry '", e->name, "': ", input ? "input '" : "output '",
               t.name, "' ", t.describe(), " needs a value for dimension '", expr.names()[n],
               "'");
      std::string error;
      if (!expr.evaluate(slots.data(), out[d], error) || out[d] < 0)
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e->name, "': ", t.name, " dim ", d, " '",
             expr.text(), "': ", error.empty() ? cat("is negative (", out[d], ")") : error);
    }
  });
}

} // namespace

extern "C" {

KILN_API kiln_status* kiln_model_open(const char* path, kiln_model** out_model) {
  if (out_model)
    *out_model = nullptr;
  return guard([&] {
    if (!path || !out_model)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_open: path and out_model must not be NULL");
    *out_model = reinterpret_cast<kiln_model*>(new Model(path));
  });
}

KILN_API void kiln_model_retain(kiln_model* model) {
  if (model)
    unwrap(model)->refs.fetch_add(1);
}

KILN_API void kiln_model_release(kiln_model* model) { releaseModel(unwrap(model)); }

KILN_API const char* kiln_model_name(const kiln_model* model) {
  return model ? unwrap(model)->manifest().model.c_str() : "";
}

KILN_API const char* kiln_model_target(const kiln_model* model) {
  return model ? unwrap(model)->manifest().target.c_str() : "";
}

KILN_API const char* kiln_model_manifest_json(const kiln_model* model) {
  return model ? unwrap(model)->manifestJson().c_str() : "";
}

KILN_API size_t kiln_model_entry_count(const kiln_model* model) {
  return model ? unwrap(model)->manifest().entries.size() : 0;
}

KILN_API const char* kiln_model_entry_name(const kiln_model* model, size_t entry_index) {
  const EntryDesc* e = entryAt(model, entry_index);
  return e ? e->name.c_str() : nullptr;
}

KILN_API kiln_status* kiln_model_find_entry(const kiln_model* model, const char* entry_name,
                                            size_t* out_entry_index) {
  return guard([&] {
    if (!model || !entry_name || !out_entry_index)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_find_entry: NULL argument");
    const Manifest& m = unwrap(model)->manifest();
    int index = m.findEntry(entry_name);
    if (index < 0)
      fail(KILN_STATUS_NOT_FOUND, "model '", m.model, "' has no entry '", entry_name,
           "'; available entries: ", m.entryNames());
    *out_entry_index = size_t(index);
  });
}

KILN_API size_t kiln_model_input_count(const kiln_model* model, size_t entry_index) {
  const EntryDesc* e = entryAt(model, entry_index);
  return e ? e->inputs.size() : 0;
}

KILN_API size_t kiln_model_output_count(const kiln_model* model, size_t entry_index) {
  const EntryDesc* e = entryAt(model, entry_index);
  return e ? e->outputs.size() : 0;
}

KILN_API kiln_status* kiln_model_input_info(const kiln_model* model, size_t entry_index,
                                            size_t input_index, kiln_tensor_info* out_info) {
  return tensorInfo(model, entry_index, input_index, out_info, true);
}

KILN_API kiln_status* kiln_model_output_info(const kiln_model* model, size_t entry_index,
                                             size_t output_index, kiln_tensor_info* out_info) {
  return tensorInfo(model, entry_index, output_index, out_info, false);
}

KILN_API size_t kiln_model_dim_count(const kiln_model* model, size_t entry_index) {
  const EntryDesc* e = entryAt(model, entry_index);
  return e ? e->dimNames.size() : 0;
}

KILN_API const char* kiln_model_dim_name(const kiln_model* model, size_t entry_index,
                                         size_t dim_index) {
  const EntryDesc* e = entryAt(model, entry_index);
  return e && dim_index < e->dimNames.size() ? e->dimNames[dim_index].c_str() : nullptr;
}

KILN_API kiln_status* kiln_model_input_shape(const kiln_model* model, size_t entry_index,
                                             size_t input_index, const char* const* dim_names,
                                             const int64_t* dim_values, size_t dim_count,
                                             int64_t* out_shape) {
  return evalShape(model, entry_index, input_index, true, dim_names, dim_values, dim_count,
                   out_shape);
}

KILN_API kiln_status* kiln_model_output_shape(const kiln_model* model, size_t entry_index,
                                              size_t output_index,
                                              const char* const* dim_names,
                                              const int64_t* dim_values, size_t dim_count,
                                              int64_t* out_shape) {
  return evalShape(model, entry_index, output_index, false, dim_names, dim_values, dim_count,
                   out_shape);
}

KILN_API size_t kiln_model_parameter_count(const kiln_model* model) {
  return model ? unwrap(model)->manifest().parameters.size() : 0;
}

KILN_API kiln_status* kiln_model_parameter_info(const kiln_model* model, size_t index,
                                                kiln_tensor_info* out_info) {
  return guard([&] {
    if (!model || !out_info)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_parameter_info: NULL argument");
    const auto& params = unwrap(model)->manifest().parameters;
    if (index >= params.size())
      fail(KILN_STATUS_NOT_FOUND, "parameter index ", index, " out of range (",
           params.size(), " parameters)");
    *out_info = params[index].info();
  });
}

KILN_API kiln_status* kiln_weights_open(const kiln_model* model, const char* safetensors_path,
                                        kiln_weights** out_weights) {
  if (out_weights)
    *out_weights = nullptr;
  return guard([&] {
    if (!model || !safetensors_path || !out_weights)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "kiln_weights_open: model, safetensors_path and out_weights must not be NULL");
    *out_weights = reinterpret_cast<kiln_weights*>(
        new Weights(unwrap(model)->manifest(), safetensors_path));
  });
}

KILN_API void kiln_weights_retain(kiln_weights* weights) {
  if (weights)
    reinterpret_cast<Weights*>(weights)->refs.fetch_add(1);
}

KILN_API void kiln_weights_release(kiln_weights* weights) {
  releaseWeights(reinterpret_cast<Weights*>(weights));
}

} // extern "C"
