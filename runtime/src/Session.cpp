// Session.cpp - one run: bind dims, size and place buffers, call the kernels in order.
#include "Session.h"

#include "DType.h"
#include "Error.h"
#include "HalideErrors.h"
#include "Inputs.h"

#include <algorithm>
#include <climits>

namespace kiln::rt {

namespace {

// Halide's thread pool holds at most this many threads (MAX_THREADS in its runtime).
constexpr int32_t kMaxThreads = 256;

// Halide treats a buffer with a null host pointer as a bounds query and computes nothing,
// so empty tensors get this instead.
alignas(kTempAlignment) uint8_t emptyStorage[kTempAlignment];

std::string bufferLabel(const EntryDesc &e, size_t b) {
  return cat("buffers[", b, "] (", abi::bufferKindName(e.buffers[b].kind), ")");
}

// Evaluates a size, stride or offset of the entry; it must not be negative. where() names
// it in a message, and is only called on failure.
template <typename Where>
int64_t evaluateSize(const EntryDesc &e, const std::vector<int64_t> &values,
                     const DimExpr &expr, Where &&where) {
  int64_t v;
  std::string error;
  if (!expr.evaluate(values.data(), v, error))
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", where(), ": ", error,
         " (with ", formatBindings(e, values), ")");
  if (v < 0)
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", where(), ": '",
         expr.text(), "' is ", v, " with ", formatBindings(e, values));
  return v;
}

// What binds dimension slot `slot` of `e`, for messages: "input 'ids' dim 1", "state
// 'k' dim 2" or "input 'position' (its value)".
std::string dimBinder(const EntryDesc &e, const Manifest &m, int slot) {
  for (const TensorDesc &in : e.inputs) {
    auto d = std::find(in.bindSlot.begin(), in.bindSlot.end(), slot);
    if (d != in.bindSlot.end())
      return cat("input '", in.name, "' dim ", d - in.bindSlot.begin());
  }
  for (const BufferDesc &b : e.buffers) {
    auto d = std::find(b.bindSlot.begin(), b.bindSlot.end(), slot);
    if (b.kind == BufferKind::State && !b.create && d != b.bindSlot.end())
      return cat("state '", m.states[size_t(b.index)].name, "' dim ",
                 d - b.bindSlot.begin());
  }
  for (const TensorDesc &in : e.inputs)
    if (in.valueDimSlot == slot)
      return cat("input '", in.name, "' (its value)");
  return "a dimension";
}

// Every bound dimension against its "dim_max": "entry 'decode': input 'ids' dim 1 (T) is
// 40, above its bound 32".
void checkDimMax(const EntryDesc &e, const Manifest &m,
                 const std::vector<int64_t> &values) {
  for (size_t slot = 0; slot < e.dimMax.size(); ++slot)
    if (e.dimMax[slot] > 0 && values[slot] > e.dimMax[slot])
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name,
           "': ", dimBinder(e, m, int(slot)), " (", e.dimNames[slot], ") is ",
           values[slot], ", above its bound ", e.dimMax[slot]);
}

// The dimension slots `expr` reads, as bits; every bit for a slot past 63.
uint64_t slotsOf(const DimExpr &expr) {
  uint64_t slots = 0;
  for (size_t i = 0; i < expr.names().size(); ++i) {
    int slot = expr.slotOfName(i);
    slots |= slot >= 0 && slot < 64 ? uint64_t(1) << slot : ~uint64_t(0);
  }
  return slots;
}

// Per buffer, the dimension slots its evaluated shape, strides, offset and view check
// read: its own shape, the strides it uses, the offsets along its chain of views and its
// root's shape.
std::vector<uint64_t> slotsReadByBuffer(const EntryDesc &e) {
  std::vector<uint64_t> read(e.buffers.size(), 0);
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    const BufferDesc &buf = e.buffers[b];
    for (size_t v : {b, size_t(buf.root)})
      for (const DimExpr &d : e.buffers[v].dims)
        read[b] |= slotsOf(d);
    if (buf.strideSource >= 0)
      for (const DimExpr &d : e.buffers[buf.strideSource].strides)
        read[b] |= slotsOf(d);
    for (size_t v = b; e.buffers[v].kind == BufferKind::View;
         v = size_t(e.buffers[v].index))
      read[b] |= slotsOf(e.buffers[v].offset);
  }
  return read;
}

} // namespace

