// Manifest.cpp - parses the manifest JSON and checks every index, dtype, shape and name in
// it, so that a run can trust it and a compiler bug surfaces as a message, not a crash.
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

int Manifest::findEntry(std::string_view name) const {
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == name)
      return int(i);
  return -1;
}

std::string Manifest::entryNames() const {
  return join(entries, [](const EntryDesc& e) { return e.name; });
}

namespace {

[[noreturn]] void invalid(const std::string& path, const std::string& problem) {
  fail(KILN_STATUS_INVALID_MODEL, "invalid manifest: ", path, ": ", problem);
}

const Json& member(const Json& object, const char* key, const std::string& path) {
  if (!object.isObject())
    invalid(path, cat("expected an object, got ", Json::kindName(object.kind())));
  const Json* value = object.find(key);
  if (!value)
    invalid(path, cat("missing \"", key, "\""));
  return *value;
}

const std::string& getString(const Json& object, const char* key, const std::string& path) {
  const Json& value = member(object, key, path);
  if (!value.isString())
    invalid(path + "." + key, cat("expected a string, got ", Json::kindName(value.kind())));
  return value.asString();
}

const std::vector<Json>& getArray(const Json& object, const char* key,
                                  const std::string& path) {
  const Json& value = member(object, key, path);
  if (!value.isArray())
    invalid(path + "." + key, cat("expected an array, got ", Json::kindName(value.kind())));
  return value.items();
}

int checkIndex(const Json& value, size_t limit, const std::string& path, const char* what) {
  if (!value.isInteger())
    invalid(path, cat("expected an integer index, got ", Json::kindName(value.kind())));
  if (value.asInt() < 0 || uint64_t(value.asInt()) >= limit)
    invalid(path, cat("index ", value.asInt(), " out of range (", limit, " ", what, ")"));
  return int(value.asInt());
}

int getIndex(const Json& object, const char* key, size_t limit, const std::string& path,
             const char* what) {
  return checkIndex(member(object, key, path), limit, path + "." + key, what);
}

kiln_dtype getDType(const Json& object, const std::string& path) {
  const std::string& name = getString(object, "dtype", path);
  auto dtype = parseManifestDType(name);
  if (!dtype)
    invalid(path + ".dtype", cat("unknown dtype \"", name, "\" (expected f32, i32 or i64)"));
  return *dtype;
}

// A shape item or a bound: an integer, or a string holding a dimension expression.
// Sizes must not be negative; bounds may be.
DimExpr getDimItem(const Json& item, const std::string& itemPath, bool isSize) {
  if (item.isInteger()) {
    if (isSize && item.asInt() < 0)
      invalid(itemPath, cat("negative size ", item.asInt()));
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

std::vector<DimExpr> getShape(const Json& object, const std::string& path) {
  std::vector<DimExpr> dims;
  const auto& items = getArray(object, "shape", path);
  for (size_t i = 0; i < items.size(); ++i)
    dims.push_back(getDimItem(items[i], cat(path, ".shape[", i, "]"), true));
  return dims;
}

// "bounds": [LO, HI] of an input: inclusive, integer inputs only. Names in them are
// resolved with the entry's other dimensions (resolveDims).
void getBounds(const Json& object, TensorDesc& t, const std::string& path) {
  const Json* bounds = object.find("bounds");
  if (!bounds)
    return;
  std::string bpath = path + ".bounds";
  if (t.dtype != KILN_DTYPE_I32 && t.dtype != KILN_DTYPE_I64)
    invalid(bpath, cat("input '", t.name, "' is ", kiln_dtype_name(t.dtype),
                       "; bounds are only allowed on i32 and i64 inputs"));
  if (!bounds->isArray())
    invalid(bpath, cat("expected [LO, HI] (integers or dimension expressions), got ",
                       Json::kindName(bounds->kind())));
  const auto& items = bounds->items();
  if (items.size() != 2)
    invalid(bpath, cat("expected [LO, HI] (integers or dimension expressions), got ",
                       items.size(), " item", items.size() == 1 ? "" : "s"));
  TensorDesc::ValueBounds b{getDimItem(items[0], bpath + "[0]", false),
                            getDimItem(items[1], bpath + "[1]", false)};
  if (b.min.isConstant() && b.max.isConstant() && b.min.constantValue() > b.max.constantValue())
    invalid(bpath, cat("bounds [", b.min.text(), ", ", b.max.text(), "] of input '", t.name,
                       "' admit no value"));
  t.bounds = std::move(b);
}

// Bounds are for inputs: the runtime checks nothing else against them.
void rejectBounds(const Json& object, const std::string& path, const char* what) {
  if (object.isObject() && object.find("bounds"))
    invalid(path + ".bounds", cat("only entry inputs may declare bounds, not ", what));
}

TensorDesc getTensor(const Json& object, const std::string& path) {
  TensorDesc t;
  t.name = getString(object, "name", path);
  if (t.name.empty())
    invalid(path + ".name", "empty name");
  t.dtype = getDType(object, path);
  t.dims = getShape(object, path);
  for (const DimExpr& d : t.dims) {
    t.dimTexts.push_back(d.text());
    t.staticShape.push_back(d.isConstant() ? d.constantValue() : -1);
  }
  return t;
}

void checkUnique(const std::vector<TensorDesc>& tensors, const std::string& path,
                 const char* what) {
  std::set<std::string> seen;
  for (size_t i = 0; i < tensors.size(); ++i)
    if (!seen.insert(tensors[i].name).second)
      invalid(cat(path, "[", i, "]"), cat("duplicate ", what, " name '", tensors[i].name, "'"));
}

std::vector<TensorDesc> parseParameters(const Json& root) {
  std::vector<TensorDesc> params;
  if (!root.find("parameters"))
    return params;
  const auto& items = getArray(root, "parameters", "manifest");
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

BufferDesc getBuffer(const Json& object, const std::string& path, size_t numInputs,
                     size_t numParams, size_t numBuffers) {
  BufferDesc b;
  b.dtype = getDType(object, path);
  b.dims = getShape(object, path);
  const std::string& kind = getString(object, "kind", path);
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
    if (const Json* offset = object.find("offset")) {
      if (!offset->isInteger() || offset->asInt() < 0)
        invalid(path + ".offset", "expected a non-negative integer element offset");
      b.offset = offset->asInt();
    }
  } else {
    invalid(path + ".kind",
            cat("unknown kind \"", kind, "\" (expected input, parameter, temp or view)"));
  }
  return b;
}

int64_t staticElementCount(const std::vector<DimExpr>& dims) {
  int64_t n = 1;
  for (const DimExpr& d : dims) {
    if (!d.isConstant())
      return -1;
    if (__builtin_mul_overflow(n, d.constantValue(), &n))
      return -1;
  }
  return n;
}

// Follows view_of links to the buffer that owns the memory, rejecting cycles.
void resolveViewRoots(EntryDesc& e, const std::string& path) {
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    size_t current = i;
    size_t hops = 0;
    int64_t offset = 0;
    while (e.buffers[current].kind == BufferKind::View) {
      offset += e.buffers[current].offset;
      current = size_t(e.buffers[current].index);
      if (++hops > e.buffers.size())
        invalid(cat(path, ".buffers[", i, "]"), "view_of forms a cycle");
    }
    e.buffers[i].root = int(current);
    e.buffers[i].rootOffset = offset;
  }
}

void checkBufferConsistency(const EntryDesc& e, const std::vector<TensorDesc>& params,
                            const std::string& path) {
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    const BufferDesc& b = e.buffers[i];
    std::string bpath = cat(path, ".buffers[", i, "]");
    if (b.kind == BufferKind::Input) {
      const TensorDesc& in = e.inputs[b.index];
      if (b.dtype != in.dtype || b.dims.size() != in.dims.size())
        invalid(bpath, cat("buffer is ", kiln_dtype_name(b.dtype), " of rank ", b.dims.size(),
                           " but input '", in.name, "' is ", kiln_dtype_name(in.dtype),
                           " ", in.describe()));
    } else if (b.kind == BufferKind::Parameter) {
      const TensorDesc& p = params[b.index];
      bool same = b.dtype == p.dtype && b.dims.size() == p.dims.size();
      for (size_t d = 0; same && d < b.dims.size(); ++d)
        same = b.dims[d].isConstant() && b.dims[d].constantValue() == p.staticShape[d];
      if (!same)
        invalid(bpath, cat("buffer does not match parameter '", p.name, "' (",
                           kiln_dtype_name(p.dtype), " ", p.describe(), ")"));
    } else if (b.kind == BufferKind::View) {
      const BufferDesc& base = e.buffers[b.root];
      if (b.dtype != base.dtype)
        invalid(bpath, cat("view is ", kiln_dtype_name(b.dtype), " but buffers[", b.root,
                           "] it views is ", kiln_dtype_name(base.dtype)));
      int64_t viewCount = staticElementCount(b.dims);
      int64_t baseCount = staticElementCount(base.dims);
      if (viewCount >= 0 && baseCount >= 0 && b.rootOffset + viewCount > baseCount)
        invalid(bpath, cat("view has ", viewCount, " elements from offset ", b.rootOffset,
                           " but buffers[", b.root, "] has ", baseCount));
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
    const TensorDesc& out = e.outputs[i];
    const BufferDesc& b = e.buffers[out.buffer];
    if (b.dtype != out.dtype || b.dims.size() != out.dims.size())
      invalid(cat(path, ".outputs[", i, "]"),
              cat("output '", out.name, "' is ", kiln_dtype_name(out.dtype), " ",
                  out.describe(), " but buffers[", out.buffer, "] is ",
                  kiln_dtype_name(b.dtype), " of rank ", b.dims.size()));
  }
}

// Steps must only read memory that holds data: inputs, parameters, or what an earlier step
// wrote; and must never write the caller's inputs or the shared weights.
void checkSteps(const EntryDesc& e, const std::vector<std::string>& kernels,
                const std::string& path) {
  std::vector<bool> written(e.buffers.size(), false);
  for (size_t i = 0; i < e.buffers.size(); ++i)
    written[i] = e.buffers[i].kind == BufferKind::Input ||
                 e.buffers[i].kind == BufferKind::Parameter;
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const StepDesc& step = e.steps[s];
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
              cat("kernel '", kernels[step.kernel], "' writes buffers[", out, "], which is ",
                  kind == BufferKind::Input ? "an input" : "a parameter"));
    written[root] = true;
  }
  for (size_t i = 0; i < e.outputs.size(); ++i)
    if (!written[e.buffers[e.outputs[i].buffer].root])
      invalid(cat(path, ".outputs[", i, "]"),
              cat("output '", e.outputs[i].name, "' is never written by any step"));
}

