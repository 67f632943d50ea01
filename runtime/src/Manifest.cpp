// Manifest.cpp - parses the manifest JSON and checks every index, dtype, shape and name
// in it, so that a run can trust it and a compiler bug surfaces as a message, not a
// crash.
#include "Manifest.hpp"

#include "DType.hpp"
#include "Error.hpp"
#include "Json.hpp"

#include <algorithm>
#include <set>

namespace kiln::rt {

kiln_tensor_info TensorDesc::info() const {
  kiln_tensor_info info;
  info.name = name.c_str();
  info.dtype = dtype;
  info.rank = int32_t(dims.size());
  info.dims = dimPointers.data();
  info.shape = staticShape.data();
  info.bounds_min = bounds ? bounds->min.text().c_str() : nullptr;
  info.bounds_max = bounds ? bounds->max.text().c_str() : nullptr;
  return info;
}

std::string TensorDesc::describe() const { return formatDims(dimTexts); }

std::string BufferDesc::describe() const { return formatDims(dimTexts); }

int Manifest::findEntry(std::string_view name) const {
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == name)
      return int(i);
  return -1;
}

int Manifest::findState(std::string_view name) const {
  for (size_t i = 0; i < states.size(); ++i)
    if (states[i].name == name)
      return int(i);
  return -1;
}

std::string Manifest::entryNames() const {
  return join(entries, [](const EntryDesc &e) { return e.name; });
}

