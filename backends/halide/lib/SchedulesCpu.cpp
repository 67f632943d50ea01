//===- SchedulesCpu.cpp - CPU schedules of the Halide kernels -------------===//
//
// Every kernel is vectorised along Halide dimension 0 (contiguous) at the target's
// natural width and parallel over its outermost loops. The numbers below are medians
// of JIT realizations by test/unit/halide/KernelBench.cpp (which prints this table) on
// the project machine: 2 cores of a Zen 5 EPYC (AVX-512, Halide target
// avx512_sapphirerapids), whose fp32 FMA peak measures 117 GFLOP/s per core (24
// independent zmm FMAs in a loop; 234 for both cores) and whose memory moves 50-66
// GB/s. "1T"/"2T" are HL_NUM_THREADS=1/2; GB/s counts input plus output bytes. The
// machine is shared, so runs vary by ~10% (q.k^T by up to 30% between processes).
//
//   kernel                                          1T          2T
//   matmul [128,512] x [2048,512]^T  (dot)       97 GFLOP/s  198 GFLOP/s
//   matmul [512,512] x [2048,512]^T  (dot)       96          189
//   matmul [128,512] x [512,2048]    (panel)     90          188
//   matmul [512,512] x [512,2048]    (panel)    103          204
//   matmul [8,64,2048] x [512,2048]^T (panel)    92          185
//   matmul [16,1,512] x [2048,512]^T (dot)       97          200
//   matmul q.k^T [8,8,128,64] x .. (panel)    58-77     135-163
//   matmul p.v [8,8,128,128] x [..,128,64]      68-88     170-182
//   add [8,128,2048] + [2048]                  46 GB/s      70 GB/s
//   add [8,128,512] + same (in L3)               80         114
//   relu [8,128,2048]                            58          72
//   softmax last axis [8,8,128,128]              15          24
//   softmax axis 1 [64,128,128]                  15          24
//   layer_norm [8,128,512]                       35-39       51
//   transpose [0,2,1,3] of [8,128,8,64]          76          59-125
//   transpose [1,0] of [1024,2048]               10          22
//
// Dynamic extents need tails: loops that write the output use GuardWithIf (on x86 a
// predicated vector store, never a scalar loop), intermediate Funcs round up (their
// inputs are clamped in the algorithm), and no split relies on ShiftInwards, which
// would need an extent of at least the vector width.
//
//===----------------------------------------------------------------------===//

#include "Schedules.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;

namespace {

constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;
constexpr TailStrategy kRoundUp = TailStrategy::RoundUp;

bool isStatic(int64_t extent) { return extent != kDynamicExtent; }

/// The product of the static extents in [from, to), with `dynamicGuess` for dynamic ones.
int64_t elementCount(const Extents &extents, size_t from, size_t to,
                     int64_t dynamicGuess = 128) {
  int64_t count = 1;
  for (size_t i = from; i < to && i < extents.size(); ++i)
    count *= isStatic(extents[i]) ? extents[i] : dynamicGuess;
  return count;
}

/// Fuses the pure loops `vars` of `f` (innermost first) into one and returns it.
Var fuseLoops(Func f, const std::vector<Var> &vars, const std::string &name) {
  Var fused = vars.front();
  for (size_t i = 1; i < vars.size(); ++i) {
    Var next(name + std::to_string(i));
    f.fuse(fused, vars[i], next);
    fused = next;
  }
  return fused;
}

/// How many rows one parallel task takes so that it touches ~`target` elements: tasks
/// small enough to balance the cores, large enough to hide the thread pool (~2 us a
/// task).
int rowsPerTask(int64_t rowLength, int64_t target = 16384) {
  return static_cast<int>(
      std::clamp<int64_t>(target / std::max<int64_t>(rowLength, 1), 1, 1024));
}

/// Makes parallel tasks of the rows of `out`: `rowVars` (innermost first) are the
/// loops around one row of `rowLength` elements. The innermost row loop is split into
/// chunks of about 16K elements that are fused with the outer loops; fusing the row
/// loops themselves would cost integer divisions per row to recover the indices.
/// Returns the loop that visits one row.
Var parallelRows(Func out, const std::vector<Var> &rowVars, int64_t rowLength,
                 int64_t innerRows) {
  int chunk = rowsPerTask(rowLength);
  if (isStatic(innerRows))
    chunk = static_cast<int>(std::min<int64_t>(chunk, innerRows));
  Var outer("chunk"), row("row");
  out.split(rowVars[0], outer, row, chunk, kGuard);
  std::vector<Var> tasks = {outer};
  tasks.insert(tasks.end(), rowVars.begin() + 1, rowVars.end());
  out.parallel(fuseLoops(out, tasks, "tasks"));
  return row;
}

} // namespace

