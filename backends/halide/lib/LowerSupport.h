//===- LowerSupport.h - Shared pieces of the op lowerings -------*- C++ -*-===//
//
// What every Lower*.cpp needs: MLIR types read as Halide extents, inputs pinned to their
// types, and the output's dynamic extents tied to the inputs they come from. Each
// input is an ImageParam pinned to what the op's type says (static extents, minimum 0,
// dense row-major strides): a constant extent and a unit stride are what let Halide
// emit unpredicated vector loads. A dynamic extent is tied to the input it comes from,
// so a caller whose buffers disagree gets Halide's error at run time instead of a read
// out of bounds. The exception is a strided view of a key/value cache (a kv_append
// result): its strides outside the cache's position axis are the caller's, so its
// kernels are their own (kernelSignature marks such operands).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_LOWERSUPPORT_H
#define KILN_BACKENDS_HALIDE_LOWERSUPPORT_H

#include "Schedules.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/BuiltinTypes.h"

#include <string>
#include <vector>

namespace kiln::halide_backend {

// The Halide names every lowering uses, imported into the backend's namespace as
// mlir/Support/LLVM.h imports LLVM's into mlir's.
using Halide::Expr;
using Halide::Func;
using Halide::ImageParam;
using Halide::OutputImageParam;
using Halide::RDom;
using Halide::Var;

inline mlir::RankedTensorType tensorType(mlir::Value value) {
  return value.getType().cast<mlir::RankedTensorType>();
}

/// The type's dimensions in Halide order (index 0 is the last tensor dimension).
Extents extentsOf(mlir::RankedTensorType type);

inline bool isStatic(int64_t extent) { return extent != kDynamicExtent; }

/// Halide's element type for `type`: f32, bf16 and i8 (weights stored at a reduced
/// precision: kiln.parameter's conversions), i64, or i32 for the other integer types.
/// i1 tensors (boolean masks, for masked_fill) live only inside an entry point; their
/// buffers hold one i32 per element, 0 or 1, as the interpreter's (dtype "i32" in
/// Plan.cpp): a byte would save memory, but i32 needs no new buffer type in the
/// runtime, and a mask is small next to the scores it masks.
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
/// Only the strides that constrainStridedLayout pins: all a Tuple's outputs after the
/// first may take (their bounds are the first one's).
void constrainStrides(Halide::OutputImageParam buffer, const Extents &extents,
                      int lastDenseDim);

/// For a value that the plan holds in a strided view, the tensor axis across which it
/// is not dense; None for a dense value. Only kv_append results are strided: a view of
/// the first P + 1 positions along `axis` of a cache with room for `capacity`. Its
/// strides are dense from `axis` inwards and larger outside it (they count capacity,
/// not P + 1), so a kernel that reads it pins only the inner ones.
llvm::Optional<int64_t> stridedViewAxis(mlir::Value value);

/// The kiln.unpack_panels that `value` is, directly or as a kiln.fusion's block
/// argument: the plan gives its readers the panels themselves. Null otherwise.
UnpackPanelsOp panelsOf(mlir::Value value);

/// An input named `name` pinned to the type of `operand`, strided where the plan holds
/// `operand` in a strided view, and [P, K, W] where it holds column panels (panelsOf).
Halide::ImageParam makeInput(mlir::Value operand, const std::string &name);

/// An input named `name` of the type of `operand` whose innermost dimension is dense
/// and whose other strides are the caller's: for kernels that read head splits and
/// column slices of a packed projection as views (see Plan.cpp).
Halide::ImageParam makeInnerDenseInput(mlir::Value operand, const std::string &name);

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

/// Kernel inputs with the extents of the operands they hold.
using KernelInputs = std::vector<std::pair<Halide::ImageParam, Extents>>;

/// Where the extent of each output dimension comes from: one operand's dimension
/// (the first that has it and does not broadcast there), or the static type.
struct ExtentSource {
  KernelInputs operands;

  /// Pins output dimension `dim` (static `extent`, or dynamic) to its source and every
  /// other non-broadcasting operand of that dimension to the same size. `operandDims`
  /// gives, per operand, the dimension that corresponds (-1: none).
  void tie(Halide::OutputImageParam output, int dim, int64_t extent,
           llvm::ArrayRef<int> operandDims);
};

/// `value` as f32: a bf16 one widened by its bits (exact: they are an f32's upper
/// half), as Halide's own x86 code converts it, written out because Halide 14's
/// cast<float> of a bf16 load aborts its PTX compile in LLVM 14 ("Copy one register
/// into another with a different width"); an f32 one as it is.
Halide::Expr widenToF32(Halide::Expr value);

/// A bit pattern as an f32. Masks and NaN results are written this way because
/// Halide compiles with no-NaNs/no-infinities fast-math flags: an infinite or NaN
/// float constant flowing through a float select may be folded as poison by LLVM, an
/// integer one reinterpreted at the end may not.
Halide::Expr floatBits(Halide::Expr bits);
/// The bit patterns of -inf and of the quiet NaN.
inline constexpr int32_t kNegInfBits = static_cast<int32_t>(0xff800000u);
inline constexpr int32_t kNaNBits = 0x7fc00000;

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_LOWERSUPPORT_H