namespace {

[[noreturn]] void invalid(const std::string &path, const std::string &problem) {
  fail(KILN_STATUS_INVALID_MODEL, "invalid manifest: ", path, ": ", problem);
}

const Json &member(const Json &object, const char *key, const std::string &path) {
  if (!object.isObject())
    invalid(path, cat("expected an object, got ", Json::kindName(object.kind())));
  const Json *value = object.find(key);
  if (!value)
    invalid(path, cat("missing \"", key, "\""));
  return *value;
}

const std::string &getString(const Json &object, const char *key,
                             const std::string &path) {
  const Json &value = member(object, key, path);
  if (!value.isString())
    invalid(path + "." + key,
            cat("expected a string, got ", Json::kindName(value.kind())));
  return value.asString();
}

const std::vector<Json> &getArray(const Json &object, const char *key,
                                  const std::string &path) {
  const Json &value = member(object, key, path);
  if (!value.isArray())
    invalid(path + "." + key,
            cat("expected an array, got ", Json::kindName(value.kind())));
  return value.items();
}

int checkIndex(const Json &value, size_t limit, const std::string &path,
               const char *what) {
  if (!value.isInteger())
    invalid(path, cat("expected an integer index, got ", Json::kindName(value.kind())));
  if (value.asInt() < 0 || uint64_t(value.asInt()) >= limit)
    invalid(path, cat("index ", value.asInt(), " out of range (", limit, " ", what, ")"));
  return int(value.asInt());
}

int getIndex(const Json &object, const char *key, size_t limit, const std::string &path,
             const char *what) {
  return checkIndex(member(object, key, path), limit, path + "." + key, what);
}

kiln_dtype getDType(const Json &object, const std::string &path) {
  const std::string &name = getString(object, "dtype", path);
  auto dtype = parseManifestDType(name);
  if (!dtype)
    invalid(path + ".dtype",
            cat("unknown dtype \"", name, "\" (expected f32, i32 or i64)"));
  return *dtype;
}

// A shape item, a view's offset or stride, or a bound: an integer, or a string holding a
// dimension expression. Sizes (offsets, strides) must not be negative; bounds may be.
DimExpr getDimItem(const Json &item, const std::string &itemPath, bool isSize,
                   const char *noun = "size") {
  if (item.isInteger()) {
    if (isSize && item.asInt() < 0)
      invalid(itemPath, cat("negative ", noun, " ", item.asInt()));
    return DimExpr::constant(item.asInt());
  }
  if (!item.isString())
    invalid(itemPath, cat("expected an integer or a dimension expression, got ",
                          Json::kindName(item.kind())));
  std::string error;
  auto expr = DimExpr::parse(item.asString(), error);
  if (!expr)
    invalid(itemPath, cat("bad dimension expression \"", item.asString(), "\": ", error));
  if (isSize && expr->isConstant() && expr->constantValue() < 0)
    invalid(itemPath, cat("\"", item.asString(), "\" is negative"));
  return std::move(*expr);
}

std::vector<DimExpr> getShape(const Json &object, const std::string &path) {
  std::vector<DimExpr> dims;
  const auto &items = getArray(object, "shape", path);
  for (size_t i = 0; i < items.size(); ++i)
    dims.push_back(getDimItem(items[i], cat(path, ".shape[", i, "]"), true));
  return dims;
}

// "bounds": [LO, HI] of an input: inclusive, integer inputs only. Names in them are
// resolved with the entry's other dimensions (resolveDims).
void getBounds(const Json &object, TensorDesc &t, const std::string &path) {
  const Json *bounds = object.find("bounds");
  if (!bounds)
    return;
  std::string bpath = path + ".bounds";
  if (t.dtype != KILN_DTYPE_I32 && t.dtype != KILN_DTYPE_I64)
    invalid(bpath, cat("input '", t.name, "' is ", kiln_dtype_name(t.dtype),
                       "; bounds are only allowed on i32 and i64 inputs"));
  if (!bounds->isArray())
    invalid(bpath, cat("expected [LO, HI] (integers or dimension expressions), got ",
                       Json::kindName(bounds->kind())));
  const auto &items = bounds->items();
  if (items.size() != 2)
    invalid(bpath, cat("expected [LO, HI] (integers or dimension expressions), got ",
                       items.size(), " item", items.size() == 1 ? "" : "s"));
  TensorDesc::ValueBounds b{getDimItem(items[0], bpath + "[0]", false),
                            getDimItem(items[1], bpath + "[1]", false)};
  if (b.min.isConstant() && b.max.isConstant() &&
      b.min.constantValue() > b.max.constantValue())
    invalid(bpath, cat("bounds [", b.min.text(), ", ", b.max.text(), "] of input '",
                       t.name, "' admit no value"));
  t.bounds = std::move(b);
}

// Bounds are for inputs: the runtime checks nothing else against them.
void rejectBounds(const Json &object, const std::string &path, const char *what) {
  if (object.isObject() && object.find("bounds"))
    invalid(path + ".bounds", cat("only entry inputs may declare bounds, not ", what));
}

TensorDesc getTensor(const Json &object, const std::string &path) {
  TensorDesc t;
  t.name = getString(object, "name", path);
  if (t.name.empty())
    invalid(path + ".name", "empty name");
  t.dtype = getDType(object, path);
  t.dims = getShape(object, path);
  for (const DimExpr &d : t.dims) {
    t.dimTexts.push_back(d.text());
    t.staticShape.push_back(d.isConstant() ? d.constantValue() : -1);
  }
  return t;
}

void checkUnique(const std::vector<TensorDesc> &tensors, const std::string &path,
                 const char *what) {
  std::set<std::string> seen;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (!seen.insert(tensors[i].name).second)
      invalid(cat(path, "[", i, "]"),
              cat("duplicate ", what, " name '", tensors[i].name, "'"));
}

std::vector<TensorDesc> parseParameters(const Json &root) {
  std::vector<TensorDesc> params;
  if (!root.find("parameters"))
    return params;
  const auto &items = getArray(root, "parameters", "manifest");
  for (size_t i = 0; i < items.size(); ++i) {
    std::string path = cat("parameters[", i, "]");
    TensorDesc p = getTensor(items[i], path);
    rejectBounds(items[i], path, "parameters");
    for (size_t d = 0; d < p.dims.size(); ++d)
      if (!p.dims[d].isConstant())
        invalid(cat(path, ".shape[", d, "]"),
                cat("parameter shapes must be static, got \"", p.dimTexts[d], "\""));
    params.push_back(std::move(p));
  }
  checkUnique(params, "parameters", "parameter");
  return params;
}

// "states": [{name, dtype, rank}], model-wide.
std::vector<StateDesc> parseStates(const Json &root) {
  std::vector<StateDesc> states;
  if (!root.find("states"))
    return states;
  const auto &items = getArray(root, "states", "manifest");
  for (size_t i = 0; i < items.size(); ++i) {
    std::string path = cat("states[", i, "]");
    StateDesc s;
    s.name = getString(items[i], "name", path);
    if (s.name.empty())
      invalid(path + ".name", "empty name");
    s.dtype = getDType(items[i], path);
    if (s.dtype != KILN_DTYPE_F32)
      invalid(path + ".dtype", cat("state '", s.name, "' is ", kiln_dtype_name(s.dtype),
                                   "; states are f32"));
    const Json &rank = member(items[i], "rank", path);
    if (!rank.isInteger() || rank.asInt() < 1)
      invalid(path + ".rank",
              "expected an integer rank of at least 1 (dimension 0 is the "
              "batch)");
    s.rank = size_t(rank.asInt());
    for (size_t j = 0; j < states.size(); ++j)
      if (states[j].name == s.name)
        invalid(path, cat("duplicate state name '", s.name, "'"));
    states.push_back(std::move(s));
  }
  return states;
}

// A view's "offset" (an integer or an expression) and "strides" (one per dimension).
void getViewLayout(const Json &object, BufferDesc &b, const std::string &path) {
  if (const Json *offset = object.find("offset")) {
    b.offset = getDimItem(*offset, path + ".offset", true, "offset");
  }
  if (const Json *strides = object.find("strides")) {
    if (!strides->isArray())
      invalid(path + ".strides", cat("expected an array of element strides, got ",
                                     Json::kindName(strides->kind())));
    const auto &items = strides->items();
    if (items.size() != b.dims.size())
      invalid(path + ".strides",
              cat("view has rank ", b.dims.size(), " but ", items.size(), " stride",
                  items.size() == 1 ? "" : "s"));
    for (size_t k = 0; k < items.size(); ++k)
      b.strides.push_back(
          getDimItem(items[k], cat(path, ".strides[", k, "]"), true, "stride"));
  }
}

BufferDesc getBuffer(const Json &object, const std::string &path, size_t numInputs,
                     size_t numParams, size_t numStates, size_t numBuffers) {
  BufferDesc b;
  b.dtype = getDType(object, path);
  b.dims = getShape(object, path);
  for (const DimExpr &d : b.dims)
    b.dimTexts.push_back(d.text());
  const std::string &kind = getString(object, "kind", path);
  if (kind == "input") {
    b.kind = BufferKind::Input;
    b.index = getIndex(object, "input", numInputs, path, "inputs");
  } else if (kind == "parameter") {
    b.kind = BufferKind::Parameter;
    b.index = getIndex(object, "parameter", numParams, path, "parameters");
  } else if (kind == "temp") {
    b.kind = BufferKind::Temp;
  } else if (kind == "view") {
    b.kind = BufferKind::View;
    b.index = getIndex(object, "view_of", numBuffers, path, "buffers");
    getViewLayout(object, b, path);
  } else if (kind == "state") {
    b.kind = BufferKind::State;
    b.index = getIndex(object, "state", numStates, path, "states");
    if (const Json *create = object.find("create")) {
      if (!create->isBool())
        invalid(path + ".create",
                cat("expected true or false, got ", Json::kindName(create->kind())));
      b.create = create->asBool();
    }
  } else {
    invalid(path + ".kind", cat("unknown kind \"", kind,
                                "\" (expected input, parameter, temp, view or state)"));
  }
  if (b.kind != BufferKind::View)
    for (const char *key : {"offset", "strides"})
      if (object.find(key))
        invalid(cat(path, ".", key), cat("only a view has \"", key, "\""));
  return b;
}

int64_t staticElementCount(const std::vector<DimExpr> &dims) {
  int64_t n = 1;
  for (const DimExpr &d : dims) {
    if (!d.isConstant())
      return -1;
    if (__builtin_mul_overflow(n, d.constantValue(), &n))
      return -1;
  }
  return n;
}

// Follows view_of links to the buffer that owns the memory, rejecting cycles, and finds
// the strides each view uses: its own, those of the strided view it views, or none.
void resolveViewRoots(EntryDesc &e, const std::string &path) {
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    size_t current = i;
    size_t hops = 0;
    while (e.buffers[current].kind == BufferKind::View) {
      current = size_t(e.buffers[current].index);
      if (++hops > e.buffers.size())
        invalid(cat(path, ".buffers[", i, "]"), "view_of forms a cycle");
    }
    e.buffers[i].root = int(current);
  }
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    BufferDesc &b = e.buffers[i];
    if (b.kind != BufferKind::View)
      continue;
    if (!b.strides.empty()) {
      b.strideSource = int(i);
      continue;
    }
    int inner = b.index;
    while (e.buffers[inner].kind == BufferKind::View && e.buffers[inner].strides.empty())
      inner = e.buffers[inner].index;
    if (e.buffers[inner].kind != BufferKind::View)
      continue; // dense in its own shape
    b.strideSource = inner;
    if (e.buffers[inner].dims.size() != b.dims.size())
      invalid(cat(path, ".buffers[", i, "]"),
              cat("view of rank ", b.dims.size(), " without strides views buffers[",
                  inner, "], a strided view of rank ", e.buffers[inner].dims.size(),
                  "; give it its own strides"));
  }
}

