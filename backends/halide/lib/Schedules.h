//===- Schedules.h - What the schedules of the Halide kernels see -*- C++ -*-===//
//
// The contract between an op's algorithm (Lower*.cpp) and its schedules, kept apart as
// in Halide's apps: the algorithm hands over a kernel description (its Funcs and Vars
// and what the MLIR types say statically about the extents); a schedule chooses loop
// order, tiling, vectorisation and parallelism and nothing else, so it can be tuned
// without touching what is computed. Scheduler.h picks the schedule of a description
// for a target; the fused attention's description is in SchedulesAttention.h.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_SCHEDULES_H
#define KILN_BACKENDS_HALIDE_SCHEDULES_H

#include "Halide.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace kiln::halide_backend {

/// The cache level that a kernel's software prefetches fill (EmitObject.cpp).
enum class PrefetchLevel {
  /// Every level (prefetcht0): for lines that the next k steps read.
  L1,
  /// L2 and beyond, not L1 (prefetcht1): for a weight streamed from DRAM a few
  /// microseconds ahead of its use.
  L2,
};

/// What a kernel's schedules ask of its code generation beyond Halide's scheduling
/// directives.
struct CodegenRequests {
  /// Passes over the lowered statement, where the directives cannot say what a
  /// schedule wants (PanelPrefetch.h); the kernel's Pipeline runs them (pipelineOf in
  /// Lower.h).
  std::vector<std::shared_ptr<Halide::Internal::IRMutator>> passes;
  /// The levels that the kernel's prefetches asked for. One kernel's prefetches all
  /// compile to one instruction (Halide 14 gives them no level of their own), so L1
  /// wins where both were asked for: a prefetch of what the next k steps read is
  /// wasted if it stops in L2.
  bool prefetchIntoL1 = false, prefetchIntoL2 = false;

  PrefetchLevel prefetchLevel() const {
    return prefetchIntoL2 && !prefetchIntoL1 ? PrefetchLevel::L2 : PrefetchLevel::L1;
  }
};

/// The size of a `?` dimension in an Extents.
inline constexpr int64_t kDynamicExtent = -1;

/// Static extents in Halide dimension order (index 0 is the last tensor dimension),
/// kDynamicExtent for dynamic ones.
using Extents = llvm::SmallVector<int64_t, 4>;

/// A kernel whose output element depends on one element per input (or on none): add,
/// mul, scale, relu, gelu, transposes that keep the innermost dimension in place (row
/// copies), slice, embedding, range, sinusoid and the masks.
struct PointwiseKernel {
  static constexpr const char *kind = "pointwise";
  Halide::Func output;
  /// The output's Vars, Halide dimension order.
  std::vector<Halide::Var> vars;
  Extents extents;
  /// Raises Halide errors (a checked embedding's ids), which device code cannot: a GPU
  /// schedule leaves it on the host.
  bool onHost = false;
};

/// A transpose that moves the innermost dimension: a 2-D tile transpose at heart.
struct TransposeKernel {
  static constexpr const char *kind = "transpose";
  Halide::Func output;
  Halide::ImageParam input;
  std::vector<Halide::Var> vars;
  Extents extents;
  /// The output dimension that walks the input's innermost (contiguous) dimension, and
  /// the input dimension that the output's innermost dimension walks.
  int readsInputInner = 0, inputOfOutputInner = 0;
};

