//===- SessionDevice.cpp - A session whose kernels run on a device ----------===//
//
// The device half of Session (docs/gpu.md). The host memory a CPU session computes in
// stays, as a mirror: the device blocks below have the same layout, so a buffer's device
// address is its root's block plus the same offset. The weights are resident per weights
// handle (Weights::onDevice); the arena, the outputs' blocks, the inputs' and the states'
// live for the session; inputs are uploaded by each run, and outputs and states are
// downloaded only when read.
//
//===----------------------------------------------------------------------===//

#include "Session.h"

#include "DType.h"
#include "Error.h"

#include <climits>

namespace kiln::rt {

struct Session::EntryState::OnDevice {
  explicit OnDevice(Device &device) : arena(device) {}
  DeviceBlock arena;
  std::vector<std::unique_ptr<DeviceBlock>> outputBlocks; // per buffer, as on the host
  std::vector<std::unique_ptr<DeviceBlock>> inputs;       // per input
  std::vector<DeviceAddress> addresses;                   // per buffer, this run
  std::vector<bool> attached;                             // per buffer
};

void Session::EntryState::OnDeviceDeleter::operator()(OnDevice *d) const { delete d; }

namespace {

uint64_t bytesOf(const std::vector<int64_t> &shape, kiln_dtype dtype) {
  return uint64_t(elementCount(shape)) * kiln_dtype_size(dtype);
}

// The bytes from a strided buffer's first element to past its last: what a download of
// it must cover.
uint64_t spanOf(const std::vector<int64_t> &shape, const std::vector<int64_t> &strides,
                kiln_dtype dtype) {
  if (elementCount(shape) == 0)
    return 0;
  int64_t last = 0;
  for (size_t k = 0; k < shape.size(); ++k)
    last += (shape[k] - 1) * strides[k];
  return uint64_t(last + 1) * kiln_dtype_size(dtype);
}

void reserveBlock(std::unique_ptr<DeviceBlock> &block, Device &device, uint64_t bytes) {
  if (!block)
    block = std::make_unique<DeviceBlock>(device);
  block->reserve(bytes);
}

} // namespace

// The entry's device blocks, grown with the host ones (allocateTemps) and never shrunk.
void Session::reserveOnDevice(const EntryDesc &e, EntryState &st) {
  if (!st.device) {
    st.device.reset(new EntryState::OnDevice(*device_));
    st.device->outputBlocks.resize(e.buffers.size());
    st.device->inputs.resize(e.inputs.size());
    st.device->addresses.resize(e.buffers.size());
    st.device->attached.resize(e.buffers.size());
  }
  EntryState::OnDevice &d = *st.device;
  d.arena.reserve(st.arenaBytes);
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    const BufferDesc &buf = e.buffers[b];
    if (st.outputBlocks[b])
      reserveBlock(d.outputBlocks[b], *device_, bytesOf(st.shapes[b], buf.dtype));
    else if (buf.kind == BufferKind::Input)
      reserveBlock(d.inputs[size_t(buf.index)], *device_,
                   bytesOf(st.shapes[b], buf.dtype));
  }
}

// Every buffer's device address, and the halide buffers pointed at them: the inputs are
// uploaded, a state the run creates is zeroed there as on the host.
void Session::bindOnDevice(const EntryDesc &e, EntryState &st,
                           const std::vector<const kiln_tensor *> &inputs) {
  EntryState::OnDevice &d = *st.device;
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    const BufferDesc &buf = e.buffers[b];
    DeviceAddress &address = d.addresses[b];
    switch (buf.kind) {
    case BufferKind::Input: {
      DeviceBlock &block = *d.inputs[size_t(buf.index)];
      device_->upload(block.address(), inputs[size_t(buf.index)]->data,
                      bytesOf(st.shapes[b], buf.dtype));
      address = block.address();
      break;
    }
    case BufferKind::Parameter:
      address = (*deviceWeights_)[size_t(buf.index)];
      break;
    case BufferKind::Temp:
      address = d.outputBlocks[b] ? d.outputBlocks[b]->address()
                                  : d.arena.address() + st.arenaOffsets[b];
      break;
    case BufferKind::State: {
      std::unique_ptr<DeviceBlock> &block = deviceStates_[size_t(buf.index)];
      if (buf.create) {
        uint64_t bytes = bytesOf(st.shapes[b], buf.dtype);
        reserveBlock(block, *device_, bytes);
        device_->upload(block->address(), states_.data(buf.index), bytes);
      }
      address = block->address();
      stateOnDevice_[size_t(buf.index)] = true;
      break;
    }
    case BufferKind::View:
      break; // below, once every root has its address
    }
  }
  for (size_t b = 0; b < e.buffers.size(); ++b) {
    if (e.buffers[b].kind == BufferKind::View) {
      int64_t offset = elementCount(st.shapes[b]) == 0 ? 0 : st.offsets[b];
      d.addresses[b] = d.addresses[size_t(e.buffers[b].root)] +
                       uint64_t(offset) * kiln_dtype_size(e.buffers[b].dtype);
    }
    device_->attach(st.halideBuffers[b], d.addresses[b]);
    d.attached[b] = true;
  }
}

