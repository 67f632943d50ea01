//===- Session.h - Running a model's entry points ---------------*- C++ -*-===//
//
// Runs a model's entry points; owns the temporaries, the states and the outputs.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SESSION_H
#define KILN_RUNTIME_SESSION_H

#include "ArenaPlan.h"
#include "Device.h"
#include "Model.h"
#include "OutputBuffer.h"
#include "Profiler.h"
#include "States.h"
#include "TempBlock.h"
#include "Weights.h"

#include <HalideRuntime.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::rt {

class Session {
public:
  // Retains model and weights (weights may be null for a model without parameters).
  Session(const Model *model, const Weights *weights,
          const kiln_session_options &options);
  ~Session();
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  void run(const char *entryName, const kiln_tensor *inputs, size_t count);

  size_t outputCount() const { return outputs_.size(); }
  // Throws NOT_FOUND / FAILED_PRECONDITION.
  kiln_tensor output(const char *name) const;
  kiln_tensor outputAt(size_t index) const;
  /// Hands the block of an output over (kiln_session_detach_output); the entry's next run
  /// allocates another. Throws NOT_FOUND / FAILED_PRECONDITION.
  std::unique_ptr<OutputBuffer> detachOutput(const char *name);
  kiln_session_stats stats() const;
  /// The profiler of a session created with options.profile; throws FAILED_PRECONDITION
  /// otherwise.
  Profiler &profiler() const;

  // States (see StateSet). Gathering or clearing makes outputs that are views of a
  // state's memory unreadable.
  kiln_tensor state(const char *name) const;
  void gatherStates(const int32_t *rows, size_t count);
  void clearStates();

  /// Marks the session in use for one C call. The API allows one thread at a time per
  /// session; a call that finds another thread inside gets FAILED_PRECONDITION instead of
  /// racing it on the buffers, states and outputs.
  class InUse {
  public:
    explicit InUse(const Session &session); // throws FAILED_PRECONDITION
    ~InUse() { session_.leave(); }
    InUse(const InUse &) = delete;
    InUse &operator=(const InUse &) = delete;

  private:
    const Session &session_;
  };
  /// For the C calls that return no status: true when the session was free and is now
  /// held (release with leave()).
  bool tryEnter() const { return !busy_.exchange(true, std::memory_order_acquire); }
  void leave() const { busy_.store(false, std::memory_order_release); }

private:
  static constexpr uint64_t kAllSlots = ~uint64_t(0);
  // Per-entry scratch, kept between runs so a steady-state run does not allocate. The
  // shapes, layouts and arena offsets depend on the bound dimensions only: they are
  // evaluated once per set of dimension values and reused while the values repeat; when
  // some values change (a decoding step's position), only the buffers that read them
  // are evaluated again.
  struct EntryState {
    std::vector<int64_t> dimValues;
    std::vector<int64_t> plannedDims; // what the members below were evaluated for
    bool planned = false;             // false: evaluate every buffer on the next run
    std::vector<uint64_t> slotsRead;  // per buffer: the dimension slots it reads, as bits
    // Whether buffer b must be evaluated again for the slots in `changed`: kAllSlots
    // evaluates every buffer, static ones included.
    bool reads(size_t b, uint64_t changed) const {
      return changed == kAllSlots || (slotsRead[b] & changed) != 0;
    }
    std::vector<std::vector<int64_t>> shapes;   // per buffer
    std::vector<std::vector<int64_t>> strides;  // per buffer, in its root's elements
    std::vector<int64_t> offsets;               // per buffer, in its root's elements
    std::vector<size_t> temps;                  // the temps in the arena, in order
    std::unique_ptr<ArenaPlanner> arenaPlanner; // for their live ranges
    std::vector<uint64_t> tempBytes;            // per temp: its size in the current plan
    std::vector<uint64_t> arenaOffsets; // per buffer, in bytes; used by temps only
    uint64_t arenaBytes = 0;
    std::vector<std::vector<halide_dimension_t>> halideDims; // per buffer, reversed
    std::vector<halide_buffer_t> halideBuffers; // all but host set when planned
    std::vector<StateSet::Append> appends;      // the positions a run writes
    TempBlock arena; // every temp of the entry but the outputs', at arenaOffsets
    // Per buffer: the memory of an output's temp, which the next run must not reuse;
    // null for any other buffer.
    std::vector<std::unique_ptr<TempBlock>> outputBlocks;
    std::vector<void *> argv;
    struct OnDevice; // the device half of a device session's entry (SessionDevice.cpp)
    struct OnDeviceDeleter {
      void operator()(OnDevice *d) const;
    };
    std::unique_ptr<OnDevice, OnDeviceDeleter> device;
    // A trimmed run's ("trim", SessionTrim.cpp) inputs cut to the longest sequence, and
    // its outputs padded back, per input and per output (null where not cut or padded).
    std::vector<kiln_tensor> cutInputs;
    std::vector<std::vector<int64_t>> cutShapes;
    std::vector<std::unique_ptr<TempBlock>> cutBlocks, paddedBlocks;
  };
  struct Output {
    const TensorDesc *desc;
    std::vector<int64_t> shape;
    const void *data;
    int state;             // the state whose memory it views, or -1
    bool detached = false; // its block was handed over (detachOutput)
    // A device session's output stays on the device until it is read.
    mutable bool onDevice = false;
    DeviceAddress address = 0;
    uint64_t span = 0; // bytes from its first element to past its last
    // A trimmed run's output padded back to the full length: the block that holds it.
    TempBlock *padded = nullptr;
  };

