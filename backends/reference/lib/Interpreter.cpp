//===- Interpreter.cpp - Runs an entry point of a kiln module op by op ----===//
//
// Checks everything a caller hands in against the entry's types at this public
// boundary, then evaluates each op with its kernel (Kernels.h). To support a new op,
// write its kernel and add one case to evaluateOp(). Binding the entry's dimensions is
// Bindings.cpp's; the state ops, which work on the session's states rather than on
// values alone, are States.cpp's.
//
//===----------------------------------------------------------------------===//

#include "Evaluation.h"

#include "kiln/ir/ValueRange.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::reference;

bool kiln::reference::isBoolean(Type type) {
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
      .Case<AddOp>([&](AddOp) {
        return binary(*args[0], *args[1], std::plus<float>(), std::plus<uint64_t>());
      })
      .Case<SubOp>([&](SubOp) {
        return binary(*args[0], *args[1], std::minus<float>(), std::minus<uint64_t>());
      })
      .Case<MulOp>([&](MulOp) {
        return binary(*args[0], *args[1], std::multiplies<float>(),
                      std::multiplies<uint64_t>());
      })
      .Case<DivOp>(
          [&](DivOp) { return binary(*args[0], *args[1], std::divides<float>()); })
      .Case<WhereOp>(
          [&](WhereOp) -> Result { return where(*args[0], *args[1], *args[2]); })
      .Case<CastOp>([&](CastOp c) -> Result {
        Type to = c.getType().cast<ShapedType>().getElementType();
        return cast(*args[0], to.isF32()         ? NumericType::F32
                              : to.isInteger(32) ? NumericType::I32
                                                 : NumericType::I64);
      })
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
      .Case<RmsNormOp>([&](RmsNormOp r) -> Result {
        return rmsNorm(*args[0], *args[1], r.epsilon().convertToFloat());
      })
      .Case<ReduceSumOp>([&](ReduceSumOp r) -> Result {
        return reduce(*args[0], r.reducedAxes(), r.keep_dim(), ReduceKind::Sum);
      })
      .Case<ReduceMeanOp>([&](ReduceMeanOp r) -> Result {
        return reduce(*args[0], r.reducedAxes(), r.keep_dim(), ReduceKind::Mean);
      })
      .Case<ReduceMaxOp>([&](ReduceMaxOp r) -> Result {
        return reduce(*args[0], r.reducedAxes(), r.keep_dim(), ReduceKind::Max);
      })
      .Case<ReshapeOp>([&](ReshapeOp r) -> Result {
        return reshape(*args[0], extractFromI64ArrayAttr(r.shape()));
      })
      .Case<TransposeOp>([&](TransposeOp t) -> Result {
        return transpose(*args[0], extractFromI64ArrayAttr(t.permutation()));
      })
      .Case<LinearOp>(
          [&](LinearOp) -> Result { return linear(*args[0], *args[1], *args[2]); })
      .Case<QuantizedLinearOp>([&](QuantizedLinearOp) -> Result {
        return quantizedLinear(*args[0], *args[1], *args[2],
                               args.size() > 3 ? args[3] : nullptr);
      })
      .Case<GeluOp>([&](GeluOp) -> Result { return gelu(*args[0]); })
      .Case<TanhOp>([&](TanhOp) -> Result {
        return unary(*args[0], [](double x) { return std::tanh(x); });
      })
      .Case<GeluTanhOp>([&](GeluTanhOp) -> Result { return unary(*args[0], geluTanh); })
      .Case<SiluOp>([&](SiluOp) -> Result { return unary(*args[0], silu); })
      .Case<RsqrtOp>([&](RsqrtOp) -> Result {
        return unary(*args[0], [](double x) { return 1.0 / std::sqrt(x); });
      })
      .Case<ExpOp>([&](ExpOp) -> Result {
        return unary(*args[0], [](double x) { return std::exp(x); });
      })
      .Case<NegOp>(
          [&](NegOp) -> Result { return unary(*args[0], [](double x) { return -x; }); })
      .Case<LogOp>([&](LogOp) -> Result {
        return unary(*args[0], [](double x) { return std::log(x); });
      })
      .Case<SigmoidOp>([&](SigmoidOp) -> Result { return unary(*args[0], sigmoid); })
      .Case<SqrtOp>([&](SqrtOp) -> Result {
        return unary(*args[0], [](double x) { return std::sqrt(x); });
      })
      .Case<PowOp>([&](PowOp p) -> Result {
        double exponent = p.exponent().convertToFloat();
        return unary(*args[0], [exponent](double x) { return std::pow(x, exponent); });
      })
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
      .Case<UnpackPanelsOp>([&](UnpackPanelsOp u) -> Result {
        return unpackPanels(*args[0], u.getType().cast<RankedTensorType>().getDimSize(0));
      })
      .Case<ConcatOp>([&](ConcatOp c) -> Result {
        return concat(args, static_cast<int64_t>(c.axis()));
      })
      .Case<EmbeddingOp>([&](EmbeddingOp e) -> Result {
        return embedding(*args[0], *args[1], gatherTableName(e.table()));
      })
      .Case<RangeOp>([&](RangeOp r) -> Result {
        return range(*args[0], static_cast<int64_t>(r.axis()));
      })
      .Case<SinusoidOp>([&](SinusoidOp s) -> Result {
        // The verifier made the last result dimension static, positive and even.
        return sinusoid(*args[0], s.getType().cast<RankedTensorType>().getShape().back());
      })
      .Case<RotaryOp>([&](RotaryOp r) -> Result {
        return rotary(*args[0], *args[1], r.base().convertToFloat(),
                      r.style() == "interleaved");
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

llvm::Error kiln::reference::checkAgainstType(const HostTensor &t, Type type,
                                              const std::string &what,
                                              bool allowBoolean) {
  auto ranked = type.dyn_cast<RankedTensorType>();
  Type element = ranked ? ranked.getElementType() : Type();
  bool boolean = element && element.isInteger(1);
  if (ranked && boolean && !allowBoolean)
    return makeError(what + " has type " + print(type) +
                     ": i1 (a boolean mask) exists only inside an entry point, whose "
                     "inputs, outputs and weights are f32, i32 or i64");
  bool wide = element && element.isSignlessInteger(64);
  bool bf16 = element && element.isBF16();
  bool i8 = element && element.isSignlessInteger(8);
  if (!ranked || !(element.isF32() || element.isSignlessInteger(32) || wide || boolean ||
                   bf16 || i8))
    return makeError(what + " has type " + print(type) +
                     ", which the reference interpreter does not support");
  // bf16 values are held as the f32 values they equal, i8 ones (as i1) in i32.
  if (t.isInt != (element.isSignlessInteger(32) || boolean || i8) || t.isI64 != wide)
    return makeError(what + " holds " +
                     (t.isInt   ? "i32"
                      : t.isI64 ? "i64"
                                : "f32") +
                     " data but its type is " + print(type));
  bool fits = t.shape.size() == static_cast<size_t>(ranked.getRank());
  for (size_t i = 0; fits && i < t.shape.size(); ++i)
    fits =
        t.shape[i] >= 0 && (ranked.isDynamicDim(i) || t.shape[i] == ranked.getDimSize(i));
  if (!fits)
    return makeError(what + " has shape " + shapeToString(t.shape) + " but its type is " +
                     print(type));
  size_t size = t.isInt ? t.i32.size() : t.isI64 ? t.i64.size() : t.f32.size();
  if (static_cast<int64_t>(size) != t.numElements())
    return makeError(what + " holds " + std::to_string(size) +
                     " elements but its shape " + shapeToString(t.shape) + " has " +
                     std::to_string(t.numElements()));
  // The reduced-precision weights: only values of the type itself, so that what the
  // interpreter computes with is what a Halide kernel reading the stored form sees.
  auto badElement = [&](size_t i, double value, const char *why) {
    std::string shown;
    llvm::raw_string_ostream(shown) << llvm::format("%.9g", value);
    return makeError(what + " has type " + print(type) + " but element " +
                     shapeToString(unravelIndex(i, t.shape)) + " (" + shown + ") " + why);
  };
  if (bf16)
    for (size_t i = 0; i < t.f32.size(); ++i)
      if (!isBf16Value(t.f32[i]))
        return badElement(i, t.f32[i], "is not a bf16 value");
  if (i8)
    for (size_t i = 0; i < t.i32.size(); ++i)
      if (t.i32[i] < -127 || t.i32[i] > 127)
        return badElement(i, t.i32[i],
                          "is outside [-127, 127], the range of symmetric "
                          "int8 weights");
  return llvm::Error::success();
}

/// The name the caller uses for input `i` (results: output `i`) of `func`.
std::string kiln::reference::inputName(FuncOp func, unsigned i) {
  if (auto name = func.getArgAttrOfType<StringAttr>(i, kNameAttr))
    return name.getValue().str();
  return "arg" + std::to_string(i);
}

std::string kiln::reference::outputName(FuncOp func, unsigned i) {
  if (auto name = func.getResultAttrOfType<StringAttr>(i, kNameAttr))
    return name.getValue().str();
  return "result" + std::to_string(i);
}

llvm::Error Evaluation::bindParameter(ParameterOp op) {
  std::string what = "parameter '" + op.name().str() + "'";
  auto own = parameters.find(op.name().str());
  // A converted weight named after its source finds the f32 checkpoint tensor under
  // its name (i8 data there is the converted form already; a bf16 one is converted
  // anyway, which leaves bf16 values unchanged).
  bool ownIsSource = own != parameters.end() && op.conversion() &&
                     op.name() == *op.source() && !own->second.isInt;
  if (own != parameters.end() && !ownIsSource) {
    if (llvm::Error e = checkAgainstType(own->second, op.getType(), what))
      return e;
    values[op.getResult()] = own->second;
    return llvm::Error::success();
  }
  if (!op.conversion())
    return makeError(what + " is missing");
  auto source = parameters.find(op.source()->str());
  if (source == parameters.end())
    return makeError(what + " is missing, and so is its source '" + *op.source() + "'");
  int64_t start = 0, end = source->second.shape.empty() ? 0 : source->second.shape[0];
  if (auto rows = op.rows()) {
    SmallVector<int64_t, 2> range = extractFromI64ArrayAttr(*rows);
    start = range[0];
    end = range[1];
  }
  what += " (" + op.conversion()->str() + " of '" + op.source()->str() + "')";
  llvm::Expected<HostTensor> converted = convertWeight(
      source->second, *op.conversion(), start, end,
      *op.conversion() == "panels" ? op.getType().cast<RankedTensorType>().getDimSize(2)
                                   : 0);
  if (!converted)
    return makeError(what + ": " + llvm::toString(converted.takeError()));
  if (llvm::Error e = checkAgainstType(*converted, op.getType(), what))
    return e;
  values[op.getResult()] = std::move(*converted);
  return llvm::Error::success();
}

llvm::Error Evaluation::evaluate(Operation *op) {
  if (auto parameter = dyn_cast<ParameterOp>(op))
    return bindParameter(parameter);
  std::string where =
      "'" + op->getName().getStringRef().str() + "' at " + print(op->getLoc());
  if (isa<StateAllocOp, StateWriteOp, StateReadOp, KvAppendOp>(op))
    return evaluateStateOp(op, where);
  if (auto fusion = dyn_cast<FusionOp>(op))
    return evaluateFusion(fusion, where);
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

/// The body op by op, as if its ops stood in the entry: a group computes what its ops
/// do, which is what lets the tests compare fused kernels against this.
llvm::Error Evaluation::evaluateFusion(FusionOp fusion, const std::string &where) {
  Block &body = fusion.body().front();
  for (auto [operand, argument] : llvm::zip(fusion.getOperands(), body.getArguments())) {
    auto it = values.find(operand);
    if (it == values.end())
      return makeError(where + " uses a value defined outside the entry's body");
    // A copy first: inserting may grow the map and move what `it` points to.
    HostTensor value = it->second;
    values[argument] = std::move(value);
  }
  for (Operation &op : body.without_terminator())
    if (llvm::Error e = evaluate(&op))
      return e;
  HostTensor result = values.lookup(fusion.yielded());
  values[fusion.getResult()] = std::move(result);
  return llvm::Error::success();
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