void Session::detachFromDevice(const EntryDesc &e, EntryState &st) noexcept {
  if (!st.device)
    return;
  for (size_t b = 0; b < e.buffers.size(); ++b)
    if (st.device->attached[b]) {
      device_->detach(st.halideBuffers[b]);
      st.device->attached[b] = false;
    }
}

// The device holds every buffer's current value: a stage that runs on the host copies
// what it reads down first, and the kernel's output starts clean.
void Session::beginDeviceStep(const StepDesc &step, EntryState &st) {
  for (size_t a = 0; a < step.args.size(); ++a) {
    halide_buffer_t &hb = st.halideBuffers[size_t(step.args[a])];
    hb.flags = 0;
    if (a < firstOutput(step))
      hb.set_device_dirty(hb.device != 0); // a device that aliases host memory has none
  }
}

void Session::endDeviceStep(const StepDesc &step, EntryState &st, bool failed) {
  for (size_t a = firstOutput(step); a < step.args.size(); ++a) {
    halide_buffer_t &out = st.halideBuffers[size_t(step.args[a])];
    if (!failed && out.host_dirty())
      device_->copyToDevice(out);
  }
  for (int arg : step.args)
    st.halideBuffers[size_t(arg)].flags = 0;
}

// An output viewing an input or a parameter is already on the host (the caller's or
// the weights' memory, which is never written).
void Session::recordDeviceOutputs(const EntryDesc &e, const EntryState &st) {
  for (Output &out : outputs_) {
    size_t b = size_t(out.desc->buffer);
    BufferKind root = e.buffers[size_t(e.buffers[b].root)].kind;
    out.onDevice = root == BufferKind::Temp || root == BufferKind::State;
    out.address = st.device->addresses[b];
    out.span = spanOf(st.shapes[b], st.strides[b], e.buffers[b].dtype);
  }
}

void Session::downloadOutput(const Output &out) const {
  if (!out.onDevice)
    return;
  device_->download(const_cast<void *>(out.data), out.address, out.span);
  out.onDevice = false;
}

kiln_tensor Session::state(const char *name) const {
  kiln_tensor t = states_.get(name); // validates the name and that the state is set
  if (!device_)
    return t;
  const auto &states = model_->manifest().states;
  for (size_t s = 0; s < states.size(); ++s)
    if (stateOnDevice_[s] && states[s].name == name) {
      device_->download(const_cast<void *>(t.data), deviceStates_[s]->address(),
                        states_.stateBytes(s));
      stateOnDevice_[s] = false;
    }
  return t;
}

// Row i of every set state becomes its old row rows[i], copied on the device into a
// spare block that then swaps in (kept for the next gather); runs of consecutive rows go
// as one copy.
void Session::gatherOnDevice(const int32_t *rows, size_t count) {
  std::vector<uint64_t> rowBytes(states_.size());
  // A row count over 2^31 - 1 is refused by the host's checks below.
  for (size_t s = 0; s < states_.size() && count <= size_t(INT32_MAX); ++s)
    if (states_.isSet(s)) {
      rowBytes[s] = states_.rowBytes(s);
      reserveBlock(deviceStateSpares_[s], *device_, rowBytes[s] * count);
    }
  states_.gather(rows, count, /*moveRows=*/false); // validates; throws before any move
  for (size_t s = 0; s < states_.size(); ++s) {
    if (!states_.isSet(s))
      continue;
    DeviceAddress from = deviceStates_[s]->address(),
                  to = deviceStateSpares_[s]->address();
    uint64_t bytes = rowBytes[s];
    for (size_t i = 0, run; i < count && bytes; i += run) {
      for (run = 1; i + run < count && rows[i + run] == rows[i] + int32_t(run); ++run) {
      }
      device_->copy(to + i * bytes, from + uint64_t(rows[i]) * bytes, run * bytes);
    }
    deviceStates_[s].swap(deviceStateSpares_[s]);
    stateOnDevice_[s] = true;
  }
}

} // namespace kiln::rt
