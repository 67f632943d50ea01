//===- SymbolicShapes.cpp - Symbolic shapes of an entry point -------------===//

#include "kiln/ir/SymbolicShapes.h"
#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace kiln;

static FailureOr<SymShape> argumentShape(FuncOp func, unsigned index, bool emitErrors) {
  BlockArgument arg = func.getArgument(index);
  auto type = arg.getType().dyn_cast<RankedTensorType>();
  if (!type) {
    if (emitErrors)
      func.emitError() << "input #" << index << " of '" << func.getName() << "' has type "
                       << arg.getType() << "; entry inputs must be ranked tensors";
    return failure();
  }
  // The runtime has no boolean dtype: masks are made inside the entry.
  if (type.getElementType().isInteger(1)) {
    if (emitErrors)
      func.emitError() << "input #" << index << " of '" << func.getName() << "' has type "
                       << type << "; i1 exists only inside an entry point (inputs are "
                       << "f32 or i32)";
    return failure();
  }
  SymShape shape =
      declaredStateShape(type, func.getArgAttrOfType<ArrayAttr>(index, kDimsAttr));
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].isUnknown())
      continue;
    if (emitErrors)
      func.emitError() << "input #" << index << " of '" << func.getName()
                       << "' has an unnamed dynamic dimension " << i << " (set the '"
                       << kDimsAttr << "' argument attribute)";
    return failure();
  }
  return shape;
}

llvm::SmallVector<DimBinding> kiln::entryDimBindings(FunctionOpInterface func) {
  llvm::SmallVector<DimBinding> bindings;
  auto addNames = [&](ArrayAttr dims, DimBinding binding) {
    for (Attribute d : dims)
      if (auto name = d.dyn_cast<StringAttr>(); name && !name.getValue().empty()) {
        binding.name = name.getValue();
        bindings.push_back(binding);
      }
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (auto dims = func.getArgAttrOfType<ArrayAttr>(i, kDimsAttr))
      addNames(dims, {"", DimBinding::Shape, i});
    if (auto name = func.getArgAttrOfType<StringAttr>(i, kValueDimAttr))
      bindings.push_back({name.getValue(), DimBinding::Value, i});
  }
  func->walk([&](StateReadOp read) {
    addNames(read.dims(), {"", DimBinding::State, 0, read});
  });
  return bindings;
}

/// Why `op` uses a dimension name that nothing binds, or "". The runtime evaluates a
/// new state's shape and a cache's position from the bound names.
static std::string unboundNameProblem(Operation *op, const llvm::StringSet<> &bound) {
  if (auto append = dyn_cast<KvAppendOp>(op))
    if (!dimInteger(append.position()) && !bound.contains(append.position()))
      return "kv_append position '" + append.position().str() +
             "' is not bound by the entry: declare a rank-0 i32 input with " +
             kValueDimAttr.str() + " = \"" + append.position().str() + "\"";
  if (auto alloc = dyn_cast<StateAllocOp>(op))
    for (Attribute d : alloc.dims())
      if (StringRef name = d.cast<StringAttr>().getValue();
          !name.empty() && !bound.contains(name))
        return "dimension '" + name.str() + "' of state '" + alloc.name().str() +
               "' is not bound by the entry (no input or kiln.state_read names it)";
  return "";
}

/// The value outside every kiln.fusion that `value` stands for: the operand that a
/// group's body argument binds, or `value` itself.
static Value outsideValue(Value value) {
  auto arg = value.dyn_cast<BlockArgument>();
  if (!arg)
    return value;
  if (auto fusion = dyn_cast<FusionOp>(arg.getOwner()->getParentOp()))
    return outsideValue(fusion.getOperand(arg.getArgNumber()));
  return value;
}

FailureOr<SymbolicShapeMap> kiln::inferSymbolicShapes(FuncOp func, bool emitErrors) {
  SymbolicShapeMap shapes;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    FailureOr<SymShape> shape = argumentShape(func, i, emitErrors);
    if (failed(shape))
      return failure();
    shapes[func.getArgument(i)] = *shape;
  }
  llvm::StringSet<> bound;
  for (const DimBinding &b : entryDimBindings(func))
    bound.insert(b.name);
  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    if (std::string problem = unboundNameProblem(op, bound); !problem.empty()) {
      if (emitErrors)
        op->emitOpError() << problem;
      return WalkResult::interrupt();
    }
    if (op->getNumResults() == 0)
      return WalkResult::advance();
    // A state's dims are named like an input's: the runtime binds them from the state.
    if (auto read = dyn_cast<StateReadOp>(op)) {
      shapes[read.getResult()] =
          declaredStateShape(read.getType().cast<RankedTensorType>(), read.dims());
      return WalkResult::advance();
    }
    // The walk is post-order: a group's body has been visited, its result is the
    // yielded value's.
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      shapes[fusion.getResult()] = shapes.lookup(fusion.yielded());
      return WalkResult::advance();
    }
    auto iface = dyn_cast<SymbolicShapeOpInterface>(op);
    if (!iface) {
      // Ops without a rule (parameters) have fully static result types; a foreign op's
      // non-tensor results have no shape to track.
      for (Value r : op->getResults())
        if (auto type = r.getType().dyn_cast<RankedTensorType>())
          shapes[r] = shapeOf(type);
      return WalkResult::advance();
    }
    llvm::SmallVector<SymShape, 3> operands;
    for (Value v : op->getOperands())
      operands.push_back(shapes.lookup(outsideValue(v)));
    ShapeResult inferred = iface.inferSymbolicShape(operands);
    if (!inferred.succeeded()) {
      if (emitErrors)
        op->emitOpError() << inferred.error;
      return WalkResult::interrupt();
    }
    // A static size in the declared type is authoritative.
    SymShape declared = shapeOf(op->getResult(0).getType().cast<RankedTensorType>());
    for (auto [d, e] : llvm::zip(declared, inferred.shape))
      if (d.isStatic())
        e = d;
    shapes[op->getResult(0)] = std::move(inferred.shape);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return shapes;
}