// The dimension slots whose values differ from those the entry's buffers were last
// planned for, as bits: every bit when nothing (or a failed plan) came before.
uint64_t Session::changedSlots(const EntryState &st) {
  if (!st.planned)
    return kAllSlots;
  uint64_t changed = 0;
  for (size_t i = 0; i < st.dimValues.size(); ++i)
    if (st.dimValues[i] != st.plannedDims[i])
      changed |= i < 64 ? uint64_t(1) << i : kAllSlots;
  return changed;
}

Session::Session(const Model *model, const Weights *weights,
                 const kiln_session_options &options)
    : model_(model), weights_(weights), options_(options), states_(model->manifest()) {
  if (options_.num_threads < 0 || options_.num_threads > kMaxThreads)
    fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_options.num_threads is ",
         options_.num_threads, "; expected 0 (the default) to ", kMaxThreads);
  if (options_.num_threads && !model_->setThreads())
    fail(KILN_STATUS_FAILED_PRECONDITION, "model '", model_->path(),
         "' does not export halide_set_num_threads, so kiln_session_options.num_threads "
         "cannot be ",
         options_.num_threads, "; leave it 0");
  if (options_.profile)
    profiler_ = std::make_unique<Profiler>(model_->manifest());
  // The probe is here rather than at kiln_model_open: a CUDA model can be opened and
  // listed where no GPU is.
  if ((device_ = model_->device())) {
    device_->probe();
    if (weights_)
      deviceWeights_ = &weights_->onDevice(*model_);
    deviceStates_.resize(states_.size());
    deviceStateSpares_.resize(states_.size());
    stateOnDevice_.assign(states_.size(), false);
  }
  model_->refs.fetch_add(1);
  if (weights_)
    weights_->refs.fetch_add(1);
  entries_.resize(model_->manifest().entries.size());
}

Session::InUse::InUse(const Session &session) : session_(session) {
  if (!session.tryEnter())
    fail(KILN_STATUS_FAILED_PRECONDITION, "session is running on another thread (a "
                                          "session takes one call at a time; use one "
                                          "session per thread)");
}

Session::~Session() {
  entries_.clear(); // before the model, whose library may hold the device's functions
  deviceStates_.clear();
  deviceStateSpares_.clear();
  releaseWeights(weights_);
  releaseModel(model_);
}

Session::EntryState &Session::state(int entry) {
  if (!entries_[entry]) {
    const EntryDesc &e = model_->manifest().entries[entry];
    auto st = std::make_unique<EntryState>();
    size_t n = e.buffers.size();
    st->shapes.resize(n);
    st->strides.resize(n);
    st->offsets.resize(n);
    st->halideDims.resize(n);
    st->halideBuffers.resize(n);
    st->arenaOffsets.resize(n);
    st->outputBlocks.resize(n);
    // An output's memory is the caller's to read until the next run, which may take it
    // as an input: it stays out of the arena, whose bytes that run reuses.
    for (const TensorDesc &out : e.outputs) {
      size_t root = size_t(e.buffers[out.buffer].root);
      if (e.buffers[root].kind == BufferKind::Temp && !st->outputBlocks[root])
        st->outputBlocks[root] = std::make_unique<TempBlock>();
    }
    std::vector<LiveRange> ranges;
    for (size_t b = 0; b < n; ++b) {
      st->shapes[b].resize(e.buffers[b].dims.size());
      st->strides[b].resize(e.buffers[b].dims.size());
      st->halideDims[b].resize(e.buffers[b].dims.size());
      if (e.buffers[b].kind == BufferKind::Temp && !st->outputBlocks[b]) {
        st->temps.push_back(b);
        ranges.push_back({e.buffers[b].firstStep, e.buffers[b].lastStep});
      }
    }
    st->arenaPlanner = std::make_unique<ArenaPlanner>(ranges);
    st->slotsRead = slotsReadByBuffer(e);
    entries_[entry] = std::move(st);
  }
  return *entries_[entry];
}

