//===- Model.h - A loaded model library -------------------------*- C++ -*-===//
//
// A loaded model library: its manifest and resolved kernel entry points.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "Device.h"
#include "Manifest.h"

#include <HalideRuntime.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

/// The Halide element type of `dtype`, as kernels declare their buffers (bf16 is Halide's
/// bfloat, f16 its 16-bit float).
halide_type_t halideType(kiln_dtype dtype);

class Model {
public:
  using KernelFn = int (*)(void **args);
  using BufferFn = int (*)(void *userContext, halide_buffer_t *buffer);

  // Throws Error: NOT_FOUND, INVALID_MODEL ("... is not a Kiln model"), INCOMPATIBLE.
  explicit Model(const std::string &path);
  ~Model();
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  const std::string &path() const { return path_; }
  const Manifest &manifest() const { return *manifest_; }
  const std::string &manifestJson() const { return manifestJson_; }
  KernelFn kernel(int index) const { return kernels_[index]; }
  const std::string &kernelName(int index) const { return manifest_->kernels[index]; }

  // The model's own Halide runtime, for buffers a GPU kernel left on the device.
  BufferFn copyToHost() const { return copyToHost_; }
  BufferFn deviceFree() const { return deviceFree_; }
  /// Sets the thread count of the library's Halide thread pool (0: Halide's default);
  /// null when the library does not export halide_set_num_threads.
  using SetThreadsFn = int (*)(int threads);
  SetThreadsFn setThreads() const { return setThreads_; }
  /// The device the kernels run on (docs/gpu.md); null for a CPU model.
  Device *device() const { return device_.get(); }
  /// Replaces the device: the unit tests drive the device path with a fake one.
  void setDevice(std::unique_ptr<Device> device) { device_ = std::move(device); }

  mutable std::atomic<int> refs{1};

private:
  void *symbol(const std::string &name) const;
  void resolveKernels();
  void checkKernelSignatures() const;
  void installHalideHandlers();

  std::string path_;
  void *handle_ = nullptr;
  std::string manifestJson_;
  std::unique_ptr<Manifest> manifest_;
  std::vector<KernelFn> kernels_;
  std::vector<const halide_filter_metadata_t *> metadata_; // null where not exported
  BufferFn copyToHost_ = nullptr;
  BufferFn deviceFree_ = nullptr;
  SetThreadsFn setThreads_ = nullptr;
  std::unique_ptr<Device> device_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_MODEL_H
