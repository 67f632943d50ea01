//===- SchedulesCpuQuantized.cpp - CPU schedule of quantized_linear -------===//
//
// The row pass first: each row's max, its quantized values and their sum, computed
// for all rows before the product (a decode step's few rows are shared by every
// column of the weight, and the product's column panels are the outer loops, so a
// row quantized at the tile would be quantized again for each panel). Then the dot
// products along k, where both operands are contiguous, as SchedulesCpuMatmulDot.cpp's
// dot-product schedule does for f32 but in groups of 4 bytes: each i32 lane sums the
// 4 u8 x s8 products of neighbouring k, the vector reduction that Halide's x86 backend
// emits as vpdpbusd (AVX512-VNNI: 64 products a zmm instruction) when the target has
// avx512_sapphirerapids. Two orders of the k loop over one output tile of 6 columns:
//  - register tile, for 4 rows or more: 6 columns x 4 rows of i32 accumulators (24
//    zmm + 4 quantized rows + 1 weight vector and the sign-flip constant: 30 of 32),
//    each 64-byte weight vector loaded once for 4 rows;
//  - matrix-vector, for fewer rows: each column's whole dot product in turn, so that a
//    core reads the weight as it lies, one row after the next.
// A dynamic row count (a decode step's batch) gets both, specialized on the count, as
// the f32 schedule does. Parallel tasks are runs of column panels: every task reads
// all rows, and a run of panels is one stream of the weight.
//
// Many rows (16 or more) with a static K of whole 64-byte steps and a static N of
// whole 32-column panels take the panel product instead of the register tile, as
// SchedulesCpuMatmulPanel.cpp's panel schedule does for f32: at each panel the weight's
// 32 columns x K are repacked ([K/4][16][4] bytes per 16 columns,
// LowerQuantizedLinear.cpp) so that one 64-byte vector holds 4 k of 16 outputs; a tile of
// 32 columns x 8 rows keeps 16 accumulator vectors, and each step of 4 k broadcasts 4
// bytes of each row and issues one vpdpbusd per accumulator: no horizontal sums. The
// panels are the outer loops (the packed panel, 16 KB at K = 512, stays in L1/L2 while
// all rows pass it), parallel over runs of panels.
//
// Measured with test/unit/halide/KernelBench.cpp, f32, bf16 (SchedulesCpuMatmul.cpp)
// and int8 side by side in one run, HL_NUM_THREADS=2, on the 2-core Zen 4 VM shared with
// other builds (load average 7.3-7.5: f32 reached ~45 GFLOP/s, not its ~190 alone).
// Median ms; decode steps' matrix-vector products with the weight cold (from DRAM), in
// brackets GB/s of weight read; the encoder's linears (batch 8 x 128 positions) in
// brackets GFLOP/s (int8: GOP/s, and per CPU-second, the steadier figure here):
//
//   weight [N, K]            f32              bf16             int8
//   b1 [1536, 512]       0.139 (22.6)     0.062 (25.4)     0.031 (25.3)
//   b1 [512, 512]        0.042 (24.9)     0.025 (21.2)     0.014 (19.2)
//   b1 [2048, 512]       0.199 (21.1)     0.086 (24.4)     0.050 (21.0)
//   b1 [512, 2048]       0.187 (22.4)     0.111 (18.9)     0.043 (24.6)
//   b1 [8000, 512]       0.671 (24.4)     0.411 (19.9)     0.166 (24.7)
//   b8 [1536, 512]       0.344 (9.1)      0.255 (6.2)      0.080 (9.9)
//   b8 [512, 512]        0.128 (8.2)      0.086 (6.1)      0.024 (11.0)
//   b8 [2048, 512]       0.480 (8.7)      0.379 (5.5)      0.082 (12.9)
//   b8 [512, 2048]       0.325 (12.9)     0.241 (8.7)      0.104 (10.1)
//   b8 [8000, 512]       1.966 (8.3)      1.743 (4.7)      0.286 (14.3)
//   [1024, 512] x [2048, 512]^T   51.9 (41)   48.5 (44)   15.7 (137; 278 a CPU-second)
//   [1024, 512] x [1536, 512]^T   33.7 (48)   37.8 (43)    9.9 (163; 276)
//   [1024, 2048] x [512, 2048]^T  47.9 (45)   47.4 (45)   10.5 (204; 332)
//
// The int8 encoder rows above are the register tile. The panel product beside it,
// int8 only, old and new binaries alternating in one run (3 rounds, load average
// ~4, so faster than above for both), median ms (GOP/s):
//
//   int8 encoder linear            register tile     panel
//   [1024, 512] x [2048, 512]^T     7.58 (283)       5.38 (399)
//   [1024, 512] x [1536, 512]^T     6.06 (266)       4.06 (397)
//   [1024, 2048] x [512, 2048]^T    6.14 (350)       5.67 (379)
//
// At K = 2048 the rows that pass each panel (2 MB quantized) no longer fit L2, hence
// the smaller gain there. Decode steps (b1, b8 [1536, 512]) were unchanged within the
// noise (0.028-0.033 vs 0.030-0.031 ms; 0.060-0.070 vs 0.062-0.073). 12-row panel
// tiles instead of 8 (24 accumulators): 5.95, 4.29-4.43, 5.70-5.78 ms.
//
// So a decode step's int8 product streams its weight at the rate f32 does (~25 GB/s
// here, the memory bound), a quarter of the bytes: 3-4.5x faster at batch 1, 3-7x at
// batch 8; the encoder's 3.3-4.5x. What the choices below were worth, same setup:
// batch 8 in 4-row register tiles took 0.129 ms for [1536, 512] (matrix-vector: 0.062);
// panels outermost instead of row blocks, [1024, 2048] x [512, 2048]^T: 27 GOP/s; the
// row pass's partials stored lanes outermost (rfactor's layout, a gather per access):
// 54 of 64 ms of that product. The register tile's horizontal sums (one per output,
// K / 64 dot-product steps each) are what it spends besides its vpdpbusd, which the
// panel product's packed weight avoids.
//
//===----------------------------------------------------------------------===//