void Session::run(const char *entryName, const kiln_tensor *inputs, size_t count) {
  outputs_.clear();
  lastEntry_ = -1;
  lastRunFailed_ = true;
  const Manifest &m = model_->manifest();
  if (!entryName)
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry name is NULL");
  int entry = m.findEntry(entryName);
  if (entry < 0)
    fail(KILN_STATUS_NOT_FOUND, "model '", m.model, "' has no entry '", entryName,
         "'; available entries: ", m.entryNames());
  const EntryDesc &e = m.entries[entry];
  EntryState &st = state(entry);

  // Checks: nothing has changed yet when one of them fails.
  if (weights_)
    weights_->checkUnchanged();
  std::vector<const kiln_tensor *> byInput = matchInputs(e, inputs, count);
  bindAllDims(e, st, byInput);
  int64_t fullLength = cutInputs(e, st, byInput);
  if (uint64_t changed = changedSlots(st)) {
    st.planned = false; // until every check of the new values has passed
    evaluateShapes(e, st, byInput, changed);
    evaluateLayouts(e, st, changed);
    planTemps(e, st);
    describeBuffers(e, st, changed);
    st.appends = appendsOf(e, st);
    st.plannedDims = st.dimValues;
    st.planned = true;
  }
  states_.checkShapes(e, st.shapes, st.dimValues); // the states change between runs
  allocateTemps(e, st);
  if (device_)
    reserveOnDevice(e, st);
  states_.checkAppends(e, st.appends);

  // From here on the entry's states change; a failure leaves them half-written.
  try {
    states_.create(e, st.shapes);
    bindBuffers(e, st, byInput);
    if (device_)
      bindOnDevice(e, st, byInput);
    // The pool is the library's (runtime.h): set it for this session's runs.
    if (model_->setThreads())
      model_->setThreads()(options_.num_threads);
    if (profiler_)
      profiler_->beginRun();
    runSteps(entry, e, st);
  } catch (...) {
    if (device_)
      detachFromDevice(e, st);
    states_.forgetWritten(entry);
    throw;
  }
  if (device_)
    detachFromDevice(e, st);
  states_.recordAppends(st.appends);

  for (const TensorDesc &out : e.outputs) {
    const BufferDesc &root = e.buffers[e.buffers[out.buffer].root];
    outputs_.push_back({&out, st.shapes[out.buffer], st.halideBuffers[out.buffer].host,
                        root.kind == BufferKind::State ? root.index : -1});
  }
  if (device_)
    recordDeviceOutputs(e, st);
  if (fullLength >= 0)
    padOutputs(e, st, fullLength);
  lastEntry_ = entry;
  lastRunFailed_ = false;
  statesChangedSinceRun_ = false;
  ++stats_.runs;
}

// Binds every dimension in order: the inputs' shapes, the states the entry reads, the
// value_dim inputs (once their bounds hold); then checks each against its largest size
// and the rest of the inputs.
void Session::bindAllDims(const EntryDesc &e, EntryState &st,
                          const std::vector<const kiln_tensor *> &inputs) {
  bindInputDims(e, inputs, st.dimValues);
  states_.bindDims(e, st.dimValues);
  checkBounds(e, inputs, st.dimValues, BoundsOf::ValueDimInputs);
  bindValueDims(e, inputs, st.dimValues);
  checkDimMax(e, model_->manifest(), st.dimValues);
  checkInputDims(e, inputs, st.dimValues);
  checkBounds(e, inputs, st.dimValues, BoundsOf::OtherInputs);
}

void Session::gatherStates(const int32_t *rows, size_t count) {
  if (device_)
    gatherOnDevice(rows, count);
  else
    states_.gather(rows, count);
  statesChangedSinceRun_ = true;
}

void Session::clearStates() {
  states_.clear();
  statesChangedSinceRun_ = true;
}

