// States.cpp - session states: binding, creation, failure, and the in-place row gather.
#include "States.h"

#include "DType.h"
#include "Error.h"
#include "Inputs.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace kiln::rt {

namespace {

// "B = 2, W = 3": the values of the names a buffer's dims use that are bound.
std::string bufferBindings(const EntryDesc &e, const BufferDesc &b,
                           const std::vector<int64_t> &values) {
  std::vector<int> seen;
  std::string out;
  for (const DimExpr &d : b.dims)
    for (size_t n = 0; n < d.names().size(); ++n) {
      int slot = d.slotOfName(n);
      if (std::find(seen.begin(), seen.end(), slot) != seen.end() || values[slot] < 0)
        continue;
      seen.push_back(slot);
      out += cat(out.empty() ? "" : ", ", e.dimNames[slot], " = ", values[slot]);
    }
  return out;
}

// The order in which a gather copies rows in place. Row i of the result is old row
// rows[i]; a row whose source is itself is left alone. A destination is written only once
// every pending copy that reads its old contents has run; what is left then is cycles of
// a permutation, and each is broken by staging one row aside.
struct GatherPlan {
  enum class Kind : uint8_t { Copy, Stage, FromStage };
  struct Op {
    Kind kind;
    int64_t dst; // Copy, FromStage
    int64_t src; // Copy, Stage
  };
  std::vector<Op> ops;
  uint64_t moved = 0; // destinations written
};

GatherPlan planGather(const int32_t *rows, int64_t count, int64_t n) {
  GatherPlan plan;
  std::vector<uint8_t> pending(size_t(count), 0);
  std::vector<int64_t> readers(size_t(n), 0); // pending copies that read each old row
  for (int64_t i = 0; i < count; ++i)
    if (i >= n || rows[i] != i) {
      pending[size_t(i)] = 1;
      ++readers[size_t(rows[i])];
      ++plan.moved;
    }
  plan.ops.reserve(size_t(plan.moved) + 8);
  std::vector<int64_t> ready;
  for (int64_t i = 0; i < count; ++i)
    if (pending[size_t(i)] && (i >= n || readers[size_t(i)] == 0))
      ready.push_back(i);
  int64_t staged = -1;
  auto write = [&](int64_t i) {
    int64_t src = rows[i];
    if (src == staged)
      plan.ops.push_back({GatherPlan::Kind::FromStage, i, -1});
    else
      plan.ops.push_back({GatherPlan::Kind::Copy, i, src});
    pending[size_t(i)] = 0;
    if (--readers[size_t(src)] == 0 && src < count && pending[size_t(src)])
      ready.push_back(src);
  };
  auto drain = [&] {
    while (!ready.empty()) {
      int64_t i = ready.back();
      ready.pop_back();
      write(i);
    }
  };
  drain();
  for (int64_t i = 0; i < count; ++i) {
    if (!pending[size_t(i)])
      continue;
    // i lies on a cycle: keep its old row aside, write it, and follow the cycle.
    plan.ops.push_back({GatherPlan::Kind::Stage, -1, i});
    staged = i;
    write(i);
    drain();
    staged = -1;
  }
  return plan;
}

} // namespace

StateSet::StateSet(const Manifest &manifest)
    : manifest_(manifest), slots_(manifest.states.size()) {}

std::string StateSet::creatorsHint(const std::vector<size_t> &states) const {
  std::vector<int> entries;
  for (size_t s : states)
    for (int e : manifest_.states[s].creators)
      if (std::find(entries.begin(), entries.end(), e) == entries.end())
        entries.push_back(e);
  if (entries.empty())
    return "no entry creates it";
  std::string out = "run ";
  for (size_t i = 0; i < entries.size(); ++i)
    out += cat(i == 0                    ? ""
               : i + 1 == entries.size() ? " or "
                                         : ", ",
               "'", manifest_.entries[size_t(entries[i])].name, "'");
  return out + " first";
}

std::string StateSet::unsetReason(size_t state, bool relative) const {
  const Slot &slot = slots_[state];
  std::string why;
  switch (slot.why) {
  case Unset::NeverCreated:
    why = relative ? "which no run has created" : "no run has created it";
    break;
  case Unset::RunFailed:
    why = cat(relative ? "which" : "it", " was forgotten when a run of '",
              manifest_.entries[size_t(slot.failedEntry)].name, "' failed");
    break;
  case Unset::Cleared:
    why = relative ? "which kiln_session_clear_states cleared"
                   : "kiln_session_clear_states cleared it";
    break;
  }
  return why + "; " + creatorsHint({state});
}

// Who bound a slot before buffers[upTo] (a state buffer) tried to: for messages.
static std::string binderOf(const EntryDesc &e, const Manifest &m, int slot,
                            size_t upTo) {
  int input = inputBinding(e, slot);
  if (input >= 0)
    return cat("input '", e.inputs[size_t(input)].name, "'");
  for (size_t i = 0; i < upTo; ++i) {
    const BufferDesc &b = e.buffers[i];
    if (b.kind == BufferKind::State && !b.create &&
        std::find(b.bindSlot.begin(), b.bindSlot.end(), slot) != b.bindSlot.end())
      return cat("state '", m.states[size_t(b.index)].name, "'");
  }
  return "an earlier binding";
}