#include "SchedulesCpu.h"
#include "SchedulesCpuSupport.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::cpu;

namespace {

/// The bytes that one i32 lane of a u8 x s8 dot-product instruction sums.
constexpr int kDotGroup = 4;
/// Columns per output tile, and rows per register tile.
constexpr int kTileColumns = 6, kTileRows = 4;
/// The fewest rows that take register tiles; fewer take the matrix-vector order.
constexpr int kTileRowsFrom = 16;
/// Rows per block of register tiles (see tileOutput).
constexpr int kBlockRows = 64;
/// Parallel tasks: enough to keep both cores busy when another process takes one.
constexpr int kTasks = 8;
/// Rows per panel tile: 2 x 8 accumulator vectors, 2 weight vectors, 1 broadcast.
constexpr int kPanelTileRows = 8;

/// Few rows: a decode step's (a dynamic batch of single positions) or a static count
/// of at most 48, for which the row pass does not wake the thread pool.
bool fewRows(const QuantizedLinearKernel &kernel, int rowDim) {
  const Extents &ext = kernel.extents;
  if (rowDim < 0 || (rowDim == 2 && ext.size() == 3))
    return true;
  return elementCount(ext, 1, ext.size(), /*dynamicGuess=*/1 << 20) <= 48;
}

/// The row pass: max, quantized values and sum of every row, at root.
void scheduleRowPass(const QuantizedLinearKernel &kernel, int width, bool parallel) {
  vectorizeRowReduction(kernel.rowMax, kernel.rowK, width, LoopLevel::root());
  vectorizeRowReduction(kernel.rowSum, kernel.rowK, width, LoopLevel::root());
  Func quantized = kernel.quantized;
  std::vector<Var> rows(kernel.vars.begin() + 1, kernel.vars.end());
  quantized.compute_root().vectorize(kernel.quantizedK, width, kGuard);
  if (parallel && !rows.empty()) {
    int64_t k = isStatic(kernel.contraction) ? kernel.contraction : 512;
    parallelRows(quantized, rows, k, kernel.extents[1]);
  }
}

/// Splits `out` (the output or one of its specializations) into tiles of
/// kTileColumns x `tileRows` rows of `rowDim`, parallel over runs of column panels;
/// returns the loop at which one tile's products are computed. One row per tile
/// (matrix-vector): the panels outermost, each reading its weight rows once for all
/// rows. Register tiles: blocks of kBlockRows rows outermost, the panels inside, so
/// that a block's quantized rows (64 x K bytes) stay in L2 while the weight streams
/// past them; panels outermost instead would stream all rows once per panel.
Var tileOutput(const QuantizedLinearKernel &kernel, Stage out, int rowDim, int tileRows,
               TailStrategy rowTail, TailStrategy columnTail = kGuard) {
  Var no("no"), ni("ni"), ro("ro"), ri("ri"), rb("rb"), task("task");
  out.split(kernel.vars[0], no, ni, kTileColumns, columnTail);
  std::vector<VarOrRVar> order = {ni}, outer;
  Var tile = no;
  if (rowDim >= 0) {
    out.split(kernel.vars[rowDim], ro, ri, tileRows, rowTail);
    order.insert(order.end(), {ri, ro});
    tile = ro;
    if (tileRows > 1) {
      out.split(ro, rb, ro, kBlockRows / tileRows, kGuard);
      outer.push_back(rb);
    }
  }
  for (size_t d = 1; d < kernel.vars.size(); ++d)
    if (static_cast<int>(d) != rowDim)
      (outer.empty() ? order : outer).push_back(kernel.vars[d]);
  order.push_back(no);
  order.insert(order.end(), outer.begin(), outer.end());
  out.reorder(order);
  int64_t n = isStatic(kernel.extents[0]) ? kernel.extents[0] : 2048;
  int64_t panels = (n + kTileColumns - 1) / kTileColumns;
  int run = static_cast<int>(std::max<int64_t>(panels / kTasks, 1));
  out.split(no, task, no, run, kGuard).parallel(task);
  return tile;
}

/// Panel product tiles of `out` (the output or its many-rows specialization): column
/// panels of kPanelColumns outermost, parallel over runs of them, all rows inside in
/// tiles of kPanelTileRows; returns the loop of one tile. The panel's packed weight
/// (kPanelColumns x K bytes) stays in L1/L2 while every row passes it.
Var tilePanels(const QuantizedLinearKernel &kernel, Stage out) {
  Var no("no"), ni("ni"), ro("ro"), ri("ri"), task("task");
  out.split(kernel.vars[0], no, ni, QuantizedLinearKernel::kPanelColumns,
            TailStrategy::RoundUp);
  out.split(kernel.vars[kernel.rowDim], ro, ri, kPanelTileRows,
            TailStrategy::ShiftInwards);
  std::vector<VarOrRVar> order = {ni, ri, ro};
  for (size_t d = 1; d < kernel.vars.size(); ++d)
    if (static_cast<int>(d) != kernel.rowDim)
      order.push_back(kernel.vars[d]);
  order.push_back(no);
  out.reorder(order).vectorize(ni, QuantizedLinearKernel::kPanelLanes);
  int64_t panels = kernel.extents[0] / QuantizedLinearKernel::kPanelColumns;
  int run = static_cast<int>(std::max<int64_t>(panels / kTasks, 1));
  out.split(no, task, no, run, kGuard).parallel(task);
  return ro;
}

/// The panel update: per 4 k, one 64-byte vector of the packed weight per 16 columns,
/// each row's 4 quantized bytes broadcast, one u8 x s8 dot product per accumulator
/// vector (16 columns x 1 row); the packed panel computed at `panel`.
void schedulePanelUpdate(const QuantizedLinearKernel &kernel, Func out, Var panel) {
  const int lanes = QuantizedLinearKernel::kPanelLanes,
            group = QuantizedLinearKernel::kPanelGroup;
  Var n = kernel.vars[0], nv("nv"), nb("nb");
  RVar ko("pko"), kr("pkr");
  Func product = kernel.product;
  Stage update = product.update(kernel.panelUpdate);
  update.split(kernel.panelK.x, ko, kr, group, kGuard)
      .split(n, nb, nv, lanes, TailStrategy::RoundUp);
  std::vector<VarOrRVar> order = {kr, nv, nb, kernel.vars[kernel.rowDim], ko};
  for (size_t d = 1; d < kernel.vars.size(); ++d)
    if (static_cast<int>(d) != kernel.rowDim)
      order.push_back(kernel.vars[d]);
  update.reorder(order).atomic().vectorize(kr).vectorize(nv).unroll(nb).unroll(
      kernel.vars[kernel.rowDim]);
  Func packed = kernel.packedWeight;
  std::vector<Var> args = packed.args();
  Var fused("kn");
  packed.compute_at(out, panel)
      .bound(args[0], 0, group)
      .bound(args[1], 0, lanes)
      .fuse(args[0], args[1], fused)
      .vectorize(fused);
}

} // namespace

