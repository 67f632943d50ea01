//===- KilnOps.cpp - Verifiers, shape rules and folders of kiln ops -------===//

#include "kiln/ir/KilnOps.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace kiln;

#include "kiln/ir/KilnInterfaces.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult kiln::verifySymbolicShape(Operation *op) {
  auto iface = cast<SymbolicShapeOpInterface>(op);
  // Interface verifiers run before the ODS type constraints; leave other types to those,
  // which name the operand and the expected type.
  auto isRanked = [](Value v) { return v.getType().isa<RankedTensorType>(); };
  if (!llvm::all_of(op->getOperands(), isRanked) ||
      !llvm::all_of(op->getResults(), isRanked))
    return success();
  llvm::SmallVector<SymShape, 3> operands;
  for (Value v : op->getOperands())
    operands.push_back(shapeOf(v.getType().cast<RankedTensorType>()));
  ShapeResult inferred = iface.inferSymbolicShape(operands);
  if (!inferred.succeeded())
    return op->emitOpError() << inferred.error;

  auto resultType = op->getResult(0).getType().cast<RankedTensorType>();
  Type inputElement =
      op->getOperand(0).getType().cast<RankedTensorType>().getElementType();
  Type expected = iface.inferElementType();
  if (resultType.getElementType() != expected) {
    if (expected == inputElement)
      return op->emitOpError() << "result element type " << resultType.getElementType()
                               << " differs from the input's " << inputElement;
    return op->emitOpError() << "result element type " << resultType.getElementType()
                             << " must be " << expected;
  }
  SymShape declared = shapeOf(resultType);
  bool fits = declared.size() == inferred.shape.size();
  for (size_t i = 0; fits && i < declared.size(); ++i) {
    const SymDim &d = declared[i], &e = inferred.shape[i];
    fits = !(d.isStatic() && e.isStatic()) || d.size == e.size;
  }
  if (!fits)
    return op->emitOpError() << "result type " << resultType << " does not match the "
                             << "inferred shape " << toString(inferred.shape);
  return success();
}

LogicalResult kiln::verifyParameter(ParameterOp op) {
  if (op.name().empty())
    return op.emitOpError() << "needs a non-empty name";
  auto type = op.getType().cast<RankedTensorType>();
  if (!type.hasStaticShape())
    return op.emitOpError() << "parameter '" << op.name()
                            << "' must have a static shape, got " << op.getType();
  Type element = type.getElementType();
  auto conversion = op.conversion();
  if (!conversion) {
    if (op.source() || op.rows())
      return op.emitOpError() << "parameter '" << op.name()
                              << "' names a source or rows but no conversion";
    if (element.isBF16() || element.isInteger(8))
      return op.emitOpError() << "parameter '" << op.name() << "' of type " << type
                              << " needs a conversion: checkpoints hold f32, f16 or bf16";
    return success();
  }
  if (!op.source() || op.source()->empty())
    return op.emitOpError() << "parameter '" << op.name() << "' has conversion '"
                            << *conversion << "' but no source tensor";
  bool panels = *conversion == "panels";
  bool typeFits =
      (*conversion == "bf16" && element.isBF16()) ||
      (*conversion == "int8" && element.isInteger(8)) ||
      (*conversion == "int8_scale" && element.isF32() && type.getRank() == 1) ||
      (panels && element.isF32() && type.getRank() == 3 && type.getDimSize(0) >= 1 &&
       type.getDimSize(2) >= 1);
  if (*conversion != "bf16" && *conversion != "int8" && *conversion != "int8_scale" &&
      !panels)
    return op.emitOpError() << "parameter '" << op.name() << "' has unknown conversion '"
                            << *conversion
                            << "' (expected bf16, int8, int8_scale or panels)";
  if (!typeFits)
    return op.emitOpError() << "parameter '" << op.name() << "' has conversion '"
                            << *conversion << "' but type " << type;
  if (auto rows = op.rows()) {
    SmallVector<int64_t, 2> range = extractFromI64ArrayAttr(*rows);
    bool valid = range.size() == 2 && range[0] >= 0;
    if (valid && panels) {
      // The last panel holds 1 to W of the rows.
      int64_t count = range[1] - range[0], width = type.getDimSize(2);
      int64_t filled = count > 0 && width > 0 ? (count + width - 1) / width : 0;
      if (filled != type.getDimSize(0))
        return op.emitOpError()
               << "parameter '" << op.name() << "' has rows " << *rows << ": " << count
               << " rows fill " << filled << " panels of " << width << ", not "
               << type.getDimSize(0);
    } else if (valid) {
      valid = range[1] - range[0] == type.getDimSize(0);
    }
    if (!valid)
      return op.emitOpError() << "parameter '" << op.name() << "' has rows " << *rows
                              << ", expected [start, start + " << type.getDimSize(0)
                              << ")";
  }
  return success();
}

