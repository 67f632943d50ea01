//===- StateOps.cpp - Verifiers and shape rules of the session-state ops --===//
//
// kiln.state_alloc / state_write / state_read / kv_append: the ops through which an
// entry point keeps tensors (key/value caches) in the runtime's session between runs.
// What needs the whole entry (is a dimension name bound?) is checked with the entry's
// symbolic shapes (SymbolicShapes.cpp); these check each op on its own.
//
//===----------------------------------------------------------------------===//

#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnOps.h"

using namespace mlir;
using namespace kiln;

SymShape kiln::declaredStateShape(RankedTensorType type, ArrayAttr dims) {
  SymShape shape = shapeOf(type);
  for (size_t i = 0; i < shape.size() && dims && i < dims.size(); ++i)
    if (!shape[i].isStatic())
      if (auto name = dims[i].dyn_cast<StringAttr>(); name && !name.getValue().empty())
        shape[i] = SymDim::named(name.getValue().str());
  return shape;
}

static LogicalResult verifyStateName(Operation *op, StringRef name) {
  if (name.empty())
    return op->emitOpError() << "needs a non-empty state name";
  return success();
}

/// Dimension 0 of a state is its batch, which the runtime gathers rows along.
static LogicalResult verifyStateRank(Operation *op, Type type) {
  auto ranked = type.dyn_cast<RankedTensorType>();
  if (ranked && ranked.getRank() >= 1)
    return success();
  return op->emitOpError() << "states have rank >= 1 (dimension 0 is the batch), got "
                           << type;
}

/// `dims` has one entry per dimension of `type`: a name for each dynamic one (a single
/// name, which the runtime binds or checks), "" for each static one.
static LogicalResult verifyStateDims(Operation *op, RankedTensorType type,
                                     ArrayAttr dims) {
  if (dims.size() != static_cast<size_t>(type.getRank()))
    return op->emitOpError() << "'dims' has " << dims.size() << " entries but the type "
                             << type << " has rank " << type.getRank();
  for (unsigned i = 0; i < dims.size(); ++i) {
    StringRef name = dims[i].cast<StringAttr>().getValue();
    bool dynamic = type.isDynamicDim(i);
    if (!dynamic && !name.empty())
      return op->emitOpError() << "dimension " << i << " of " << type
                               << " is static; its 'dims' entry must be \"\", got \""
                               << name << "\"";
    if (dynamic && !isDimName(name))
      return op->emitOpError() << "dynamic dimension " << i << " of " << type
                               << " needs a dimension name in 'dims', got \"" << name
                               << "\"";
  }
  return success();
}

LogicalResult kiln::verifyStateAlloc(StateAllocOp op) {
  if (failed(verifyStateName(op, op.name())))
    return failure();
  auto type = op.type().dyn_cast<RankedTensorType>();
  if (!type || !type.getElementType().isF32())
    return op.emitOpError() << "states are ranked f32 tensors, got " << op.type();
  if (failed(verifyStateRank(op, type)))
    return failure();
  return verifyStateDims(op, type, op.dims());
}

LogicalResult kiln::verifyStateWrite(StateWriteOp op) {
  if (failed(verifyStateName(op, op.name())))
    return failure();
  return verifyStateRank(op, op.value().getType());
}

LogicalResult kiln::verifyStateRead(StateReadOp op) {
  if (failed(verifyStateName(op, op.name())))
    return failure();
  if (failed(verifyStateRank(op, op.getType())))
    return failure();
  return verifyStateDims(op, op.getType().cast<RankedTensorType>(), op.dims());
}

LogicalResult kiln::verifyKvAppend(KvAppendOp op) {
  return verifyStateName(op, op.name());
}

// value [..., N at `axis`, ...] (N >= 1, static or named) written at [P, P+N) -> the
// value's shape with P+N at `axis`; P (`position`) is a dimension name or a static start.
ShapeResult shape_rules::kvAppend(ArrayRef<SymDim> value, int64_t axis, int64_t capacity,
                                  StringRef position) {
  int64_t rank = static_cast<int64_t>(value.size());
  if (axis < 0 || axis >= rank)
    return ShapeResult::failure("kv_append axis " + std::to_string(axis) +
                                " is out of range for a value of rank " +
                                std::to_string(rank));
  if (axis == 0)
    return ShapeResult::failure("kv_append axis must not be 0: dimension 0 of a state is "
                                "its batch");
  if (capacity < 1)
    return ShapeResult::failure("kv_append capacity must be positive, got " +
                                std::to_string(capacity));
  llvm::Optional<int64_t> start = dimInteger(position);
  if (!start && !isDimName(position))
    return ShapeResult::failure("kv_append position must name an entry dimension (an "
                                "input's kiln.value_dim) or be a non-negative integer, "
                                "got \"" +
                                position.str() + "\"");
  const SymDim &count = value[axis];
  // A static block must fit; a dynamic one (or a named start) is the runtime's check.
  int64_t first = start ? *start : 0;
  if (count.isStatic() && (count.size < 1 || first + count.size > capacity))
    return ShapeResult::failure(
        "kv_append writes " + std::to_string(count.size) + " positions (dimension " +
        std::to_string(axis) + " of the value " + toString(value) + ") from position " +
        position.str() + ", but it needs 1 or more and the cache holds " +
        std::to_string(capacity));
  SymShape result(value.begin(), value.end());
  if (count.isUnknown())
    result[axis] = SymDim::unknown();
  else if (start && count.isStatic())
    result[axis] = SymDim::fixed(*start + count.size);
  else if (start && *start == 0)
    result[axis] = count;
  else
    result[axis] = SymDim::named(position.str() + "+" + count.str());
  return ShapeResult::ok(std::move(result));
}

ShapeResult KvAppendOp::inferSymbolicShape(ArrayRef<SymShape> operands) {
  return shape_rules::kvAppend(operands[0], axis(), capacity(), position());
}
