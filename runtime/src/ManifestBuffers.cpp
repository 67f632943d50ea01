//===- ManifestBuffers.cpp - An entry's buffers, views and steps ----------===//
//
// What the runtime must be able to trust before a run: every view lies inside the
// memory it views (as far as static sizes tell; Session checks the rest once dimensions
// are bound), buffers agree with the inputs, parameters and states they hold, and steps
// never read memory nothing wrote, nor write the caller's inputs or the weights.
//
//===----------------------------------------------------------------------===//

#include "DType.h"
#include "ManifestEntry.h"
#include "ManifestJson.h"

#include <algorithm>
#include <climits>

namespace kiln::rt {

/// A view's "offset" (an integer or an expression) and "strides" (one per dimension).
static void getViewLayout(const Json &object, BufferDesc &b, const std::string &path) {
  if (const Json *offset = object.find(key::kOffset)) {
    b.offset = getDimItem(*offset, at(path, key::kOffset), true, "offset");
  }
  if (const Json *strides = object.find(key::kStrides)) {
    if (!strides->isArray())
      invalid(at(path, key::kStrides), cat("expected an array of element strides, got ",
                                           Json::kindName(strides->kind())));
    const auto &items = strides->items();
    if (items.size() != b.dims.size())
      invalid(at(path, key::kStrides),
              cat("view has rank ", b.dims.size(), " but ", items.size(), " stride",
                  items.size() == 1 ? "" : "s"));
    for (size_t k = 0; k < items.size(); ++k)
      b.strides.push_back(
          getDimItem(items[k], at(path, key::kStrides, k), true, "stride"));
  }
}

/// A temp's "live": [first, last], two step indices, first <= last (checkLiveRanges
/// checks them against the steps once they are parsed).
static void getLiveRange(const Json &object, BufferDesc &b, const std::string &path) {
  std::string lpath = at(path, key::kLive);
  const Json &live = member(object, key::kLive, path);
  if (!live.isArray() || live.items().size() != 2)
    invalid(lpath, "expected [first step, last step] (abi_version 2 gives every temp its "
                   "live range)");
  b.firstStep = checkIndex(live.items()[0], INT32_MAX, cat(lpath, "[0]"), "steps");
  b.lastStep = checkIndex(live.items()[1], INT32_MAX, cat(lpath, "[1]"), "steps");
  if (b.firstStep > b.lastStep)
    invalid(lpath, cat("first step ", b.firstStep, " is after last step ", b.lastStep));
}

/// The index key of each kind with one, how many things it may index, and what.
static std::pair<size_t, const char *> indexLimit(BufferKind kind,
                                                  const BufferIndexLimits &limits) {
  switch (kind) {
  case BufferKind::Input:
    return {limits.inputs, key::kInputs};
  case BufferKind::Parameter:
    return {limits.parameters, key::kParameters};
  case BufferKind::View:
    return {limits.buffers, key::kBuffers};
  case BufferKind::State:
    return {limits.states, key::kStates};
  case BufferKind::Temp:
    break;
  }
  return {0, nullptr};
}

BufferDesc getBuffer(const Json &object, const std::string &path,
                     const BufferIndexLimits &limits) {
  BufferDesc b;
  b.dtype = getDType(object, path);
  b.dims = getShape(object, path);
  for (const DimExpr &d : b.dims)
    b.dimTexts.push_back(d.text());
  b.kind = BufferKind(getOneOf(object, key::kKind, path, "kind", abi::kBufferKindNames));
  if (const char *indexKey = abi::bufferIndexKey(b.kind)) {
    auto [limit, what] = indexLimit(b.kind, limits);
    b.index = getIndex(object, indexKey, limit, path, what);
  }
  if (b.kind == BufferKind::View)
    getViewLayout(object, b, path);
  if (const Json *create = object.find(key::kCreate);
      create && b.kind == BufferKind::State) {
    if (!create->isBool())
      invalid(at(path, key::kCreate),
              cat("expected true or false, got ", Json::kindName(create->kind())));
    b.create = create->asBool();
  }
  if (b.kind != BufferKind::View)
    for (const char *viewKey : {key::kOffset, key::kStrides})
      if (object.find(viewKey))
        invalid(at(path, viewKey), cat("only a view has \"", viewKey, "\""));
  if (b.kind == BufferKind::Temp)
    getLiveRange(object, b, path);
  else if (object.find(key::kLive))
    invalid(at(path, key::kLive), "only a temp has a live range");
  return b;
}

static int64_t staticElementCount(const std::vector<DimExpr> &dims) {
  int64_t n = 1;
  for (const DimExpr &d : dims) {
    if (!d.isConstant())
      return -1;
    if (__builtin_mul_overflow(n, d.constantValue(), &n))
      return -1;
  }
  return n;
}

void resolveViewRoots(EntryDesc &e, const std::string &path) {
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    size_t current = i;
    size_t hops = 0;
    while (e.buffers[current].kind == BufferKind::View) {
      current = size_t(e.buffers[current].index);
      if (++hops > e.buffers.size())
        invalid(at(path, key::kBuffers, i), "view_of forms a cycle");
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
      invalid(at(path, key::kBuffers, i),
              cat("view of rank ", b.dims.size(), " without strides views buffers[",
                  inner, "], a strided view of rank ", e.buffers[inner].dims.size(),
                  "; give it its own strides"));
  }
}

/// The view's offset in its root's elements when every offset along the chain is static,
/// else -1.
static int64_t staticRootOffset(const EntryDesc &e, size_t b) {
  int64_t offset = 0;
  for (size_t i = b; e.buffers[i].kind == BufferKind::View;
       i = size_t(e.buffers[i].index)) {
    const DimExpr &o = e.buffers[i].offset;
    if (!o.isConstant() || __builtin_add_overflow(offset, o.constantValue(), &offset))
      return -1;
  }
  return offset;
}

/// Checks a view fits in its root when everything about it is static.
static void checkStaticViewFits(const EntryDesc &e, size_t i, const std::string &bpath) {
  const BufferDesc &b = e.buffers[i];
  int64_t offset = staticRootOffset(e, i);
  int64_t baseCount = staticElementCount(e.buffers[b.root].dims);
  if (offset < 0 || baseCount < 0)
    return;
  if (b.strideSource < 0) {
    int64_t viewCount = staticElementCount(b.dims);
    if (viewCount >= 0 &&
        offset > baseCount - viewCount) // both non-negative: no overflow
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
    std::string bpath = at(path, key::kBuffers, i);
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
      invalid(at(at(path, key::kInputs, i), key::kBuffer),
              cat("buffers[", b, "] is not the buffer of input ", i));
  }
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    const TensorDesc &out = e.outputs[i];
    const BufferDesc &b = e.buffers[out.buffer];
    if (b.dtype != out.dtype || b.dims.size() != out.dims.size())
      invalid(at(path, key::kOutputs, i),
              cat("output '", out.name, "' is ", kiln_dtype_name(out.dtype), " ",
                  out.describe(), " but buffers[", out.buffer, "] is ",
                  kiln_dtype_name(b.dtype), " of rank ", b.dims.size()));
    // A kiln_tensor is dense: a kernel must copy a strided view into a temp first.
    if (b.strideSource >= 0)
      invalid(at(path, key::kOutputs, i),
              cat("output '", out.name, "' is buffers[", out.buffer,
                  "], a strided view; outputs are dense (copy it into a temp)"));
  }
}

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
    std::string spath = at(path, key::kSteps, s);
    size_t firstOut = firstOutput(step);
    for (size_t a = 0; a < firstOut; ++a) {
      int root = e.buffers[step.args[a]].root;
      if (!written[root])
        invalid(at(spath, key::kArgs, a),
                cat("kernel '", kernels[step.kernel], "' reads buffers[", step.args[a],
                    "] before any step writes it"));
    }
    for (size_t a = firstOut; a < step.args.size(); ++a) {
      int out = step.args[a];
      int root = e.buffers[out].root;
      BufferKind kind = e.buffers[root].kind;
      // Two outputs in one memory: which write lands would be the schedule's accident.
      for (size_t b = firstOut; b < a; ++b)
        if (e.buffers[step.args[b]].root == root)
          invalid(at(spath, key::kArgs, a),
                  cat("kernel '", kernels[step.kernel], "' writes buffers[", out,
                      "] and buffers[", step.args[b], "], which share buffers[", root,
                      "]'s memory"));
      if (kind == BufferKind::Input || kind == BufferKind::Parameter)
        invalid(at(spath, key::kArgs, a),
                cat("kernel '", kernels[step.kernel], "' writes buffers[", out,
                    "], which is ",
                    kind == BufferKind::Input ? "an input" : "a parameter"));
      written[root] = true;
      if (kind == BufferKind::State)
        noteState(e.buffers[root].index);
    }
  }
  for (size_t i = 0; i < e.outputs.size(); ++i)
    if (!written[e.buffers[e.outputs[i].buffer].root])
      invalid(at(path, key::kOutputs, i),
              cat("output '", e.outputs[i].name, "' is never written by any step"));
}

