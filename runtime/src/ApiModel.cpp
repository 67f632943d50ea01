// ApiModel.cpp - the C boundary for models: argument checks, then the work in Model.
#include "Error.h"
#include "Model.h"
#include "Session.h"

#include <cstdint>

using namespace kiln::rt;

namespace {

const Model *unwrap(const kiln_model *model) {
  return reinterpret_cast<const Model *>(model);
}

const EntryDesc *entryAt(const kiln_model *model, size_t entry) {
  if (!model || entry >= unwrap(model)->manifest().entries.size())
    return nullptr;
  return &unwrap(model)->manifest().entries[entry];
}

// Parameter `index` of `model` for the C call `function`, whose result goes to `out`:
// INVALID_ARGUMENT for a NULL model or out, NOT_FOUND for an index out of range.
const TensorDesc &parameterAt(const kiln_model *model, size_t index, const void *out,
                              const char *function) {
  if (!model || !out)
    fail(KILN_STATUS_INVALID_ARGUMENT, function, ": NULL argument");
  const auto &params = unwrap(model)->manifest().parameters;
  if (index >= params.size())
    fail(KILN_STATUS_NOT_FOUND, "parameter index ", index, " out of range (",
         params.size(), " parameters)");
  return params[index];
}

// The entry's dimension table filled from names[i] = values[i]; -1 where not given.
std::vector<int64_t> slotValues(const EntryDesc &e, const char *const *names,
                                const int64_t *values, size_t count) {
  std::vector<int64_t> slots(e.dimNames.size(), -1);
  for (size_t i = 0; i < count; ++i)
    for (size_t s = 0; s < slots.size(); ++s)
      if (names[i] && e.dimNames[s] == names[i])
        slots[s] = values[i];
  return slots;
}

// NOT_FOUND unless every name `expr` uses has a value; `what` says whose expression it
// is.
void requireNames(const EntryDesc &e, const DimExpr &expr,
                  const std::vector<int64_t> &slots, const std::string &what) {
  for (size_t n = 0; n < expr.names().size(); ++n)
    if (slots[expr.slotOfName(n)] < 0)
      fail(KILN_STATUS_NOT_FOUND, "entry '", e.name, "': ", what,
           " needs a value for dimension '", expr.names()[n], "'");
}

kiln_status *tensorInfo(const kiln_model *model, size_t entry, size_t index,
                        kiln_tensor_info *out, bool input) {
  return guard([&] {
    if (!model || !out)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           input ? "kiln_model_input_info" : "kiln_model_output_info",
           ": model and out_info must not be NULL");
    const EntryDesc *e = entryAt(model, entry);
    if (!e)
      fail(KILN_STATUS_NOT_FOUND, "entry index ", entry, " out of range (",
           unwrap(model)->manifest().entries.size(), " entries)");
    const auto &list = input ? e->inputs : e->outputs;
    if (index >= list.size())
      fail(KILN_STATUS_NOT_FOUND, "entry '", e->name, "' has ", list.size(),
           input ? " inputs" : " outputs", "; index ", index, " is out of range");
    *out = list[index].info();
  });
}

kiln_status *evalShape(const kiln_model *model, size_t entry, size_t index, bool input,
                       const char *const *names, const int64_t *values, size_t count,
                       int64_t *out) {
  return guard([&] {
    if (!model || (count > 0 && (!names || !values)))
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_", input ? "input" : "output",
           "_shape: NULL argument");
    const EntryDesc *e = entryAt(model, entry);
    if (!e)
      fail(KILN_STATUS_NOT_FOUND, "entry index ", entry, " out of range (",
           unwrap(model)->manifest().entries.size(), " entries)");
    const auto &list = input ? e->inputs : e->outputs;
    if (index >= list.size())
      fail(KILN_STATUS_NOT_FOUND, "entry '", e->name, "' has ", list.size(),
           input ? " inputs" : " outputs", "; index ", index, " is out of range");
    const TensorDesc &t = list[index];
    if (!t.dims.empty() && !out)
      fail(KILN_STATUS_INVALID_ARGUMENT, "out_shape is NULL");
    std::vector<int64_t> slots = slotValues(*e, names, values, count);
    for (size_t d = 0; d < t.dims.size(); ++d) {
      const DimExpr &expr = t.dims[d];
      requireNames(*e, expr, slots,
                   cat(input ? "input '" : "output '", t.name, "' ", t.describe()));
      std::string error;
      if (!expr.evaluate(slots.data(), out[d], error) || out[d] < 0)
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e->name, "': ", t.name, " dim ", d,
             " '", expr.text(),
             "': ", error.empty() ? cat("is negative (", out[d], ")") : error);
    }
  });
}