// The view's offset in its root's elements when every offset along the chain is static,
// else -1.
int64_t staticRootOffset(const EntryDesc &e, size_t b) {
  int64_t offset = 0;
  for (size_t i = b; e.buffers[i].kind == BufferKind::View;
       i = size_t(e.buffers[i].index)) {
    const DimExpr &o = e.buffers[i].offset;
    if (!o.isConstant() || __builtin_add_overflow(offset, o.constantValue(), &offset))
      return -1;
  }
  return offset;
}

// Checks a view fits in its root when everything about it is static.
void checkStaticViewFits(const EntryDesc &e, size_t i, const std::string &bpath) {
  const BufferDesc &b = e.buffers[i];
  int64_t offset = staticRootOffset(e, i);
  int64_t baseCount = staticElementCount(e.buffers[b.root].dims);
  if (offset < 0 || baseCount < 0)
    return;
  if (b.strideSource < 0) {
    int64_t viewCount = staticElementCount(b.dims);
    if (viewCount >= 0 && offset + viewCount > baseCount)
      invalid(bpath, cat("view has ", viewCount, " elements from offset ", offset,
                         " but buffers[", b.root, "] has ", baseCount));
    return;
  }
  std::vector<int64_t> extents, strides;
  for (size_t k = 0; k < b.dims.size(); ++k) {
    const DimExpr &stride = e.buffers[b.strideSource].strides[k];
    if (!b.dims[k].isConstant() || !stride.isConstant())
      return;
    extents.push_back(b.dims[k].constantValue());
    strides.push_back(stride.constantValue());
  }
  if (elementCount(extents) == 0)
    return; // no element at all
  int64_t last = lastElement(offset, extents, strides);
  if (last >= baseCount)
    invalid(bpath, cat("strided view ", b.describe(), " with strides ",
                       formatShape(strides), " from offset ", offset, " reaches element ",
                       last, " but buffers[", b.root, "] has ", baseCount));
}

