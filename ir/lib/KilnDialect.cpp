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

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value, Type type,
                                            Location loc) {
  auto elements = value.dyn_cast<DenseFPElementsAttr>();
  if (!elements || elements.getType() != type || !elements.getElementType().isF32())
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}

/// `kiln.bounds`: two dimension expressions over the entry's named dims, on an i32
/// input. Other kiln argument attributes (kiln.name, kiln.dims) are read where used.
LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned region,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  if (attribute.getName() != kBoundsAttr)
    return success();
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitOpError() << "'" << kBoundsAttr << "' belongs on function arguments";
  auto fail = [&]() {
    return op->emitOpError() << "'" << kBoundsAttr << "' of input #" << argIndex << " ";
  };
  auto type = func.getArgumentTypes()[argIndex].dyn_cast<RankedTensorType>();
  if (!type || !type.getElementType().isSignlessInteger(32))
    return fail() << "needs an i32 tensor, got " << func.getArgumentTypes()[argIndex];
  auto ends = attribute.getValue().dyn_cast<ArrayAttr>();
  if (!ends || ends.size() != 2 || !ends[0].isa<StringAttr>() || !ends[1].isa<StringAttr>())
    return fail() << "must be an array of two strings [\"lo\", \"hi\"], got "
                  << attribute.getValue();

  // Every name an end uses must be a dynamic dimension of some input of this entry.
  llvm::SmallVector<StringRef> known;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto dims = func.getArgAttrOfType<ArrayAttr>(i, kDimsAttr))
      for (Attribute d : dims)
        if (auto name = d.dyn_cast<StringAttr>(); name && !name.getValue().empty())
          known.push_back(name.getValue());
  llvm::SmallVector<Optional<int64_t>, 2> constant;
  for (Attribute end : ends) {
    StringRef text = end.cast<StringAttr>().getValue();
    llvm::Expected<std::vector<std::string>> names = dimExprNames(text);
    if (!names)
      return fail() << llvm::toString(names.takeError());
    for (const std::string &name : *names)
      if (!llvm::is_contained(known, name))
        return fail() << "uses dimension '" << name
                      << "', which no input of the entry names in '" << kDimsAttr << "'";
    constant.push_back(None);
    if (!names->empty())
      continue;
    auto noNames = [](StringRef) { return Optional<int64_t>(); };
    llvm::Expected<int64_t> value = evaluateDimExpr(text, noNames);
    if (!value)
      return fail() << llvm::toString(value.takeError());
    constant.back() = *value;
  }
  if (constant[0] && constant[1] && *constant[0] > *constant[1])
    return fail() << "is empty: " << *constant[0] << " > " << *constant[1];
  return success();
}