kiln_status *evalBounds(const kiln_model *model, size_t entry, size_t index,
                        const char *const *names, const int64_t *values, size_t count,
                        int64_t *outMin, int64_t *outMax) {
  return guard([&] {
    if (!model || !outMin || !outMax || (count > 0 && (!names || !values)))
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_input_bounds: NULL argument");
    const EntryDesc *e = entryAt(model, entry);
    if (!e)
      fail(KILN_STATUS_NOT_FOUND, "entry index ", entry, " out of range (",
           unwrap(model)->manifest().entries.size(), " entries)");
    if (index >= e->inputs.size())
      fail(KILN_STATUS_NOT_FOUND, "entry '", e->name, "' has ", e->inputs.size(),
           " inputs; index ", index, " is out of range");
    const TensorDesc &t = e->inputs[index];
    if (t.dtype == KILN_DTYPE_I32) {
      *outMin = INT32_MIN;
      *outMax = INT32_MAX;
    } else if (t.dtype == KILN_DTYPE_I64) {
      *outMin = INT64_MIN;
      *outMax = INT64_MAX;
    } else {
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e->name, "': input '", t.name,
           "' is ", kiln_dtype_name(t.dtype), "; only integer inputs have value bounds");
    }
    if (!t.bounds)
      return;
    std::vector<int64_t> slots = slotValues(*e, names, values, count);
    std::string what = cat("bounds [", t.bounds->min.text(), ", ", t.bounds->max.text(),
                           "] of input '", t.name, "'");
    int64_t lo, hi;
    std::string error;
    for (const DimExpr *end : {&t.bounds->min, &t.bounds->max})
      requireNames(*e, *end, slots, what);
    if (!t.bounds->min.evaluate(slots.data(), lo, error) ||
        !t.bounds->max.evaluate(slots.data(), hi, error))
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e->name, "': ", what, ": ", error);
    *outMin = lo;
    *outMax = hi;
  });
}

} // namespace

extern "C" {

KILN_API kiln_status *kiln_model_open(const char *path, kiln_model **out_model) {
  if (out_model)
    *out_model = nullptr;
  return guard([&] {
    if (!path || !out_model)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "kiln_model_open: path and out_model must not be NULL");
    *out_model = reinterpret_cast<kiln_model *>(new Model(path));
  });
}

KILN_API void kiln_model_retain(kiln_model *model) {
  if (model)
    unwrap(model)->refs.fetch_add(1);
}

KILN_API void kiln_model_release(kiln_model *model) { releaseModel(unwrap(model)); }

KILN_API const char *kiln_model_name(const kiln_model *model) {
  return model ? unwrap(model)->manifest().model.c_str() : "";
}

KILN_API const char *kiln_model_target(const kiln_model *model) {
  return model ? unwrap(model)->manifest().target.c_str() : "";
}

KILN_API const char *kiln_model_manifest_json(const kiln_model *model) {
  return model ? unwrap(model)->manifestJson().c_str() : "";
}

KILN_API size_t kiln_model_entry_count(const kiln_model *model) {
  return model ? unwrap(model)->manifest().entries.size() : 0;
}

KILN_API const char *kiln_model_entry_name(const kiln_model *model, size_t entry_index) {
  const EntryDesc *e = entryAt(model, entry_index);
  return e ? e->name.c_str() : nullptr;
}

KILN_API kiln_status *kiln_model_find_entry(const kiln_model *model,
                                            const char *entry_name,
                                            size_t *out_entry_index) {
  return guard([&] {
    if (!model || !entry_name || !out_entry_index)
      fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_model_find_entry: NULL argument");
    const Manifest &m = unwrap(model)->manifest();
    int index = m.findEntry(entry_name);
    if (index < 0)
      fail(KILN_STATUS_NOT_FOUND, "model '", m.model, "' has no entry '", entry_name,
           "'; available entries: ", m.entryNames());
    *out_entry_index = size_t(index);
  });
}

