//===- States.cpp - The state ops: session states across runs ---------------===//
//
// state_alloc, state_write, state_read and kv_append work on the states a session keeps
// between runs; kv_append is the one with arithmetic on indices. Each op checks before it
// changes anything, and a failed run is rolled back as the runtime would.
//
//===----------------------------------------------------------------------===//

#include "Evaluation.h"

#include "kiln/ir/DimExpr.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::reference;

llvm::Expected<HostTensor> kiln::reference::kvAppend(HostTensor &cache,
                                                     const HostTensor &value,
                                                     int64_t axis, int64_t capacity,
                                                     int64_t position) {
  llvm::Expected<AxisLines> valueLines = axisLines(value.shape, axis, "kv_append");
  if (!valueLines)
    return valueLines.takeError();
  Shape expected = value.shape;
  expected[axis] = capacity;
  if (cache.isInt || cache.shape != expected)
    return makeError("the cache has shape " + shapeToString(cache.shape) +
                     " but a value " + shapeToString(value.shape) + " with capacity " +
                     std::to_string(capacity) + " along axis " + std::to_string(axis) +
                     " needs " + shapeToString(expected));
  int64_t count = valueLines->length;
  if (position < 0 || count < 1 || position + count > capacity)
    return makeError("writing " + std::to_string(count) + " position" +
                     (count == 1 ? "" : "s") + " from position " +
                     std::to_string(position) + " (P = " + std::to_string(position) +
                     ", N = " + std::to_string(count) + ") does not fit the capacity " +
                     std::to_string(capacity));
  AxisLines lines = *valueLines;
  lines.length = capacity;
  for (int64_t o = 0; o < lines.outer; ++o)
    for (int64_t t = 0; t < count; ++t)
      for (int64_t i = 0; i < lines.inner; ++i)
        cache.f32[lines.at(o, i, position + t)] = value.f32[valueLines->at(o, i, t)];
  return slice(cache, axis, 0, position + count);
}

llvm::Error Evaluation::evaluateStateOp(Operation *op, const std::string &where) {
  llvm::Error error = checkAndApplyStateOp(op, where);
  if (error)
    stateRejected = true;
  return error;
}

void Evaluation::saveForUndo(const std::string &name) {
  if (undo.count(name))
    return;
  auto it = states.find(name);
  undo[name] = it == states.end() ? llvm::None : llvm::Optional<HostTensor>(it->second);
}

llvm::Error Evaluation::checkAndApplyStateOp(Operation *op, const std::string &where) {
  // Every state op names its state in the `name` attribute.
  std::string name = op->getAttrOfType<StringAttr>("name").getValue().str();
  std::string what = "state '" + name + "'";
  if (auto alloc = dyn_cast<StateAllocOp>(op)) {
    auto type = alloc.type().cast<RankedTensorType>();
    Shape shape;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d)) {
        shape.push_back(type.getDimSize(d));
        continue;
      }
      // inferSymbolicShapes (in the verifier's stead) made every name one the entry
      // binds.
      StringRef dim = alloc.dims()[d].cast<StringAttr>().getValue();
      auto size = dimSizes.find(dim.str());
      if (size == dimSizes.end())
        return makeError(where + ": dimension '" + dim + "' of " + what +
                         " is not bound by the entry");
      shape.push_back(size->second.first);
    }
    saveForUndo(name);
    states[name] = HostTensor::floats(std::move(shape));
    return llvm::Error::success();
  }
  if (auto write = dyn_cast<StateWriteOp>(op)) {
    auto value = values.find(write.value());
    if (value == values.end())
      return makeError(where + " uses a value defined outside the entry's body");
    saveForUndo(name);
    states[name] = value->second;
    return llvm::Error::success();
  }
  auto state = states.find(name);
  if (state == states.end())
    return makeError(where + ": " + what + " is not set: no earlier run created it");
  if (auto read = dyn_cast<StateReadOp>(op)) {
    if (llvm::Error e =
            checkAgainstType(state->second, read.getType(), where + " " + what))
      return e;
    // The state's shape binds the names of its dims, as an input's does.
    for (auto it : llvm::enumerate(read.dims())) {
      StringRef dim = it.value().cast<StringAttr>().getValue();
      if (!dim.empty())
        if (llvm::Error e = bindDim(dim, state->second.shape[it.index()], what))
          return e;
    }
    values[read.getResult()] = state->second;
    return llvm::Error::success();
  }
  auto append = cast<KvAppendOp>(op);
  auto value = values.find(append.value());
  if (value == values.end())
    return makeError(where + " uses a value defined outside the entry's body");
  llvm::Optional<int64_t> position = dimInteger(append.position());
  if (!position) {
    auto bound = dimSizes.find(append.position().str());
    if (bound == dimSizes.end())
      return makeError(where + ": position '" + append.position() +
                       "' is not bound by the entry");
    position = bound->second.first;
  }
  // kvAppend checks before it writes; the copy is for a later op's failure.
  saveForUndo(name);
  llvm::Expected<HostTensor> prefix =
      kvAppend(state->second, value->second, static_cast<int64_t>(append.axis()),
               static_cast<int64_t>(append.capacity()), *position);
  if (!prefix)
    return makeError(where + ": " + what + ": " + llvm::toString(prefix.takeError()));
  if (llvm::Error e = checkAgainstType(*prefix, append.getType(), where + " result"))
    return e;
  values[append.getResult()] = std::move(*prefix);
  return llvm::Error::success();
}

void Evaluation::rollBack() {
  if (stateRejected) {
    for (auto &[name, before] : undo) {
      if (before)
        states[name] = std::move(*before);
      else
        states.erase(name);
    }
    return;
  }
  func.walk([&](Operation *op) {
    if (isa<StateAllocOp, StateWriteOp, KvAppendOp>(op))
      states.erase(op->getAttrOfType<StringAttr>("name").getValue().str());
  });
}