void Session::evaluateShapes(const EntryDesc &e, EntryState &st,
                             const std::vector<const kiln_tensor *> &inputs,
                             uint64_t changed) {
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    if (!st.reads(b, changed))
      continue;
    const BufferDesc &buf = e.buffers[b];
    std::vector<int64_t> &shape = st.shapes[b];
    for (size_t d = 0; d < buf.dims.size(); ++d)
      shape[d] = evaluateSize(e, st.dimValues, buf.dims[d],
                              [&] { return cat(bufferLabel(e, b), " dim ", d); });
    // Halide's dimensions are 32-bit; the element count bounds every stride.
    if (elementCount(shape) > INT32_MAX)
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b),
           " has shape ", formatShape(shape),
           ", too large for a Halide buffer (2^31 - 1 "
           "elements at most) with ",
           formatBindings(e, st.dimValues));
    for (int64_t extent : shape)
      if (extent > INT32_MAX)
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b),
             " has an extent over 2^31 - 1: ", formatShape(shape));
    if (buf.kind == BufferKind::Input) {
      const kiln_tensor &in = *inputs[buf.index];
      if (!std::equal(shape.begin(), shape.end(), in.shape))
        fail(KILN_STATUS_INVALID_MODEL, "entry '", e.name, "': ", bufferLabel(e, b),
             " evaluates to ", formatShape(shape), " but input '",
             e.inputs[buf.index].name, "' is ",
             formatShape(std::vector<int64_t>(in.shape, in.shape + in.rank)),
             " (inconsistent manifest)");
    }
  }
  for (const TensorDesc &out : e.outputs) {
    for (size_t d = 0; d < out.dims.size(); ++d) {
      int64_t v = evaluateSize(e, st.dimValues, out.dims[d],
                               [&] { return cat("output '", out.name, "' dim ", d); });
      if (v != st.shapes[out.buffer][d])
        fail(KILN_STATUS_INVALID_MODEL, "entry '", e.name, "': output '", out.name, "' ",
             out.describe(), " dim ", d, " is ", v, " but its buffers[", out.buffer,
             "] is ", formatShape(st.shapes[out.buffer]), " (inconsistent manifest)");
    }
  }
}

// Every buffer's element strides and offset in the memory of its root, and the check that
// each view's elements lie inside that memory.
void Session::evaluateLayouts(const EntryDesc &e, EntryState &st, uint64_t changed) {
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    if (!st.reads(b, changed))
      continue;
    const BufferDesc &buf = e.buffers[b];
    std::vector<int64_t> &strides = st.strides[b];
    const std::vector<int64_t> &shape = st.shapes[b];
    if (buf.strideSource < 0) {
      // Dense row-major, exactly as the kernels constrain it (stride k+1 = stride k *
      // extent k, in Halide's order): past a zero extent every stride is 0. A stride over
      // 2^31 - 1 is possible only when the count is 0 (a zero extent further out).
      int64_t stride = 1;
      for (size_t k = shape.size(); k-- > 0;) {
        if (stride > INT32_MAX)
          fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b),
               " has shape ", formatShape(shape), ": dim ", k, " would have stride ",
               stride, ", over 2^31 - 1, with ", formatBindings(e, st.dimValues));
        strides[k] = stride;
        stride *= shape[k]; // both at most 2^31 - 1: no overflow
      }
    } else {
      const BufferDesc &from = e.buffers[buf.strideSource];
      for (size_t k = 0; k < shape.size(); ++k) {
        strides[k] = evaluateSize(e, st.dimValues, from.strides[k],
                                  [&] { return cat(bufferLabel(e, b), " stride ", k); });
        if (strides[k] > INT32_MAX)
          fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b),
               " stride ", k, " '", from.strides[k].text(), "' is ", strides[k],
               ", over 2^31 - 1, with ", formatBindings(e, st.dimValues));
      }
    }
    st.offsets[b] = 0;
  }
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    const BufferDesc &buf = e.buffers[b];
    if (buf.kind != BufferKind::View || !st.reads(b, changed))
      continue;
    int64_t offset = 0;
    for (size_t v = b; e.buffers[v].kind == BufferKind::View;
         v = size_t(e.buffers[v].index)) {
      int64_t own = evaluateSize(e, st.dimValues, e.buffers[v].offset,
                                 [&] { return cat(bufferLabel(e, v), " offset"); });
      if (__builtin_add_overflow(offset, own, &offset))
        offset = INT64_MAX;
    }
    st.offsets[b] = offset;
    const std::vector<int64_t> &shape = st.shapes[b];
    int64_t count = elementCount(shape);
    if (count == 0)
      continue; // nothing to fit; its memory is never touched
    int64_t rootCount = elementCount(st.shapes[buf.root]);
    if (buf.strideSource < 0) {
      if (offset > rootCount - count)
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b),
             " ", formatShape(shape), " has ", count, " elements from offset ", offset,
             " but buffers[", buf.root, "] it views is ",
             formatShape(st.shapes[buf.root]), " with ", formatBindings(e, st.dimValues));
      continue;
    }
    int64_t last = lastElement(offset, shape, st.strides[b]);
    if (last >= rootCount) {
      checkAppendFits(e, st, b); // a write past a cache says so
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b), " ",
           formatShape(shape), " with strides ", formatShape(st.strides[b]),
           " from offset ", offset, " reaches element ", last, " but buffers[", buf.root,
           "] it views is ", formatShape(st.shapes[buf.root]), " (", rootCount,
           " elements) with ", formatBindings(e, st.dimValues));
    }
  }
}

