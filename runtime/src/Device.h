//===- Device.h - The memory of the device a model's kernels run on -*- C++ -*-===//
//
// What the runtime needs of a GPU, as plain memory operations: a CUDA model reaches its
// device through the Halide runtime inside its own library (CudaDevice.cpp), so
// libkiln_runtime links no CUDA library; a unit test drives the same bookkeeping with a
// counting fake (docs/gpu.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DEVICE_H
#define KILN_RUNTIME_DEVICE_H

#include <HalideRuntime.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace kiln::rt {

/// A device address: for CUDA a CUdeviceptr, so an offset into a block is an addition.
using DeviceAddress = uint64_t;

class Device {
public:
  virtual ~Device() = default;
  /// "CUDA": what the messages call it.
  virtual const char *name() const = 0;
  /// Whether the device can be used; throws FAILED_PRECONDITION "no CUDA device: REASON"
  /// (the driver's or Halide's reason) when it cannot. Cheap after the first success.
  virtual void probe() = 0;
  /// Throws RESOURCE_EXHAUSTED naming `bytes` when the device memory is exhausted.
  virtual DeviceAddress allocate(uint64_t bytes) = 0;
  /// `bytes`: as allocated (Halide's allocation cache files a block by its size).
  virtual void release(DeviceAddress address, uint64_t bytes) noexcept = 0;
  virtual void upload(DeviceAddress to, const void *from, uint64_t bytes) = 0;
  virtual void download(void *to, DeviceAddress from, uint64_t bytes) = 0;
  /// A copy between two places of the device memory, which never visits the host.
  virtual void copy(DeviceAddress to, DeviceAddress from, uint64_t bytes) = 0;
  /// Points `buffer` (whose host pointer is set) at `address`: the kernels read and
  /// write the device memory there. detach undoes it before the buffer is rebound.
  virtual void attach(halide_buffer_t &buffer, DeviceAddress address) = 0;
  virtual void detach(halide_buffer_t &buffer) noexcept = 0;
  /// Moves a buffer a kernel left current on the host (a stage it ran on the CPU) to its
  /// device memory.
  virtual void copyToDevice(halide_buffer_t &buffer) = 0;
};

/// Device memory that only grows, as TempBlock does on the host; contents are lost when
/// it grows.
class DeviceBlock {
public:
  explicit DeviceBlock(Device &device) : device_(&device) {}
  ~DeviceBlock() { reset(); }
  DeviceBlock(const DeviceBlock &) = delete;
  DeviceBlock &operator=(const DeviceBlock &) = delete;
  /// Returns true when it had to allocate.
  bool reserve(uint64_t bytes);
  void reset() noexcept;
  void swap(DeviceBlock &other) noexcept;
  DeviceAddress address() const { return address_; }
  uint64_t capacity() const { return capacity_; }

private:
  Device *device_;
  DeviceAddress address_ = 0;
  uint64_t capacity_ = 0;
};

/// The device of a model library compiled for `target` (a Halide target string), or null
/// when its kernels run on the CPU. `symbol` resolves a name in the library.
std::unique_ptr<Device>
deviceForTarget(const std::string &target,
                const std::function<void *(const char *name)> &symbol);

} // namespace kiln::rt

#endif // KILN_RUNTIME_DEVICE_H
