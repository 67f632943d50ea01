//===- ManifestDims.cpp - The dimension names of an entry -----------------===//
//
// Binds each dynamic dimension name of an entry to a slot of the table a run fills, and
// resolves every dimension expression of the entry to those slots, so that evaluating a
// shape during a run is arithmetic on that table: no lookup, no allocation.
//
//===----------------------------------------------------------------------===//

#include "ManifestEntry.h"
#include "ManifestJson.h"

#include <algorithm>

namespace kiln::rt {

void resolveDims(EntryDesc &e, const std::string &path) {
  std::vector<std::string> binder; // slot -> who binds it, for messages
  auto bindAll = [&](const std::vector<DimExpr> &dims, std::vector<int> &slots,
                     const std::string &who) {
    slots.assign(dims.size(), -1);
    for (size_t d = 0; d < dims.size(); ++d) {
      const std::string *name = dims[d].bareName();
      if (!name)
        continue;
      auto it = std::find(e.dimNames.begin(), e.dimNames.end(), *name);
      slots[d] = int(it - e.dimNames.begin());
      if (it == e.dimNames.end()) {
        e.dimNames.push_back(*name);
        binder.push_back(who);
      }
    }
  };
  for (TensorDesc &in : e.inputs)
    bindAll(in.dims, in.bindSlot, cat("input '", in.name, "'"));
  for (size_t i = 0; i < e.buffers.size(); ++i)
    if (e.buffers[i].kind == BufferKind::State && !e.buffers[i].create)
      bindAll(e.buffers[i].dims, e.buffers[i].bindSlot, cat("buffers[", i, "] (state)"));
  size_t firstValueDim = e.dimNames.size();
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    TensorDesc &in = e.inputs[i];
    if (in.valueDim.empty())
      continue;
    auto it = std::find(e.dimNames.begin(), e.dimNames.end(), in.valueDim);
    if (it != e.dimNames.end())
      invalid(cat(path, ".inputs[", i, "].value_dim"),
              cat("dimension '", in.valueDim, "' is also bound by ",
                  binder[size_t(it - e.dimNames.begin())],
                  "; a value_dim names a dimension that no shape binds"));
    in.valueDimSlot = int(e.dimNames.size());
    e.dimNames.push_back(in.valueDim);
    binder.push_back(cat("the value of input '", in.name, "'"));
  }
  auto resolve = [&](DimExpr &d, const std::string &where) {
    d.resolve([&](const std::string &name) {
      auto it = std::find(e.dimNames.begin(), e.dimNames.end(), name);
      if (it == e.dimNames.end())
        invalid(where, cat("dimension '", name, "' in \"", d.text(),
                           "\" is not bound (no input, and no state buffer without "
                           "\"create\", has a shape item that is exactly '",
                           name, "', and no input has \"value_dim\": \"", name, "\")"));
      return int(it - e.dimNames.begin());
    });
  };
  auto resolveAll = [&](std::vector<DimExpr> &dims, const std::string &where) {
    for (DimExpr &d : dims)
      resolve(d, where);
  };
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    TensorDesc &in = e.inputs[i];
    resolveAll(in.dims, at(path, key::kInputs, i));
    if (!in.bounds)
      continue;
    DimExpr *ends[2] = {&in.bounds->min, &in.bounds->max};
    for (int k = 0; k < 2; ++k) {
      std::string where = cat(path, ".inputs[", i, "].bounds[", k, "]");
      resolve(*ends[k], where);
      // A value_dim's bounds are checked before any value_dim is bound.
      for (size_t n = 0; !in.valueDim.empty() && n < ends[k]->names().size(); ++n)
        if (size_t(ends[k]->slotOfName(n)) >= firstValueDim)
          invalid(where, cat("bounds of value_dim input '", in.name, "' use dimension '",
                             ends[k]->names()[n],
                             "', which is itself a value_dim; they may "
                             "only use dimensions that shapes bind"));
    }
  }
  for (size_t i = 0; i < e.outputs.size(); ++i)
    resolveAll(e.outputs[i].dims, at(path, key::kOutputs, i));
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    std::string where = at(path, key::kBuffers, i);
    resolveAll(e.buffers[i].dims, where);
    resolve(e.buffers[i].offset, at(where, key::kOffset));
    for (size_t k = 0; k < e.buffers[i].strides.size(); ++k)
      resolve(e.buffers[i].strides[k], at(where, key::kStrides, k));
  }
}

