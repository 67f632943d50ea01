//===- Manifest.cpp - Parsing the manifest --------------------------------===//
//
// Parses the manifest JSON into the descriptions of Manifest.h, model-wide parts first
// and then each entry point, whose buffers, steps and dimension names ManifestEntry.h
// checks. Every index, dtype, shape and name is checked, so that a run can trust the
// manifest and a compiler bug surfaces as a message, not a crash.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"

#include "DType.h"
#include "ManifestEntry.h"
#include "ManifestJson.h"

#include <algorithm>

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

// "states": [{name, dtype, rank}], model-wide.
std::vector<StateDesc> parseStates(const Json &root) {
  std::vector<StateDesc> states;
  if (!root.find(key::kStates))
    return states;
  const auto &items = getArray(root, key::kStates, "manifest");
  for (size_t i = 0; i < items.size(); ++i) {
    std::string path = cat(key::kStates, "[", i, "]");
    StateDesc s;
    s.name = getString(items[i], key::kName, path);
    if (s.name.empty())
      invalid(at(path, key::kName), "empty name");
    s.dtype = getDType(items[i], path);
    if (s.dtype != KILN_DTYPE_F32)
      invalid(at(path, key::kDType), cat("state '", s.name, "' is ",
                                         kiln_dtype_name(s.dtype), "; states are f32"));
    const Json &rank = member(items[i], key::kRank, path);
    if (!rank.isInteger() || rank.asInt() < 1)
      invalid(at(path, key::kRank),
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

// A step's optional "loc" and "locs" (strings): where in the model it came from.
void getSourceLines(const Json &object, StepDesc &step, const std::string &path) {
  if (object.find(key::kLoc))
    step.loc = getString(object, key::kLoc, path);
  if (!object.find(key::kLocs))
    return;
  const auto &locs = getArray(object, key::kLocs, path);
  for (size_t i = 0; i < locs.size(); ++i) {
    if (!locs[i].isString())
      invalid(at(path, key::kLocs, i), "expected a string (\"file:line\")");
    step.locs.push_back(locs[i].asString());
  }
}

EntryDesc parseEntry(const Json &object, const std::string &path,
                     const std::vector<TensorDesc> &params,
                     const std::vector<StateDesc> &states,
                     const std::vector<std::string> &kernels) {
  EntryDesc e;
  e.name = getString(object, key::kName, path);
  if (e.name.empty())
    invalid(at(path, key::kName), "empty name");
  std::string epath = cat(path, " ('", e.name, "')");

  const auto &buffers = getArray(object, key::kBuffers, epath);
  const auto &inputs = getArray(object, key::kInputs, epath);
  const auto &outputs = getArray(object, key::kOutputs, epath);
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string ipath = at(epath, key::kInputs, i);
    e.inputs.push_back(getTensor(inputs[i], ipath));
    rejectWeightDType(e.inputs.back(), ipath, "input");
    getBounds(inputs[i], e.inputs.back(), ipath);
    getValueDim(inputs[i], e.inputs.back(), ipath);
    // Optional: an input no kernel reads needs no buffer.
    if (const Json *b = inputs[i].find(key::kBuffer))
      e.inputs.back().buffer =
          checkIndex(*b, buffers.size(), at(ipath, key::kBuffer), "buffers");
  }
  checkUnique(e.inputs, at(epath, key::kInputs), "input");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string opath = at(epath, key::kOutputs, i);
    e.outputs.push_back(getTensor(outputs[i], opath));
    rejectWeightDType(e.outputs.back(), opath, "output");
    rejectBounds(outputs[i], opath, "outputs");
    e.outputs.back().buffer =
        getIndex(outputs[i], key::kBuffer, buffers.size(), opath, "buffers");
  }
  checkUnique(e.outputs, at(epath, key::kOutputs), "output");

  BufferIndexLimits limits{e.inputs.size(), params.size(), states.size(), buffers.size()};
  for (size_t i = 0; i < buffers.size(); ++i)
    e.buffers.push_back(getBuffer(buffers[i], at(epath, key::kBuffers, i), limits));
  resolveViewRoots(e, epath);

  const auto &steps = getArray(object, key::kSteps, epath);
  for (size_t s = 0; s < steps.size(); ++s) {
    std::string spath = at(epath, key::kSteps, s);
    StepDesc step;
    step.kernel = getIndex(steps[s], key::kKernel, kernels.size(), spath, "kernels");
    const auto &args = getArray(steps[s], key::kArgs, spath);
    if (args.empty())
      invalid(at(spath, key::kArgs), "a step needs at least its output buffer");
    for (size_t a = 0; a < args.size(); ++a)
      step.args.push_back(
          checkIndex(args[a], buffers.size(), at(spath, key::kArgs, a), "buffers"));
    if (steps[s].find(key::kOutputs)) {
      const Json &count = member(steps[s], key::kOutputs, spath);
      if (!count.isInteger() || count.asInt() < 1 ||
          count.asInt() > static_cast<int64_t>(args.size()))
        invalid(at(spath, key::kOutputs),
                cat("expected how many of the step's ", args.size(),
                    " args it writes: an integer from 1 to ", args.size()));
      step.outputs = static_cast<size_t>(count.asInt());
    }
    getSourceLines(steps[s], step, spath);
    e.steps.push_back(std::move(step));
  }

  checkBufferConsistency(e, params, states, epath);
  checkSteps(e, kernels, epath);
  if (e.outputs.empty() && e.writtenStates.empty())
    invalid(at(epath, key::kOutputs),
            "an entry needs at least one output, unless it creates or writes a state");
  checkLiveRanges(e, epath);
  resolveDims(e, epath);
  getDimMax(e, object, epath);
  getTrim(e, object, epath);
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
  const Json &abi = member(*root, key::kAbiVersion, "manifest");
  if (!abi.isInteger())
    invalid(key::kAbiVersion, "expected an integer");
  if (!abi::isSupportedAbiVersion(abi.asInt()))
    fail(KILN_STATUS_INCOMPATIBLE, "manifest ", key::kAbiVersion, " is ", abi.asInt(),
         "; this runtime supports ", abi::kMinModelAbiVersion, " to ",
         abi::kModelAbiVersion);
  m->abiVersion = int(abi.asInt());
  m->model = getString(*root, key::kModel, "manifest");
  if (root->find(key::kTarget))
    m->target = getString(*root, key::kTarget, "manifest");
  if (root->find(key::kWeights))
    m->weights = abi::kWeightPrecisions[getOneOf(
        *root, key::kWeights, "manifest", "weight precision", abi::kWeightPrecisions)];

  m->parameters = parseParameters(*root);
  for (size_t i = 0; i < m->parameters.size(); ++i) {
    const TensorDesc &p = m->parameters[i];
    if (p.source && p.source->conversion == Conversion::Panels &&
        m->abiVersion < abi::kPanelsAbiVersion)
      invalid(cat(key::kParameters, "[", i, "]"),
              cat("parameter '", p.name, "' has conversion \"panels\", which needs ",
                  key::kAbiVersion, " ", abi::kPanelsAbiVersion, "; the manifest has ",
                  m->abiVersion));
  }
  const auto &kernels = getArray(*root, key::kKernels, "manifest");
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!kernels[i].isString() || kernels[i].asString().empty())
      invalid(cat(key::kKernels, "[", i, "]"), "expected a non-empty kernel name");
    if (std::find(m->kernels.begin(), m->kernels.end(), kernels[i].asString()) !=
        m->kernels.end())
      invalid(cat(key::kKernels, "[", i, "]"),
              cat("duplicate kernel '", kernels[i].asString(), "'"));
    m->kernels.push_back(kernels[i].asString());
  }

  m->states = parseStates(*root);
  const auto &entries = getArray(*root, key::kEntries, "manifest");
  if (entries.empty())
    invalid(key::kEntries, "the model declares no entry points");
  for (size_t i = 0; i < entries.size(); ++i) {
    m->entries.push_back(parseEntry(entries[i], cat(key::kEntries, "[", i, "]"),
                                    m->parameters, m->states, m->kernels));
    if (m->findEntry(m->entries.back().name) != int(i))
      invalid(cat(key::kEntries, "[", i, "]"),
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
