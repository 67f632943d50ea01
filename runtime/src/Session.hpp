// Session.hpp - runs a model's entry points; owns the temporaries and the outputs.
#pragma once

#include "Model.hpp"
#include "Weights.hpp"

#include <HalideRuntime.h>

#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

// 64-byte aligned heap memory that can only grow.
class TempBlock {
public:
  TempBlock() = default;
  ~TempBlock();
  TempBlock(const TempBlock&) = delete;
  TempBlock& operator=(const TempBlock&) = delete;
  // Returns true when it had to allocate.
  bool reserve(size_t bytes);
  void reset();
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }

private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

class Session {
public:
  // Retains model and weights (weights may be null for a model without parameters).
  Session(const Model* model, const Weights* weights, const kiln_session_options& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void run(const char* entryName, const kiln_tensor* inputs, size_t count);

  size_t outputCount() const { return outputs_.size(); }
  // Throws NOT_FOUND / FAILED_PRECONDITION.
  kiln_tensor output(const char* name) const;
  kiln_tensor outputAt(size_t index) const;
  kiln_session_stats stats() const;

private:
  // Per-entry scratch, kept between runs so a steady-state run does not allocate.
  struct EntryState {
    std::vector<int64_t> dimValues;
    std::vector<std::vector<int64_t>> shapes;              // per buffer
    std::vector<std::vector<halide_dimension_t>> halideDims; // per buffer, reversed
    std::vector<halide_buffer_t> halideBuffers;
    std::vector<std::unique_ptr<TempBlock>> temps; // per buffer; used by temp buffers only
    std::vector<void*> argv;
  };
  struct Output {
    const TensorDesc* desc;
    std::vector<int64_t> shape;
    const void* data;
  };

  EntryState& state(int entry);
  void evaluateShapes(const EntryDesc& e, EntryState& st,
                      const std::vector<const kiln_tensor*>& inputs);
  void allocateTemps(const EntryDesc& e, EntryState& st);
  void bindBuffers(const EntryDesc& e, EntryState& st,
                   const std::vector<const kiln_tensor*>& inputs);
  void runSteps(const EntryDesc& e, EntryState& st);
  void syncFromDevice(const EntryDesc& e, const StepDesc& step, EntryState& st, bool failed);
  const Output& findOutput(const char* name) const;

  const Model* model_;
  const Weights* weights_;
  kiln_session_options options_;
  std::vector<std::unique_ptr<EntryState>> entries_;
  std::vector<Output> outputs_;
  int lastEntry_ = -1;
  bool lastRunFailed_ = false;
  kiln_session_stats stats_{};
};

void releaseModel(const Model* model);
void releaseWeights(const Weights* weights);

} // namespace kiln::rt