void StateSet::bindDims(const EntryDesc &e, std::vector<int64_t> &values) const {
  // Inputs bind first, so a slot bound here that an input also binds is checked instead.
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    const BufferDesc &b = e.buffers[i];
    if (b.kind != BufferKind::State || b.create)
      continue;
    const Slot &slot = slots_[size_t(b.index)];
    const StateDesc &desc = manifest_.states[size_t(b.index)];
    if (!slot.valid)
      fail(KILN_STATUS_FAILED_PRECONDITION, "entry '", e.name, "' reads state '",
           desc.name, "', ", unsetReason(size_t(b.index), true));
    for (size_t d = 0; d < b.dims.size(); ++d) {
      int s = b.bindSlot[d];
      if (s < 0)
        continue;
      if (values[s] < 0)
        values[s] = slot.shape[d];
      else if (values[s] != slot.shape[d])
        fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': state '", desc.name,
             "' has shape ", formatShape(slot.shape), " but the entry needs ",
             b.describe(), " with ", e.dimNames[s], " = ", values[s], " (from ",
             binderOf(e, manifest_, s, i), ")");
    }
  }
}

void StateSet::checkShapes(const EntryDesc &e,
                           const std::vector<std::vector<int64_t>> &shapes,
                           const std::vector<int64_t> &values) const {
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    const BufferDesc &b = e.buffers[i];
    if (b.kind != BufferKind::State || b.create)
      continue;
    const Slot &slot = slots_[size_t(b.index)];
    if (shapes[i] == slot.shape)
      continue;
    std::string with = bufferBindings(e, b, values);
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': state '",
         manifest_.states[size_t(b.index)].name, "' has shape ", formatShape(slot.shape),
         " but the entry needs ", b.describe(),
         with.empty() ? std::string() : " with " + with);
  }
}

void StateSet::create(const EntryDesc &e,
                      const std::vector<std::vector<int64_t>> &shapes) {
  for (size_t i = 0; i < e.buffers.size(); ++i) {
    const BufferDesc &b = e.buffers[i];
    if (b.kind != BufferKind::State || !b.create)
      continue;
    Slot &slot = slots_[size_t(b.index)];
    slot.valid = false; // its old value is gone from here on
    size_t bytes = size_t(elementCount(shapes[i])) * kiln_dtype_size(b.dtype);
    slot.memory.reserve(bytes);
    std::memset(slot.memory.data(), 0, bytes);
    slot.shape = shapes[i];
    slot.positions = 0;
    slot.valid = true;
  }
}

void StateSet::checkAppends(const EntryDesc &e,
                            const std::vector<Append> &appends) const {
  for (const Append &a : appends) {
    int64_t written = a.created ? 0 : slots_[size_t(a.state)].positions;
    if (a.position <= written)
      continue;
    fail(KILN_STATUS_INVALID_ARGUMENT, "entry '", e.name, "': state '",
         manifest_.states[size_t(a.state)].name, "' has ", written,
         written == 1 ? " position" : " positions", " written along dim ", a.axis,
         written ? cat(" (0 to ", written - 1, ")") : std::string(),
         "; writing position ", a.position, " would leave ",
         a.position - written == 1 ? cat("position ", written)
                                   : cat("positions ", written, " to ", a.position - 1),
         " unwritten (write positions in order; rewriting one is allowed)");
  }
}

void StateSet::recordAppends(const std::vector<Append> &appends) {
  for (const Append &a : appends) {
    int64_t &written = slots_[size_t(a.state)].positions;
    written = std::max(written, a.position + a.count);
  }
}

void StateSet::forgetWritten(int entry) noexcept {
  for (int s : manifest_.entries[size_t(entry)].writtenStates) {
    Slot &slot = slots_[size_t(s)];
    slot.valid = false;
    slot.why = Unset::RunFailed;
    slot.failedEntry = entry;
  }
}

uint64_t StateSet::rowBytes(size_t state) const {
  return uint64_t(elementCount(slots_[state].shape, 1)) *
         kiln_dtype_size(manifest_.states[state].dtype);
}

uint64_t StateSet::stateBytes(size_t state) const {
  return uint64_t(elementCount(slots_[state].shape)) *
         kiln_dtype_size(manifest_.states[state].dtype);
}