KILN_API size_t kiln_model_input_count(const kiln_model *model, size_t entry_index) {
  const EntryDesc *e = entryAt(model, entry_index);
  return e ? e->inputs.size() : 0;
}

KILN_API size_t kiln_model_output_count(const kiln_model *model, size_t entry_index) {
  const EntryDesc *e = entryAt(model, entry_index);
  return e ? e->outputs.size() : 0;
}

KILN_API kiln_status *kiln_model_input_info(const kiln_model *model, size_t entry_index,
                                            size_t input_index,
                                            kiln_tensor_info *out_info) {
  return tensorInfo(model, entry_index, input_index, out_info, true);
}

KILN_API kiln_status *kiln_model_output_info(const kiln_model *model, size_t entry_index,
                                             size_t output_index,
                                             kiln_tensor_info *out_info) {
  return tensorInfo(model, entry_index, output_index, out_info, false);
}

KILN_API size_t kiln_model_dim_count(const kiln_model *model, size_t entry_index) {
  const EntryDesc *e = entryAt(model, entry_index);
  return e ? e->dimNames.size() : 0;
}

KILN_API const char *kiln_model_dim_name(const kiln_model *model, size_t entry_index,
                                         size_t dim_index) {
  const EntryDesc *e = entryAt(model, entry_index);
  return e && dim_index < e->dimNames.size() ? e->dimNames[dim_index].c_str() : nullptr;
}

KILN_API kiln_status *kiln_model_input_shape(const kiln_model *model, size_t entry_index,
                                             size_t input_index,
                                             const char *const *dim_names,
                                             const int64_t *dim_values, size_t dim_count,
                                             int64_t *out_shape) {
  return evalShape(model, entry_index, input_index, true, dim_names, dim_values,
                   dim_count, out_shape);
}

KILN_API kiln_status *kiln_model_output_shape(const kiln_model *model, size_t entry_index,
                                              size_t output_index,
                                              const char *const *dim_names,
                                              const int64_t *dim_values, size_t dim_count,
                                              int64_t *out_shape) {
  return evalShape(model, entry_index, output_index, false, dim_names, dim_values,
                   dim_count, out_shape);
}

KILN_API kiln_status *kiln_model_input_bounds(const kiln_model *model, size_t entry_index,
                                              size_t input_index,
                                              const char *const *dim_names,
                                              const int64_t *dim_values, size_t dim_count,
                                              int64_t *out_min, int64_t *out_max) {
  return evalBounds(model, entry_index, input_index, dim_names, dim_values, dim_count,
                    out_min, out_max);
}

KILN_API size_t kiln_model_parameter_count(const kiln_model *model) {
  return model ? unwrap(model)->manifest().parameters.size() : 0;
}

KILN_API kiln_status *kiln_model_parameter_info(const kiln_model *model, size_t index,
                                                kiln_tensor_info *out_info) {
  return guard([&] {
    *out_info = parameterAt(model, index, out_info, "kiln_model_parameter_info").info();
  });
}

KILN_API size_t kiln_model_state_count(const kiln_model *model) {
  return model ? unwrap(model)->manifest().states.size() : 0;
}

KILN_API const char *kiln_model_state_name(const kiln_model *model, size_t state_index) {
  if (!model || state_index >= unwrap(model)->manifest().states.size())
    return nullptr;
  return unwrap(model)->manifest().states[state_index].name.c_str();
}

KILN_API const char *kiln_model_weight_precision(const kiln_model *model) {
  return model ? unwrap(model)->manifest().weights.c_str() : "";
}

KILN_API kiln_status *kiln_model_parameter_source(const kiln_model *model, size_t index,
                                                  kiln_parameter_source *out_source) {
  return guard([&] {
    const TensorDesc &p =
        parameterAt(model, index, out_source, "kiln_model_parameter_source");
    const auto &rows = p.source ? p.source->rows : std::nullopt;
    *out_source = {p.source ? p.source->tensor.c_str() : p.name.c_str(),
                   p.source ? kiln::abi::conversionName(p.source->conversion) : "",
                   int32_t(rows.has_value()), rows ? rows->first : 0,
                   rows ? rows->second : 0};
  });
}

} // extern "C"
