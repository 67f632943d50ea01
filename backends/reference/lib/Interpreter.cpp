//===- Interpreter.cpp - Runs an entry point of a kiln module op by op ----===//
//
// Checks everything a caller hands in against the entry's types at this public
// boundary, then evaluates each op with its kernel (Kernels.h). To support a new op,
// write its kernel and add one case to evaluateOp(). The state ops, which work on the
// session's states rather than on values alone, are evaluateStateOp()'s.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::reference;

template <typename T> static std::string print(const T &printable) {
  std::string s;
  llvm::raw_string_ostream os(s);
  printable.print(os);
  return os.str();
}

static std::vector<int64_t> toI64s(ArrayAttr array) {
  std::vector<int64_t> values;
  for (Attribute a : array)
    values.push_back(a.cast<IntegerAttr>().getInt());
  return values;
}

/// Whether `type` is a tensor of i1, held as 0/1 in an i32 host tensor.
static bool isBoolean(Type type) {
  return type.cast<ShapedType>().getElementType().isInteger(1);
}

/// The one place that knows which kernel evaluates which op.
static llvm::Expected<HostTensor> evaluateOp(Operation *op,
                                             llvm::ArrayRef<const HostTensor *> args) {
  using Result = llvm::Expected<HostTensor>;
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<MatmulOp>([&](MatmulOp m) -> Result {
        return matmul(*args[0], *args[1], m.transpose_lhs(), m.transpose_rhs());
      })
      .Case<AddOp>([&](AddOp) -> Result { return add(*args[0], *args[1]); })
      .Case<MulOp>([&](MulOp) -> Result { return mul(*args[0], *args[1]); })
      .Case<DivOp>([&](DivOp) -> Result { return div(*args[0], *args[1]); })
      .Case<ConstantOp>([&](ConstantOp c) -> Result {
        auto type = c.getType().cast<RankedTensorType>();
        std::vector<float> data;
        for (float x : c.value().getValues<float>())
          data.push_back(x);
        return HostTensor::floats(type.getShape().vec(), std::move(data));
      })
      .Case<MaskedFillOp>([&](MaskedFillOp m) -> Result {
        return maskedFill(*args[0], *args[1], m.value().convertToFloat());
      })
      .Case<AttentionOp>([&](AttentionOp a) -> Result {
        AttentionAttributes attributes;
        attributes.scale = a.scale().convertToFloat();
        attributes.causal = a.causal();
        attributes.maskedRowValue = a.masked_row_value().convertToFloat();
        const HostTensor *mask = args.size() > 3 ? args[3] : nullptr;
        return attention(*args[0], *args[1], *args[2], mask, attributes);
      })
      .Case<ScaleOp>([&](ScaleOp s) -> Result {
        return scale(*args[0], s.factor().convertToFloat());
      })
      .Case<ReluOp>([&](ReluOp) -> Result { return relu(*args[0]); })
      .Case<SoftmaxOp>([&](SoftmaxOp s) -> Result {
        return softmax(*args[0], static_cast<int64_t>(s.axis()));
      })
      .Case<LayerNormOp>([&](LayerNormOp l) -> Result {
        return layerNorm(*args[0], *args[1], *args[2], l.epsilon().convertToFloat());
      })
      .Case<ReshapeOp>(
          [&](ReshapeOp r) -> Result { return reshape(*args[0], toI64s(r.shape())); })
      .Case<TransposeOp>([&](TransposeOp t) -> Result {
        return transpose(*args[0], toI64s(t.permutation()));
      })
      .Case<LinearOp>(
          [&](LinearOp) -> Result { return linear(*args[0], *args[1], *args[2]); })
      .Case<GeluOp>([&](GeluOp) -> Result { return gelu(*args[0]); })
      .Case<LogSoftmaxOp>([&](LogSoftmaxOp l) -> Result {
        return logSoftmax(*args[0], static_cast<int64_t>(l.axis()));
      })
      .Case<ArgmaxOp>([&](ArgmaxOp a) -> Result {
        return argmax(*args[0], static_cast<int64_t>(a.axis()));
      })
      .Case<SliceOp>([&](SliceOp s) -> Result {
        return slice(*args[0], static_cast<int64_t>(s.axis()),
                     static_cast<int64_t>(s.start()), static_cast<int64_t>(s.end()));
      })
      .Case<ConcatOp>([&](ConcatOp c) -> Result {
        return concat(args, static_cast<int64_t>(c.axis()));
      })
      .Case<EmbeddingOp>(
          [&](EmbeddingOp) -> Result { return embedding(*args[0], *args[1]); })
      .Case<RangeOp>([&](RangeOp r) -> Result {
        return range(*args[0], static_cast<int64_t>(r.axis()));
      })
      .Case<SinusoidOp>([&](SinusoidOp s) -> Result {
        // The verifier made the last result dimension static, positive and even.
        return sinusoid(*args[0], s.getType().cast<RankedTensorType>().getShape().back());
      })
      .Case<PaddingMaskOp>([&](PaddingMaskOp p) -> Result {
        return paddingMask(*args[0], *args[1], static_cast<int64_t>(p.axis()),
                           isBoolean(p.getType()));
      })
      .Case<CausalMaskOp>([&](CausalMaskOp c) -> Result {
        return causalMask(*args[0], static_cast<int64_t>(c.axis()),
                          isBoolean(c.getType()));
      })
      .Default([&](Operation *) -> Result {
        return makeError("is not supported by the reference interpreter");
      });
}

