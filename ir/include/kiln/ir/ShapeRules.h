//===- ShapeRules.h - Symbolic shape rules of kiln ops ----------*- C++ -*-===//
//
// The single definition of how each op's result shape follows from its operands. Shapes
// are symbolic: a dynamic dimension carries an expression over the entry's named dims
// ("B", "S*8"), or nothing when it is unknown (a bare `?` in a type). The verifier runs
// the rules with unknown dims, the DSL with named dims (so a user's shape error is caught
// where they wrote it), and the backends to describe every buffer for the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_SHAPERULES_H
#define KILN_IR_SHAPERULES_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace kiln {

/// One dimension: a static size, a named/expression dynamic size, or unknown.
struct SymDim {
  static constexpr int64_t kDynamic = -1;
  int64_t size = kDynamic;
  /// For dynamic dims: an expression over named dims (see docs/manifest.md); empty when
  /// the dimension is unknown.
  std::string expr;

  static SymDim fixed(int64_t size) { return {size, {}}; }
  static SymDim named(std::string expr) { return {kDynamic, std::move(expr)}; }
  static SymDim unknown() { return {}; }

  bool isStatic() const { return size != kDynamic; }
  bool isUnknown() const { return !isStatic() && expr.empty(); }
  /// "64", "B" or "?".
  std::string str() const;
  bool operator==(const SymDim &other) const {
    return size == other.size && expr == other.expr;
  }
};

using SymShape = llvm::SmallVector<SymDim, 4>;

/// "[B, S, 64]".
std::string toString(llvm::ArrayRef<SymDim> shape);

/// The symbolic shape of a ranked tensor type with every dynamic dim unknown.
SymShape shapeOf(mlir::RankedTensorType type);
/// The builtin shape of a symbolic one (dynamic for every non-static dim).
llvm::SmallVector<int64_t, 4> staticShape(llvm::ArrayRef<SymDim> shape);

/// Either the result shape of an op, or why its operands do not fit together.
struct ShapeResult {
  SymShape shape;
  std::string error;

  static ShapeResult ok(SymShape shape) { return {std::move(shape), {}}; }
  static ShapeResult failure(std::string error) { return {{}, std::move(error)}; }
  bool succeeded() const { return error.empty(); }
};

/// Whether two dims may be the same size: unknown fits anything; static sizes must be
/// equal; named dims must have the same expression; a named dim never equals a static
/// one.
bool dimsCompatible(const SymDim &a, const SymDim &b);

namespace shape_rules {
ShapeResult matmul(llvm::ArrayRef<SymDim> lhs, llvm::ArrayRef<SymDim> rhs,
                   bool transposeLhs, bool transposeRhs);
ShapeResult broadcast(llvm::ArrayRef<SymDim> lhs, llvm::ArrayRef<SymDim> rhs);
/// The broadcast of all three operands of where(condition, onTrue, onFalse).
ShapeResult where(llvm::ArrayRef<SymDim> condition, llvm::ArrayRef<SymDim> onTrue,
                  llvm::ArrayRef<SymDim> onFalse);
ShapeResult softmax(llvm::ArrayRef<SymDim> input, int64_t axis);
ShapeResult layerNorm(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<SymDim> gamma,
                      llvm::ArrayRef<SymDim> beta);
/// input [..., D], gamma [D] -> the input's shape.
ShapeResult rmsNorm(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<SymDim> gamma);
ShapeResult reshape(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<int64_t> newShape);
ShapeResult transpose(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<int64_t> permutation);

// ShapeRulesLayers.cpp: the ops an encoder-decoder adds around attention.

/// input [..., in], weight [out, in], bias [out] -> [..., out].
ShapeResult linear(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<SymDim> weight,
                   llvm::ArrayRef<SymDim> bias);
/// linear's rule for int8 weights: `scale` (and `bias`, when there is one) [out].
ShapeResult quantizedLinear(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<SymDim> weight,
                            llvm::ArrayRef<SymDim> scale, const SymShape *bias);
ShapeResult logSoftmax(llvm::ArrayRef<SymDim> input, int64_t axis);
/// The input's shape without `axis`.
ShapeResult argmax(llvm::ArrayRef<SymDim> input, int64_t axis);
/// The input's shape without `axes` (with keepDim: with 1 there). `axes` are distinct,
/// at least one, each in [-rank, rank).
ShapeResult reduce(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<int64_t> axes,
                   bool keepDim);
/// `axes` in [-rank, rank) as [0, rank), ascending.
llvm::SmallVector<int64_t, 4> normaliseAxes(llvm::ArrayRef<int64_t> axes, int64_t rank);
/// `axis` becomes end - start; needs 0 <= start < end (<= the size where static).
ShapeResult slice(llvm::ArrayRef<SymDim> input, int64_t axis, int64_t start, int64_t end);
/// Same rank, compatible dims off `axis`; the `axis` dims add up ("S+1").
ShapeResult concat(llvm::ArrayRef<SymShape> inputs, int64_t axis);
/// table [V, D], ids [...] -> [..., D].
ShapeResult embedding(llvm::ArrayRef<SymDim> table, llvm::ArrayRef<SymDim> ids);
/// -> [N], N = like[axis].
ShapeResult range(llvm::ArrayRef<SymDim> like, int64_t axis);
/// positions [...] -> [..., dim]; dim must be static, positive and even.
ShapeResult sinusoid(llvm::ArrayRef<SymDim> positions, int64_t dim);
/// input [..., T, D] (D static, positive and even), positions [T] -> the input's shape.
ShapeResult rotary(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<SymDim> positions);
/// lengths [B] -> [B, N], N = like[axis].
ShapeResult paddingMask(llvm::ArrayRef<SymDim> lengths, llvm::ArrayRef<SymDim> like,
                        int64_t axis);
/// -> [N, N], N = like[axis].
ShapeResult causalMask(llvm::ArrayRef<SymDim> like, int64_t axis);

// ShapeRulesAttention.cpp: the fused attention op and the masks written around it.

/// q [..., Tq, d], k [..., Tk, d], v [..., Tk, dv], one rank >= 3, batch dims
/// broadcasting; `mask` (null: none) broadcasts to [..., Tq, Tk] without enlarging it.
/// -> [..., Tq, dv].
ShapeResult attention(llvm::ArrayRef<SymDim> query, llvm::ArrayRef<SymDim> key,
                      llvm::ArrayRef<SymDim> value, const SymShape *mask);
/// `mask` broadcasts to `input` without enlarging it; -> the input's shape.
ShapeResult maskedFill(llvm::ArrayRef<SymDim> input, llvm::ArrayRef<SymDim> mask);
/// Whether `small` broadcasts to `target` without enlarging it: no more dims, and each
/// (aligned from the right) a static 1 or compatible with the target's.
bool broadcastsInto(llvm::ArrayRef<SymDim> small, llvm::ArrayRef<SymDim> target);

// StateOps.cpp: the key/value cache.

/// value [..., N at `axis`, ...] (N >= 1, static or named) written at [P, P+N) of a
/// cache of `capacity` positions -> the value's shape with P+N at `axis`; P is
/// `position`, a dimension name or a static start (kiln::dimInteger, "0" for a prefill);
/// `axis` is not 0 (the batch); a static block must fit the capacity.
ShapeResult kvAppend(llvm::ArrayRef<SymDim> value, int64_t axis, int64_t capacity,
                     llvm::StringRef position);
} // namespace shape_rules

} // namespace kiln

#endif // KILN_IR_SHAPERULES_H