void checkBufferConsistency(const EntryDesc &e, const std::vector<TensorDesc> &params,
                            const std::vector<StateDesc> &states,
                            const std::string &path) {
  std::vector<int> bufferOfState(states.size(), -1);
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    const BufferDesc &b = e.buffers[i];
    std::string bpath = cat(path, ".buffers[", i, "]");
    if (b.kind == BufferKind::Input) {
      const TensorDesc &in = e.inputs[b.index];
      if (b.dtype != in.dtype || b.dims.size() != in.dims.size())
        invalid(bpath, cat("buffer is ", kiln_dtype_name(b.dtype), " of rank ",
                           b.dims.size(), " but input '", in.name, "' is ",
                           kiln_dtype_name(in.dtype), " ", in.describe()));
    } else if (b.kind == BufferKind::Parameter) {
      const TensorDesc &p = params[b.index];
      bool same = b.dtype == p.dtype && b.dims.size() == p.dims.size();
      for (size_t d = 0; same && d < b.dims.size(); ++d)
        same = b.dims[d].isConstant() && b.dims[d].constantValue() == p.staticShape[d];
      if (!same)
        invalid(bpath, cat("buffer does not match parameter '", p.name, "' (",
                           kiln_dtype_name(p.dtype), " ", p.describe(), ")"));
    } else if (b.kind == BufferKind::View) {
      const BufferDesc &base = e.buffers[b.root];
      if (b.dtype != base.dtype)
        invalid(bpath, cat("view is ", kiln_dtype_name(b.dtype), " but buffers[", b.root,
                           "] it views is ", kiln_dtype_name(base.dtype)));
      checkStaticViewFits(e, i, bpath);
    } else if (b.kind == BufferKind::State) {
      const StateDesc &s = states[b.index];
      if (b.dtype != s.dtype || b.dims.size() != s.rank)
        invalid(bpath, cat("buffer is ", kiln_dtype_name(b.dtype), " of rank ",
                           b.dims.size(), " but state '", s.name, "' is ",
                           kiln_dtype_name(s.dtype), " of rank ", s.rank));
      if (bufferOfState[b.index] >= 0)
        invalid(bpath,
                cat("state '", s.name, "' already has buffers[", bufferOfState[b.index],
                    "] in this entry (an entry has at most one buffer per state)"));
      bufferOfState[b.index] = int(i);
    }
  }
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    int b = e.inputs[i].buffer;
    if (b >= 0 &&
        (e.buffers[b].kind != BufferKind::Input || e.buffers[b].index != int(i)))
      invalid(cat(path, ".inputs[", i, "].buffer"),
              cat("buffers[", b, "] is not the buffer of input ", i));
  }
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    const TensorDesc &out = e.outputs[i];
    const BufferDesc &b = e.buffers[out.buffer];
    if (b.dtype != out.dtype || b.dims.size() != out.dims.size())
      invalid(cat(path, ".outputs[", i, "]"),
              cat("output '", out.name, "' is ", kiln_dtype_name(out.dtype), " ",
                  out.describe(), " but buffers[", out.buffer, "] is ",
                  kiln_dtype_name(b.dtype), " of rank ", b.dims.size()));
    // A kiln_tensor is dense: a kernel must copy a strided view into a temp first.
    if (b.strideSource >= 0)
      invalid(cat(path, ".outputs[", i, "]"),
              cat("output '", out.name, "' is buffers[", out.buffer,
                  "], a strided view; outputs are dense (copy it into a temp)"));
  }
}

