//===- States.h - Tensors a session keeps between runs ----------*- C++ -*-===//
//
// The tensors a session keeps between runs (docs/manifest.md, "States, value dimensions
// and strided views"): the dimensions they bind in a run, their (re)creation, and the
// reordering of their batch rows that a beam search asks for.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_STATES_H
#define KILN_RUNTIME_STATES_H

#include "Manifest.h"
#include "TempBlock.h"

#include <climits>
#include <string>
#include <vector>

namespace kiln::rt {

class StateSet {
public:
  explicit StateSet(const Manifest &manifest);

  // Binds the slots named by the bare-name dims of the entry's state buffers that do not
  // create their state, from the states' current shapes (slots the inputs bound are
  // checked instead). Throws FAILED_PRECONDITION when such a state is not set (naming the
  // entries that create it), INVALID_ARGUMENT when a size disagrees.
  void bindDims(const EntryDesc &entry, std::vector<int64_t> &values) const;
  // Throws INVALID_ARGUMENT unless every such buffer's evaluated shape is its state's.
  void checkShapes(const EntryDesc &entry,
                   const std::vector<std::vector<int64_t>> &shapes,
                   const std::vector<int64_t> &values) const;
  // (Re)creates the states the entry creates with their buffers' evaluated shapes,
  // zero-filled, reusing memory that is large enough. Throws RESOURCE_EXHAUSTED.
  void create(const EntryDesc &entry, const std::vector<std::vector<int64_t>> &shapes);
  // The memory of a state (valid or not: a run binds it before its steps).
  uint8_t *data(int state) const { return slots_[size_t(state)].memory.bytes(); }
  // Forgets the states entries[entry] creates or writes: its run failed part-way.
  void forgetWritten(int entry) noexcept;

  // A run's write of `count` positions from `position` along `axis` of a state
  // (kiln.kv_append's plan); axis 0 and kEveryPosition: the whole state.
  static constexpr int64_t kEveryPosition = INT32_MAX;
  struct Append {
    int state;
    size_t axis;
    int64_t position;
    int64_t count;
    bool created; // by the same run: no position is written before it
  };
  // Throws INVALID_ARGUMENT when an append would skip positions: a state's positions are
  // written in order from 0 after its creation (writing one again is allowed), so a
  // read of positions 0 to P never sees one that no run wrote.
  void checkAppends(const EntryDesc &entry, const std::vector<Append> &appends) const;
  void recordAppends(const std::vector<Append> &appends);

  // kiln_session_gather_states: row i of every set state becomes its old row rows[i].
  // Validates everything and allocates before changing anything, so a failure (thrown)
  // leaves the states as they were. moveRows false: a device holds the rows and moves
  // them; only the shapes change here.
  void gather(const int32_t *rows, size_t count, bool moveRows = true);
  size_t size() const { return slots_.size(); }
  bool isSet(size_t state) const { return slots_[state].valid; }
  // Bytes of one row (dim 0) and of the whole state, with its current shape.
  uint64_t rowBytes(size_t state) const;
  uint64_t stateBytes(size_t state) const;
  void clear();
  // kiln_session_get_state. Throws NOT_FOUND / FAILED_PRECONDITION.
  kiln_tensor get(const char *name) const;
  uint64_t bytes() const;
  uint64_t rowsCopied() const { return rowsCopied_; }

private:
  enum class Unset { NeverCreated, RunFailed, Cleared };
  struct Slot {
    TempBlock memory;
    std::vector<int64_t> shape;
    bool valid = false;
    Unset why = Unset::NeverCreated;
    int failedEntry = -1;  // Unset::RunFailed: the entry whose run failed
    int64_t positions = 0; // positions 0 .. positions - 1 appended since creation
  };

  // Why a state is not set and what to do: "which no run has created; run 'decode_start'
  // first" (relative) or "no run has created it; run 'decode_start' first".
  std::string unsetReason(size_t state, bool relative) const;
  std::string creatorsHint(const std::vector<size_t> &states) const;

  const Manifest &manifest_;
  std::vector<Slot> slots_; // one per manifest state; sized once (a Slot does not move)
  uint64_t rowsCopied_ = 0;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_STATES_H
