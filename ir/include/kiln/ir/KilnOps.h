//===- KilnOps.h - Ops of the kiln dialect ----------------------*- C++ -*-===//

#ifndef KILN_IR_KILNOPS_H
#define KILN_IR_KILNOPS_H

#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/ShapeRules.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
class ParameterOp;
class ReturnOp;
/// Checks an op's declared result type against its symbolic shape rule.
mlir::LogicalResult verifySymbolicShape(mlir::Operation *op);
mlir::LogicalResult verifyParameter(ParameterOp op);
mlir::LogicalResult verifyReturn(ReturnOp op);
} // namespace kiln

#include "kiln/ir/KilnInterfaces.h.inc"

#define GET_OP_CLASSES
#include "kiln/ir/KilnOps.h.inc"

#endif // KILN_IR_KILNOPS_H
