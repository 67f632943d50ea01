// SessionOutputs.cpp - a run's outputs: found by name or index, read in place, detached.
//
// An output is a view of the run's memory (a temporary block, a state, or a padded copy
// that a trimmed run writes back), valid until the next run changes it; detaching hands
// its block to the caller, where nothing else of the session shares it.
#include "Session.h"

#include "Error.h"

#include <memory>

namespace kiln::rt {

// An output that views a state's memory is gone once the states are gathered or cleared;
// a detached one is the caller's.
void Session::checkReadable(const Output &out) const {
  if (out.detached)
    fail(KILN_STATUS_FAILED_PRECONDITION, "output '", out.desc->name,
         "' was detached (kiln_session_detach_output): its memory is the caller's "
         "kiln_buffer now");
  if (out.state >= 0 && statesChangedSinceRun_)
    fail(KILN_STATUS_FAILED_PRECONDITION, "output '", out.desc->name,
         "' is a view of state '", model_->manifest().states[size_t(out.state)].name,
         "', which changed after the run (kiln_session_gather_states or "
         "kiln_session_clear_states); read it before changing the states");
}

size_t Session::findOutput(const char *name) const {
  if (lastEntry_ < 0)
    fail(KILN_STATUS_FAILED_PRECONDITION, "no outputs: ",
         lastRunFailed_ ? "the last run failed" : "the session has not run yet");
  if (!name)
    fail(KILN_STATUS_INVALID_ARGUMENT, "output name is NULL");
  for (size_t i = 0; i < outputs_.size(); ++i)
    if (outputs_[i].desc->name == name) {
      checkReadable(outputs_[i]);
      return i;
    }
  const EntryDesc &e = model_->manifest().entries[lastEntry_];
  fail(KILN_STATUS_NOT_FOUND, "entry '", e.name, "' has no output '", name,
       "'; its outputs are ",
       join(e.outputs, [](const TensorDesc &t) { return "'" + t.name + "'"; }));
}

static kiln_tensor toTensor(const TensorDesc &desc, const std::vector<int64_t> &shape,
                            const void *data) {
  kiln_tensor t;
  t.name = desc.name.c_str();
  t.dtype = desc.dtype;
  t.rank = int32_t(shape.size());
  t.shape = shape.data();
  t.data = data;
  return t;
}

kiln_tensor Session::output(const char *name) const {
  const Output &out = outputs_[findOutput(name)];
  downloadOutput(out);
  return toTensor(*out.desc, out.shape, out.data);
}

// The output's block moves into the buffer and leaves an empty one behind, which the
// next run's allocateTemps fills (and counts) as it would a block that has to grow.
std::unique_ptr<OutputBuffer> Session::detachOutput(const char *name) {
  Output &out = outputs_[findOutput(name)];
  downloadOutput(out); // the caller gets host memory
  const EntryDesc &e = model_->manifest().entries[size_t(lastEntry_)];
  size_t root = size_t(e.buffers[out.desc->buffer].root);
  auto refuse = [&](const auto &...why) {
    fail(KILN_STATUS_FAILED_PRECONDITION, "output '", out.desc->name,
         "' cannot be detached: it ", why...,
         "; copy it instead (kiln_session_copy_output)");
  };
  if (out.state >= 0)
    refuse("is a view of state '", model_->manifest().states[size_t(out.state)].name,
           "', whose memory the session keeps");
  if (out.padded) {
    auto buffer = std::make_unique<OutputBuffer>();
    buffer->memory.swap(*out.padded);
    buffer->data = buffer->memory.data();
    buffer->name = out.desc->name;
    buffer->dtype = out.desc->dtype;
    buffer->shape = out.shape;
    out.detached = true;
    return buffer;
  }
  std::unique_ptr<TempBlock> &block = entries_[size_t(lastEntry_)]->outputBlocks[root];
  if (!block) { // the root is an input or a parameter: the caller's or the weights'
    const BufferDesc &from = e.buffers[root];
    refuse("is a view of ", abi::bufferKindName(from.kind), " '",
           from.kind == BufferKind::Input
               ? e.inputs[size_t(from.index)].name
               : model_->manifest().parameters[size_t(from.index)].name,
           "', not a block of its own");
  }
  for (const Output &other : outputs_)
    if (&other != &out && size_t(e.buffers[other.desc->buffer].root) == root)
      refuse("shares its block with output '", other.desc->name, "'");
  auto buffer = std::make_unique<OutputBuffer>();
  buffer->memory.swap(*block);
  buffer->data = const_cast<void *>(out.data);
  buffer->name = out.desc->name;
  buffer->dtype = out.desc->dtype;
  buffer->shape = out.shape;
  out.detached = true;
  return buffer;
}

kiln_tensor Session::outputAt(size_t index) const {
  if (lastEntry_ < 0)
    fail(KILN_STATUS_FAILED_PRECONDITION, "no outputs: ",
         lastRunFailed_ ? "the last run failed" : "the session has not run yet");
  if (index >= outputs_.size())
    fail(KILN_STATUS_NOT_FOUND, "output index ", index, " out of range (",
         outputs_.size(), " outputs)");
  const Output &out = outputs_[index];
  checkReadable(out);
  downloadOutput(out);
  return toTensor(*out.desc, out.shape, out.data);
}

} // namespace kiln::rt
