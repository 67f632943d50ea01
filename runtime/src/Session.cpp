// Session.cpp - one run: bind dims, size and allocate buffers, call the kernels in order.
#include "Session.hpp"

#include "DType.hpp"
#include "Error.hpp"
#include "HalideErrors.hpp"
#include "Inputs.hpp"

#include <climits>
#include <cstdlib>

namespace kiln::rt {

namespace {

constexpr size_t kTempAlignment = 64; // a cache line and an AVX-512 vector

// Halide treats a buffer with a null host pointer as a bounds query and computes nothing,
// so empty tensors get this instead.
alignas(kTempAlignment) uint8_t emptyStorage[kTempAlignment];

halide_type_t halideType(kiln_dtype dtype) {
  halide_type_t t;
  t.code = dtype == KILN_DTYPE_F32 ? halide_type_float : halide_type_int;
  t.bits = uint8_t(kiln_dtype_size(dtype) * 8);
  t.lanes = 1;
  return t;
}

int64_t elementCount(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}

std::string bufferLabel(const EntryDesc& e, size_t b) {
  static const char* kinds[] = {"input", "parameter", "temp", "view"};
  return cat("buffers[", b, "] (", kinds[int(e.buffers[b].kind)], ")");
}

} // namespace

TempBlock::~TempBlock() { reset(); }

bool TempBlock::reserve(size_t bytes) {
  bytes = bytes == 0 ? kTempAlignment : (bytes + kTempAlignment - 1) / kTempAlignment *
                                             kTempAlignment;
  if (bytes <= capacity_)
    return false;
  reset();
  data_ = std::aligned_alloc(kTempAlignment, bytes);
  if (!data_)
    fail(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory allocating a ", bytes,
         "-byte temporary");
  capacity_ = bytes;
  return true;
}

void TempBlock::reset() {
  std::free(data_);
  data_ = nullptr;
  capacity_ = 0;
}

Session::Session(const Model* model, const Weights* weights,
                 const kiln_session_options& options)
    : model_(model), weights_(weights), options_(options) {
  model_->refs.fetch_add(1);
  if (weights_)
    weights_->refs.fetch_add(1);
  entries_.resize(model_->manifest().entries.size());
}

Session::~Session() {
  entries_.clear();
  releaseWeights(weights_);
  releaseModel(model_);
}

Session::EntryState& Session::state(int entry) {
  if (!entries_[entry]) {
    const EntryDesc& e = model_->manifest().entries[entry];
    auto st = std::make_unique<EntryState>();
    size_t n = e.buffers.size();
    st->shapes.resize(n);
    st->halideDims.resize(n);
    st->halideBuffers.resize(n);
    st->temps.resize(n);
    for (size_t b = 0; b < n; ++b) {
      st->shapes[b].resize(e.buffers[b].dims.size());
      st->halideDims[b].resize(e.buffers[b].dims.size());
      if (e.buffers[b].kind == BufferKind::Temp)
        st->temps[b] = std::make_unique<TempBlock>();
    }
    entries_[entry] = std::move(st);
  }
  return *entries_[entry];
}

void Session::run(const char* entryName, const kiln_tensor* inputs, size_t count) {
  outputs_.clear();
  lastEntry_ = -1;
  lastRunFailed_ = true;
  const Manifest& m = model_->manifest();
  if (!entryName)
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry name is NULL");
  int entry = m.findEntry(entryName);
  if (entry < 0)
    fail(KILN_STATUS_NOT_FOUND, "model '", m.model, "' has no entry '", entryName,
         "'; available entries: ", m.entryNames());
  const EntryDesc& e = m.entries[entry];
  EntryState& st = state(entry);

  std::vector<const kiln_tensor*> byInput = matchInputs(e, inputs, count);
  bindDims(e, byInput, st.dimValues);
  checkBounds(e, byInput, st.dimValues);
  evaluateShapes(e, st, byInput);
  allocateTemps(e, st);
  bindBuffers(e, st, byInput);
  runSteps(e, st);

  for (const TensorDesc& out : e.outputs)
    outputs_.push_back({&out, st.shapes[out.buffer], st.halideBuffers[out.buffer].host});
  lastEntry_ = entry;
  lastRunFailed_ = false;
  ++stats_.runs;
}

void Session::evaluateShapes(const EntryDesc& e, EntryState& st,
                             const std::vector<const kiln_tensor*>& inputs) {
  auto evaluate = [&](const DimExpr& expr, const std::string& where) {
    int64_t v;
    std::string error;
    if (!expr.evaluate(st.dimValues.data(), v, error))
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", where, ": ", error,
           " (with ", formatBindings(e, st.dimValues), ")");
    if (v < 0)
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", where, ": '", expr.text(),
           "' is ", v, " with ", formatBindings(e, st.dimValues));
    return v;
  };
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    const BufferDesc& buf = e.buffers[b];
    std::vector<int64_t>& shape = st.shapes[b];
    for (size_t d = 0; d < buf.dims.size(); ++d)
      shape[d] = evaluate(buf.dims[d], cat(bufferLabel(e, b), " dim ", d));
    // Halide's dimensions are 32-bit; the element count bounds every stride.
    if (elementCount(shape) > INT32_MAX)
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b),
           " has shape ", formatShape(shape), ", too large for a Halide buffer (2^31 - 1 "
           "elements at most) with ", formatBindings(e, st.dimValues));
    for (int64_t extent : shape)
      if (extent > INT32_MAX)
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b),
             " has an extent over 2^31 - 1: ", formatShape(shape));
    if (buf.kind == BufferKind::Input) {
      const kiln_tensor& in = *inputs[buf.index];
      if (!std::equal(shape.begin(), shape.end(), in.shape))
        fail(KILN_STATUS_INVALID_MODEL, "entry '", e.name, "': ", bufferLabel(e, b),
             " evaluates to ", formatShape(shape), " but input '", e.inputs[buf.index].name,
             "' is ", formatShape(std::vector<int64_t>(in.shape, in.shape + in.rank)),
             " (inconsistent manifest)");
    }
  }
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    const BufferDesc& buf = e.buffers[b];
    if (buf.kind == BufferKind::View &&
        buf.rootOffset + elementCount(st.shapes[b]) > elementCount(st.shapes[buf.root]))
      fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': ", bufferLabel(e, b), " ",
           formatShape(st.shapes[b]), " has ", elementCount(st.shapes[b]),
           " elements from offset ", buf.rootOffset, " but buffers[", buf.root,
           "] it views is ", formatShape(st.shapes[buf.root]), " with ",
           formatBindings(e, st.dimValues));
  }
  for (const TensorDesc& out : e.outputs) {
    for (size_t d = 0; d < out.dims.size(); ++d) {
      int64_t v = evaluate(out.dims[d], cat("output '", out.name, "' dim ", d));
      if (v != st.shapes[out.buffer][d])
        fail(KILN_STATUS_INVALID_MODEL, "entry '", e.name, "': output '", out.name, "' ",
             out.describe(), " dim ", d, " is ", v, " but its buffers[", out.buffer, "] is ",
             formatShape(st.shapes[out.buffer]), " (inconsistent manifest)");
    }
  }
}