// Steps must only read memory that holds data: inputs, parameters, states, or what an
// earlier step wrote; and must never write the caller's inputs or the shared weights.
// Records the states the entry creates or writes.
void checkSteps(EntryDesc &e, const std::vector<std::string> &kernels,
                const std::string &path) {
  std::vector<bool> written(e.buffers.size(), false);
  auto noteState = [&](int state) {
    if (std::find(e.writtenStates.begin(), e.writtenStates.end(), state) ==
        e.writtenStates.end())
      e.writtenStates.push_back(state);
  };
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    BufferKind kind = e.buffers[i].kind;
    written[i] = kind == BufferKind::Input || kind == BufferKind::Parameter ||
                 kind == BufferKind::State;
    if (kind == BufferKind::State && e.buffers[i].create)
      noteState(e.buffers[i].index);
  }
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const StepDesc &step = e.steps[s];
    std::string spath = cat(path, ".steps[", s, "]");
    for (size_t a = 0; a + 1 < step.args.size(); ++a) {
      int root = e.buffers[step.args[a]].root;
      if (!written[root])
        invalid(cat(spath, ".args[", a, "]"),
                cat("kernel '", kernels[step.kernel], "' reads buffers[", step.args[a],
                    "] before any step writes it"));
    }
    int out = step.args.back();
    int root = e.buffers[out].root;
    BufferKind kind = e.buffers[root].kind;
    if (kind == BufferKind::Input || kind == BufferKind::Parameter)
      invalid(cat(spath, ".args[", step.args.size() - 1, "]"),
              cat("kernel '", kernels[step.kernel], "' writes buffers[", out,
                  "], which is ",
                  kind == BufferKind::Input ? "an input" : "a parameter"));
    written[root] = true;
    if (kind == BufferKind::State)
      noteState(e.buffers[root].index);
  }
  for (size_t i = 0; i < e.outputs.size(); ++i)
    if (!written[e.buffers[e.outputs[i].buffer].root])
      invalid(cat(path, ".outputs[", i, "]"),
              cat("output '", e.outputs[i].name, "' is never written by any step"));
}