LogicalResult kiln::verifyUnpackPanels(UnpackPanelsOp op) {
  auto panels = op.panels().getType().cast<RankedTensorType>();
  auto result = op.getType().cast<RankedTensorType>();
  if (panels.getRank() != 3 || !panels.hasStaticShape() || result.getRank() != 2 ||
      !result.hasStaticShape())
    return op.emitOpError()
           << "expected static [P, K, W] panels and an [N, K] result, got " << panels
           << " -> " << result;
  if (panels.getElementType() != result.getElementType())
    return op.emitOpError() << "the result's element type " << result.getElementType()
                            << " is not the panels' " << panels.getElementType();
  int64_t count = panels.getDimSize(0), k = panels.getDimSize(1),
          width = panels.getDimSize(2), rows = result.getDimSize(0);
  if (result.getDimSize(1) != k)
    return op.emitOpError() << "the result has " << result.getDimSize(1)
                            << " columns but the panels " << k;
  if (width < 1 || rows < 1)
    return op.emitOpError() << "expected panels at least 1 wide and at least 1 row, got "
                            << panels << " -> " << result;
  if ((rows + width - 1) / width != count)
    return op.emitOpError() << rows << " rows need " << (rows + width - 1) / width
                            << " panels of " << width << ", got " << count;
  return success();
}

LogicalResult kiln::verifyReturn(ReturnOp op) {
  auto func = op->getParentOfType<FuncOp>();
  ArrayRef<Type> results = func.getType().getResults();
  if (op.getNumOperands() != results.size())
    return op.emitOpError() << "returns " << op.getNumOperands()
                            << (op.getNumOperands() == 1 ? " value" : " values")
                            << " but '" << func.getName() << "' declares "
                            << results.size();
  for (unsigned i = 0; i < results.size(); ++i)
    if (op.getOperand(i).getType() != results[i])
      return op.emitOpError() << "result #" << i << " has type "
                              << op.getOperand(i).getType() << " but '" << func.getName()
                              << "' declares " << results[i];
  return success();
}

LogicalResult kiln::verifyWhere(WhereOp op) {
  Type onTrue = op.on_true().getType().cast<ShapedType>().getElementType();
  Type onFalse = op.on_false().getType().cast<ShapedType>().getElementType();
  if (onTrue != onFalse)
    return op.emitOpError() << "on_false has element type " << onFalse << " but on_true "
                            << onTrue << "; cast one to the other";
  return success();
}

Value FusionOp::yielded() { return cast<YieldOp>(getBody()->getTerminator()).value(); }

bool kiln::isElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, ScaleOp, ReluOp, GeluOp, MaskedFillOp, WhereOp,
             CastOp, TanhOp, GeluTanhOp, SiluOp, RsqrtOp, ExpOp, NegOp, LogOp, SigmoidOp,
             SqrtOp, PowOp>(op);
}

LogicalResult kiln::verifyFusion(FusionOp op) {
  Block &body = op.body().front();
  if (body.getNumArguments() != op.getNumOperands())
    return op.emitOpError() << "has " << op.getNumOperands() << " operands but its body "
                            << body.getNumArguments() << " arguments";
  for (unsigned i = 0; i < body.getNumArguments(); ++i)
    if (body.getArgument(i).getType() != op.getOperand(i).getType())
      return op.emitOpError() << "body argument #" << i << " has type "
                              << body.getArgument(i).getType() << " but operand #" << i
                              << " " << op.getOperand(i).getType();
  if (body.empty() || !isa<YieldOp>(body.back()))
    return op.emitOpError() << "body must end in kiln.yield";
  if (op.yielded().getType() != op.getType())
    return op.emitOpError() << "yields " << op.yielded().getType()
                            << " but the result has type " << op.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Symbolic shape rules
//===----------------------------------------------------------------------===//

ShapeResult MatmulOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::matmul(operands[0], operands[1], transpose_lhs(), transpose_rhs());
}

ShapeResult MaskedFillOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::maskedFill(operands[0], operands[1]);
}

ShapeResult WhereOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::where(operands[0], operands[1], operands[2]);
}

Type WhereOp::inferElementType() {
  return on_true().getType().cast<ShapedType>().getElementType();
}

ShapeResult CastOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return ShapeResult::ok(operands[0]);
}

/// Any numeric result type: it is what the cast converts to (ODS checks it).
Type CastOp::inferElementType() { return getType().cast<ShapedType>().getElementType(); }

ShapeResult AttentionOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  const SymShape *maskShape = operands.size() > 3 ? &operands[3] : nullptr;
  return shape_rules::attention(operands[0], operands[1], operands[2], maskShape);
}

ShapeResult ScaleOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return ShapeResult::ok(operands[0]);
}

ShapeResult ReluOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return ShapeResult::ok(operands[0]);
}

ShapeResult SoftmaxOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::softmax(operands[0], axis());
}

ShapeResult LayerNormOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::layerNorm(operands[0], operands[1], operands[2]);
}

ShapeResult RmsNormOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::rmsNorm(operands[0], operands[1]);
}

ShapeResult ReshapeOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::reshape(operands[0], extractFromI64ArrayAttr(shape()));
}

ShapeResult TransposeOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::transpose(operands[0], extractFromI64ArrayAttr(permutation()));
}

ShapeResult LinearOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::linear(operands[0], operands[1], operands[2]);
}