// Offsets in the entry's arena from its temps' live ranges (ArenaPlan.h).
void Session::planTemps(const EntryDesc &e, EntryState &st) {
  std::vector<uint64_t> bytes;
  for (size_t b : st.temps)
    bytes.push_back(uint64_t(elementCount(st.shapes[b])) *
                    kiln_dtype_size(e.buffers[b].dtype));
  if (bytes == st.tempBytes)
    return; // only views or states changed shape
  ArenaPlan plan = st.arenaPlanner->plan(bytes);
  st.tempBytes = std::move(bytes);
  for (size_t t = 0; t < st.temps.size(); ++t)
    st.arenaOffsets[st.temps[t]] = plan.offsets[t];
  st.arenaBytes = plan.bytes;
}

// The arena, and a block of its own for each output's temp.
void Session::allocateTemps(const EntryDesc &e, EntryState &st) {
  auto bytesOf = [&](size_t b) {
    return uint64_t(elementCount(st.shapes[b])) * kiln_dtype_size(e.buffers[b].dtype);
  };
  uint64_t total = st.arenaBytes;
  for (size_t b = 0; b < e.buffers.size(); ++b)
    if (st.outputBlocks[b])
      total += bytesOf(b);
  if (options_.max_temp_bytes && total > options_.max_temp_bytes)
    fail(KILN_STATUS_RESOURCE_EXHAUSTED, "entry '", e.name, "' needs ", total,
         " bytes of temporaries with ", formatBindings(e, st.dimValues),
         ", over the session's limit of ", options_.max_temp_bytes, " bytes");
  auto reserve = [&](TempBlock &block, uint64_t bytes) {
    if (!options_.reuse_temps)
      block.reset();
    if (block.reserve(size_t(bytes)))
      ++stats_.temp_allocations;
  };
  reserve(st.arena, st.arenaBytes);
  for (size_t b = 0; b < e.buffers.size(); ++b)
    if (st.outputBlocks[b])
      reserve(*st.outputBlocks[b], bytesOf(b));
}

// The Halide description of every buffer but its memory: shape, strides and type.
void Session::describeBuffers(const EntryDesc &e, EntryState &st, uint64_t changed) {
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    if (!st.reads(b, changed))
      continue;
    std::vector<halide_dimension_t> &dims = st.halideDims[b];
    const std::vector<int64_t> &shape = st.shapes[b];
    // Halide's dimension 0 is the innermost (last tensor) one; strides count elements.
    for (size_t k = 0; k < shape.size(); ++k) {
      size_t d = shape.size() - 1 - k;
      dims[k] = halide_dimension_t(0, int32_t(shape[d]), int32_t(st.strides[b][d]));
    }
    halide_buffer_t &hb = st.halideBuffers[b];
    hb = halide_buffer_t();
    hb.type = halideType(e.buffers[b].dtype);
    hb.dimensions = int32_t(shape.size());
    hb.dim = dims.data();
  }
}