/// Checks that `t` can be a value of `type`: element type, rank, static sizes and the
/// amount of data. `what` names the value for the message ("input 'x'"). i1 (boolean
/// masks, held as i32 0/1) is accepted only for values inside an entry, never for
/// what a caller hands in.
static llvm::Error checkAgainstType(const HostTensor &t, Type type,
                                    const std::string &what, bool allowBoolean = false) {
  auto ranked = type.dyn_cast<RankedTensorType>();
  Type element = ranked ? ranked.getElementType() : Type();
  bool boolean = element && element.isInteger(1);
  if (ranked && boolean && !allowBoolean)
    return makeError(what + " has type " + print(type) +
                     ": i1 (a boolean mask) exists only inside an entry point, whose "
                     "inputs, outputs and weights are f32 or i32");
  if (!ranked || !(element.isF32() || element.isSignlessInteger(32) || boolean))
    return makeError(what + " has type " + print(type) +
                     ", which the reference interpreter does not support");
  if (t.isInt != (element.isSignlessInteger(32) || boolean))
    return makeError(what + " holds " + (t.isInt ? "i32" : "f32") +
                     " data but its type is " + print(type));
  bool fits = t.shape.size() == static_cast<size_t>(ranked.getRank());
  for (size_t i = 0; fits && i < t.shape.size(); ++i)
    fits =
        t.shape[i] >= 0 && (ranked.isDynamicDim(i) || t.shape[i] == ranked.getDimSize(i));
  if (!fits)
    return makeError(what + " has shape " + shapeToString(t.shape) + " but its type is " +
                     print(type));
  size_t size = t.isInt ? t.i32.size() : t.f32.size();
  if (static_cast<int64_t>(size) != t.numElements())
    return makeError(what + " holds " + std::to_string(size) +
                     " elements but its shape " + shapeToString(t.shape) + " has " +
                     std::to_string(t.numElements()));
  return llvm::Error::success();
}

/// The name the caller uses for input `i` (results: output `i`) of `func`.
static std::string inputName(FuncOp func, unsigned i) {
  if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttr))
    return name.getValue().str();
  return "arg" + std::to_string(i);
}

static std::string outputName(FuncOp func, unsigned i) {
  if (auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttr))
    return name.getValue().str();
  return "result" + std::to_string(i);
}

namespace {
/// The values of one run of one entry point.
class Evaluation {
public:
  Evaluation(FuncOp func, const TensorMap &parameters, StateMap &states)
      : func(func), parameters(parameters), states(states) {}

  llvm::Error bindInputs(const TensorMap &inputs);
  llvm::Expected<TensorMap> run();
  /// After a failed run, what the runtime does: a run rejected by a state check (a
  /// missing state, a shape, a position outside the cache) changes no state, as the
  /// runtime checks all of them before it changes any; a run that fails later forgets
  /// every state the entry creates or writes.
  void rollBack();

private:
  /// Binds dimension `name` to `size`, or checks it against an earlier binding; `source`
  /// says what binds it ("input 'x'", "state 'c'") for the message.
  llvm::Error bindDim(llvm::StringRef name, int64_t size, const std::string &source);
  /// Binds the dimensions named by inputs' `kiln.value_dim` to their values, each after
  /// checking the input's bounds.
  llvm::Error bindValueDims();
  /// Checks input `index` against its `kiln.bounds`, if any.
  llvm::Error checkBounds(unsigned index);
  llvm::Error evaluate(Operation *op);
  /// state_alloc, state_write, state_read and kv_append, on `states`; each checks
  /// before it changes anything, and sets `stateRejected` when the check fails.
  llvm::Error evaluateStateOp(Operation *op, const std::string &where);
  llvm::Error checkAndApplyStateOp(Operation *op, const std::string &where);
  /// Keeps state `name` as it was before this run, once, for rollBack().
  void saveForUndo(const std::string &name);
  llvm::Error bindParameter(ParameterOp op);
  std::string entryName() { return "entry '" + func.getName().str() + "'"; }

