//===- KilnDialect.cpp - The kiln dialect ---------------------------------===//

#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/FunctionInterfaces.h"

using namespace mlir;
using namespace kiln;

#include "kiln/ir/KilnDialect.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/ir/KilnOps.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = value.dyn_cast<DenseFPElementsAttr>();
  if (!elements || elements.getType() != type || !elements.getElementType().isF32())
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

/// `kiln.value_dim`: a rank-0 i32 input whose value binds one dimension name that
/// nothing else binds (the runtime would not know which binding wins).
static LogicalResult verifyValueDim(FunctionOpInterface func, unsigned argIndex,
                                    Attribute value) {
  auto fail = [&]() {
    return func->emitOpError() << "'" << kValueDimAttr << "' of input #" << argIndex
                               << " ";
  };
  Type argType = func.getArgumentTypes()[argIndex];
  auto type = argType.dyn_cast<RankedTensorType>();
  if (!type || type.getRank() != 0 || !type.getElementType().isSignlessInteger(32))
    return fail() << "needs a rank-0 i32 tensor (the value is the size), got " << argType;
  auto name = value.dyn_cast<StringAttr>();
  if (!name || !isDimName(name.getValue()))
    return fail() << "must be one dimension name, got " << value;
  for (const DimBinding &b : entryDimBindings(func)) {
    if (b.name != name.getValue() || (b.kind == DimBinding::Value && b.input == argIndex))
      continue;
    auto error = fail() << "names '" << name.getValue() << "', which ";
    if (b.kind == DimBinding::State)
      return error << "a kiln.state_read also binds by its shape";
    return error << "input #" << b.input << " also binds "
                 << (b.kind == DimBinding::Shape ? "by its shape ('kiln.dims')"
                                                 : "by its value ('kiln.value_dim')");
  }
  return success();
}

/// `kiln.bounds`: two dimension expressions over the names the entry binds, on an i32
/// input.
static LogicalResult verifyBounds(FunctionOpInterface func, unsigned argIndex,
                                  Attribute value) {
  auto fail = [&]() {
    return func->emitOpError() << "'" << kBoundsAttr << "' of input #" << argIndex << " ";
  };
  auto type = func.getArgumentTypes()[argIndex].dyn_cast<RankedTensorType>();
  if (!type || !type.getElementType().isSignlessInteger(32))
    return fail() << "needs an i32 tensor, got " << func.getArgumentTypes()[argIndex];
  auto ends = value.dyn_cast<ArrayAttr>();
  if (!ends || ends.size() != 2 || !ends[0].isa<StringAttr>() ||
      !ends[1].isa<StringAttr>())
    return fail() << "must be an array of two strings [\"lo\", \"hi\"], got " << value;

  llvm::SmallVector<DimBinding> bindings = entryDimBindings(func);
  auto ownValueDim = func.getArgAttrOfType<StringAttr>(argIndex, kValueDimAttr);
  llvm::SmallVector<Optional<int64_t>, 2> constant;
  for (Attribute end : ends) {
    StringRef text = end.cast<StringAttr>().getValue();
    llvm::Expected<std::vector<std::string>> names = dimExprNames(text);
    if (!names)
      return fail() << llvm::toString(names.takeError());
    for (const std::string &name : *names) {
      // The runtime checks this input's value before it binds the name to it.
      if (ownValueDim && ownValueDim.getValue() == name)
        return fail() << "uses dimension '" << name << "', which this input's own value "
                      << "binds ('" << kValueDimAttr << "')";
      if (llvm::none_of(bindings, [&](const DimBinding &b) { return b.name == name; }))
        return fail() << "uses dimension '" << name << "', which the entry does not bind "
                      << "(no input's '" << kDimsAttr << "' or '" << kValueDimAttr
                      << "', nor a kiln.state_read, names it)";
    }
    constant.push_back(None);
    if (!names->empty())
      continue;
    auto noNames = [](StringRef) { return Optional<int64_t>(); };
    llvm::Expected<int64_t> bound = evaluateDimExpr(text, noNames);
    if (!bound)
      return fail() << llvm::toString(bound.takeError());
    constant.back() = *bound;
  }
  if (constant[0] && constant[1] && *constant[0] > *constant[1])
    return fail() << "is empty: " << *constant[0] << " > " << *constant[1];
  return success();
}

/// `kiln.dim_max`: beside `kiln.dims`, a positive bound per named dimension (0: none),
/// the same for a name wherever an input of the entry bounds it.
static LogicalResult verifyDimMax(FunctionOpInterface func, unsigned argIndex,
                                  Attribute value) {
  auto fail = [&]() {
    return func->emitOpError() << "'" << kDimMaxAttr << "' of input #" << argIndex << " ";
  };
  auto maxes = value.dyn_cast<ArrayAttr>();
  auto dims = func.getArgAttrOfType<ArrayAttr>(argIndex, kDimsAttr);
  if (!maxes || !dims || maxes.size() != dims.size())
    return fail() << "must be an array of integers, one per entry of '" << kDimsAttr
                  << "', got " << value;
  for (auto [dim, max] : llvm::zip(dims, maxes)) {
    auto bound = max.dyn_cast<IntegerAttr>();
    auto name = dim.dyn_cast<StringAttr>();
    if (!bound || bound.getInt() < 0)
      return fail() << "must hold integers >= 0 (0: unbounded), got " << max;
    if (bound.getInt() == 0)
      continue;
    if (!name || name.getValue().empty())
      return fail() << "bounds a static dimension (" << bound.getInt()
                    << "); only named dimensions take a bound";
    int64_t other = dimMax(func, name.getValue()).getValueOr(bound.getInt());
    if (other != bound.getInt())
      return fail() << "bounds '" << name.getValue() << "' by " << bound.getInt()
                    << ", but another input of the entry bounds it by " << other;
  }
  return success();
}

/// The entry-input attributes whose form matters before any pass reads them:
/// `kiln.bounds`, `kiln.value_dim` and `kiln.dim_max` (SymbolicShapes.h documents
/// them). kiln.name and kiln.dims are read where used.
LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned region,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name != kBoundsAttr && name != kValueDimAttr && name != kDimMaxAttr)
    return success();
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitOpError() << "'" << name << "' belongs on function arguments";
  if (name == kValueDimAttr)
    return verifyValueDim(func, argIndex, attribute.getValue());
  if (name == kDimMaxAttr)
    return verifyDimMax(func, argIndex, attribute.getValue());
  return verifyBounds(func, argIndex, attribute.getValue());
}