void Session::allocateTemps(const EntryDesc& e, EntryState& st) {
  uint64_t total = 0;
  for (size_t b = 0; b < e.buffers.size(); ++b)
    if (e.buffers[b].kind == BufferKind::Temp)
      total += uint64_t(elementCount(st.shapes[b])) * kiln_dtype_size(e.buffers[b].dtype);
  if (options_.max_temp_bytes && total > options_.max_temp_bytes)
    fail(KILN_STATUS_RESOURCE_EXHAUSTED, "entry '", e.name, "' needs ", total,
         " bytes of temporaries with ", formatBindings(e, st.dimValues),
         ", over the session's limit of ", options_.max_temp_bytes, " bytes");
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    if (e.buffers[b].kind != BufferKind::Temp)
      continue;
    TempBlock& block = *st.temps[b];
    if (!options_.reuse_temps)
      block.reset();
    size_t bytes = size_t(elementCount(st.shapes[b])) * kiln_dtype_size(e.buffers[b].dtype);
    if (block.reserve(bytes))
      ++stats_.temp_allocations;
  }
}

void Session::bindBuffers(const EntryDesc& e, EntryState& st,
                          const std::vector<const kiln_tensor*>& inputs) {
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    const BufferDesc& buf = e.buffers[b];
    std::vector<halide_dimension_t>& dims = st.halideDims[b];
    const std::vector<int64_t>& shape = st.shapes[b];
    // Halide's dimension 0 is the innermost (contiguous) one; strides count elements.
    int64_t stride = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
      int64_t extent = shape[shape.size() - 1 - k];
      dims[k] = halide_dimension_t(0, int32_t(extent), int32_t(stride));
      stride *= extent;
    }
    halide_buffer_t& hb = st.halideBuffers[b];
    hb = halide_buffer_t();
    hb.type = halideType(buf.dtype);
    hb.dimensions = int32_t(shape.size());
    hb.dim = dims.data();
    const void* host = nullptr;
    switch (buf.kind) {
    case BufferKind::Input: host = inputs[buf.index]->data; break;
    case BufferKind::Parameter: host = weights_->data(size_t(buf.index)); break;
    case BufferKind::Temp: host = st.temps[b]->data(); break;
    case BufferKind::View: break; // below, once every root has its memory
    }
    hb.host = static_cast<uint8_t*>(const_cast<void*>(host ? host : emptyStorage));
  }
  for (size_t b = 0; b < e.buffers.size(); ++b)
    if (e.buffers[b].kind == BufferKind::View)
      st.halideBuffers[b].host =
          st.halideBuffers[e.buffers[b].root].host +
          e.buffers[b].rootOffset * int64_t(kiln_dtype_size(e.buffers[b].dtype));
}