  FuncOp func;
  const TensorMap &parameters;
  StateMap &states;
  /// The states this run changed, as they were before it (None: not set).
  std::map<std::string, llvm::Optional<HostTensor>> undo;
  bool stateRejected = false;
  llvm::DenseMap<Value, HostTensor> values;
  /// Each named dynamic dimension's size, with what bound it ("input 'x'").
  std::map<std::string, std::pair<int64_t, std::string>> dimSizes;
};
} // namespace

llvm::Error Evaluation::bindDim(llvm::StringRef name, int64_t size,
                                const std::string &source) {
  auto [bound, inserted] = dimSizes.try_emplace(name.str(), size, source);
  if (!inserted && bound->second.first != size)
    return makeError(entryName() + ": dimension '" + name + "' is " +
                     std::to_string(bound->second.first) + " in " + bound->second.second +
                     " but " + std::to_string(size) + " in " + source);
  return llvm::Error::success();
}

llvm::Error Evaluation::bindInputs(const TensorMap &inputs) {
  std::map<std::string, unsigned> byName;
  // A dynamic dim named in `kiln.dims` has one size per run, whichever input gives it.
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = inputName(func, i);
    byName[name] = i;
    auto it = inputs.find(name);
    if (it == inputs.end())
      return makeError(entryName() + " is missing input '" + name + "'");
    const HostTensor &t = it->second;
    if (llvm::Error e = checkAgainstType(t, func.getArgument(i).getType(),
                                         entryName() + " input '" + name + "'"))
      return e;
    auto dims = func.getArgAttrOfType<ArrayAttr>(i, kDimsAttr);
    for (size_t d = 0; dims && d < dims.size() && d < t.shape.size(); ++d) {
      auto dimName = dims[d].dyn_cast<StringAttr>();
      if (!dimName || dimName.getValue().empty())
        continue;
      if (llvm::Error e = bindDim(dimName.getValue(), t.shape[d], "input '" + name + "'"))
        return e;
    }
    values[func.getArgument(i)] = t;
  }
  for (const auto &input : inputs)
    if (!byName.count(input.first))
      return makeError(entryName() + " has no input named '" + input.first + "'");
  if (llvm::Error e = bindValueDims())
    return e;
  // Bounds may name a dimension of a later input, so they are checked once all are bound
  // (those of value_dim inputs already were).
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (!func.getArgAttr(i, kValueDimAttr))
      if (llvm::Error e = checkBounds(i))
        return e;
  return llvm::Error::success();
}

llvm::Error Evaluation::bindValueDims() {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto dim = func.getArgAttrOfType<StringAttr>(i, kValueDimAttr);
    if (!dim)
      continue;
    // As the runtime does: the value's bounds first (the verifier keeps them from
    // using the dimension itself), then the binding. The verifier made the input a
    // rank-0 i32, and checkAgainstType its data one i32.
    if (llvm::Error e = checkBounds(i))
      return e;
    int64_t value = values[func.getArgument(i)].i32.at(0);
    std::string name = inputName(func, i);
    if (value < 0)
      return makeError(entryName() + " input '" + name + "' is " + std::to_string(value) +
                       ", but its value is the size of dimension '" + dim.getValue() +
                       "', which cannot be negative");
    if (llvm::Error e =
            bindDim(dim.getValue(), value, "the value of input '" + name + "'"))
      return e;
  }
  return llvm::Error::success();
}

llvm::Error Evaluation::checkBounds(unsigned index) {
  auto bounds = func.getArgAttrOfType<ArrayAttr>(index, kBoundsAttr);
  if (!bounds)
    return llvm::Error::success();
  std::string name = inputName(func, index);
  // The verifier checked the form: two expressions over names of kiln.dims.
  auto lookup = [&](StringRef dim) -> Optional<int64_t> {
    auto it = dimSizes.find(dim.str());
    return it == dimSizes.end() ? None : Optional<int64_t>(it->second.first);
  };
  StringRef loText = bounds[0].cast<StringAttr>().getValue();
  StringRef hiText = bounds[1].cast<StringAttr>().getValue();
  llvm::Expected<int64_t> lo = evaluateDimExpr(loText, lookup);
  if (!lo)
    return makeError(entryName() + " input '" + name +
                     "' bounds: " + llvm::toString(lo.takeError()));
  llvm::Expected<int64_t> hi = evaluateDimExpr(hiText, lookup);
  if (!hi)
    return makeError(entryName() + " input '" + name +
                     "' bounds: " + llvm::toString(hi.takeError()));
  const HostTensor &t = values[func.getArgument(index)];
  for (int64_t k = 0; k < t.numElements(); ++k) {
    int64_t v = t.i32[k];
    if (v >= *lo && v <= *hi)
      continue;
    std::string range = "[" + loText.str() + ", " + hiText.str() + "]";
    std::string evaluated = "[" + std::to_string(*lo) + ", " + std::to_string(*hi) + "]";
    return makeError(entryName() + " input '" + name + "' element " +
                     shapeToString(unravelIndex(k, t.shape)) + " is " +
                     std::to_string(v) + ", outside its bounds " + range +
                     (range == evaluated ? "" : " = " + evaluated));
  }
  return llvm::Error::success();
}

