//===- CudaDevice.cpp - A CUDA model's device, through its own Halide runtime -===//
//
// The Halide runtime linked into a host-cuda model library carries Halide's CUDA module,
// which loads libcuda when first used. Every device operation goes through the
// library's exported halide_* functions, so libkiln_runtime itself needs no CUDA library
// and a CPU model never touches one. With Halide's CUDA interface a buffer's `device`
// field is the CUdeviceptr itself, so blocks are plain addresses that views offset.
//
//===----------------------------------------------------------------------===//

#include "Device.h"

#include "Error.h"
#include "HalideErrors.h"

#include <algorithm>
#include <atomic>

namespace kiln::rt {

namespace {

using Interface = const halide_device_interface_t *;

// One contiguous byte range of host or device memory as a Halide buffer.
struct ByteBuffer {
  halide_dimension_t dims[2];
  halide_buffer_t buffer{};
  // `bytes` as [64, bytes / 64] when it divides, else as one dimension (at most
  // kChunk bytes): Halide's extents are 32-bit.
  ByteBuffer(void *host, uint64_t bytes) {
    buffer.type = halide_type_t(halide_type_uint, 8);
    buffer.host = static_cast<uint8_t *>(host);
    buffer.dim = dims;
    if (bytes % 64 == 0 && bytes > 0) {
      dims[0] = halide_dimension_t(0, 64, 1);
      dims[1] = halide_dimension_t(0, int32_t(bytes / 64), 64);
      buffer.dimensions = 2;
    } else {
      dims[0] = halide_dimension_t(0, int32_t(bytes), 1);
      buffer.dimensions = 1;
    }
  }
};

// Allocations are whole 64-byte rows of a [64, n] buffer.
uint64_t roundUp(uint64_t bytes) {
  return std::max<uint64_t>(64, (bytes + 63) / 64 * 64);
}

// Copies go in pieces Halide's 32-bit extents can describe.
constexpr uint64_t kChunk = uint64_t(1) << 30;

// The last message Halide reported (its messages arrive joined by "; "), which names
// the cause: "Could not find cuda system libraries", "CUDA error: ...".
std::string lastReason(const HalideErrorScope &scope, int rc) {
  std::string message = scope.message();
  size_t cut = message.rfind("; ");
  if (cut != std::string::npos)
    message = message.substr(cut + 2);
  return message.empty() ? cat("Halide error code ", rc, " with no message") : message;
}

class CudaDevice final : public Device {
public:
  explicit CudaDevice(const std::function<void *(const char *)> &symbol) {
    auto get = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(symbol(name));
      if (!fn)
        fail(KILN_STATUS_INVALID_MODEL,
             "the model's target has 'cuda' but its library "
             "does not export ",
             name, " (it was not linked with Halide's CUDA runtime)");
    };
    get(interfaceFn_, "halide_cuda_device_interface");
    get(malloc_, "halide_device_malloc");
    get(free_, "halide_device_free");
    get(wrap_, "halide_device_wrap_native");
    get(detachNative_, "halide_device_detach_native");
    get(toDevice_, "halide_copy_to_device");
    get(toHost_, "halide_copy_to_host");
    get(bufferCopy_, "halide_buffer_copy");
  }

  const char *name() const override { return "CUDA"; }

  void probe() override {
    if (probed_)
      return;
    HalideErrorScope scope;
    ByteBuffer b(nullptr, 64);
    int rc = malloc_(nullptr, &b.buffer, iface());
    if (rc != 0)
      fail(KILN_STATUS_FAILED_PRECONDITION, "no CUDA device: ", lastReason(scope, rc),
           " (the model's kernels were compiled for CUDA: a session needs an NVIDIA GPU "
           "and its driver, libcuda.so)");
    free_(nullptr, &b.buffer);
    probed_ = true;
  }

  DeviceAddress allocate(uint64_t bytes) override {
    bytes = roundUp(bytes);
    if (bytes / 64 > uint64_t(INT32_MAX))
      fail(KILN_STATUS_RESOURCE_EXHAUSTED, "allocating ", bytes,
           " bytes of CUDA device memory: over the 2^31 - 1 rows of 64 bytes one Halide "
           "buffer describes");
    HalideErrorScope scope;
    ByteBuffer b(nullptr, bytes);
    int rc = malloc_(nullptr, &b.buffer, iface());
    if (rc != 0)
      fail(KILN_STATUS_RESOURCE_EXHAUSTED, "allocating ", bytes,
           " bytes of CUDA device memory failed: ", lastReason(scope, rc));
    DeviceAddress address = b.buffer.device;
    detachNative_(nullptr, &b.buffer); // the block is freed by address (release)
    return address;
  }

  void release(DeviceAddress address, uint64_t bytes) noexcept override {
    if (!address)
      return;
    ByteBuffer b(nullptr, roundUp(bytes));
    HalideErrorScope scope; // a failing free has no one to tell
    if (wrap_(nullptr, &b.buffer, address, iface()) == 0)
      free_(nullptr, &b.buffer);
  }