void checkLiveRanges(const EntryDesc &e, const std::string &path) {
  for (size_t i = 0; i < e.buffers.size(); ++i)
    if (e.buffers[i].kind == BufferKind::Temp &&
        size_t(e.buffers[i].lastStep) >= e.steps.size())
      invalid(at(at(path, key::kBuffers, i), key::kLive),
              cat("live range [", e.buffers[i].firstStep, ", ", e.buffers[i].lastStep,
                  "] ends past the last step (the entry has ", e.steps.size(),
                  " steps)"));
  auto check = [&](int buffer, size_t step, const std::string &where) {
    int root = e.buffers[buffer].root;
    const BufferDesc &r = e.buffers[root];
    if (r.kind == BufferKind::Temp && (int(step) < r.firstStep || int(step) > r.lastStep))
      invalid(at(at(path, key::kBuffers, root), key::kLive),
              cat("live range [", r.firstStep, ", ", r.lastStep, "] does not cover ",
                  where, ", which uses buffers[", buffer, "]"));
  };
  for (size_t s = 0; s < e.steps.size(); ++s)
    for (int arg : e.steps[s].args)
      check(arg, s, cat("steps[", s, "]"));
  // checkSteps has made sure a step writes every output, so there is a last step.
  for (size_t i = 0; i < e.outputs.size() && !e.steps.empty(); ++i)
    check(e.outputs[i].buffer, e.steps.size() - 1,
          cat("the last step (steps[", e.steps.size() - 1, "]) for output '",
              e.outputs[i].name, "'"));
}

} // namespace kiln::rt
