//===- ValueRange.cpp - What the IR proves about integer values -----------===//
//
// Walks up the definitions of an index tensor: to the entry's bounds, to the sizes that
// bound positions, through ops that move values without computing new ones.
//
//===----------------------------------------------------------------------===//

#include "kiln/ir/ValueRange.h"

#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/BuiltinOps.h"

#include <algorithm>

using namespace mlir;
using namespace kiln;

/// An entry input's `kiln.bounds`: a constant lower end and an upper end whose names
/// are all bounded.
static llvm::Optional<IndexRange> inputRange(BlockArgument arg) {
  auto func = dyn_cast<FuncOp>(arg.getOwner()->getParentOp());
  if (!func)
    return llvm::None;
  auto bounds = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), kBoundsAttr);
  if (!bounds || bounds.size() != 2)
    return llvm::None;
  auto lo = bounds[0].dyn_cast<StringAttr>(), hi = bounds[1].dyn_cast<StringAttr>();
  if (!lo || !hi)
    return llvm::None;
  auto noNames = [](StringRef) { return llvm::Optional<int64_t>(); };
  llvm::Expected<int64_t> min = evaluateDimExpr(lo.getValue(), noNames);
  if (!min) {
    llvm::consumeError(min.takeError());
    return llvm::None;
  }
  llvm::Optional<int64_t> max = dimExprMax(func, hi.getValue());
  if (!max)
    return llvm::None;
  return IndexRange{*min, *max};
}

/// Positions 0 .. N-1 along an axis of `like`: bounded by N's largest size.
static llvm::Optional<IndexRange> positionsRange(RangeOp range) {
  auto type = range.getType().cast<RankedTensorType>();
  if (type.hasStaticShape())
    return IndexRange{0, type.getDimSize(0) - 1};
  auto func = range->getParentOfType<FuncOp>();
  FailureOr<SymbolicShapeMap> shapes = inferSymbolicShapes(func, /*emitErrors=*/false);
  if (failed(shapes))
    return llvm::None;
  SymShape like = shapes->lookup(outsideFusion(range.like()));
  if (range.axis() >= like.size() || like[range.axis()].isUnknown())
    return llvm::None;
  llvm::Optional<int64_t> size = dimExprMax(func, like[range.axis()].expr);
  if (!size)
    return llvm::None;
  return IndexRange{0, *size - 1};
}

llvm::Optional<IndexRange> kiln::indexRange(Value value) {
  value = outsideFusion(value);
  if (auto arg = value.dyn_cast<BlockArgument>())
    return inputRange(arg);
  Operation *op = value.getDefiningOp();
  if (auto range = dyn_cast<RangeOp>(op))
    return positionsRange(range);
  // Ops that only move elements keep their operands' range (a concat: the union).
  if (!isa<ReshapeOp, TransposeOp, SliceOp, ConcatOp>(op))
    return llvm::None;
  llvm::Optional<IndexRange> all;
  for (Value operand : op->getOperands()) {
    llvm::Optional<IndexRange> one = indexRange(operand);
    if (!one)
      return llvm::None;
    all = all ? IndexRange{std::min(all->min, one->min), std::max(all->max, one->max)}
              : *one;
  }
  return all;
}

std::string kiln::gatherTableName(Value table) {
  if (auto parameter = outsideFusion(table).getDefiningOp<ParameterOp>())
    return parameter.name().str();
  return "table";
}