  void upload(DeviceAddress to, const void *from, uint64_t bytes) override {
    forChunks(bytes, "copying to the device", [&](uint64_t at, uint64_t n) {
      ByteBuffer b(const_cast<uint8_t *>(static_cast<const uint8_t *>(from)) + at, n);
      return withDevice(b.buffer, to + at, [&] {
        b.buffer.set_host_dirty(true);
        return toDevice_(nullptr, &b.buffer, iface());
      });
    });
  }

  void download(void *to, DeviceAddress from, uint64_t bytes) override {
    forChunks(bytes, "copying from the device", [&](uint64_t at, uint64_t n) {
      ByteBuffer b(static_cast<uint8_t *>(to) + at, n);
      return withDevice(b.buffer, from + at, [&] {
        b.buffer.set_device_dirty(true);
        return toHost_(nullptr, &b.buffer);
      });
    });
  }

  void copy(DeviceAddress to, DeviceAddress from, uint64_t bytes) override {
    forChunks(bytes, "copying on the device", [&](uint64_t at, uint64_t n) {
      ByteBuffer src(nullptr, n), dst(nullptr, n);
      return withDevice(src.buffer, from + at, [&] {
        return withDevice(dst.buffer, to + at, [&] {
          return bufferCopy_(nullptr, &src.buffer, iface(), &dst.buffer);
        });
      });
    });
  }

  void attach(halide_buffer_t &buffer, DeviceAddress address) override {
    HalideErrorScope scope;
    if (int rc = wrap_(nullptr, &buffer, address, iface()))
      fail(KILN_STATUS_INTERNAL,
           "attaching device memory to a buffer failed: ", lastReason(scope, rc));
  }

  void detach(halide_buffer_t &buffer) noexcept override {
    if (buffer.device)
      detachNative_(nullptr, &buffer);
    buffer.flags = 0;
  }

  void copyToDevice(halide_buffer_t &buffer) override {
    HalideErrorScope scope;
    if (int rc = toDevice_(nullptr, &buffer, iface()))
      fail(KILN_STATUS_KERNEL_ERROR,
           "copying a kernel's result to the device failed: ", lastReason(scope, rc));
  }

private:
  Interface iface() const { return interfaceFn_(); }

  // Runs op(address) with `buffer` pointing at `address`, and detaches it again.
  template <typename Op>
  int withDevice(halide_buffer_t &buffer, DeviceAddress address, Op &&op) {
    if (int rc = wrap_(nullptr, &buffer, address, iface()))
      return rc;
    int rc = op();
    detachNative_(nullptr, &buffer);
    return rc;
  }

  template <typename Op> void forChunks(uint64_t bytes, const char *what, Op &&op) {
    HalideErrorScope scope;
    for (uint64_t at = 0; at < bytes; at += kChunk)
      if (int rc = op(at, std::min(kChunk, bytes - at)))
        fail(KILN_STATUS_KERNEL_ERROR, what, " (", bytes,
             " bytes) failed: ", lastReason(scope, rc));
  }

  Interface (*interfaceFn_)() = nullptr;
  int (*malloc_)(void *, halide_buffer_t *, Interface) = nullptr;
  int (*free_)(void *, halide_buffer_t *) = nullptr;
  int (*wrap_)(void *, halide_buffer_t *, uint64_t, Interface) = nullptr;
  int (*detachNative_)(void *, halide_buffer_t *) = nullptr;
  int (*toDevice_)(void *, halide_buffer_t *, Interface) = nullptr;
  int (*toHost_)(void *, halide_buffer_t *) = nullptr;
  int (*bufferCopy_)(void *, const halide_buffer_t *, Interface,
                     halide_buffer_t *) = nullptr;
  std::atomic<bool> probed_{false}; // sessions are created on any thread
};

} // namespace

bool DeviceBlock::reserve(uint64_t bytes) {
  if (bytes <= capacity_ && address_)
    return false;
  reset();
  address_ = device_->allocate(bytes);
  capacity_ = roundUp(bytes);
  return true;
}

void DeviceBlock::reset() noexcept {
  device_->release(address_, capacity_);
  address_ = 0;
  capacity_ = 0;
}

void DeviceBlock::swap(DeviceBlock &other) noexcept {
  std::swap(device_, other.device_);
  std::swap(address_, other.address_);
  std::swap(capacity_, other.capacity_);
}

std::unique_ptr<Device>
deviceForTarget(const std::string &target,
                const std::function<void *(const char *)> &symbol) {
  // Halide target strings are '-'-separated features: "x86-64-linux-...-cuda-...".
  std::string padded = "-" + target + "-";
  if (padded.find("-cuda-") == std::string::npos)
    return nullptr;
  return std::make_unique<CudaDevice>(symbol);
}

} // namespace kiln::rt