  EntryState &state(int entry);
  void bindAllDims(const EntryDesc &e, EntryState &st,
                   const std::vector<const kiln_tensor *> &inputs);
  static uint64_t changedSlots(const EntryState &st);
  // Evaluate (describe) the buffers that read a slot in `changed`.
  void evaluateShapes(const EntryDesc &e, EntryState &st,
                      const std::vector<const kiln_tensor *> &inputs, uint64_t changed);
  void evaluateLayouts(const EntryDesc &e, EntryState &st, uint64_t changed);
  void planTemps(const EntryDesc &e, EntryState &st);
  void allocateTemps(const EntryDesc &e, EntryState &st);
  void describeBuffers(const EntryDesc &e, EntryState &st, uint64_t changed);
  void bindBuffers(const EntryDesc &e, EntryState &st,
                   const std::vector<const kiln_tensor *> &inputs);
  std::optional<StateSet::Append> appendOf(const EntryDesc &e, const EntryState &st,
                                           size_t b) const;
  std::vector<StateSet::Append> appendsOf(const EntryDesc &e, const EntryState &st) const;
  void checkAppendFits(const EntryDesc &e, const EntryState &st, size_t b) const;
  void runSteps(int entry, const EntryDesc &e, EntryState &st);
  // SessionTrim.cpp: for an entry with "trim", cuts the inputs to the longest of the
  // lengths and binds the dimension to it; returns the full length, or -1 when the run
  // is whole. padOutputs writes the outputs back at that length, zeros past the cut,
  // on the host (a device session's are downloaded first).
  int64_t cutInputs(const EntryDesc &e, EntryState &st,
                    std::vector<const kiln_tensor *> &inputs);
  void padOutputs(const EntryDesc &e, EntryState &st, int64_t fullLength);
  void syncFromDevice(const EntryDesc &e, const StepDesc &step, EntryState &st,
                      bool failed);
  // The device path (SessionDevice.cpp; docs/gpu.md), taken when device_ is set.
  void reserveOnDevice(const EntryDesc &e, EntryState &st);
  void bindOnDevice(const EntryDesc &e, EntryState &st,
                    const std::vector<const kiln_tensor *> &inputs);
  void detachFromDevice(const EntryDesc &e, EntryState &st) noexcept;
  void beginDeviceStep(const StepDesc &step, EntryState &st);
  void endDeviceStep(const StepDesc &step, EntryState &st, bool failed);
  void recordDeviceOutputs(const EntryDesc &e, const EntryState &st);
  void downloadOutput(const Output &out) const;
  void gatherOnDevice(const int32_t *rows, size_t count);
  size_t findOutput(const char *name) const; // its index in outputs_
  void checkReadable(const Output &out) const;

  const Model *model_;
  const Weights *weights_;
  kiln_session_options options_;
  std::vector<std::unique_ptr<EntryState>> entries_;
  std::vector<Output> outputs_;
  StateSet states_;
  int lastEntry_ = -1;
  bool lastRunFailed_ = false;
  bool statesChangedSinceRun_ = false; // by a gather or clear
  kiln_session_stats stats_{};
  std::unique_ptr<Profiler> profiler_; // null unless options.profile
  mutable std::atomic<bool> busy_{false};
  // Null for a CPU model. Otherwise the kernels run on it: the weights are resident, the
  // temporaries and states live in these blocks, and the host memory above mirrors them.
  Device *device_ = nullptr;
  const std::vector<DeviceAddress> *deviceWeights_ = nullptr;
  std::vector<std::unique_ptr<DeviceBlock>> deviceStates_, deviceStateSpares_;
  mutable std::vector<bool> stateOnDevice_; // per state: the host copy is stale
};

void releaseModel(const Model *model);
void releaseWeights(const Weights *weights);

} // namespace kiln::rt

#endif // KILN_RUNTIME_SESSION_H