// Assigns a slot to every name bound by an input, and checks every other use is bound.
void resolveDims(EntryDesc& e, const std::string& path) {
  for (TensorDesc& in : e.inputs) {
    in.bindSlot.assign(in.dims.size(), -1);
    for (size_t d = 0; d < in.dims.size(); ++d) {
      const std::string* name = in.dims[d].bareName();
      if (!name)
        continue;
      auto it = std::find(e.dimNames.begin(), e.dimNames.end(), *name);
      in.bindSlot[d] = int(it - e.dimNames.begin());
      if (it == e.dimNames.end())
        e.dimNames.push_back(*name);
    }
  }
  auto resolve = [&](DimExpr& d, const std::string& where) {
    d.resolve([&](const std::string& name) {
      auto it = std::find(e.dimNames.begin(), e.dimNames.end(), name);
      if (it == e.dimNames.end())
        invalid(where, cat("dimension '", name, "' in \"", d.text(),
                           "\" is not bound by any input (no input has a shape item that "
                           "is exactly '", name, "')"));
      return int(it - e.dimNames.begin());
    });
  };
  auto resolveAll = [&](std::vector<DimExpr>& dims, const std::string& where) {
    for (DimExpr& d : dims)
      resolve(d, where);
  };
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    resolveAll(e.inputs[i].dims, cat(path, ".inputs[", i, "]"));
    if (auto& b = e.inputs[i].bounds) {
      resolve(b->min, cat(path, ".inputs[", i, "].bounds[0]"));
      resolve(b->max, cat(path, ".inputs[", i, "].bounds[1]"));
    }
  }
  for (size_t i = 0; i < e.outputs.size(); ++i)
    resolveAll(e.outputs[i].dims, cat(path, ".outputs[", i, "]"));
  for (size_t i = 0; i < e.buffers.size(); ++i)
    resolveAll(e.buffers[i].dims, cat(path, ".buffers[", i, "]"));
}