//===----------------------------------------------------------------------===//
// Pointwise: add, mul, scale, relu, row-preserving transposes
//===----------------------------------------------------------------------===//

void kiln::halide_backend::schedulePointwiseCpu(const PointwiseKernel &kernel,
                                                const Target &target) {
  Func out = kernel.output;
  const std::vector<Var> &vars = kernel.vars;
  const Extents &ext = kernel.extents;
  if (vars.empty())
    return;
  int width = target.natural_vector_size(out.output_types()[0]);
  // Memory bound (2T: 70 GB/s for a bias add, at the machine's bandwidth): vectors
  // along the row, parallel chunks of ~16K elements; a tensor of at most 16K elements
  // is not worth waking the thread pool.
  bool small = llvm::all_of(ext, isStatic) && elementCount(ext, 0, ext.size()) <= 16384;
  if (vars.size() == 1) {
    Var chunk("chunk"), inner("inner");
    out.split(vars[0], chunk, inner, 16384, kGuard).vectorize(inner, width, kGuard);
    if (!small)
      out.parallel(chunk);
    return;
  }
  out.vectorize(vars[0], width, kGuard);
  if (!small)
    parallelRows(out, std::vector<Var>(vars.begin() + 1, vars.end()),
                 elementCount(ext, 0, 1), ext[1]);
}

//===----------------------------------------------------------------------===//
// Transpose of the innermost dimension
//===----------------------------------------------------------------------===//

