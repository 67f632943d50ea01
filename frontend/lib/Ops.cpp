//===- Ops.cpp - Tensor operations of the Kiln DSL ------------------------===//
//
// Each op checks its operands with the dialect's shape rule (the same one the verifier
// uses) on named dims, so a mismatch such as [B, S, 64] + [B, T, 64] is reported at the
// author's line instead of surfacing later as a verifier error or a wrong kernel.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Ops.h"
#include "kiln/frontend/ModelBuilder.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/Builders.h"

#include <optional>

using namespace mlir;
using namespace kiln;
using namespace kiln::dsl;

namespace {
/// The dtypes an op takes and gives.
struct Signature {
  /// Per operand: its name in messages and the dtype it must have (std::nullopt:
  /// either). Operands past the end of the list may have either dtype.
  std::vector<std::pair<const char *, std::optional<DType>>> operands;
  /// The result's dtype; std::nullopt: that of the first operand.
  std::optional<DType> result;

  /// Every operand f32, the result too.
  static Signature floats(size_t count) {
    return {std::vector<std::pair<const char *, std::optional<DType>>>(
                count, {nullptr, DType::F32}),
            DType::F32};
  }
  /// Any dtype; the result has that of the first operand.
  static Signature any() { return {}; }
};

/// Validates operands, checks the shape rule and, when both pass, builds the op with the
/// inferred result type. `create` receives the result type.
template <typename CreateFn>
Tensor buildOp(const char *opName, llvm::ArrayRef<Tensor> operands, SourceLoc loc,
               const Signature &signature, const std::function<ShapeResult()> &rule,
               CreateFn create) {
  ModelBuilder *builder = nullptr;
  for (const Tensor &t : operands)
    if (t.builder())
      builder = t.builder();
  if (!builder || !builder->prepareOperands(operands, loc))
    return {};
  for (size_t i = 0; i < operands.size() && i < signature.operands.size(); ++i) {
    auto [name, wanted] = signature.operands[i];
    const Tensor &t = operands[i];
    if (!wanted || t.dtype() == *wanted)
      continue;
    std::string got =
        std::string("an ") + dtypeName(t.dtype()) + " tensor " + toString(t.shape());
    // Unnamed operands: an op that takes f32 throughout.
    builder->error(loc, std::string(opName) + " needs " +
                            (name ? std::string(name) + " of type " + dtypeName(*wanted)
                                  : std::string(dtypeName(*wanted)) + " operands") +
                            ", got " + got);
    return {};
  }
  ShapeResult result = rule();
  if (!result.succeeded()) {
    builder->error(loc, std::string(opName) + ": " + result.error);
    return {};
  }
  DType dtype = signature.result.value_or(operands.front().dtype());
  auto type = RankedTensorType::get(staticShape(result.shape),
                                    elementType(builder->context(), dtype));
  Value value = create(builder->opBuilder(), builder->location(loc), type);
  return builder->wrap(value, std::move(result.shape), dtype);
}

/// Maps a negative axis to its positive counterpart; the shape rule rejects the rest.
int64_t normaliseAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}
} // namespace

Tensor kiln::dsl::matmul(Operand lhs, Operand rhs, bool transposeLhs, bool transposeRhs,
                         SourceLoc loc) {
  const Tensor &a = lhs.tensor, &b = rhs.tensor;
  return buildOp(
      "matmul", {a, b}, loc, Signature::floats(2),
      [&] {
        return shape_rules::matmul(a.shape(), b.shape(), transposeLhs, transposeRhs);
      },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<MatmulOp>(l, t, a.value(), b.value(), transposeLhs, transposeRhs)
            .getResult();
      });
}