void getDimMax(EntryDesc &e, const Json &object, const std::string &path) {
  e.dimMax.assign(e.dimNames.size(), 0);
  const Json *maxes = object.find(key::kDimMax);
  if (!maxes)
    return;
  std::string where = at(path, key::kDimMax);
  if (!maxes->isObject())
    invalid(where, "expected an object of dimension names and their largest sizes");
  for (const auto &[name, max] : maxes->members()) {
    auto it = std::find(e.dimNames.begin(), e.dimNames.end(), name);
    if (it == e.dimNames.end())
      invalid(where, cat("bounds dimension '", name,
                         "', which the entry does not bind (it binds ",
                         e.dimNames.empty()
                             ? std::string("none")
                             : join(e.dimNames, [](const std::string &n) { return n; }),
                         ")"));
    if (!max.isInteger() || max.asInt() < 1)
      invalid(cat(where, ".", name), "expected a positive integer");
    e.dimMax[size_t(it - e.dimNames.begin())] = max.asInt();
  }
}

} // namespace kiln::rt

namespace kiln::rt {

void getTrim(EntryDesc &e, const Json &object, const std::string &path) {
  const Json *trim = object.find(key::kTrim);
  if (!trim)
    return;
  std::string where = at(path, key::kTrim);
  if (!trim->isObject())
    invalid(where, "expected an object with \"dim\" and \"lengths\"");
  const Json *dim = trim->find(key::kTrimDim), *lengths = trim->find(key::kTrimLengths);
  if (!dim || !dim->isString() || !lengths || !lengths->isString())
    invalid(where, "expected \"dim\" and \"lengths\", both strings");
  const std::string &name = dim->asString();
  auto slot = std::find(e.dimNames.begin(), e.dimNames.end(), name);
  bool boundByShape = false;
  for (const TensorDesc &in : e.inputs)
    for (size_t d = 0; d < in.bindSlot.size(); ++d)
      boundByShape |= in.bindSlot[d] >= 0 && e.dimNames[size_t(in.bindSlot[d])] == name;
  if (slot == e.dimNames.end() || !boundByShape)
    invalid(at(where, key::kTrimDim),
            cat("'", name, "' is not a dimension an input's shape binds"));
  auto input = std::find_if(e.inputs.begin(), e.inputs.end(), [&](const TensorDesc &in) {
    return in.name == lengths->asString();
  });
  if (input == e.inputs.end() || input->dtype != KILN_DTYPE_I32 ||
      input->dims.size() != 1)
    invalid(at(where, key::kTrimLengths),
            cat("'", lengths->asString(), "' is not a rank-1 i32 input of the entry"));
  // Lengths past the dimension would cut what they call valid.
  const std::string *max = input->bounds ? input->bounds->max.bareName() : nullptr;
  if (!max || *max != name)
    invalid(at(where, key::kTrimLengths),
            cat("input '", input->name, "' must be bounded above by ", name));
  // The run cuts inputs and pads outputs a whole position at a time.
  auto axesOf = [&](const TensorDesc &t, const char *what) {
    std::vector<size_t> axes;
    for (size_t d = 0; d < t.dims.size(); ++d) {
      const std::vector<std::string> &names = t.dims[d].names();
      if (std::find(names.begin(), names.end(), name) == names.end())
        continue;
      const std::string *bare = t.dims[d].bareName();
      if (!bare || *bare != name)
        invalid(where, cat(what, " '", t.name, "' dim ", d, " (", t.dimTexts[d],
                           ") is not '", name, "' alone"));
      axes.push_back(d);
    }
    return axes;
  };
  for (const TensorDesc &in : e.inputs)
    e.trimInputAxes.push_back(axesOf(in, "input"));
  for (const TensorDesc &out : e.outputs)
    e.trimOutputAxes.push_back(axesOf(out, "output"));
  e.trimSlot = int(slot - e.dimNames.begin());
  e.trimLengths = int(input - e.inputs.begin());
}

} // namespace kiln::rt