// The memory of every buffer for this run: the inputs', weights', states' and arena's.
void Session::bindBuffers(const EntryDesc &e, EntryState &st,
                          const std::vector<const kiln_tensor *> &inputs) {
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    const BufferDesc &buf = e.buffers[b];
    const void *host = nullptr;
    switch (buf.kind) {
    case BufferKind::Input:
      host = inputs[buf.index]->data;
      break;
    case BufferKind::Parameter:
      host = weights_->data(size_t(buf.index));
      break;
    case BufferKind::Temp:
      host = st.outputBlocks[b] ? st.outputBlocks[b]->data()
                                : st.arena.bytes() + st.arenaOffsets[b];
      break;
    case BufferKind::State:
      host = states_.data(buf.index);
      break;
    case BufferKind::View:
      break; // below, once every root has its memory
    }
    halide_buffer_t &hb = st.halideBuffers[b];
    hb.host = static_cast<uint8_t *>(const_cast<void *>(host ? host : emptyStorage));
    hb.flags = 0;
  }
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    if (e.buffers[b].kind != BufferKind::View)
      continue;
    // An empty view's offset may lie past its root's end; it never touches memory.
    int64_t offset = elementCount(st.shapes[b]) == 0 ? 0 : st.offsets[b];
    st.halideBuffers[b].host = st.halideBuffers[e.buffers[b].root].host +
                               offset * int64_t(kiln_dtype_size(e.buffers[b].dtype));
  }
}

// The positions that buffer `b`, a step's output, writes into a state, as kv_append
// plans them (docs/manifest.md): a view of the state with the state's dense strides and
// shape but for extent N along one axis a >= 1, at an offset of P whole positions along
// a; or the whole state (every position). None for any other buffer.
std::optional<StateSet::Append> Session::appendOf(const EntryDesc &e,
                                                  const EntryState &st, size_t b) const {
  const BufferDesc &buf = e.buffers[b];
  if (buf.kind != BufferKind::View || e.buffers[buf.root].kind != BufferKind::State)
    return std::nullopt;
  const BufferDesc &root = e.buffers[buf.root];
  const std::vector<int64_t> &shape = st.shapes[b], &full = st.shapes[buf.root];
  const std::vector<int64_t> &dense = st.strides[buf.root];
  if (shape.size() != full.size() || st.strides[b] != dense || elementCount(shape) == 0 ||
      shape[0] != full[0])
    return std::nullopt;
  size_t axis = 0; // none: dim 0 is the batch
  for (size_t k = 1; k < shape.size(); ++k)
    if (shape[k] != full[k]) {
      if (axis != 0)
        return std::nullopt;
      axis = k;
    }
  if (axis == 0)
    return st.offsets[b] == 0
               ? std::optional<StateSet::Append>(
                     {root.index, 0, 0, StateSet::kEveryPosition, root.create})
               : std::nullopt;
  if (st.offsets[b] % dense[axis])
    return std::nullopt;
  return StateSet::Append{root.index, axis, st.offsets[b] / dense[axis], shape[axis],
                          root.create};
}

std::vector<StateSet::Append> Session::appendsOf(const EntryDesc &e,
                                                 const EntryState &st) const {
  std::vector<StateSet::Append> appends;
  for (const StepDesc &step : e.steps)
    for (size_t a = firstOutput(step); a < step.args.size(); ++a)
      if (std::optional<StateSet::Append> append = appendOf(e, st, size_t(step.args[a])))
        appends.push_back(*append);
  return appends;
}

// Throws the message for a step's write into a state past its capacity, when buffer `b`
// (a view that does not fit its root) is one; returns otherwise.
void Session::checkAppendFits(const EntryDesc &e, const EntryState &st, size_t b) const {
  for (const StepDesc &step : e.steps) {
    auto outputs = step.args.begin() + std::ptrdiff_t(firstOutput(step));
    if (std::find(outputs, step.args.end(), int(b)) == step.args.end())
      continue;
    std::optional<StateSet::Append> a = appendOf(e, st, b);
    if (!a || a->axis == 0)
      return;
    int64_t capacity = st.shapes[e.buffers[b].root][a->axis];
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': writing ", a->count,
         a->count == 1 ? " position" : " positions", " from position ", a->position,
         " into state '", model_->manifest().states[size_t(a->state)].name,
         "' (P = ", a->position, ", N = ", a->count, ") needs P + N <= its capacity ",
         capacity, " along dim ", a->axis, " with ", formatBindings(e, st.dimValues));
  }
}