template <typename OpTy>
static Tensor binary(const char *name, const Tensor &a, const Tensor &b, SourceLoc loc) {
  return buildOp(
      name, {a, b}, loc, Signature::floats(2),
      [&] { return shape_rules::broadcast(a.shape(), b.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<OpTy>(l, t, a.value(), b.value()).getResult();
      });
}

Tensor kiln::dsl::add(Operand lhs, Operand rhs, SourceLoc loc) {
  return binary<AddOp>("add", lhs.tensor, rhs.tensor, loc);
}

Tensor kiln::dsl::sub(Operand lhs, Operand rhs, SourceLoc loc) {
  return binary<SubOp>("sub", lhs.tensor, rhs.tensor, loc);
}

Tensor kiln::dsl::mul(Operand lhs, Operand rhs, SourceLoc loc) {
  return binary<MulOp>("mul", lhs.tensor, rhs.tensor, loc);
}

Tensor kiln::dsl::div(Operand lhs, Operand rhs, SourceLoc loc) {
  return binary<DivOp>("div", lhs.tensor, rhs.tensor, loc);
}

Tensor kiln::dsl::constant(ModelBuilder &m, float value, SourceLoc loc) {
  return constant(m, {}, {value}, loc);
}

Tensor kiln::dsl::constant(ModelBuilder &m, std::vector<int64_t> shape,
                           std::vector<float> values, SourceLoc loc) {
  SymShape symbolic;
  for (int64_t d : shape) {
    if (d <= 0) {
      m.error(loc, "constant needs positive static dimensions, got " + std::to_string(d));
      return {};
    }
    symbolic.push_back(SymDim::fixed(d));
  }
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  if (values.size() != 1 && static_cast<int64_t>(values.size()) != count) {
    m.error(loc, "constant of shape " + toString(symbolic) + " needs 1 or " +
                     std::to_string(count) + " values, got " +
                     std::to_string(values.size()));
    return {};
  }
  if (!m.prepareOperands({}, loc))
    return {};
  auto type = RankedTensorType::get(shape, Float32Type::get(&m.context()));
  DenseElementsAttr value =
      values.size() == 1 ? DenseElementsAttr::get(type, values.front())
                         : DenseElementsAttr::get(type, llvm::makeArrayRef(values));
  Value result = m.opBuilder().create<ConstantOp>(m.location(loc), type, value);
  return m.wrap(result, std::move(symbolic), DType::F32);
}

Tensor kiln::dsl::scale(Operand input, float factor, SourceLoc loc) {
  const Tensor &x = input.tensor;
  return buildOp(
      "scale", {x}, loc, Signature::floats(1), [&] { return ShapeResult::ok(x.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<ScaleOp>(l, t, x.value(), ob.getF32FloatAttr(factor))
            .getResult();
      });
}

Tensor kiln::dsl::relu(Operand input, SourceLoc loc) {
  const Tensor &x = input.tensor;
  return buildOp(
      "relu", {x}, loc, Signature::floats(1), [&] { return ShapeResult::ok(x.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<ReluOp>(l, t, x.value()).getResult();
      });
}

//===----------------------------------------------------------------------===//
// Elementwise math
//===----------------------------------------------------------------------===//

/// An elementwise function of one f32 tensor: the result has the input's shape.
template <typename OpTy>
static Tensor math(const char *name, const Tensor &x, SourceLoc loc) {
  return buildOp(
      name, {x}, loc, Signature::floats(1), [&] { return ShapeResult::ok(x.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<OpTy>(l, t, x.value()).getResult();
      });
}

Tensor kiln::dsl::neg(Operand input, SourceLoc loc) {
  return math<NegOp>("neg", input.tensor, loc);
}

Tensor kiln::dsl::exp(Operand input, SourceLoc loc) {
  return math<ExpOp>("exp", input.tensor, loc);
}

Tensor kiln::dsl::log(Operand input, SourceLoc loc) {
  return math<LogOp>("log", input.tensor, loc);
}

Tensor kiln::dsl::tanh(Operand input, SourceLoc loc) {
  return math<TanhOp>("tanh", input.tensor, loc);
}

Tensor kiln::dsl::sigmoid(Operand input, SourceLoc loc) {
  return math<SigmoidOp>("sigmoid", input.tensor, loc);
}

Tensor kiln::dsl::sqrt(Operand input, SourceLoc loc) {
  return math<SqrtOp>("sqrt", input.tensor, loc);
}

Tensor kiln::dsl::rsqrt(Operand input, SourceLoc loc) {
  return math<RsqrtOp>("rsqrt", input.tensor, loc);
}

Tensor kiln::dsl::pow(Operand input, float exponent, SourceLoc loc) {
  const Tensor &x = input.tensor;
  return buildOp(
      "pow", {x}, loc, Signature::floats(1), [&] { return ShapeResult::ok(x.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<PowOp>(l, t, x.value(), ob.getF32FloatAttr(exponent))
            .getResult();
      });
}

Tensor kiln::dsl::silu(Operand input, SourceLoc loc) {
  return math<SiluOp>("silu", input.tensor, loc);
}

Tensor kiln::dsl::geluTanh(Operand input, SourceLoc loc) {
  return math<GeluTanhOp>("gelu_tanh", input.tensor, loc);
}

Tensor kiln::dsl::softmax(Operand input, int64_t axis, SourceLoc loc) {
  const Tensor &x = input.tensor;
  int64_t normalised = normaliseAxis(axis, x.rank());
  return buildOp(
      "softmax", {x}, loc, Signature::floats(1),
      [&] { return shape_rules::softmax(x.shape(), normalised); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<SoftmaxOp>(l, t, x.value(), ob.getI64IntegerAttr(normalised))
            .getResult();
      });
}

Tensor kiln::dsl::layerNorm(Operand input, Operand gamma, Operand beta, float epsilon,
                            SourceLoc loc) {
  const Tensor &x = input.tensor, &g = gamma.tensor, &b = beta.tensor;
  return buildOp(
      "layer_norm", {x, g, b}, loc, Signature::floats(3),
      [&] { return shape_rules::layerNorm(x.shape(), g.shape(), b.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob
            .create<LayerNormOp>(l, t, x.value(), g.value(), b.value(),
                                 ob.getF32FloatAttr(epsilon))
            .getResult();
      });
}

Tensor kiln::dsl::rmsNorm(Operand input, Operand gamma, float epsilon, SourceLoc loc) {
  const Tensor &x = input.tensor, &g = gamma.tensor;
  return buildOp(
      "rms_norm", {x, g}, loc, Signature::floats(2),
      [&] { return shape_rules::rmsNorm(x.shape(), g.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob
            .create<RmsNormOp>(l, t, x.value(), g.value(), ob.getF32FloatAttr(epsilon))
            .getResult();
      });
}

/// A reduction over `axes`, stored in the IR as the ascending non-negative axes so that
/// equal reductions written differently share a kernel. `integers`: i32 is taken too.
template <typename OpTy>
static Tensor reduction(const char *name, const Tensor &x,
                        const std::vector<int64_t> &axes, bool keepDim, bool integers,
                        SourceLoc loc) {
  Signature signature = Signature::floats(1);
  if (integers && x.dtype() == DType::I32)
    signature = Signature::any();
  return buildOp(
      name, {x}, loc, signature,
      [&] { return shape_rules::reduce(name, x.shape(), axes, keepDim); },
      [&](OpBuilder &ob, Location l, Type t) {
        llvm::SmallVector<int64_t, 4> normalised =
            shape_rules::normaliseAxes(axes, x.rank());
        return ob
            .create<OpTy>(l, t, x.value(), ob.getI64ArrayAttr(normalised),
                          ob.getBoolAttr(keepDim))
            .getResult();
      });
}

Tensor kiln::dsl::reduceSum(Operand input, std::vector<int64_t> axes, bool keepDim,
                            SourceLoc loc) {
  return reduction<ReduceSumOp>("reduce_sum", input.tensor, axes, keepDim, true, loc);
}

Tensor kiln::dsl::reduceMean(Operand input, std::vector<int64_t> axes, bool keepDim,
                             SourceLoc loc) {
  return reduction<ReduceMeanOp>("reduce_mean", input.tensor, axes, keepDim, false, loc);
}

Tensor kiln::dsl::reduceMax(Operand input, std::vector<int64_t> axes, bool keepDim,
                            SourceLoc loc) {
  return reduction<ReduceMaxOp>("reduce_max", input.tensor, axes, keepDim, true, loc);
}

Tensor kiln::dsl::reshape(Operand input, std::vector<int64_t> shape, SourceLoc loc) {
  const Tensor &x = input.tensor;
  return buildOp(
      "reshape", {x}, loc, Signature::any(),
      [&] { return shape_rules::reshape(x.shape(), shape); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<ReshapeOp>(l, t, x.value(), ob.getI64ArrayAttr(shape))
            .getResult();
      });
}

Tensor kiln::dsl::transpose(Operand input, std::vector<int64_t> permutation,
                            SourceLoc loc) {
  const Tensor &x = input.tensor;
  for (int64_t &p : permutation)
    if (p < 0)
      p += x.rank();
  return buildOp(
      "transpose", {x}, loc, Signature::any(),
      [&] { return shape_rules::transpose(x.shape(), permutation); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<TransposeOp>(l, t, x.value(), ob.getI64ArrayAttr(permutation))
            .getResult();
      });
}

Tensor kiln::dsl::operator+(Operand lhs, const Tensor &rhs) {
  return add(lhs, rhs, lhs.loc);
}
Tensor kiln::dsl::operator-(Operand lhs, const Tensor &rhs) {
  return sub(lhs, rhs, lhs.loc);
}
Tensor kiln::dsl::operator-(Operand input) { return neg(input, input.loc); }
Tensor kiln::dsl::operator*(Operand lhs, const Tensor &rhs) {
  return mul(lhs, rhs, lhs.loc);
}
Tensor kiln::dsl::operator*(Operand lhs, float factor) {
  return scale(lhs, factor, lhs.loc);
}
Tensor kiln::dsl::operator/(Operand lhs, float divisor) {
  return scale(lhs, 1.0f / divisor, lhs.loc);
}
Tensor kiln::dsl::operator/(Operand lhs, const Tensor &rhs) {
  return div(lhs, rhs, lhs.loc);
}

//===----------------------------------------------------------------------===//
// Layers around attention
//===----------------------------------------------------------------------===//

Tensor kiln::dsl::linear(Operand input, Operand weight, Operand bias, SourceLoc loc) {
  const Tensor &x = input.tensor, &w = weight.tensor, &b = bias.tensor;
  return buildOp(
      "linear", {x, w, b}, loc, Signature::floats(3),
      [&] { return shape_rules::linear(x.shape(), w.shape(), b.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<LinearOp>(l, t, x.value(), w.value(), b.value()).getResult();
      });
}

Tensor kiln::dsl::gelu(Operand input, SourceLoc loc) {
  const Tensor &x = input.tensor;
  return buildOp(
      "gelu", {x}, loc, Signature::floats(1), [&] { return ShapeResult::ok(x.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<GeluOp>(l, t, x.value()).getResult();
      });
}

Tensor kiln::dsl::logSoftmax(Operand input, int64_t axis, SourceLoc loc) {
  const Tensor &x = input.tensor;
  int64_t normalised = normaliseAxis(axis, x.rank());
  return buildOp(
      "log_softmax", {x}, loc, Signature::floats(1),
      [&] { return shape_rules::logSoftmax(x.shape(), normalised); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<LogSoftmaxOp>(l, t, x.value(), ob.getI64IntegerAttr(normalised))
            .getResult();
      });
}

Tensor kiln::dsl::argmax(Operand input, int64_t axis, SourceLoc loc) {
  const Tensor &x = input.tensor;
  int64_t normalised = normaliseAxis(axis, x.rank());
  return buildOp(
      "argmax", {x}, loc, {{{nullptr, DType::F32}}, DType::I32},
      [&] { return shape_rules::argmax(x.shape(), normalised); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<ArgmaxOp>(l, t, x.value(), ob.getI64IntegerAttr(normalised))
            .getResult();
      });
}

Tensor kiln::dsl::slice(Operand input, int64_t axis, int64_t start, int64_t end,
                        SourceLoc loc) {
  const Tensor &x = input.tensor;
  int64_t normalised = normaliseAxis(axis, x.rank());
  return buildOp(
      "slice", {x}, loc, Signature::any(),
      [&] { return shape_rules::slice(x.shape(), normalised, start, end); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob
            .create<SliceOp>(l, t, x.value(), ob.getI64IntegerAttr(normalised),
                             ob.getI64IntegerAttr(start), ob.getI64IntegerAttr(end))
            .getResult();
      });
}

Tensor kiln::dsl::concat(const std::vector<Tensor> &inputs, int64_t axis, SourceLoc loc) {
  // With no operand there is no model to report to; the result is an invalid tensor.
  if (inputs.empty())
    return {};
  const Tensor &first = inputs.front();
  int64_t normalised = normaliseAxis(axis, first.rank());
  for (const Tensor &t : inputs)
    if (t.valid() && first.valid() && t.dtype() != first.dtype()) {
      first.builder()->error(
          loc, std::string("concat needs operands of one dtype, got ") +
                   dtypeName(first.dtype()) + " " + toString(first.shape()) + " and " +
                   dtypeName(t.dtype()) + " " + toString(t.shape()));
      return {};
    }
  std::vector<SymShape> shapes;
  std::vector<Value> values;
  for (const Tensor &t : inputs) {
    shapes.push_back(t.shape());
    values.push_back(t.value());
  }
  return buildOp(
      "concat", inputs, loc, Signature::any(),
      [&] { return shape_rules::concat(shapes, normalised); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<ConcatOp>(l, t, values, ob.getI64IntegerAttr(normalised))
            .getResult();
      });
}

//===----------------------------------------------------------------------===//
// Embeddings, positions and masks
//===----------------------------------------------------------------------===//

Tensor kiln::dsl::embedding(Operand table, Operand ids, SourceLoc loc) {
  const Tensor &w = table.tensor, &i = ids.tensor;
  return buildOp(
      "embedding", {w, i}, loc,
      {{{"table", DType::F32}, {"ids", DType::I32}}, DType::F32},
      [&] { return shape_rules::embedding(w.shape(), i.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<EmbeddingOp>(l, t, w.value(), i.value()).getResult();
      });
}

Tensor kiln::dsl::positions(Operand like, int64_t axis, SourceLoc loc) {
  const Tensor &x = like.tensor;
  int64_t normalised = normaliseAxis(axis, x.rank());
  return buildOp(
      "positions", {x}, loc, {{}, DType::I32},
      [&] { return shape_rules::range(x.shape(), normalised); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<RangeOp>(l, t, x.value(), ob.getI64IntegerAttr(normalised))
            .getResult();
      });
}

Tensor kiln::dsl::sinusoid(Operand positions, int64_t dim, SourceLoc loc) {
  const Tensor &p = positions.tensor;
  return buildOp(
      "sinusoid", {p}, loc, {{{"positions", DType::I32}}, DType::F32},
      [&] { return shape_rules::sinusoid(p.shape(), dim); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<SinusoidOp>(l, t, p.value()).getResult();
      });
}

Tensor kiln::dsl::rotary(Operand x, Operand positions, float base, RotaryStyle style,
                         SourceLoc loc) {
  const Tensor &input = x.tensor, &p = positions.tensor;
  return buildOp(
      "rotary", {input, p}, loc, {{{"x", DType::F32}, {"positions", DType::I32}}},
      [&] { return shape_rules::rotary(input.shape(), p.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        const char *styleName = style == RotaryStyle::Half ? "half" : "interleaved";
        return ob
            .create<RotaryOp>(l, t, input.value(), p.value(), ob.getF32FloatAttr(base),
                              ob.getStringAttr(styleName))
            .getResult();
      });
}

static DType maskDType(MaskForm form) {
  return form == MaskForm::Boolean ? DType::Bool : DType::F32;
}

Tensor kiln::dsl::paddingMask(Operand lengths, Operand like, int64_t axis, MaskForm form,
                              SourceLoc loc) {
  const Tensor &n = lengths.tensor, &x = like.tensor;
  int64_t normalised = normaliseAxis(axis, x.rank());
  return buildOp(
      "padding_mask", {n, x}, loc, {{{"lengths", DType::I32}}, maskDType(form)},
      [&] { return shape_rules::paddingMask(n.shape(), x.shape(), normalised); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob
            .create<PaddingMaskOp>(l, t, n.value(), x.value(),
                                   ob.getI64IntegerAttr(normalised))
            .getResult();
      });
}

Tensor kiln::dsl::causalMask(Operand like, int64_t axis, MaskForm form, SourceLoc loc) {
  const Tensor &x = like.tensor;
  int64_t normalised = normaliseAxis(axis, x.rank());
  return buildOp(
      "causal_mask", {x}, loc, {{}, maskDType(form)},
      [&] { return shape_rules::causalMask(x.shape(), normalised); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<CausalMaskOp>(l, t, x.value(), ob.getI64IntegerAttr(normalised))
            .getResult();
      });
}

Tensor kiln::dsl::maskedFill(Operand input, Operand mask, float value, SourceLoc loc) {
  const Tensor &x = input.tensor, &m = mask.tensor;
  return buildOp(
      "masked_fill", {x, m}, loc,
      {{{"input", DType::F32}, {"mask", DType::Bool}}, DType::F32},
      [&] { return shape_rules::maskedFill(x.shape(), m.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob
            .create<MaskedFillOp>(l, t, x.value(), m.value(), ob.getF32FloatAttr(value))
            .getResult();
      });
}

//===----------------------------------------------------------------------===//
// Session state
//===----------------------------------------------------------------------===//

void kiln::dsl::stateWrite(const std::string &name, const Tensor &value, SourceLoc loc) {
  ModelBuilder *builder = value.builder();
  if (!builder || !builder->prepareOperands({value}, loc))
    return;
  builder->markStateWrite();
  if (value.dtype() != DType::F32) {
    builder->error(loc, "stateWrite needs an f32 tensor (states are f32), got an " +
                            std::string(dtypeName(value.dtype())) + " tensor " +
                            toString(value.shape()));
    return;
  }
  if (!builder->useState(name, value.shape(), ModelBuilder::StateUse::Create, loc))
    return;
  builder->opBuilder().create<StateWriteOp>(builder->location(loc), llvm::StringRef(name),
                                            value.value());
}

Tensor kiln::dsl::kvAppend(const std::string &name, const Tensor &value, int64_t axis,
                           const Dim &position, int64_t capacity, SourceLoc loc) {
  ModelBuilder *builder = value.builder();
  if (!builder || !builder->prepareOperands({value}, loc))
    return {};
  builder->markStateWrite();
  if (value.dtype() != DType::F32) {
    builder->error(loc, "kv_append needs an f32 value (states are f32), got an " +
                            std::string(dtypeName(value.dtype())) + " tensor " +
                            toString(value.shape()));
    return {};
  }
  if (position.name.empty() && position.size < 0) {
    builder->error(loc, "kv_append needs a named position, as dyn(\"P\") bound by an "
                        "Entry::valueInput, or a static start such as Dim(0), got " +
                            std::to_string(position.size));
    return {};
  }
  std::string start =
      position.name.empty() ? std::to_string(position.size) : position.name;
  int64_t normalised = normaliseAxis(axis, value.rank());
  ShapeResult result = shape_rules::kvAppend(value.shape(), normalised, capacity, start);
  if (!result.succeeded()) {
    builder->error(loc, "kv_append: " + result.error);
    return {};
  }
  // The cache, as kv_append's rule states it: the value with `capacity` at `axis`.
  SymShape cache = value.shape();
  cache[normalised] = SymDim::fixed(capacity);
  if (!builder->useState(name, cache, ModelBuilder::StateUse::Update, loc))
    return {};
  OpBuilder &ob = builder->opBuilder();
  auto type = RankedTensorType::get(staticShape(result.shape), ob.getF32Type());
  Value appended =
      ob.create<KvAppendOp>(builder->location(loc), type, ob.getStringAttr(name),
                            value.value(), ob.getI64IntegerAttr(normalised),
                            ob.getI64IntegerAttr(capacity), ob.getStringAttr(start));
  return builder->wrap(appended, std::move(result.shape), DType::F32);
}
