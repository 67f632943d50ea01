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
#include "mlir/IR/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace kiln {

/// Argument attribute: the name of an entry's input (StringAttr); also a result
/// attribute naming an output.
inline constexpr llvm::StringLiteral kNameAttr = "kiln.name";
/// Argument attribute: ArrayAttr of StringAttr, one per dimension, naming the dynamic
/// ones ("" for static dimensions).
inline constexpr llvm::StringLiteral kDimsAttr = "kiln.dims";
/// Argument attribute of an i32 input: ArrayAttr of two StringAttr, the inclusive range
/// [lo, hi] every value of the input must lie in, checked before a run. Each end is a
/// dimension expression (DimExpr.h, docs/manifest.md) over the names the entry binds:
/// its inputs' `kiln.dims` and `kiln.value_dim`, and its kiln.state_read ops' `dims`
/// (not the input's own value_dim); a plain integer is the simplest one. Token ids of a
/// 50-word vocabulary: `kiln.bounds = ["0", "49"]`; lengths of sequences padded to S:
/// `["1", "S"]`. The grammar has no unary minus, so a negative end is written "0-5". The
/// dialect verifier checks the form, the names and, when both ends are integers, that lo
/// <= hi.
inline constexpr llvm::StringLiteral kBoundsAttr = "kiln.bounds";

/// Argument attribute of a rank-0 i32 input: the name (StringAttr) of an entry
/// dimension whose size is the input's *value*, e.g. "P" for the position of a decoding
/// step, so that shapes can follow it (`kiln.kv_append`'s result holds P + 1 positions).
/// The input should carry `kiln.bounds` too: the runtime checks the value before it
/// binds the dimension. The name may not also be bound by a shape (an input's
/// `kiln.dims`, a kiln.state_read's `dims`) or another input's value.
inline constexpr llvm::StringLiteral kValueDimAttr = "kiln.value_dim";

/// Argument attribute: ArrayAttr of integers beside `kiln.dims`, one per dimension: the
/// largest size the runtime accepts for that named dimension, 0 for none (and for
/// static dimensions). Ids of at most 32 positions, [B, T <= 32]: `kiln.dims = ["B",
/// "T"], kiln.dim_max = [0, 32]`. A bound belongs to the name, in the whole entry: the
/// verifier rejects two inputs that bound the same name differently. The runtime
/// checks it where it binds the name; passes use it to prove index ranges
/// (ValueRange.h).
inline constexpr llvm::StringLiteral kDimMaxAttr = "kiln.dim_max";

/// Entry attribute (kiln-trim-padding): {dim = "S", lengths = <argument index>} when
/// the entry may run over T = max(lengths) positions of S and write zeros past T; the
/// manifest's "trim" carries it to the runtime.
inline constexpr llvm::StringLiteral kTrimAttr = "kiln.trim";

/// A dimension name that an entry binds when it runs, and what binds it.
struct DimBinding {
  enum Kind { Shape, Value, State };
  llvm::StringRef name;
  Kind kind;
  /// The input, for Shape and Value.
  unsigned input = 0;
  /// The kiln.state_read, for State.
  mlir::Operation *read = nullptr;
};

/// Every name `func` binds, in order: per input, its `kiln.dims` then its
/// `kiln.value_dim`; then the `dims` of its kiln.state_read ops (a state's shape binds
/// them as an input's shape would). A name may appear more than once.
llvm::SmallVector<DimBinding> entryDimBindings(mlir::FunctionOpInterface func);

/// The largest size dimension `name` of `func` can have when the entry runs: its
/// inputs' `kiln.dim_max`, or for a value dim the constant upper end of its input's
/// `kiln.bounds`. None when nothing bounds it.
llvm::Optional<int64_t> dimMax(mlir::FunctionOpInterface func, llvm::StringRef name);

/// An upper bound of dimension expression `expr` in `func`: its value with every name
/// at its dimMax. None when a name is unbounded or `expr` subtracts or divides (then
/// larger names need not give a larger value).
llvm::Optional<int64_t> dimExprMax(mlir::FunctionOpInterface func, llvm::StringRef expr);

/// The value outside every kiln.fusion that `value` stands for: the operand that a
/// group's body argument binds, or `value` itself.
mlir::Value outsideFusion(mlir::Value value);

using SymbolicShapeMap = llvm::DenseMap<mlir::Value, SymShape>;

/// The symbolic shape of every value in `func`; fails when a rule fails, an input has
/// an unnamed dynamic dimension, or a name the runtime must evaluate (a
/// kiln.state_alloc's dims, a kiln.kv_append's position) is not bound by the entry,
/// emitting an error at the offending op unless
/// `emitErrors` is false (for passes that only use shapes when they are known).
mlir::FailureOr<SymbolicShapeMap> inferSymbolicShapes(mlir::FuncOp func,
                                                      bool emitErrors = true);

} // namespace kiln

#endif // KILN_IR_SYMBOLICSHAPES_H
