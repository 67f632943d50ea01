//===- Weights.h - A model's parameters -------------------------*- C++ -*-===//
//
// A model's parameters, mapped from a safetensors file and checked against the manifest,
// or converted from the checkpoint tensors it holds to the precision the model was
// compiled for (WeightsPlan.h says which tensor feeds each parameter).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_WEIGHTS_H
#define KILN_RUNTIME_WEIGHTS_H

#include "Manifest.h"
#include "Safetensors.h"
#include "WeightArena.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt {

class Model;

class Weights {
public:
  // Throws Error naming the file; INVALID_WEIGHTS lists every mismatch at once, since
  // fixing an export one error per run is miserable.
  Weights(const Manifest &manifest, const std::string &path);

  size_t parameterCount() const { return data_.size(); }
  const void *data(size_t parameter) const { return data_[parameter]; }
  /// The parameter as the model reads it: name, dtype, shape and data, valid while the
  /// weights live.
  kiln_tensor tensor(size_t parameter) const;
  /// Bytes of parameters read in place from the file's mapping, converted at load, and
  /// copied only to align them.
  const kiln_weights_stats &stats() const { return stats_; }
  // Whether this file was checked against the same parameter list as `manifest`'s.
  bool fits(const Manifest &manifest) const;
  const std::string &path() const { return file_.path(); }
  // Throws Error (FAILED_PRECONDITION) when the file was changed in place since it was
  // opened; a run checks this before it reads the mapped parameters.
  void checkUnchanged() const { file_.checkUnchanged(); }

  /// Where each parameter lives in the memory of `model`'s device: uploaded by the first
  /// call for that model library (one device context each) and kept until the weights
  /// are released, which retains the model till then. Thread-safe: the sessions of all
  /// threads share one copy. Throws the device's errors (RESOURCE_EXHAUSTED naming the
  /// bytes).
  const std::vector<uint64_t> &onDevice(const Model &model) const;

  mutable std::atomic<int> refs{1};

private:
  struct Resident; // one model's device copy
  struct ResidentDeleter {
    void operator()(Resident *r) const;
  };
  mutable std::mutex residentMutex_;
  mutable std::vector<std::unique_ptr<Resident, ResidentDeleter>> resident_;
  struct Signature {
    std::string name;
    kiln_dtype dtype;
    std::vector<int64_t> shape;
  };
  SafetensorsFile file_;
  std::vector<Signature> signatures_;
  std::vector<const void *> data_;
  struct FreeDeleter {
    void operator()(void *p) const;
  };
  using Block = std::unique_ptr<void, FreeDeleter>;
  // Converted and realigned tensors, 64-byte aligned, on huge pages where there are
  // some; a widened f32 tensor that a parameter keeps as it is stays in its Block.
  WeightArena arena_;
  std::vector<Block> copies_;
  kiln_weights_stats stats_{};

  /// A 64-byte aligned block of `bytes` for a temporary, not yet owned by the weights.
  static Block allocate(size_t bytes);
  /// Takes `block` as the data of `parameter`.
  void own(size_t parameter, Block block);
  /// `bytes` of the arena as the data of `parameter`, to be filled by the caller.
  void *place(size_t parameter, size_t bytes);
  /// Computes the parameters in `users` from their common `source`.
  void convert(const Manifest &manifest, const SafetensorsTensor &source,
               const std::vector<size_t> &users);
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_WEIGHTS_H