EntryDesc parseEntry(const Json& object, const std::string& path,
                     const std::vector<TensorDesc>& params,
                     const std::vector<std::string>& kernels) {
  EntryDesc e;
  e.name = getString(object, "name", path);
  if (e.name.empty())
    invalid(path + ".name", "empty name");
  std::string epath = cat(path, " ('", e.name, "')");

  const auto& buffers = getArray(object, "buffers", epath);
  const auto& inputs = getArray(object, "inputs", epath);
  const auto& outputs = getArray(object, "outputs", epath);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string ipath = cat(epath, ".inputs[", i, "]");
    e.inputs.push_back(getTensor(inputs[i], ipath));
    getBounds(inputs[i], e.inputs.back(), ipath);
    // Optional: an input no kernel reads needs no buffer.
    if (const Json* b = inputs[i].find("buffer"))
      e.inputs.back().buffer = checkIndex(*b, buffers.size(), ipath + ".buffer", "buffers");
  }
  checkUnique(e.inputs, epath + ".inputs", "input");
  if (outputs.empty())
    invalid(epath + ".outputs", "an entry needs at least one output");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string opath = cat(epath, ".outputs[", i, "]");
    e.outputs.push_back(getTensor(outputs[i], opath));
    rejectBounds(outputs[i], opath, "outputs");
    e.outputs.back().buffer = getIndex(outputs[i], "buffer", buffers.size(), opath, "buffers");
  }
  checkUnique(e.outputs, epath + ".outputs", "output");

  for (size_t i = 0; i < buffers.size(); ++i)
    e.buffers.push_back(getBuffer(buffers[i], cat(epath, ".buffers[", i, "]"),
                                  e.inputs.size(), params.size(), buffers.size()));
  resolveViewRoots(e, epath);

  const auto& steps = getArray(object, "steps", epath);
  for (size_t s = 0; s < steps.size(); ++s) {
    std::string spath = cat(epath, ".steps[", s, "]");
    StepDesc step;
    step.kernel = getIndex(steps[s], "kernel", kernels.size(), spath, "kernels");
    const auto& args = getArray(steps[s], "args", spath);
    if (args.empty())
      invalid(spath + ".args", "a step needs at least its output buffer");
    for (size_t a = 0; a < args.size(); ++a)
      step.args.push_back(
          checkIndex(args[a], buffers.size(), cat(spath, ".args[", a, "]"), "buffers"));
    e.steps.push_back(std::move(step));
  }

  checkBufferConsistency(e, params, epath);
  checkSteps(e, kernels, epath);
  resolveDims(e, epath);
  return e;
}