void Session::runSteps(int entry, const EntryDesc &e, EntryState &st) {
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const StepDesc &step = e.steps[s];
    // A step computes its last arguments. With no element to compute there is nothing
    // to do, and a kernel scheduled in vectors or tiles may still touch one (an empty
    // tensor of [2, 0] read at element 0).
    if (std::all_of(step.args.begin() + std::ptrdiff_t(firstOutput(step)),
                    step.args.end(),
                    [&](int out) { return elementCount(st.shapes[out]) == 0; }))
      continue;
    st.argv.resize(step.args.size());
    for (size_t a = 0; a < step.args.size(); ++a)
      st.argv[a] = &st.halideBuffers[step.args[a]];
    HalideErrorScope scope;
    Model::KernelFn kernel = model_->kernel(step.kernel);
    if (device_)
      beginDeviceStep(step, st);
    int rc = profiler_ ? profiler_->time(entry, s, kernel, st.argv.data())
                       : kernel(st.argv.data());
    if (device_)
      endDeviceStep(step, st, rc != 0);
    else
      syncFromDevice(e, step, st, rc != 0);
    if (rc != 0) {
      std::string message = scope.message();
      // A checked gather's index out of range: the caller's inputs are wrong.
      if (std::string user = requirementMessage(message); !user.empty())
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", user, " (kernel '",
             model_->kernelName(step.kernel), "', step ", s, " of ", e.steps.size(), ")");
      fail(KILN_STATUS_KERNEL_ERROR, "entry '", e.name, "': kernel '",
           model_->kernelName(step.kernel), "' (step ", s, " of ", e.steps.size(),
           ") failed with Halide error code ", rc, ": ",
           message.empty() ? "the Halide runtime gave no message" : message);
    }
  }
}

// For a GPU target the runtime has no Device for (a CUDA model's buffers stay on its
// device: SessionDevice.cpp), the kernels attach device memory to the buffers they touch.
// Views alias host memory only, so rather than track which device copy is current, every
// step's results come back to the host and device memory is dropped: correct for any mix
// of CPU and GPU kernels, at a transfer cost.
void Session::syncFromDevice(const EntryDesc &e, const StepDesc &step, EntryState &st,
                             bool failed) {
  for (int arg : step.args) {
    halide_buffer_t &hb = st.halideBuffers[arg];
    if (hb.device == 0)
      continue;
    if (!model_->copyToHost() || !model_->deviceFree())
      fail(KILN_STATUS_INTERNAL, "entry '", e.name, "': a kernel left ",
           bufferLabel(e, arg),
           " on a device, but the model does not export halide_copy_to_host");
    int rc = 0;
    if (!failed && hb.device_dirty()) {
      HalideErrorScope scope;
      rc = model_->copyToHost()(nullptr, &hb);
      if (rc != 0) {
        model_->deviceFree()(nullptr, &hb);
        fail(KILN_STATUS_KERNEL_ERROR, "entry '", e.name, "': copying ",
             bufferLabel(e, arg), " back from the device failed with Halide error code ",
             rc, ": ", scope.message());
      }
    }
    model_->deviceFree()(nullptr, &hb);
    hb.device = 0;
    hb.device_interface = nullptr;
    hb.flags = 0;
  }
}

kiln_session_stats Session::stats() const {
  kiln_session_stats s = stats_;
  s.temp_bytes = 0;
  for (const auto &st : entries_)
    if (st) {
      s.temp_bytes += st->arena.capacity();
      for (const auto &block : st->outputBlocks)
        s.temp_bytes += block ? block->capacity() : 0;
      for (const auto *blocks : {&st->cutBlocks, &st->paddedBlocks})
        for (const auto &block : *blocks)
          s.temp_bytes += block ? block->capacity() : 0;
    }
  s.state_bytes = states_.bytes();
  s.state_rows_copied = states_.rowsCopied();
  return s;
}

Profiler &Session::profiler() const {
  if (!profiler_)
    fail(KILN_STATUS_FAILED_PRECONDITION,
         "the session does not profile: create it with kiln_session_options.profile "
         "set");
  return *profiler_;
}

void releaseModel(const Model *model) {
  if (model && model->refs.fetch_sub(1) == 1)
    delete model;
}

void releaseWeights(const Weights *weights) {
  if (weights && weights->refs.fetch_sub(1) == 1)
    delete weights;
}

} // namespace kiln::rt
