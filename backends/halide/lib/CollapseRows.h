//===- CollapseRows.h - Row-wise kernels over one dimension of rows -*- C++ -*-===//
//
// A linear, a normalisation and the elementwise ops around them do the same to every
// index of the leading dimensions of their operands: row (b, s) of a [B, S, D] tensor is
// row b*S + s of the same memory read as [B*S, D]. The planner (Plan.cpp) hands such a
// kernel dense views of that shape, and the kernel is lowered from a copy of its op
// whose tensors have that shape, so that its tiles run over all B*S rows at once instead
// of S rows B times: the panel schedule's 6-row register tiles then leave one partial
// tile per call instead of one per sequence.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_COLLAPSEROWS_H
#define KILN_BACKENDS_HALIDE_COLLAPSEROWS_H

#include "Lower.h"

#include "kiln/ir/ShapeRules.h"

#include "mlir/IR/Operation.h"

namespace kiln::halide_backend {

/// Whether `op`'s kernel is a product whose rows gain from being collapsed and that
/// computes each row of its result from the same row of its row operands alone: a
/// linear, or a kiln.fusion of linears, normalisations and elementwise ops with at least
/// one linear, whose result has rank 3 or more with at least two leading dims that are
/// not statically 1, and whose every tensor (operand, block argument, result) either
/// has the result's leading dims (a row tensor) or has rank 1 or less (broadcast along
/// the rows), but for a linear's weights. Shapes compared by type; the planner also
/// compares the operands' symbolic shapes. A kernel without a product gains nothing
/// measurable and keeps its plain buffers.
bool rowsCollapsible(mlir::Operation *op);

/// Whether `value` is one of the row tensors of a collapsible `op`'s kernel.
bool isRowTensor(mlir::Operation *op, mlir::Value value);

/// [d0, ..., dn-2, dn-1] as [d0 * ... * dn-2, dn-1].
SymShape collapseRows(llvm::ArrayRef<SymDim> shape);

/// The kernel of a collapsible `op` over its rows collapsed: lowered from a copy of
/// `op` whose row tensors have the collapsed shape.
mlir::FailureOr<LoweredKernel> lowerCollapsedRows(mlir::Operation *op,
                                                  const Halide::Target &target);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_COLLAPSEROWS_H