void finalizeInfo(TensorDesc& t) {
  t.dimPointers.clear();
  for (const std::string& text : t.dimTexts)
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
  const Json& abi = member(*root, "abi_version", "manifest");
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
  const auto& kernels = getArray(*root, "kernels", "manifest");
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i].isString() || kernels[i].asString().empty())
      invalid(cat("kernels[", i, "]"), "expected a non-empty kernel name");
    if (std::find(m->kernels.begin(), m->kernels.end(), kernels[i].asString()) !=
        m->kernels.end())
      invalid(cat("kernels[", i, "]"), cat("duplicate kernel '", kernels[i].asString(), "'"));
    m->kernels.push_back(kernels[i].asString());
  }

  const auto& entries = getArray(*root, "entries", "manifest");
  if (entries.empty())
    invalid("entries", "the model declares no entry points");
  for (size_t i = 0; i < entries.size(); ++i) {
    m->entries.push_back(parseEntry(entries[i], cat("entries[", i, "]"), m->parameters,
                                    m->kernels));
    if (m->findEntry(m->entries.back().name) != int(i))
      invalid(cat("entries[", i, "]"),
              cat("duplicate entry name '", m->entries.back().name, "'"));
  }

  // Only now are the strings at their final addresses.
  for (TensorDesc& p : m->parameters)
    finalizeInfo(p);
  for (EntryDesc& e : m->entries) {
    for (TensorDesc& t : e.inputs)
      finalizeInfo(t);
    for (TensorDesc& t : e.outputs)
      finalizeInfo(t);
  }
  return m;
}

} // namespace kiln::rt