void StateSet::gather(const int32_t *rows, size_t count, bool moveRows) {
  const char *who = "kiln_session_gather_states";
  std::vector<size_t> live;
  for (size_t s = 0; s < slots_.size(); ++s)
    if (slots_[s].valid)
      live.push_back(s);
  if (live.empty()) {
    std::vector<size_t> all;
    for (size_t s = 0; s < slots_.size(); ++s)
      all.push_back(s);
    fail(KILN_STATUS_FAILED_PRECONDITION, who, ": no state is set",
         slots_.empty() ? std::string(" (model '" + manifest_.model + "' has no states)")
                        : "; " + creatorsHint(all));
  }
  int64_t n = slots_[live[0]].shape[0];
  for (size_t s : live)
    if (slots_[s].shape[0] != n)
      fail(KILN_STATUS_INVALID_ARGUMENT, who,
           ": the states have different batch sizes: ", join(live, [&](size_t t) {
             return cat("'", manifest_.states[t].name, "' ",
                        formatShape(slots_[t].shape));
           }));
  if (count > 0 && !rows)
    fail(KILN_STATUS_INVALID_ARGUMENT, who, ": rows is NULL but row_count is ", count);
  if (count > size_t(INT32_MAX))
    fail(KILN_STATUS_INVALID_ARGUMENT, who, ": row_count ", count, " is over 2^31 - 1");
  for (size_t i = 0; i < count; ++i)
    if (rows[i] < 0 || rows[i] >= n)
      fail(KILN_STATUS_INVALID_ARGUMENT, who, ": rows[", i, "] is ", rows[i],
           ", outside the batch of ", n, n == 1 ? " row" : " rows",
           n > 0 ? cat(" (0 to ", n - 1, ")") : std::string());

  // Everything that can fail happens before the first byte moves.
  GatherPlan plan = planGather(rows, int64_t(count), n);
  std::vector<size_t> rowBytes(live.size());
  std::vector<TempBlock> grown(live.size()); // allocated for the states that must move
  size_t stagingBytes = 0;
  for (size_t k = 0; k < live.size(); ++k) {
    Slot &slot = slots_[live[k]];
    int64_t rowElements = elementCount(slot.shape, 1);
    if (count > 0 && rowElements > int64_t(INT32_MAX) / int64_t(count))
      fail(KILN_STATUS_INVALID_ARGUMENT, who, ": state '", manifest_.states[live[k]].name,
           "' ", formatShape(slot.shape), " with ", count,
           " rows would be too large for a Halide buffer (2^31 - 1 elements at most)");
    rowBytes[k] = size_t(rowElements) * kiln_dtype_size(manifest_.states[live[k]].dtype);
    if (rowBytes[k] * count > slot.memory.capacity())
      grown[k].reserve(rowBytes[k] * count);
    else
      stagingBytes = std::max(stagingBytes, rowBytes[k]);
  }
  std::vector<uint8_t> staging(stagingBytes);

  for (size_t k = 0; k < live.size(); ++k) {
    Slot &slot = slots_[live[k]];
    size_t bytes = rowBytes[k];
    uint8_t *base = slot.memory.bytes();
    if (!moveRows) {
      if (grown[k].data())
        slot.memory.swap(grown[k]);
    } else if (grown[k].data()) {
      // New memory: every row goes there once, straight from its source.
      uint8_t *to = grown[k].bytes();
      for (size_t i = 0; i < count && bytes; ++i)
        std::memcpy(to + i * bytes, base + size_t(rows[i]) * bytes, bytes);
      slot.memory.swap(grown[k]);
    } else if (bytes) {
      for (const GatherPlan::Op &op : plan.ops) {
        switch (op.kind) {
        case GatherPlan::Kind::Copy:
          std::memcpy(base + size_t(op.dst) * bytes, base + size_t(op.src) * bytes,
                      bytes);
          break;
        case GatherPlan::Kind::Stage:
          std::memcpy(staging.data(), base + size_t(op.src) * bytes, bytes);
          break;
        case GatherPlan::Kind::FromStage:
          std::memcpy(base + size_t(op.dst) * bytes, staging.data(), bytes);
          break;
        }
      }
    }
    slot.shape[0] = int64_t(count);
  }
  rowsCopied_ += plan.moved;
}

void StateSet::clear() {
  for (Slot &slot : slots_)
    if (slot.valid) {
      slot.valid = false;
      slot.why = Unset::Cleared;
    }
}

kiln_tensor StateSet::get(const char *name) const {
  int index = manifest_.findState(name);
  if (index < 0)
    fail(KILN_STATUS_NOT_FOUND, "model '", manifest_.model, "' has no state '", name, "'",
         manifest_.states.empty()
             ? std::string("; it has no states")
             : "; its states are " + join(manifest_.states, [](const StateDesc &s) {
                 return "'" + s.name + "'";
               }));
  const Slot &slot = slots_[size_t(index)];
  if (!slot.valid)
    fail(KILN_STATUS_FAILED_PRECONDITION, "state '", name,
         "' is not set: ", unsetReason(size_t(index), false));
  kiln_tensor t;
  t.name = manifest_.states[size_t(index)].name.c_str();
  t.dtype = manifest_.states[size_t(index)].dtype;
  t.rank = int32_t(slot.shape.size());
  t.shape = slot.shape.data();
  t.data = slot.memory.data();
  return t;
}

uint64_t StateSet::bytes() const {
  uint64_t total = 0;
  for (const Slot &slot : slots_)
    total += slot.memory.capacity();
  return total;
}

} // namespace kiln::rt
