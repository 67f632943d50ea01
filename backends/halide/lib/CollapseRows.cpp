//===- CollapseRows.cpp - Row-wise kernels over one dimension of rows -----===//
//
// See CollapseRows.h. The kernel is lowered from a copy of its op in a scratch module,
// not from the op with its types changed in place: the planner and the other kernels
// still read the model's own types.
//
//===----------------------------------------------------------------------===//

#include "CollapseRows.h"

#include "LowerSupport.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/BlockAndValueMapping.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::halide_backend {

namespace {

/// The leading dims of `op`'s result (its rows), or None when they are not worth
/// collapsing: a result of rank below 3, or one with fewer than two leading dims that
/// are not statically 1 (a decoding step's [B, 1, D] has its B rows already).
llvm::Optional<ArrayRef<int64_t>> rowDims(Operation *op) {
  if (op->getNumResults() != 1)
    return llvm::None;
  auto type = op->getResult(0).getType().dyn_cast<RankedTensorType>();
  if (!type || type.getRank() < 3)
    return llvm::None;
  ArrayRef<int64_t> rows = type.getShape().drop_back();
  if (llvm::count_if(rows, [](int64_t d) { return d != 1; }) < 2)
    return llvm::None;
  return rows;
}

bool hasRows(Type type, ArrayRef<int64_t> rows) {
  auto tensor = type.dyn_cast<RankedTensorType>();
  return tensor && tensor.getRank() == static_cast<int64_t>(rows.size()) + 1 &&
         tensor.getShape().drop_back() == rows;
}

/// Whether `type` is read alike by every row: a scalar or a vector along the last dim.
bool broadcastsOverRows(Type type) {
  auto tensor = type.dyn_cast<RankedTensorType>();
  return tensor && tensor.getRank() <= 1;
}

/// Whether `op` computes each row of its result from the same row of its row operands.
bool isRowWise(Operation *op, ArrayRef<int64_t> rows) {
  if (!llvm::all_of(op->getResultTypes(), [&](Type t) { return hasRows(t, rows); }))
    return false;
  auto operandsAre = [&](unsigned first, auto predicate) {
    for (Value operand : op->getOperands().drop_front(first))
      if (!predicate(operand.getType()))
        return false;
    return true;
  };
  auto rowOrBroadcast = [&](Type t) { return hasRows(t, rows) || broadcastsOverRows(t); };
  if (isa<LinearOp, QuantizedLinearOp>(op)) {
    // The weight is [N, K], read whole by every row; scales and bias are vectors.
    auto notRows = [&](Type t) {
      auto tensor = t.dyn_cast<RankedTensorType>();
      return tensor && tensor.getRank() <= 2;
    };
    return op->getNumOperands() >= 1 && hasRows(op->getOperand(0).getType(), rows) &&
           operandsAre(1, notRows);
  }
  if (isa<LayerNormOp, RmsNormOp>(op))
    return hasRows(op->getOperand(0).getType(), rows) &&
           operandsAre(1, broadcastsOverRows);
  if (isElementwise(op))
    return operandsAre(0, rowOrBroadcast);
  return false;
}

} // namespace

bool rowsCollapsible(Operation *op) {
  llvm::Optional<ArrayRef<int64_t>> rows = rowDims(op);
  if (!rows)
    return false;
  auto fusion = dyn_cast<FusionOp>(op);
  if (!fusion)
    return isa<LinearOp, QuantizedLinearOp>(op) && isRowWise(op, *rows);
  if (llvm::none_of(fusion.getBody()->without_terminator(), [](Operation &inner) {
        return isa<LinearOp, QuantizedLinearOp>(inner);
      }))
    return false;
  for (Value operand : fusion.getOperands()) {
    Type type = operand.getType();
    auto tensor = type.dyn_cast<RankedTensorType>();
    if (!tensor || (!hasRows(type, *rows) && tensor.getRank() > 2))
      return false;
  }
  for (Operation &inner : fusion.getBody()->without_terminator())
    if (!isRowWise(&inner, *rows))
      return false;
  return true;
}

bool isRowTensor(Operation *op, Value value) {
  llvm::Optional<ArrayRef<int64_t>> rows = rowDims(op);
  return rows && hasRows(value.getType(), *rows);
}

SymShape collapseRows(ArrayRef<SymDim> shape) {
  SymDim rows = SymDim::fixed(1);
  for (const SymDim &d : shape.drop_back()) {
    if (rows.isStatic() && d.isStatic()) {
      rows = SymDim::fixed(rows.size * d.size);
      continue;
    }
    std::string left = rows.isStatic() ? std::to_string(rows.size) : rows.expr;
    std::string right = d.isStatic() ? std::to_string(d.size) : d.expr;
    // A factor that is not a plain product is parenthesised: "S*A/2" would divide S*A.
    auto factor = [](const std::string &e) {
      bool product = llvm::all_of(
          e, [](char c) { return llvm::isAlnum(c) || c == '_' || c == '*'; });
      return product ? e : "(" + e + ")";
    };
    rows = left == "1" ? SymDim::named(factor(right))
                       : SymDim::named(factor(left) + "*" + factor(right));
  }
  return {rows, shape.back()};
}

FailureOr<LoweredKernel> lowerCollapsedRows(Operation *op, const Halide::Target &target) {
  ArrayRef<int64_t> rows = *rowDims(op);
  auto collapse = [&](Type type) -> Type {
    if (!hasRows(type, rows))
      return type;
    auto tensor = type.cast<RankedTensorType>();
    int64_t count = 1;
    for (int64_t d : rows)
      count = ShapedType::isDynamic(d) || ShapedType::isDynamic(count)
                  ? ShapedType::kDynamicSize
                  : count * d;
    return RankedTensorType::get({count, tensor.getShape().back()},
                                 tensor.getElementType());
  };

  // The copy reads its operands from a function's arguments; a weight in panels keeps
  // its kiln.unpack_panels, through which the lowering finds the panels.
  OpBuilder builder(op->getContext());
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(op->getLoc());
  SmallVector<Type> argTypes;
  for (Value operand : op->getOperands()) {
    UnpackPanelsOp unpack = operand.getDefiningOp<UnpackPanelsOp>();
    argTypes.push_back(unpack ? unpack.panels().getType() : collapse(operand.getType()));
  }
  builder.setInsertionPointToEnd(scratch->getBody());
  auto func = builder.create<FuncOp>(op->getLoc(), "collapsed_rows",
                                     builder.getFunctionType(argTypes, {}));
  builder.setInsertionPointToEnd(func.addEntryBlock());
  BlockAndValueMapping mapping;
  for (auto it : llvm::enumerate(op->getOperands())) {
    Value arg = func.getArgument(it.index());
    if (auto unpack = it.value().getDefiningOp<UnpackPanelsOp>()) {
      BlockAndValueMapping panels;
      panels.map(unpack.panels(), arg);
      arg = builder.clone(*unpack, panels)->getResult(0);
    }
    mapping.map(it.value(), arg);
  }
  Operation *copy = builder.clone(*op, mapping);
  copy->walk([&](Operation *inner) {
    for (Value result : inner->getResults())
      result.setType(collapse(result.getType()));
    for (Region &region : inner->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          arg.setType(collapse(arg.getType()));
  });
  return lowerOp(copy, target);
}

} // namespace kiln::halide_backend