// Assigns a slot to every name bound by an input's shape, a state buffer's shape (one
// without "create") or a value_dim input, and checks every other use is bound.
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
    resolveAll(in.dims, cat(path, ".inputs[", i, "]"));
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
    resolveAll(e.outputs[i].dims, cat(path, ".outputs[", i, "]"));
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    std::string where = cat(path, ".buffers[", i, "]");
    resolveAll(e.buffers[i].dims, where);
    resolve(e.buffers[i].offset, where + ".offset");
    for (size_t k = 0; k < e.buffers[i].strides.size(); ++k)
      resolve(e.buffers[i].strides[k], cat(where, ".strides[", k, "]"));
  }
}

// "value_dim": NAME on an input: a rank-0 integer whose value binds NAME.
void getValueDim(const Json &object, TensorDesc &t, const std::string &path) {
  const Json *v = object.find("value_dim");
  if (!v)
    return;
  std::string vpath = path + ".value_dim";
  if (!v->isString())
    invalid(vpath, cat("expected a dimension name, got ", Json::kindName(v->kind())));
  std::string error;
  auto expr = DimExpr::parse(v->asString(), error);
  if (!expr || !expr->bareName())
    invalid(vpath, cat("\"", v->asString(), "\" is not a dimension name"));
  if (t.dtype != KILN_DTYPE_I32 && t.dtype != KILN_DTYPE_I64)
    invalid(vpath, cat("input '", t.name, "' is ", kiln_dtype_name(t.dtype),
                       "; a value_dim input is i32 or i64"));
  if (!t.dims.empty())
    invalid(vpath, cat("input '", t.name, "' has shape ", t.describe(),
                       "; a value_dim input has rank 0 (one element)"));
  t.valueDim = *expr->bareName();
}

EntryDesc parseEntry(const Json &object, const std::string &path,
                     const std::vector<TensorDesc> &params,
                     const std::vector<StateDesc> &states,
                     const std::vector<std::string> &kernels) {
  EntryDesc e;
  e.name = getString(object, "name", path);
  if (e.name.empty())
    invalid(path + ".name", "empty name");
  std::string epath = cat(path, " ('", e.name, "')");

  const auto &buffers = getArray(object, "buffers", epath);
  const auto &inputs = getArray(object, "inputs", epath);
  const auto &outputs = getArray(object, "outputs", epath);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string ipath = cat(epath, ".inputs[", i, "]");
    e.inputs.push_back(getTensor(inputs[i], ipath));
    getBounds(inputs[i], e.inputs.back(), ipath);
    getValueDim(inputs[i], e.inputs.back(), ipath);
    // Optional: an input no kernel reads needs no buffer.
    if (const Json *b = inputs[i].find("buffer"))
      e.inputs.back().buffer =
          checkIndex(*b, buffers.size(), ipath + ".buffer", "buffers");
  }
  checkUnique(e.inputs, epath + ".inputs", "input");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string opath = cat(epath, ".outputs[", i, "]");
    e.outputs.push_back(getTensor(outputs[i], opath));
    rejectBounds(outputs[i], opath, "outputs");
    e.outputs.back().buffer =
        getIndex(outputs[i], "buffer", buffers.size(), opath, "buffers");
  }
  checkUnique(e.outputs, epath + ".outputs", "output");

  for (size_t i = 0; i < buffers.size(); ++i)
    e.buffers.push_back(getBuffer(buffers[i], cat(epath, ".buffers[", i, "]"),
                                  e.inputs.size(), params.size(), states.size(),
                                  buffers.size()));
  resolveViewRoots(e, epath);

  const auto &steps = getArray(object, "steps", epath);
  for (size_t s = 0; s < steps.size(); ++s) {
    std::string spath = cat(epath, ".steps[", s, "]");
    StepDesc step;
    step.kernel = getIndex(steps[s], "kernel", kernels.size(), spath, "kernels");
    const auto &args = getArray(steps[s], "args", spath);
    if (args.empty())
      invalid(spath + ".args", "a step needs at least its output buffer");
    for (size_t a = 0; a < args.size(); ++a)
      step.args.push_back(
          checkIndex(args[a], buffers.size(), cat(spath, ".args[", a, "]"), "buffers"));
    e.steps.push_back(std::move(step));
  }

  checkBufferConsistency(e, params, states, epath);
  checkSteps(e, kernels, epath);
  if (e.outputs.empty() && e.writtenStates.empty())
    invalid(epath + ".outputs",
            "an entry needs at least one output, unless it creates or writes a state");
  resolveDims(e, epath);
  return e;
}

