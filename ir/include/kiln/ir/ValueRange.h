//===- ValueRange.h - What the IR proves about integer values ---*- C++ -*-===//
//
// A small range analysis of i32 index tensors, so that a gather whose indices provably
// lie in its table needs no check at run time: inputs carry `kiln.bounds`, positions
// (kiln.range) run to their dimension's `kiln.dim_max`, and ops that only move values
// keep their operand's range.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_VALUERANGE_H
#define KILN_IR_VALUERANGE_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/Optional.h"

#include <cstdint>
#include <string>

namespace kiln {

/// The inclusive range [min, max] of integers.
struct IndexRange {
  int64_t min, max;
};

/// A range every element of integer tensor `value` lies in whenever its entry runs (the
/// runtime having checked the entry's bounds), or None when the IR proves none: an
/// input without constant bounds, positions of an unbounded dimension, a computed
/// index.
llvm::Optional<IndexRange> indexRange(mlir::Value value);

/// How messages name the table a gather reads: its kiln.parameter's name, or "table".
std::string gatherTableName(mlir::Value table);

} // namespace kiln

#endif // KILN_IR_VALUERANGE_H