/// out(n, m, batch...) = sum_k lhs'(k, m, batch...) * rhs'(n, k, batch...).
struct MatmulKernel {
  static constexpr const char *kind = "matmul";
  Halide::Func output;
  /// The accumulator: 0, then one update over `k`.
  Halide::Func product;
  /// The lhs operand: its kernel input, or an earlier stage of a fusion group
  /// (computed at root).
  Halide::Func lhs;
  /// `lhs` with its rows and batch entries clamped to the operand's (a schedule may
  /// compute whole register tiles past the last row), in the operand's dimension
  /// order: what the product reads, at unclamped coordinates, so that a CPU schedule
  /// that stages a register tile's rows reads them at constant offsets. A GPU schedule
  /// stages its tiles in shared memory. Inlined unless staged.
  Halide::Func lhsRows;
  /// Whether the schedule reads the lhs rows in place rather than staging them
  /// (chooseLhsRowsInPlace in Scheduler.h): the row clamp is then `likely`, so that
  /// Halide peels it off every register tile but the last.
  bool lhsRowsInPlace = false;
  /// The rhs indexed (n, k, rhs batch...), n clamped. A schedule may stage it per
  /// column panel (transposing a `transpose_rhs` weight, making panel rows contiguous)
  /// or inline it (reading a `transpose_rhs` weight along k as it lies).
  Halide::Func packedRhs;
  /// For a bf16 rhs: the rhs as f32, in its own layout, which packedRhs reads
  /// (undefined for an f32 rhs). Inlined unless a schedule stages it.
  Halide::Func widenedRhs;
  /// Output Vars: n, m, then the batch dimensions innermost first.
  std::vector<Halide::Var> vars;
  /// packedRhs's first two Vars (n, k).
  Halide::Var packN, packK;
  Halide::RDom k;
  Extents extents;
  /// The output's extents as Exprs of the operands' sizes (constants where static), for
  /// a schedule that specializes on a dynamic one (a decode step's batch of 1).
  std::vector<Halide::Expr> sizes;
  /// The contraction size, or kDynamicExtent.
  int64_t contraction = kDynamicExtent;
  /// The condition under which `output` is 0 (linear: the bias) without reading
  /// `product`: a dynamic K of 0, or a dynamic output extent of 0 (undefined when all
  /// are static). A schedule specializes on it, so that neither the empty loops over k
  /// nor a whole tile's clamped reads of an empty operand (its row 0, which does not
  /// exist) are bounds-inferred.
  Halide::Expr emptyProduct;
  bool transposeRhs = false;
  /// The rhs kernel input: a linear's weight, a matmul's rhs (which prefetches name).
  Halide::ImageParam rhs;
  /// For a `transpose_rhs` weight stored in column panels (kiln.unpack_panels): their
  /// width, W; `rhs` is then [P, K, W] and packedRhs reads it in place. 0 otherwise.
  int64_t panelWidth = 0;
  /// For a `transpose_rhs` weight whose row count is known only at run time (an
  /// encode's batch x length): the product again, over Funcs of its own, which the
  /// output reads instead while `fewRows` holds, so that the schedule gives few rows
  /// and many rows each their own form (see chooseFewRowsLimit in Scheduler.h).
  /// Undefined otherwise.
  struct {
    Halide::Func product, lhsRows, packedRhs, widenedRhs;
  } fewRowsForm;
  Halide::Expr fewRows;
  /// Per output dimension (entries 0 and 1 unused): whether the lhs / rhs has that batch
  /// dimension with a size other than a static 1 (false: it is broadcast).
  llvm::SmallVector<bool, 4> lhsVaries, rhsVaries;
};

/// The output dimension whose entries are a matmul's rows: m, except when m is a static
/// 1 and the rhs is shared across the innermost batch dimension ([B, 1, K] x W, a decode
/// step), where that batch dimension supplies the rows. Both schedule families tile by
/// it.
inline int matmulRowDimension(const MatmulKernel &kernel) {
  const Extents &ext = kernel.extents;
  bool decode =
      ext[1] == 1 && ext.size() >= 3 && kernel.lhsVaries[2] && !kernel.rhsVaries[2];
  return decode ? 2 : 1;
}

/// A reduction along Halide dimension `axis` (per-row statistics) and a pass that uses
/// it: what softmax, layer_norm and argmax have in common.
struct RowReductionKernel {
  Halide::Func output;
  /// The input's Vars, which are the output's too unless the reduction drops the axis
  /// (argmax).
  std::vector<Halide::Var> vars;
  /// The reduction over the axis.
  Halide::RDom r;
  int axis = 0;
  /// The input's extents.
  Extents extents;
};

/// output = exp(x - max) / sum(exp(x - max)) along `axis`, or log_softmax's
/// x - max - log(sum(exp(x - max))).
struct SoftmaxKernel : RowReductionKernel {
  static constexpr const char *kind = "softmax";
  /// Per-row statistics, over `vars` without `axis` (for log_softmax, `max` is a Tuple
  /// that also flags the rows holding a NaN or +inf).
  Halide::Func max, sum;
  /// softmax only: exp(x - max), staged so that exp is evaluated once per element.
  /// log_softmax evaluates exp in `sum` alone and leaves this undefined.
  Halide::Func exp;
};

/// Layer normalisation over Halide dimension 0 (`axis` stays 0), two-pass mean and
/// variance.
struct LayerNormKernel : RowReductionKernel {
  static constexpr const char *kind = "layer_norm";
  /// Per-row sums of x - x0 (x0: the row's first element) and of the squared
  /// deviations from the mean, over vars[1...].
  Halide::Func sum, squares;
};

/// RMS normalisation over Halide dimension 0 (`axis` stays 0).
struct RmsNormKernel : RowReductionKernel {
  static constexpr const char *kind = "rms_norm";
  /// Per-row sums of squares, over vars[1...].
  Halide::Func squares;
};