// Records which entries create each state; a state some entry reads must have one.
void checkStatesCreated(Manifest &m) {
  for (size_t i = 0; i < m.entries.size(); ++i)
    for (const BufferDesc &b : m.entries[i].buffers)
      if (b.kind == BufferKind::State && b.create)
        m.states[b.index].creators.push_back(int(i));
  for (size_t i = 0; i < m.entries.size(); ++i)
    for (const BufferDesc &b : m.entries[i].buffers)
      if (b.kind == BufferKind::State && !b.create && m.states[b.index].creators.empty())
        invalid(cat("states[", b.index, "]"),
                cat("state '", m.states[b.index].name, "' is used by entry '",
                    m.entries[i].name,
                    "' but no entry creates it (a state buffer with "
                    "\"create\": true)"));
}

void finalizeInfo(TensorDesc &t) {
  t.dimPointers.clear();
  for (const std::string &text : t.dimTexts)
    t.dimPointers.push_back(text.c_str());
}

} // namespace

std::unique_ptr<Manifest> parseManifest(std::string_view json) {
  std::string error;
  auto root = parseJson(json, error);
  if (!root)
    fail(KILN_STATUS_INVALID_MODEL, "invalid manifest: not valid JSON (", error, ")");
  if (!root->isObject())
    invalid("manifest", cat("expected an object, got ", Json::kindName(root->kind())));

  auto m = std::make_unique<Manifest>();
  const Json &abi = member(*root, "abi_version", "manifest");
  if (!abi.isInteger())
    invalid("abi_version", "expected an integer");
  if (abi.asInt() != KILN_MODEL_ABI_VERSION)
    fail(KILN_STATUS_INCOMPATIBLE, "manifest abi_version is ", abi.asInt(),
         "; this runtime supports ", KILN_MODEL_ABI_VERSION);
  m->abiVersion = int(abi.asInt());
  m->model = getString(*root, "model", "manifest");
  if (root->find("target"))
    m->target = getString(*root, "target", "manifest");

  m->parameters = parseParameters(*root);
  const auto &kernels = getArray(*root, "kernels", "manifest");
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i].isString() || kernels[i].asString().empty())
      invalid(cat("kernels[", i, "]"), "expected a non-empty kernel name");
    if (std::find(m->kernels.begin(), m->kernels.end(), kernels[i].asString()) !=
        m->kernels.end())
      invalid(cat("kernels[", i, "]"),
              cat("duplicate kernel '", kernels[i].asString(), "'"));
    m->kernels.push_back(kernels[i].asString());
  }

  m->states = parseStates(*root);
  const auto &entries = getArray(*root, "entries", "manifest");
  if (entries.empty())
    invalid("entries", "the model declares no entry points");
  for (size_t i = 0; i < entries.size(); ++i) {
    m->entries.push_back(parseEntry(entries[i], cat("entries[", i, "]"), m->parameters,
                                    m->states, m->kernels));
    if (m->findEntry(m->entries.back().name) != int(i))
      invalid(cat("entries[", i, "]"),
              cat("duplicate entry name '", m->entries.back().name, "'"));
  }
  checkStatesCreated(*m);

  // Only now are the strings at their final addresses.
  for (TensorDesc &p : m->parameters)
    finalizeInfo(p);
  for (EntryDesc &e : m->entries) {
    for (TensorDesc &t : e.inputs)
      finalizeInfo(t);
    for (TensorDesc &t : e.outputs)
      finalizeInfo(t);
  }
  return m;
}

} // namespace kiln::rt
