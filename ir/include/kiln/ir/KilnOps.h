//===- KilnOps.h - Ops of the kiln dialect ----------------------*- C++ -*-===//

#ifndef KILN_IR_KILNOPS_H
#define KILN_IR_KILNOPS_H

#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/ShapeRules.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kiln {
class FusionOp;
class ParameterOp;
class ReturnOp;
class KvAppendOp;
class StateAllocOp;
class StateReadOp;
class StateWriteOp;
class UnpackPanelsOp;
class WhereOp;
/// Checks an op's declared result type against its symbolic shape rule.
mlir::LogicalResult verifySymbolicShape(mlir::Operation *op);
mlir::LogicalResult verifyParameter(ParameterOp op);
mlir::LogicalResult verifyReturn(ReturnOp op);
mlir::LogicalResult verifyUnpackPanels(UnpackPanelsOp op);
mlir::LogicalResult verifyWhere(WhereOp op);
/// A body whose arguments have the operands' types and that yields the result's type.
mlir::LogicalResult verifyFusion(FusionOp op);
/// State ops (StateOps.cpp): a non-empty name, a rank >= 1 (dimension 0 is the batch),
/// and `dims` naming every dynamic dim.
mlir::LogicalResult verifyStateAlloc(StateAllocOp op);
mlir::LogicalResult verifyStateWrite(StateWriteOp op);
mlir::LogicalResult verifyStateRead(StateReadOp op);
mlir::LogicalResult verifyKvAppend(KvAppendOp op);
/// The symbolic shape that a state op or an entry input declares: `type`, each dynamic
/// dim named by its entry of `dims` (a state op's `dims`, an input's `kiln.dims`); a
/// missing or "" entry leaves it unknown.
SymShape declaredStateShape(mlir::RankedTensorType type, mlir::ArrayAttr dims);
/// Whether `op` computes each element of its result from the same element of its
/// operands (broadcast): the arithmetic, activation, math, cast, where and masked_fill
/// ops. Kernel groups and row collapsing build on it.
bool isElementwise(mlir::Operation *op);
} // namespace kiln

#include "kiln/ir/KilnInterfaces.h.inc"

#define GET_OP_CLASSES
#include "kiln/ir/KilnOps.h.inc"

#endif // KILN_IR_KILNOPS_H