/// argmax along `axis`: two reductions over it, then the index; the output's Vars are
/// `vars` without `axis`.
struct ArgmaxKernel : RowReductionKernel {
  static constexpr const char *kind = "argmax";
  /// Per-row max, then per-row least key (see lowerArgmax), over `vars` without `axis`.
  Halide::Func max, key;
};

/// reduce_sum, reduce_mean or reduce_max over any set of input dimensions: `total`
/// accumulates the input over `r` at each output element, `output` reads it (the mean
/// divides it, the max checks its NaN flag).
struct ReduceKernel {
  static constexpr const char *kind = "reduce";
  Halide::Func output, total;
  /// The output's (and total's) Vars, Halide dimension order; with keep_dim a reduced
  /// dimension keeps its Var, over an extent of 1.
  std::vector<Halide::Var> vars;
  /// Over the reduced input dimensions, innermost first.
  Halide::RDom r;
  /// Whether the input's Halide dimension 0 (contiguous) is reduced: then r.x walks it.
  bool reducesInner = false;
  /// The static product of the reduced extents, or kDynamicExtent.
  int64_t count = kDynamicExtent;
  /// The output's extents.
  Extents extents;
};

/// concat along Halide dimension `axis`: an undefined pure definition, then update i
/// copies operand i through parts[i] (its extent along the axis) into its range.
struct ConcatKernel {
  static constexpr const char *kind = "concat";
  Halide::Func output;
  std::vector<Halide::Var> vars;
  std::vector<Halide::RDom> parts;
  int axis = 0;
  Extents extents;
};

/// kiln.quantized_linear (LowerQuantizedLinear.cpp): each row of the input (Halide
/// dimension 0 its K values, vars[1...] the rows) quantized symmetrically to i8, exact
/// int32 dot products with the i8 weight [N, K], then
/// output(n, rows...) = f32(acc) * ((rowMax / 127) * scale[n]) + bias[n].
/// The product reads the weight shifted to u8 (w + 128, an xor of its sign bit), the
/// form u8 x s8 dot-product instructions take (x86 VNNI's vpdpbusd), so the exact sum
/// is acc = product - 128 * rowSum.
struct QuantizedLinearKernel {
  static constexpr const char *kind = "quantized_linear";
  Halide::Func output;
  /// Per row, over vars[1...]: max |x| (one update over `rowK`), and the sum of the
  /// row's quantized values (one update over `rowK`, reading `quantized`).
  Halide::Func rowMax, rowSum;
  /// The quantized input, i8 in [-127, 127], indexed (quantizedK, rows...).
  Halide::Func quantized;
  Halide::Var quantizedK;
  /// The i32 dot products of the quantized rows with the shifted weight: 0, then an
  /// update over `k` reading the weight as it lies (`dotUpdate`) and/or one over
  /// `panelK` reading `packedWeight` (`panelUpdate`), -1 for the one not defined. With
  /// both, each is predicated on `manyRows` (panel) or its negation, and a schedule
  /// specializes on it. Indexed as the output.
  Halide::Func product;
  int dotUpdate = -1, panelUpdate = -1;
  Halide::Expr manyRows;
  /// The shifted (u8, w + 128) weight in column groups of kPanelLanes outputs, 4
  /// neighbouring k of each innermost: (kr, nl, ko, np) is w[ko * 4 + kr][np * 16 + nl],
  /// so that one 64-byte vector holds 4 k of 16 outputs.
  Halide::Func packedWeight;
  static constexpr int kPanelLanes = 16, kPanelGroup = 4;
  /// The fewest rows that take the panel product (with a static K multiple of 64
  /// and a static N multiple of kPanelColumns).
  static constexpr int kPanelRowsFrom = 16;
  /// Output columns per panel (a static N must be a multiple).
  static constexpr int kPanelColumns = 32;
  /// The output dimension whose entries are the tiles' rows: the innermost that is not
  /// a static 1 (the batch of a [B, 1, K] decode step), or -1 for a rank-1 input.
  int rowDim = -1;
  /// Output Vars: n, then the rows' dimensions innermost first.
  std::vector<Halide::Var> vars;
  Halide::RDom k, panelK, rowK;
  Extents extents;
  /// The output's extents as Exprs (constants where static), for a schedule that
  /// specializes on a dynamic row count.
  std::vector<Halide::Expr> sizes;
  /// The contraction size K, or kDynamicExtent.
  int64_t contraction = kDynamicExtent;
};

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_SCHEDULES_H
