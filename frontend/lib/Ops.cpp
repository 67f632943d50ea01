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

using namespace mlir;
using namespace kiln;

namespace {
/// Validates operands, checks the shape rule and, when both pass, builds the op with the
/// inferred result type. `create` receives the result type.
template <typename CreateFn>
Tensor buildOp(const char *opName, std::initializer_list<Tensor> operands, SourceLoc loc,
               bool needsFloat, const std::function<ShapeResult()> &rule,
               CreateFn create) {
  ModelBuilder *builder = nullptr;
  for (const Tensor &t : operands)
    if (t.builder())
      builder = t.builder();
  if (!builder || !builder->prepareOperands(operands, loc))
    return {};
  DType dtype = operands.begin()->dtype();
  if (needsFloat)
    for (const Tensor &t : operands)
      if (t.dtype() != DType::F32) {
        builder->error(loc, std::string(opName) + " needs f32 operands, got an i32 tensor " +
                                toString(t.shape()));
        return {};
      }
  ShapeResult result = rule();
  if (!result.succeeded()) {
    builder->error(loc, std::string(opName) + ": " + result.error);
    return {};
  }
  Type element = operands.begin()->value().getType().cast<RankedTensorType>()
                     .getElementType();
  auto type = RankedTensorType::get(staticShape(result.shape), element);
  Value value = create(builder->opBuilder(), builder->location(loc), type);
  return builder->wrap(value, std::move(result.shape), dtype);
}

/// Maps a negative axis to its positive counterpart; the shape rule rejects the rest.
int64_t normaliseAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }
} // namespace

Tensor kiln::matmul(Operand lhs, Operand rhs, bool transposeLhs, bool transposeRhs,
                    SourceLoc loc) {
  const Tensor &a = lhs.tensor, &b = rhs.tensor;
  return buildOp(
      "matmul", {a, b}, loc, true,
      [&] { return shape_rules::matmul(a.shape(), b.shape(), transposeLhs, transposeRhs); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<MatmulOp>(l, t, a.value(), b.value(), transposeLhs, transposeRhs)
            .getResult();
      });
}

template <typename OpTy>
static Tensor binary(const char *name, const Tensor &a, const Tensor &b, SourceLoc loc) {
  return buildOp(
      name, {a, b}, loc, true, [&] { return shape_rules::broadcast(a.shape(), b.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<OpTy>(l, t, a.value(), b.value()).getResult();
      });
}

Tensor kiln::add(Operand lhs, Operand rhs, SourceLoc loc) {
  return binary<AddOp>("add", lhs.tensor, rhs.tensor, loc);
}

Tensor kiln::mul(Operand lhs, Operand rhs, SourceLoc loc) {
  return binary<MulOp>("mul", lhs.tensor, rhs.tensor, loc);
}

Tensor kiln::scale(Operand input, float factor, SourceLoc loc) {
  const Tensor &x = input.tensor;
  return buildOp(
      "scale", {x}, loc, true, [&] { return ShapeResult::ok(x.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<ScaleOp>(l, t, x.value(), ob.getF32FloatAttr(factor)).getResult();
      });
}

Tensor kiln::relu(Operand input, SourceLoc loc) {
  const Tensor &x = input.tensor;
  return buildOp(
      "relu", {x}, loc, true, [&] { return ShapeResult::ok(x.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<ReluOp>(l, t, x.value()).getResult();
      });
}

Tensor kiln::softmax(Operand input, int64_t axis, SourceLoc loc) {
  const Tensor &x = input.tensor;
  int64_t normalised = normaliseAxis(axis, x.rank());
  return buildOp(
      "softmax", {x}, loc, true, [&] { return shape_rules::softmax(x.shape(), normalised); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<SoftmaxOp>(l, t, x.value(), ob.getI64IntegerAttr(normalised))
            .getResult();
      });
}

Tensor kiln::layerNorm(Operand input, Operand gamma, Operand beta, float epsilon,
                       SourceLoc loc) {
  const Tensor &x = input.tensor, &g = gamma.tensor, &b = beta.tensor;
  return buildOp(
      "layer_norm", {x, g, b}, loc, true,
      [&] { return shape_rules::layerNorm(x.shape(), g.shape(), b.shape()); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob
            .create<LayerNormOp>(l, t, x.value(), g.value(), b.value(),
                                 ob.getF32FloatAttr(epsilon))
            .getResult();
      });
}

Tensor kiln::reshape(Operand input, std::vector<int64_t> shape, SourceLoc loc) {
  const Tensor &x = input.tensor;
  return buildOp(
      "reshape", {x}, loc, false, [&] { return shape_rules::reshape(x.shape(), shape); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<ReshapeOp>(l, t, x.value(), ob.getI64ArrayAttr(shape)).getResult();
      });
}

Tensor kiln::transpose(Operand input, std::vector<int64_t> permutation, SourceLoc loc) {
  const Tensor &x = input.tensor;
  for (int64_t &p : permutation)
    if (p < 0)
      p += x.rank();
  return buildOp(
      "transpose", {x}, loc, false,
      [&] { return shape_rules::transpose(x.shape(), permutation); },
      [&](OpBuilder &ob, Location l, Type t) {
        return ob.create<TransposeOp>(l, t, x.value(), ob.getI64ArrayAttr(permutation))
            .getResult();
      });
}

Tensor kiln::operator+(Operand lhs, const Tensor &rhs) { return add(lhs, rhs, lhs.loc); }
Tensor kiln::operator*(Operand lhs, const Tensor &rhs) { return mul(lhs, rhs, lhs.loc); }
Tensor kiln::operator*(Operand lhs, float factor) { return scale(lhs, factor, lhs.loc); }
Tensor kiln::operator/(Operand lhs, float divisor) {
  return scale(lhs, 1.0f / divisor, lhs.loc);
}