llvm::Error Evaluation::bindParameter(ParameterOp op) {
  auto it = parameters.find(op.name().str());
  if (it == parameters.end())
    return makeError("parameter '" + op.name() + "' is missing");
  if (llvm::Error e = checkAgainstType(it->second, op.getType(),
                                       "parameter '" + op.name().str() + "'"))
    return e;
  values[op.getResult()] = it->second;
  return llvm::Error::success();
}

llvm::Error Evaluation::evaluate(Operation *op) {
  if (auto parameter = dyn_cast<ParameterOp>(op))
    return bindParameter(parameter);
  std::string where =
      "'" + op->getName().getStringRef().str() + "' at " + print(op->getLoc());
  if (isa<StateAllocOp, StateWriteOp, StateReadOp, KvAppendOp>(op))
    return evaluateStateOp(op, where);
  if (op->getNumResults() != 1)
    return makeError(where + " is not supported by the reference interpreter");
  llvm::SmallVector<const HostTensor *, 3> args;
  for (Value v : op->getOperands()) {
    auto it = values.find(v);
    if (it == values.end())
      return makeError(where + " uses a value defined outside the entry's body");
    args.push_back(&it->second);
  }
  llvm::Expected<HostTensor> result = evaluateOp(op, args);
  if (!result)
    return makeError(where + ": " + llvm::toString(result.takeError()));
  // Dynamic sizes that contradict a static size further down surface here.
  if (llvm::Error e = checkAgainstType(*result, op->getResult(0).getType(),
                                       where + " result", /*allowBoolean=*/true))
    return e;
  values[op->getResult(0)] = std::move(*result);
  return llvm::Error::success();
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
  auto position = dimSizes.find(append.position().str());
  if (position == dimSizes.end())
    return makeError(where + ": position '" + append.position() +
                     "' is not bound by the entry");
  // kvAppend checks before it writes; the copy is for a later op's failure.
  saveForUndo(name);
  llvm::Expected<HostTensor> prefix =
      kvAppend(state->second, value->second, static_cast<int64_t>(append.axis()),
               static_cast<int64_t>(append.capacity()), position->second.first);
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

llvm::Expected<TensorMap> Evaluation::run() {
  for (Operation &op : func.front()) {
    if (auto ret = dyn_cast<ReturnOp>(op)) {
      TensorMap outputs;
      for (unsigned i = 0; i < ret.getNumOperands(); ++i)
        if (!outputs.emplace(outputName(func, i), values[ret.getOperand(i)]).second)
          return makeError(entryName() + " has two outputs named '" +
                           outputName(func, i) + "'");
      return outputs;
    }
    if (llvm::Error e = evaluate(&op))
      return std::move(e);
  }
  return makeError(entryName() + " does not end in kiln.return");
}

/// Verifies `func`, so that an op built or rewritten without verification cannot make
/// a kernel read out of bounds; the diagnostics become the error message.
static llvm::Error verifyEntry(FuncOp func) {
  std::string messages;
  ScopedDiagnosticHandler handler(func.getContext(), [&](Diagnostic &d) {
    messages += (messages.empty() ? "" : "\n") + print(d.getLocation()) + ": " + d.str();
    return success();
  });
  if (failed(verify(func)))
    return makeError("entry '" + func.getName() + "' is invalid: " + messages);
  return llvm::Error::success();
}

llvm::Expected<TensorMap> kiln::reference::run(ModuleOp module, llvm::StringRef entry,
                                               const TensorMap &inputs,
                                               const TensorMap &parameters,
                                               StateMap *states) {
  auto func = module.lookupSymbol<FuncOp>(entry);
  if (!func) {
    std::string known;
    for (FuncOp f : module.getOps<FuncOp>())
      known += (known.empty() ? "" : ", ") + f.getName().str();
    return makeError("no entry point named '" + entry +
                     "' (the module has: " + (known.empty() ? "none" : known) + ")");
  }
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return makeError("entry '" + entry + "' must have a body of one block");
  if (llvm::Error e = verifyEntry(func))
    return std::move(e);
  StateMap ownStates;
  Evaluation evaluation(func, parameters, states ? *states : ownStates);
  if (llvm::Error e = evaluation.bindInputs(inputs))
    return std::move(e);
  llvm::Expected<TensorMap> outputs = evaluation.run();
  if (!outputs)
    evaluation.rollBack();
  return outputs;
}