void kiln::halide_backend::scheduleTransposeCpu(const TransposeKernel &kernel,
                                                const Target &target) {
  Func out = kernel.output;
  int width = target.natural_vector_size(out.output_types()[0]);
  Var x = kernel.vars[0], y = kernel.vars[kernel.readsInputInner];
  Var xo("xo"), yo("yo"), xi("xi"), yi("yi");
  // A width x width tile: the input tile is staged with dense vector loads along its
  // rows, then read down its columns from L1. Staging is what pays: 1024x2048 f32
  // 1T: 13.4 GB/s staged vs 9.8 GB/s gathering straight from memory (8x8 tiles),
  // 7.5 GB/s (16x16); vectorizing both tile dimensions (Halide's shuffle transpose)
  // gave 5-7 GB/s.
  out.tile(x, y, xo, yo, xi, yi, width, width, kGuard).vectorize(xi).unroll(yi);
  // A task is a row of tiles (width output rows), not a tile: 2T with a task per tile
  // ran at 2.7 GB/s, below 1T.
  std::vector<Var> rows = {yo};
  for (size_t d = 1; d < kernel.vars.size(); ++d)
    if (static_cast<int>(d) != kernel.readsInputInner)
      rows.push_back(kernel.vars[d]);
  std::vector<VarOrRVar> order = {xi, yi, xo};
  order.insert(order.end(), rows.begin(), rows.end());
  out.reorder(order);
  Var tiles = xo;
  out.parallel(fuseLoops(out, rows, "tilerows"));
  ImageParam input = kernel.input;
  Func staged = input.in();
  staged.compute_at(out, tiles).vectorize(staged.args()[0], width, kGuard);
  // A constant row stride for the staged tile, so that reading down its columns is a
  // gather with constant offsets even in the clamped tiles at the edges.
  std::vector<Var> stagedArgs = staged.args();
  for (size_t d = 0; d < stagedArgs.size(); ++d) {
    bool tileDim = d == 0 || static_cast<int>(d) == kernel.inputOfOutputInner;
    staged.bound_storage(stagedArgs[d], tileDim ? width : 1);
  }
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

namespace {

/// The output tiling shared by both matmul schedules.
struct MatmulTiles {
  /// The dimension whose entries are the tile rows (see chooseRowDim).
  int rowDim = 1;
  int colTile = 0, rowTile = 0;
  Var no{"no"}, ni{"ni"}, ro{"ro"}, ri{"ri"};
  /// The loop at which one output tile's accumulators are computed, and the loop of
  /// one column panel (which may contain several row tiles).
  Var tile, panel;
};

/// Makes `loop` of `out` parallel in tasks of consecutive iterations. Neighbouring
/// panels read neighbouring rhs and output columns, and a core that runs a run of them
/// streams better than two cores taking turns: 2T GFLOP/s, [128, 512] x [512, 2048]
/// with 32 panels: 152 with a task per panel, 157 (2 panels a task), 171 (4), 177
/// (8), 182 (16); at M = 512: 175 -> 203. 8 tasks keep both cores busy when another
/// process takes one for a while. An unknown iteration count (a dynamic N) gets tasks
/// of ~16 MFLOP.
void parallelTasks(Func out, Var loop, double flopsPerIteration, int64_t iterations,
                   bool countIsStatic) {
  int64_t group = countIsStatic
                      ? iterations / 8
                      : static_cast<int64_t>(16e6 / std::max(flopsPerIteration, 1.0));
  if (group <= 1) {
    out.parallel(loop);
    return;
  }
  Var task(loop.name() + "_task");
  out.split(loop, task, loop, static_cast<int>(group), kGuard).parallel(task);
}

/// Rows are the m dimension, except when m is a static 1 and the rhs is shared across
/// the innermost batch dimension ([B, 1, K] x [K, N], a decode step): then that batch
/// dimension is the rows, so that B rows fill a tile instead of 1.
int chooseRowDim(const MatmulKernel &kernel) {
  const Extents &ext = kernel.extents;
  if (ext[1] == 1 && ext.size() >= 3 && kernel.lhsVaries[2] && !kernel.rhsVaries[2])
    return 2;
  return 1;
}

/// Splits the output into colTile x rowTile tiles. Loop nest, innermost first: the tile,
/// the row tiles and the batch dimensions the rhs does not vary along (they share one
/// rhs panel), the column panels, the batch dimensions the rhs varies along. Parallel
/// over panels when there are enough of them to feed the cores (each then packs or
/// streams its rhs panel once), otherwise over row tiles.
MatmulTiles tileOutput(const MatmulKernel &kernel, int rowDim, int colTile, int rowTile) {
  MatmulTiles t;
  t.rowDim = rowDim;
  t.colTile = colTile;
  t.rowTile = rowTile;
  const Extents &ext = kernel.extents;
  int rank = static_cast<int>(ext.size());
  Func out = kernel.output;
  out.split(kernel.vars[0], t.no, t.ni, colTile, kGuard)
      .split(kernel.vars[rowDim], t.ro, t.ri, rowTile, kGuard);
  std::vector<Var> shared = {t.ro}, varying = {t.no};
  for (int d = 1; d < rank; ++d)
    if (d != rowDim)
      (kernel.rhsVaries[d] ? varying : shared).push_back(kernel.vars[d]);
  std::vector<VarOrRVar> order = {t.ni, t.ri};
  order.insert(order.end(), shared.begin(), shared.end());
  order.insert(order.end(), varying.begin(), varying.end());
  out.reorder(order);

  // Per-iteration work and iteration counts as the static types say (dynamic extents
  // guessed: 128 rows, K of 512, 8 in a batch dimension), to size the parallel tasks.
  int64_t k = isStatic(kernel.contraction) ? kernel.contraction : 512;
  int64_t rows = isStatic(ext[rowDim]) ? ext[rowDim] : 128;
  int64_t rowTiles = (rows + rowTile - 1) / rowTile;
  int64_t panels = isStatic(ext[0]) ? (ext[0] + colTile - 1) / colTile : 64;
  bool staticPanels = isStatic(ext[0]), staticRowTiles = isStatic(ext[rowDim]);
  for (int d = 1; d < rank; ++d) {
    if (d == rowDim)
      continue;
    int64_t extent = isStatic(ext[d]) ? ext[d] : 8;
    bool varies = kernel.rhsVaries[d];
    (varies ? panels : rowTiles) *= extent;
    (varies ? staticPanels : staticRowTiles) &= isStatic(ext[d]);
  }
  double tileFlops = 2.0 * colTile * rowTile * k;
  if (panels >= 4) {
    t.panel = fuseLoops(out, varying, "panels");
    t.tile = t.ro;
    parallelTasks(out, t.panel, tileFlops * rowTiles, panels, staticPanels);
  } else {
    t.tile = fuseLoops(out, shared, "rowtiles");
    t.panel = t.no;
    parallelTasks(out, t.tile, tileFlops, rowTiles, staticRowTiles);
  }
  return t;
}

/// The loops of `product`'s update other than the tile's columns and rows: batch
/// dimensions (and m when the rows are a batch dimension), each of extent 1 in a tile.
std::vector<VarOrRVar> otherDims(const MatmulKernel &kernel, int rowDim) {
  std::vector<VarOrRVar> dims;
  for (int d = 1; d < static_cast<int>(kernel.vars.size()); ++d)
    if (d != rowDim)
      dims.push_back(kernel.vars[d]);
  return dims;
}

/// The general schedule: the rhs panel is packed with n contiguous, and a register tile
/// of 4 vectors x 6 rows is updated inside the k loop.
void schedulePanelProduct(const MatmulKernel &kernel, int width) {
  Func out = kernel.output, product = kernel.product, packed = kernel.packedRhs;
  const Extents &ext = kernel.extents;
  int rowDim = chooseRowDim(kernel);
  Var n = kernel.vars[0], row = kernel.vars[rowDim];

  // 4 vectors of columns x 6 rows = 24 accumulators, plus 4 rhs vectors and one
  // broadcast lhs value: 29 of AVX-512's 32 zmm registers (AVX2's 16 ymm: 2 x 6).
  // Four register tiles stacked make the 64 x 24 output tile, which reuses each row of
  // the 64-column rhs panel 24 times from L1. Measured (K = 512, N = 2048): 103
  // GFLOP/s 1T at M = 512 (88% of the FMA peak), 204 2T (87%); 90 / 188 at M = 128.
  // The DESIGN.md variant without packing is level at M = 512 and ~5% slower at 128.
  int vectors = width >= 16 ? 4 : 2;
  int regRows = 6, rowTile = 24;
  int colTile = vectors * width;
  if (isStatic(ext[0]) && ext[0] < colTile)
    colTile = static_cast<int>((ext[0] + width - 1) / width * width);
  int64_t rows = ext[rowDim];
  if (isStatic(rows) && rows < rowTile) {
    regRows = static_cast<int>(std::min<int64_t>(rows, regRows));
    rowTile = static_cast<int>((rows + regRows - 1) / regRows * regRows);
  }
  MatmulTiles t = tileOutput(kernel, rowDim, colTile, rowTile);
  out.vectorize(t.ni, width);
  packed.compute_at(out, t.panel);

  // The accumulator tile always has the full tile's size (the algorithm clamps what it
  // reads), so that the register tile's loops have constant extents and unroll.
  product.compute_at(out, t.tile)
      .bound_extent(n, colTile)
      .bound_extent(row, rowTile)
      .vectorize(n, width);
  Var nv("nv"), nu("nu"), rr("rr"), ru("ru");
  RVar kk("kk"), ku("ku");
  std::vector<VarOrRVar> loops = {nv, nu, ru, ku, kk, rr};
  for (const VarOrRVar &d : otherDims(kernel, rowDim))
    loops.push_back(d);
  product.update()
      .split(n, nu, nv, width, kRoundUp)
      .split(row, rr, ru, regRows, kRoundUp)
      .split(kernel.k.x, kk, ku, 2, kGuard)
      .reorder(loops)
      .vectorize(nv)
      .unroll(nu)
      .unroll(ru)
      .unroll(ku);

  // The panel, n innermost and contiguous: for transpose_rhs a transpose in
  // width x width blocks (gathers down k, vector stores along n; staging each block
  // with dense loads first, as scheduleTransposeCpu does, measured 2-5% slower here),
  // otherwise a copy that also keeps the panel's rows from aliasing in L1 when N is a
  // power of two.
  Var pno("pno"), pni("pni"), pko("pko"), pki("pki");
  if (kernel.transposeRhs)
    packed.split(kernel.packN, pno, pni, width, kRoundUp)
        .split(kernel.packK, pko, pki, width, kGuard)
        .reorder(pni, pki, pno, pko)
        .vectorize(pni)
        .unroll(pki);
  else
    packed.vectorize(kernel.packN, width, kRoundUp);
}

/// For x . W^T: dot products along k, where both operands are contiguous, so the weight
/// is streamed as it is instead of transposed into panels. Each lane accumulates every
/// width-th product (rfactor), a 6-column x 4-row register tile of such vectors (24
/// accumulators + 4 lhs vectors + 1 rhs vector = 29 zmm) is updated inside the k loop,
/// and a horizontal sum per output ends it. One register tile per output tile: wider
/// output tiles measured 10-15% slower (1T, 48 x 4: 84 vs 100 GFLOP/s at M = 512).
void scheduleDotProduct(const MatmulKernel &kernel, int width) {
  Func out = kernel.output, product = kernel.product, packed = kernel.packedRhs;
  int rowDim = chooseRowDim(kernel);
  Var n = kernel.vars[0], row = kernel.vars[rowDim];
  int cols = width >= 16 ? 6 : 3, regRows = width >= 16 ? 4 : 3;
  MatmulTiles t = tileOutput(kernel, rowDim, cols, regRows);
  packed.compute_inline();

  Var lane("lane");
  RVar ko("ko"), ki("ki");
  Func partial =
      product.update().split(kernel.k.x, ko, ki, width, kGuard).rfactor(ki, lane);
  product.compute_at(out, t.tile).bound_extent(n, cols).bound_extent(row, regRows);
  product.update().atomic().vectorize(ki);
  std::vector<Var> storage = {lane, n, row};
  std::vector<VarOrRVar> loops = {lane, n, row, ko};
  for (const VarOrRVar &d : otherDims(kernel, rowDim)) {
    storage.push_back(d.var);
    loops.push_back(d);
  }
  partial.compute_at(out, t.tile).reorder_storage(storage).vectorize(lane);
  partial.update().reorder(loops).vectorize(lane).unroll(n).unroll(row);
}

/// Which schedule a transposed rhs gets. Measured 1T, GFLOP/s, dot vs panel:
///   M = 16 (decode), N = 2048, K = 512:  101 vs  44 (the panel transposes the weight
///                                                    for 16 rows)
///   M = 128, N = 2048, K = 512:          103 vs  85
///   M = 512, N = 2048, K = 512:           97 vs 100
///   M = 512, N = 512, K = 2048:           75 vs  92 (each 6-column panel streams
///                                                    4 MB of lhs; blocking the rows
///                                                    did not recover it)
///   M = 512, N = 512, K = 64 (q.k^T):     60 vs  97 (4 k steps per horizontal sum)
/// so the dot form is used for few rows, or a contraction of 256 to 1024.
bool useDotProduct(const MatmulKernel &kernel) {
  if (!kernel.transposeRhs)
    return false;
  int rowDim = chooseRowDim(kernel);
  int64_t rows = kernel.extents[rowDim];
  bool fewRows = rowDim == 2 || (isStatic(rows) && rows <= 48);
  bool midContraction = isStatic(kernel.contraction) && kernel.contraction >= 256 &&
                        kernel.contraction <= 1024;
  return fewRows || midContraction;
}

} // namespace

void kiln::halide_backend::scheduleMatmulCpu(const MatmulKernel &kernel,
                                             const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  if (kernel.emptyContraction.defined()) {
    // An empty contraction writes zeros; every schedule below is for K > 0.
    Func out = kernel.output;
    out.specialize(kernel.emptyContraction);
  }
  if (useDotProduct(kernel))
    scheduleDotProduct(kernel, width);
  else
    schedulePanelProduct(kernel, width);
}

//===----------------------------------------------------------------------===//
// Row reductions: softmax and layer_norm
//===----------------------------------------------------------------------===//

namespace {

/// Vectorises the reduction of `stats` (one update over `r`) along the contiguous
/// reduction dimension: `width` partial results, one per lane, then one horizontal
/// vector reduction per row. (Vectorising the reduction directly with atomic() makes
/// a horizontal step per vector of input: 1T softmax D = 512, 15.6 vs 16.7 GB/s.)
void vectorizeRowReduction(Func stats, RDom r, int width, const Func &out, Var at) {
  Var lane("lane");
  RVar outer("ro"), inner("ri");
  Func partial =
      stats.update().split(r.x, outer, inner, width, kGuard).rfactor(inner, lane);
  stats.compute_at(out, at);
  stats.update().atomic().vectorize(inner);
  partial.compute_at(out, at).vectorize(lane);
  partial.update().vectorize(lane);
}

/// The rows of a row reduction over Halide dim 0, as parallel tasks; Var::outermost()
/// for a rank-1 tensor (one row).
Var reductionRows(Func out, const std::vector<Var> &vars, const Extents &ext,
                  int64_t dynamicRowLength) {
  if (vars.size() < 2)
    return Var::outermost();
  return parallelRows(out, std::vector<Var>(vars.begin() + 1, vars.end()),
                      isStatic(ext[0]) ? ext[0] : dynamicRowLength, ext[1]);
}

} // namespace

void kiln::halide_backend::scheduleSoftmaxCpu(const SoftmaxKernel &kernel,
                                              const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  Func out = kernel.output;
  const std::vector<Var> &vars = kernel.vars;
  Var x = vars[0];
  out.vectorize(x, width, kGuard);
  if (kernel.axis == 0) {
    // Softmax along the contiguous dimension, one row at a time: max, exp (staged, so
    // exp runs once per element), sum, scale; the row stays in L1 between the passes.
    // exp is half the time (1T: 15 GB/s, 25 GB/s with exp taken out). Fusing the row
    // loops into one parallel loop cost a division per row to recover the indices:
    // 8.4 GB/s before parallelRows; horizontal steps vectorised (atomic) rather than
    // a scalar loop over the lanes.
    Var row = reductionRows(out, vars, kernel.extents, 256);
    vectorizeRowReduction(kernel.max, kernel.r, width, out, row);
    vectorizeRowReduction(kernel.sum, kernel.r, width, out, row);
    Func exp = kernel.exp;
    exp.compute_at(out, row).vectorize(x, width, kGuard);
    return;
  }
  // Softmax along an outer dimension: each slab (one index of every other dimension
  // but x) reduces down the axis with vectors along x.
  Var axis = vars[kernel.axis];
  std::vector<VarOrRVar> order = {x, axis};
  std::vector<Var> slabVars;
  for (size_t d = 1; d < vars.size(); ++d)
    if (static_cast<int>(d) != kernel.axis)
      slabVars.push_back(vars[d]);
  order.insert(order.end(), slabVars.begin(), slabVars.end());
  out.reorder(order);
  Var slab =
      slabVars.empty()
          ? Var::outermost()
          : parallelRows(out, slabVars,
                         elementCount(kernel.extents, 0, 1) *
                             elementCount(kernel.extents, kernel.axis, kernel.axis + 1),
                         kernel.extents[kernel.axis == 1 ? 2 : 1]);
  for (Func stats : {kernel.max, kernel.sum}) {
    stats.compute_at(out, slab).vectorize(x, width, kGuard);
    stats.update().reorder(x, kernel.r.x).vectorize(x, width, kGuard);
  }
  Func exp = kernel.exp;
  exp.compute_at(out, slab).vectorize(x, width, kGuard);
}

void kiln::halide_backend::scheduleLayerNormCpu(const LayerNormKernel &kernel,
                                                const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  Func out = kernel.output;
  const std::vector<Var> &vars = kernel.vars;
  // Two vectorised reductions over a row in L1, then the normalising pass: 1T 35-39
  // GB/s, 2T 51 GB/s on [8, 128, 512] (a 6 MB working set, from L3).
  out.vectorize(vars[0], width, kGuard);
  Var row = reductionRows(out, vars, kernel.extents, 512);
  vectorizeRowReduction(kernel.sum, kernel.r, width, out, row);
  vectorizeRowReduction(kernel.squares, kernel.r, width, out, row);
}