void cpu::schedule(const QuantizedLinearKernel &kernel, const Target &target) {
  const int width = target.natural_vector_size(Float(32));
  const int lanes = target.natural_vector_size(Int(32));
  int rowDim = kernel.rowDim;
  scheduleRowPass(kernel, width, !fewRows(kernel, rowDim));

  Func out = kernel.output, product = kernel.product;
  Var n = kernel.vars[0];
  bool panel = kernel.panelUpdate >= 0, dot = kernel.dotUpdate >= 0;
  Var tile;
  if (panel) {
    tile = tilePanels(kernel, dot ? out.specialize(kernel.manyRows) : Stage(out));
    schedulePanelUpdate(kernel, out, Var("no"));
  }
  if (!dot) {
    product.compute_at(out, tile);
    return;
  }
  // Each lane of `partial` sums every (lanes * 4)-th group of 4 products; the product
  // adds up the lanes once per output. A K that is not a multiple of that step sums
  // single products instead: the partial step's narrower dot products would be VEX
  // encoded (AVX-VNNI, which LLVM's sapphirerapids has and Zen 4 lacks: SIGILL).
  bool vnni =
      isStatic(kernel.contraction) && kernel.contraction % (lanes * kDotGroup) == 0;
  Var lane("lane");
  RVar ko("ko"), kl("kl"), kg("kg"), kr("kr");
  Stage sum = product.update(kernel.dotUpdate);
  sum.split(kernel.k.x, ko, kl, lanes * (vnni ? kDotGroup : 1), kGuard);
  if (vnni)
    sum.split(kl, kg, kr, kDotGroup);
  RVar summed = vnni ? kg : kl;
  Func partial = sum.rfactor(summed, lane);
  product.update(kernel.dotUpdate).atomic().vectorize(summed);
  std::vector<Var> storage = {lane};
  storage.insert(storage.end(), kernel.vars.begin(), kernel.vars.end());
  std::vector<VarOrRVar> inner = {lane};
  if (vnni)
    inner.insert(inner.begin(), kr);
  // Register tile: the k loop outermost, around a tile of columns x rows; matrix-vector:
  // each column's whole k loop in turn.
  std::vector<VarOrRVar> tileLoops = inner, vectorLoops = inner;
  tileLoops.insert(tileLoops.end(), kernel.vars.begin(), kernel.vars.end());
  tileLoops.push_back(ko);
  vectorLoops.push_back(ko);
  vectorLoops.insert(vectorLoops.end(), kernel.vars.begin(), kernel.vars.end());
  // Orders and vectorizes an update of `partial` for register tiles or for the
  // matrix-vector order.
  auto orderK = [&](Stage update, bool tiles) {
    update.reorder(tiles ? tileLoops : vectorLoops).atomic();
    for (const VarOrRVar &loop : inner)
      update.vectorize(loop);
    update.unroll(n);
    if (tiles)
      update.unroll(kernel.vars[rowDim]);
  };

  // Register tiles need a last tile shifted inwards (overlapping the one before it) to
  // have a constant kTileRows rows without reading past the input, and so at least
  // that many rows; below kTileRowsFrom the matrix-vector order is faster anyway (see
  // the table at the top: batch 8). With the panel product beside it (a dynamic row
  // count), this path takes only few rows.
  int64_t rows = rowDim < 0 ? 1 : kernel.extents[rowDim];
  if (panel) {
    // A static N of whole panels: the last tile of columns shifted inwards has the
    // constant extent that unrolling needs (bound_extent would pin the panels' too).
    tile = tileOutput(kernel, out, rowDim, 1, TailStrategy::ShiftInwards,
                      TailStrategy::ShiftInwards);
    orderK(partial.update(), false);
  } else if (isStatic(rows)) {
    bool tiles = rows >= kTileRowsFrom;
    tile = tileOutput(kernel, out, rowDim, tiles ? kTileRows : 1,
                      TailStrategy::ShiftInwards);
    orderK(partial.update(), tiles);
  } else {
    Expr enoughRows = kernel.sizes[rowDim] >= kTileRowsFrom;
    tile = tileOutput(kernel, out.specialize(enoughRows), rowDim, kTileRows,
                      TailStrategy::ShiftInwards);
    tileOutput(kernel, out, rowDim, 1, TailStrategy::ShiftInwards);
    orderK(partial.update().specialize(enoughRows), true);
    orderK(partial.update(), false);
  }
  product.compute_at(out, tile);
  if (!panel)
    product.bound_extent(n, kTileColumns);
  partial.compute_at(out, tile).reorder_storage(storage).vectorize(lane);
}
