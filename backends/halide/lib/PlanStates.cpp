//===- PlanStates.cpp - Session states and value dimensions in the plan ---===//
//
// The buffers of kiln.state_alloc, state_write, state_read and kv_append
// (docs/manifest.md, "States, value dimensions and strided views"). An entry has one
// buffer per state it touches; the run creates the state when the first op that touches
// it in the entry creates it, and otherwise takes it from an earlier run. kv_append
// writes its value (N positions) through a strided view of the cache at position P and
// reads the first P + N positions through another: a decoding step copies one position,
// a prefill the prompt's, never the whole cache.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

#include "kiln/ir/DimExpr.h"

using namespace mlir;

namespace kiln::halide_backend {

/// `d` as a factor of a product: an expression with + - / in parentheses.
static std::string asFactor(const SymDim &d) {
  if (d.isStatic())
    return std::to_string(d.size);
  bool product =
      llvm::none_of(d.expr, [](char c) { return c == '+' || c == '-' || c == '/'; });
  return product ? d.expr : "(" + d.expr + ")";
}

SymDim multiplyDims(const SymDim &a, const SymDim &b) {
  if (a.isStatic() && b.isStatic())
    return SymDim::fixed(a.size * b.size);
  if ((a.isStatic() && a.size == 0) || (b.isStatic() && b.size == 0))
    return SymDim::fixed(0);
  if (a.isStatic() && a.size == 1)
    return b;
  if (b.isStatic() && b.size == 1)
    return a;
  return SymDim::named(asFactor(a) + "*" + asFactor(b));
}

SymShape denseStrides(llvm::ArrayRef<SymDim> shape) {
  SymShape strides(shape.size(), SymDim::fixed(1));
  // From the innermost dimension out, so that the static sizes fold first: "H*32".
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = multiplyDims(shape[i], strides[i]);
  return strides;
}

FailureOr<int> Planner::stateIndex(Operation *op, llvm::StringRef name, int64_t rank) {
  // The verifier keeps states at rank >= 1.
  auto [it, inserted] =
      stateIndices_.try_emplace(name, static_cast<int>(plan_.states.size()));
  if (inserted) {
    plan_.states.push_back({name.str(), abi::dtypeName(KILN_DTYPE_F32), rank});
    return it->second;
  }
  const StatePlan &known = plan_.states[it->second];
  if (known.rank != rank) {
    op->emitError() << "state '" << name << "' has rank " << rank << " here but rank "
                    << known.rank << " where the model first uses it";
    return failure();
  }
  return it->second;
}

FailureOr<int> Planner::stateBuffer(EntryPlan &entry, Operation *op, llvm::StringRef name,
                                    const SymShape &shape, bool create) {
  FailureOr<int> index = stateIndex(op, name, static_cast<int64_t>(shape.size()));
  if (failed(index))
    return failure();
  auto found = stateBuffers_.find(name);
  if (found != stateBuffers_.end()) {
    // The runtime creates a state before the entry's first step, so a create can only
    // come first.
    if (create) {
      op->emitError() << "state '" << name
                      << "' is created here, after an earlier op of entry point '"
                      << entry.name
                      << "' uses it; an entry point creates a state before any other op "
                         "touches it";
      return failure();
    }
    const BufferPlan &known = entry.buffers[found->second];
    if (known.shape != shape) {
      op->emitError() << "state '" << name << "' has shape " << toString(shape)
                      << " here but " << toString(known.shape)
                      << " earlier in entry point '" << entry.name << "'";
      return failure();
    }
    return found->second;
  }
  BufferPlan buffer;
  buffer.kind = BufferPlan::Kind::State;
  buffer.index = *index;
  buffer.create = create;
  buffer.dtype = plan_.states[*index].dtype;
  buffer.shape = shape;
  FailureOr<int> added = pushBuffer(entry, op, std::move(buffer));
  if (succeeded(added))
    stateBuffers_[name] = *added;
  return added;
}

LogicalResult Planner::planKvAppend(EntryPlan &entry, KvAppendOp op) {
  // The verifier and inferSymbolicShapes made the position a static start or a name
  // the entry binds.
  llvm::Optional<int64_t> start = dimInteger(op.position());
  SymDim position = start ? SymDim::fixed(*start) : SymDim::named(op.position().str());
  const SymShape &value = shapes_.lookup(op.value());
  int64_t axis = op.axis();
  SymShape cache = value;
  cache[axis] = SymDim::fixed(op.capacity());
  FailureOr<int> state = stateBuffer(entry, op, op.name(), cache, /*create=*/false);
  if (failed(state))
    return failure();
  SymShape strides = denseStrides(cache);

  // Positions [P, P + N) of the cache, which the step's copy writes.
  BufferPlan target;
  target.kind = BufferPlan::Kind::View;
  target.index = *state;
  target.dtype = entry.buffers[*state].dtype;
  target.shape = value;
  target.offset = multiplyDims(position, strides[axis]);
  target.strides = strides;
  FailureOr<int> targetIndex = pushBuffer(entry, op, std::move(target));
  if (failed(targetIndex))
    return failure();
  queueAppend(entry, op, buffers_.lookup(op.value()), *targetIndex);

  // Positions 0 ... P + N - 1, which the ops after it read in place.
  BufferPlan prefix;
  prefix.kind = BufferPlan::Kind::View;
  prefix.index = *state;
  prefix.dtype = entry.buffers[*state].dtype;
  prefix.shape = shapes_.lookup(op.result());
  prefix.strides = std::move(strides);
  FailureOr<int> prefixIndex = pushBuffer(entry, op, std::move(prefix));
  if (failed(prefixIndex))
    return failure();
  buffers_[op.result()] = *prefixIndex;
  return success();
}

void Planner::queueAppend(EntryPlan &entry, KvAppendOp op, int value, int target) {
  // A decoding step appends to its key and its value cache, two copies of a few hundred
  // floats each: one kernel for both halves the calls (XLA's horizontal fusion). One
  // call writes every output over the same extents, so the values must agree in shape
  // (equal signatures pin only the static sizes); and a value may not be in a cache
  // that the same call writes, which only a later step may read.
  QueuedAppends &queued = queuedAppends_;
  bool joins = false;
  if (!queued.ops.empty()) {
    auto first = cast<KvAppendOp>(queued.ops.front());
    joins = kernelSignature(op) == kernelSignature(first) &&
            shapes_.lookup(op.value()) == shapes_.lookup(first.value());
    for (int written : queued.targets)
      joins = joins && rootOf(entry, written) != rootOf(entry, value) &&
              rootOf(entry, written) != rootOf(entry, target);
  }
  if (!joins)
    flushAppends(entry);
  queued.ops.push_back(op);
  queued.values.push_back(value);
  queued.targets.push_back(target);
}

void Planner::flushAppends(EntryPlan &entry) {
  QueuedAppends &queued = queuedAppends_;
  if (queued.ops.empty())
    return;
  auto first = cast<KvAppendOp>(queued.ops.front());
  unsigned count = static_cast<unsigned>(queued.ops.size());
  int kernel;
  if (count == 1) {
    kernel = kernelIndex(first);
  } else {
    std::string signature = kernelSignature(first) + " x" + std::to_string(count);
    bool added = !kernelIndices_.count(signature);
    kernel = kernelIndex(first, signature);
    if (added) {
      plan_.kernels[kernel].appends = count;
      plan_.kernels[kernel].name += "_x" + std::to_string(count);
    }
  }
  std::vector<int> args = queued.values;
  args.insert(args.end(), queued.targets.begin(), queued.targets.end());
  appendStep(entry, queued.ops, kernel, std::move(args), static_cast<int>(count));
  queued = QueuedAppends();
}

LogicalResult Planner::planStateOp(EntryPlan &entry, Operation &op) {
  if (auto alloc = dyn_cast<StateAllocOp>(op)) {
    // No step: the runtime zero-fills a state it creates.
    SymShape shape =
        declaredStateShape(alloc.type().cast<RankedTensorType>(), alloc.dims());
    return stateBuffer(entry, &op, alloc.name(), shape, /*create=*/true);
  }
  if (auto write = dyn_cast<StateWriteOp>(op)) {
    FailureOr<int> state = stateBuffer(entry, &op, write.name(),
                                       shapes_.lookup(write.value()), /*create=*/true);
    if (failed(state))
      return failure();
    flushAppends(entry);
    pushStep(entry, &op, kernelIndex(&op), {buffers_.lookup(write.value()), *state});
    return success();
  }
  if (auto read = dyn_cast<StateReadOp>(op)) {
    // The ops that read the state read its buffer in place.
    FailureOr<int> state = stateBuffer(
        entry, &op, read.name(), shapes_.lookup(read.getResult()), /*create=*/false);
    if (failed(state))
      return failure();
    buffers_[read.getResult()] = *state;
    return success();
  }
  return planKvAppend(entry, cast<KvAppendOp>(op));
}

std::string Planner::valueDimOf(FuncOp func, unsigned input) {
  // The dialect verified the form: one name, on a rank-0 i32 input, bound nowhere else.
  auto name = func.getArgAttrOfType<StringAttr>(input, kValueDimAttr);
  return name ? name.getValue().str() : std::string();
}

} // namespace kiln::halide_backend