ShapeResult QuantizedLinearOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::quantizedLinear(operands[0], operands[1], operands[2],
                                      operands.size() > 3 ? &operands[3] : nullptr);
}

ShapeResult GeluOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return ShapeResult::ok(operands[0]);
}

ShapeResult LogSoftmaxOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::logSoftmax(operands[0], axis());
}

ShapeResult ArgmaxOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::argmax(operands[0], axis());
}

Type ArgmaxOp::inferElementType() { return IntegerType::get(getContext(), 32); }

ShapeResult SliceOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::slice(operands[0], axis(), start(), end());
}

ShapeResult ConcatOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::concat(operands, axis());
}

ShapeResult EmbeddingOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::embedding(operands[0], operands[1]);
}

ShapeResult RangeOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::range(operands[0], axis());
}

Type RangeOp::inferElementType() { return IntegerType::get(getContext(), 32); }

ShapeResult SinusoidOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  // The feature size has no attribute of its own: the result type carries it.
  auto type = getType().dyn_cast<RankedTensorType>();
  int64_t dim = type && type.getRank() > 0 ? type.getShape().back() : SymDim::kDynamic;
  if (ShapedType::isDynamic(dim))
    dim = SymDim::kDynamic;
  return shape_rules::sinusoid(operands[0], dim);
}

Type SinusoidOp::inferElementType() { return Float32Type::get(getContext()); }

ShapeResult RotaryOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::rotary(operands[0], operands[1]);
}

ShapeResult PaddingMaskOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::paddingMask(operands[0], operands[1], axis());
}

/// A mask's result type picks its form: i1 (boolean) or, otherwise, f32 (additive).
static Type maskElementType(Operation *op) {
  Type declared = op->getResult(0).getType().cast<ShapedType>().getElementType();
  if (declared.isInteger(1))
    return declared;
  return Float32Type::get(op->getContext());
}

Type PaddingMaskOp::inferElementType() { return maskElementType(*this); }

ShapeResult CausalMaskOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::causalMask(operands[0], axis());
}

Type CausalMaskOp::inferElementType() { return maskElementType(*this); }

//===----------------------------------------------------------------------===//
// Folders
//===----------------------------------------------------------------------===//

OpFoldResult ScaleOp::fold(ArrayRef<Attribute>) {
  if (factor().convertToFloat() == 1.0f)
    return input();
  // scale(scale(x, a), b) -> scale(x, a * b), in place, unless a * b overflows or
  // underflows in f32: (x * 1e30) * 1e30 is inf for large x, but x * inf is NaN at 0.
  if (auto inner = input().getDefiningOp<ScaleOp>()) {
    float a = inner.factor().convertToFloat(), b = factor().convertToFloat();
    float combined = a * b;
    bool representable =
        std::isfinite(combined) && (std::isnormal(combined) || a == 0.0f || b == 0.0f);
    if (!representable)
      return {};
    (*this)->setAttr(factorAttrName(),
                     FloatAttr::get(Float32Type::get(getContext()), combined));
    (*this)->setOperand(0, inner.input());
    return getResult();
  }
  return {};
}

OpFoldResult ConstantOp::fold(ArrayRef<Attribute>) { return value(); }

OpFoldResult ReshapeOp::fold(ArrayRef<Attribute>) {
  if (input().getType() == getType() &&
      getType().cast<RankedTensorType>().hasStaticShape())
    return input();
  // reshape(reshape(x)) -> reshape(x), in place, when the outer shape does not copy
  // dims by position from the inner result (that would change which dims are kept).
  if (auto inner = input().getDefiningOp<ReshapeOp>()) {
    bool copiesDims =
        llvm::any_of(extractFromI64ArrayAttr(shape()), [](int64_t s) { return s == 0; });
    if (!copiesDims) {
      (*this)->setOperand(0, inner.input());
      return getResult();
    }
  }
  return {};
}

OpFoldResult TransposeOp::fold(ArrayRef<Attribute>) {
  llvm::SmallVector<int64_t, 4> perm = extractFromI64ArrayAttr(permutation());
  auto isIdentity = [](ArrayRef<int64_t> p) {
    for (size_t i = 0; i < p.size(); ++i)
      if (static_cast<int64_t>(i) != p[i])
        return false;
    return true;
  };
  // A fold must keep the result type, which may refine a dynamic input dimension.
  if (isIdentity(perm) && input().getType() == getType())
    return input();
  // transpose(transpose(x, p), q) -> transpose(x, p o q), in place.
  if (auto inner = input().getDefiningOp<TransposeOp>()) {
    llvm::SmallVector<int64_t, 4> innerPerm =
        extractFromI64ArrayAttr(inner.permutation());
    llvm::SmallVector<int64_t, 4> composed;
    for (int64_t q : perm)
      composed.push_back(innerPerm[q]);
    if (isIdentity(composed) && inner.input().getType() == getType())
      return inner.input();
    Builder b(getContext());
    (*this)->setAttr(permutationAttrName(), b.getI64ArrayAttr(composed));
    (*this)->setOperand(0, inner.input());
    return getResult();
  }
  return {};
}

#define GET_OP_CLASSES
#include "kiln/ir/KilnOps.cpp.inc"