void Session::runSteps(const EntryDesc& e, EntryState& st) {
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const StepDesc& step = e.steps[s];
    st.argv.resize(step.args.size());
    for (size_t a = 0; a < step.args.size(); ++a)
      st.argv[a] = &st.halideBuffers[step.args[a]];
    HalideErrorScope scope;
    int rc = model_->kernel(step.kernel)(st.argv.data());
    syncFromDevice(e, step, st, rc != 0);
    if (rc != 0) {
      std::string message = scope.message();
      fail(KILN_STATUS_KERNEL_ERROR, "entry '", e.name, "': kernel '",
           model_->kernelName(step.kernel), "' (step ", s, " of ", e.steps.size(),
           ") failed with Halide error code ", rc, ": ",
           message.empty() ? "the Halide runtime gave no message" : message);
    }
  }
}

// GPU kernels attach device memory to the buffers they touch. Views alias host memory
// only, so rather than track which device copy is current, every step's results come
// back to the host and device memory is dropped: correct for any mix of CPU and GPU
// kernels, at a transfer cost; keeping data resident is future work.
void Session::syncFromDevice(const EntryDesc& e, const StepDesc& step, EntryState& st,
                             bool failed) {
  for (int arg : step.args) {
    halide_buffer_t& hb = st.halideBuffers[arg];
    if (hb.device == 0)
      continue;
    if (!model_->copyToHost() || !model_->deviceFree())
      fail(KILN_STATUS_INTERNAL, "entry '", e.name, "': a kernel left ", bufferLabel(e, arg),
           " on a device, but the model does not export halide_copy_to_host");
    int rc = 0;
    if (!failed && hb.device_dirty()) {
      HalideErrorScope scope;
      rc = model_->copyToHost()(nullptr, &hb);
      if (rc != 0) {
        model_->deviceFree()(nullptr, &hb);
        fail(KILN_STATUS_KERNEL_ERROR, "entry '", e.name, "': copying ", bufferLabel(e, arg),
             " back from the device failed with Halide error code ", rc, ": ",
             scope.message());
      }
    }
    model_->deviceFree()(nullptr, &hb);
    hb.device = 0;
    hb.device_interface = nullptr;
    hb.flags = 0;
  }
}

const Session::Output& Session::findOutput(const char* name) const {
  if (lastEntry_ < 0)
    fail(KILN_STATUS_FAILED_PRECONDITION, "no outputs: ",
         lastRunFailed_ ? "the last run failed" : "the session has not run yet");
  if (!name)
    fail(KILN_STATUS_INVALID_ARGUMENT, "output name is NULL");
  for (const Output& out : outputs_)
    if (out.desc->name == name)
      return out;
  const EntryDesc& e = model_->manifest().entries[lastEntry_];
  fail(KILN_STATUS_NOT_FOUND, "entry '", e.name, "' has no output '", name,
       "'; its outputs are ",
       join(e.outputs, [](const TensorDesc& t) { return "'" + t.name + "'"; }));
}

static kiln_tensor toTensor(const TensorDesc& desc, const std::vector<int64_t>& shape,
                            const void* data) {
  kiln_tensor t;
  t.name = desc.name.c_str();
  t.dtype = desc.dtype;
  t.rank = int32_t(shape.size());
  t.shape = shape.data();
  t.data = data;
  return t;
}

kiln_tensor Session::output(const char* name) const {
  const Output& out = findOutput(name);
  return toTensor(*out.desc, out.shape, out.data);
}

kiln_tensor Session::outputAt(size_t index) const {
  if (lastEntry_ < 0)
    fail(KILN_STATUS_FAILED_PRECONDITION, "no outputs: ",
         lastRunFailed_ ? "the last run failed" : "the session has not run yet");
  if (index >= outputs_.size())
    fail(KILN_STATUS_NOT_FOUND, "output index ", index, " out of range (", outputs_.size(),
         " outputs)");
  const Output& out = outputs_[index];
  return toTensor(*out.desc, out.shape, out.data);
}

kiln_session_stats Session::stats() const {
  kiln_session_stats s = stats_;
  s.temp_bytes = 0;
  for (const auto& st : entries_)
    if (st)
      for (const auto& block : st->temps)
        if (block)
          s.temp_bytes += block->capacity();
  return s;
}

void releaseModel(const Model* model) {
  if (model && model->refs.fetch_sub(1) == 1)
    delete model;
}

void releaseWeights(const Weights* weights) {
  if (weights && weights->refs.fetch_sub(1) == 1)
    delete weights;
}

} // namespace kiln::rt
