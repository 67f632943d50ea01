//===- SymbolicShapes.h - Symbolic shapes of an entry point -----*- C++ -*-===//
//
// Entry points name their dynamic dimensions on the function arguments; this walks the
// body with the ops' shape rules so that every value's shape is known in terms of those
// names. The backends describe buffers to the runtime this way.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_SYMBOLICSHAPES_H
#define KILN_IR_SYMBOLICSHAPES_H

#include "kiln/ir/ShapeRules.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"

namespace kiln {

/// Argument attribute: the name of an entry's input (StringAttr); also a result
/// attribute naming an output.
inline constexpr llvm::StringLiteral kNameAttr = "kiln.name";
/// Argument attribute: ArrayAttr of StringAttr, one per dimension, naming the dynamic
/// ones ("" for static dimensions).
inline constexpr llvm::StringLiteral kDimsAttr = "kiln.dims";

using SymbolicShapeMap = llvm::DenseMap<mlir::Value, SymShape>;

/// The symbolic shape of every value in `func`; emits an error at the offending op and
/// fails when a rule fails or an input has an unnamed dynamic dimension.
mlir::FailureOr<SymbolicShapeMap> inferSymbolicShapes(mlir::FuncOp func);

} // namespace kiln

#endif // KILN_IR_SYMBOLICSHAPES_H
