//===- LowerSupport.h - Shared pieces of the op lowerings -------*- C++ -*-===//
//
// What every Lower*.cpp needs: MLIR types read as Halide extents, inputs pinned to their
// types, the output's dynamic extents tied to the inputs they come from, and the entry
// point of each op family (dispatched from Lower.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_LOWERSUPPORT_H
#define KILN_BACKENDS_HALIDE_LOWERSUPPORT_H

#include "Lower.h"
#include "Schedules.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::halide_backend {

inline mlir::RankedTensorType tensorType(mlir::Value value) {
  return value.getType().cast<mlir::RankedTensorType>();
}

/// The type's dimensions in Halide order (index 0 is the last tensor dimension).
Extents extentsOf(mlir::RankedTensorType type);

inline bool isStatic(int64_t extent) { return extent != kDynamicExtent; }

/// Halide's element type for `type`; f32 and i32 are the dialect's element types.
Halide::Type halideType(mlir::RankedTensorType type);

/// The Halide dimension of tensor dimension `axis` of a rank-`rank` tensor.
inline int halideDim(int rank, int64_t axis) { return rank - 1 - static_cast<int>(axis); }

/// The extent of dimension `dim` of `buffer`: the static one when the type knows it.
Halide::Expr extentOf(const Halide::OutputImageParam &buffer, const Extents &extents,
                      int dim);

/// Pins `buffer` to its type: minimum 0, static extents, dense row-major strides.
void constrainLayout(Halide::OutputImageParam buffer, const Extents &extents);
/// Pins `buffer` as constrainLayout does, but the strides of Halide dimensions past
/// `lastDenseDim` only to what the caller's buffer has: a strided view (see
/// stridedViewAxis; its dimensions up to the strided axis are dense).
void constrainStridedLayout(Halide::OutputImageParam buffer, const Extents &extents,
                            int lastDenseDim);

/// An input named `name` pinned to the type of `operand`, strided where the plan holds
/// `operand` in a strided view.
Halide::ImageParam makeInput(mlir::Value operand, const std::string &name);

/// Vars d0, d1, ... for a rank-`rank` Func.
std::vector<Halide::Var> makeVars(int rank);

std::vector<Halide::Expr> asExprs(const std::vector<Halide::Var> &vars);

/// Indices into an operand broadcast (NumPy style) to an output indexed by `vars`:
/// dimensions align from the innermost, and a static size-1 dimension reads index 0.
std::vector<Halide::Expr> broadcastIndex(const Extents &operand,
                                         const std::vector<Halide::Var> &vars);

/// Replaces the `axis` entry of `vars` by `value`.
std::vector<Halide::Expr> withAxis(const std::vector<Halide::Var> &vars, int axis,
                                   Halide::Expr value);

std::vector<Halide::Var> withoutAxis(const std::vector<Halide::Var> &vars, int axis);

/// Pins every dynamic dimension of `out` (a Func's output buffer with `extents`) to
/// `source[dim]`; entries of static dimensions are ignored.
void tieOutputExtents(Halide::Func out, const Extents &extents,
                      const std::vector<Halide::Expr> &source);

/// Where the extent of each output dimension comes from: one operand's dimension
/// (the first that has it and does not broadcast there), or the static type.
struct ExtentSource {
  std::vector<std::pair<Halide::ImageParam, Extents>> operands;

  /// Pins output dimension `dim` (static `extent`, or dynamic) to its source and every
  /// other non-broadcasting operand of that dimension to the same size. `operandDims`
  /// gives, per operand, the dimension that corresponds (-1: none).
  void tie(Halide::OutputImageParam output, int dim, int64_t extent,
           llvm::ArrayRef<int> operandDims);
};

/// A bit pattern as an f32. Masks and NaN results are written this way because
/// Halide compiles with no-NaNs/no-infinities fast-math flags: an infinite or NaN
/// float constant flowing through a float select may be folded as poison by LLVM, an
/// integer one reinterpreted at the end may not.
Halide::Expr floatBits(Halide::Expr bits);
/// The bit patterns of -inf and of the quiet NaN.
inline constexpr int32_t kNegInfBits = static_cast<int32_t>(0xff800000u);
inline constexpr int32_t kNaNBits = 0x7fc00000;

//===----------------------------------------------------------------------===//
// The op families (LowerElementwise.cpp, LowerMatmul.cpp, LowerNormalization.cpp,
// LowerDataMovement.cpp, LowerEmbedding.cpp)
//===----------------------------------------------------------------------===//

using Combine = std::function<Halide::Expr(const std::vector<Halide::Expr> &)>;

/// An elementwise op of broadcast operands named `names`: `combine` receives the
/// operands' values.
LoweredKernel lowerPointwise(mlir::Operation *op, const std::vector<std::string> &names,
                             const Combine &combine, const Halide::Target &target);
/// 0.5 x (1 + erf(x / sqrt(2))) to a few f32 ulps.
Halide::Expr geluExact(Halide::Expr x);

LoweredKernel lowerMatmul(MatmulOp op, const Halide::Target &target);
LoweredKernel lowerLinear(LinearOp op, const Halide::Target &target);

LoweredKernel lowerSoftmax(SoftmaxOp op, const Halide::Target &target);
LoweredKernel lowerLogSoftmax(LogSoftmaxOp op, const Halide::Target &target);
LoweredKernel lowerLayerNorm(LayerNormOp op, const Halide::Target &target);
LoweredKernel lowerArgmax(ArgmaxOp op, const Halide::Target &target);

LoweredKernel lowerTranspose(TransposeOp op, const Halide::Target &target);
LoweredKernel lowerSlice(SliceOp op, const Halide::Target &target);
LoweredKernel lowerConcat(ConcatOp op, const Halide::Target &target);

LoweredKernel lowerEmbedding(EmbeddingOp op, const Halide::Target &target);
LoweredKernel lowerRange(RangeOp op, const Halide::Target &target);
LoweredKernel lowerSinusoid(SinusoidOp op, const Halide::Target &target);
LoweredKernel lowerPaddingMask(PaddingMaskOp op, const Halide::Target &target);
LoweredKernel lowerCausalMask(CausalMaskOp op, const Halide::Target &target);

/// A kernel that writes the constant (the pass pipeline folds most of them into their
/// consumers; what remains is small). In LowerElementwise.cpp.
LoweredKernel lowerConstant(ConstantOp op, const Halide::Target &target);
/// The fused attention (LowerAttention.cpp).
LoweredKernel lowerAttention(AttentionOp op, const Halide::Target &target);

/// Copies into session states (LowerState.cpp): state_write's value into the dense
/// state, kv_append's value into position P of the cache (a strided view).
LoweredKernel lowerStateWrite(StateWriteOp op, const Halide::Target &target);
LoweredKernel lowerKvAppend(KvAppendOp op, const Halide::Target &target);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_LOWERSUPPORT_H
