//===- SchedulesCpuMatmul.cpp - CPU schedules of matmul and linear --------===//
//
// Two schedules of the product out(n, m, batch...) = sum_k lhs'(k, m) rhs'(n, k): a
// panel schedule (rhs packed n-contiguous, a 4-vector x 6-row register tile updated in
// the k loop) and, for few rows of a transposed rhs (x . W^T: a linear in a decode
// step or a short encode, where a run-time row count picks between the two), a
// dot-product schedule (vector dot products along the contiguous k of both
// operands). The numbers in this header are medians of JIT realizations by
// test/unit/halide/KernelBench.cpp on an early project machine: 2 cores of a Zen 5 EPYC
// (AVX-512, Halide target avx512_sapphirerapids), whose fp32 FMA peak measured 117
// GFLOP/s per core (234 for both); "1T"/"2T" are HL_NUM_THREADS=1/2. The machine is
// shared, so runs vary by ~10% (q.k^T by up to 30% between processes). Figures further
// down name their machine; the Zen 5 VM of the later ones (cpu family 26) runs a 2048^3
// OpenBLAS sgemm at 444-460 GFLOP/s on 2 threads, so do not set them against these.
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
//   linear [128,512] x [2048,512]^T + b (dot)  94-99     191-197  (2.7-2.9 / 1.37 ms)
//   linear [1,512] x [512,512]^T + b (dot)     45        67-89    (12 / 6-8 us)
//   linear [8,1,512] x [512,512]^T + b (dot)   96-99     158-184
//   linear [8,128,2048] x [512,2048]^T (panel) 93-95     180-193
//   linear [8,1,512] x [32000,512]^T (dot)     35        58-72    (65 MB weight
//                                                                  from DRAM: 9 GB/s
//                                                                  a core, 18 for two)
//
// linear is the matmul with transpose_rhs plus a bias: the same schedules, the bias
// added as the output tile is stored. It costs nothing measurable (the matmul of
// [128,512] x [2048,512]^T without it: 99 / 192-194 in the same runs).
//
// The matrix-vector products of a decode step read each weight once, from DRAM (the
// base Transformer's step reads 104 MB, the L3 holds 32), so they are bound by how
// the weight is read. The register tile reads its 6 weight rows side by side, six
// streams 2 KB apart (K = 512), and for a batch of 1 also computes 3 clamped copies
// of the row; the matrix-vector order read one row after the next, one stream a core,
// as bench/stream_read does (its order on Zen 4 today; on other cores it reads the 6
// rows side by side, without the clamped copies: scheduleDotProduct).
// transformer_base decode_step at batch 1 (bench/generate_bench --profile, old and new
// alternated 3 times, load average 12 on the shared 2-core machine; mean us per call,
// 2 threads):
//
//   weight                     register tile   matrix-vector
//   [1536, 512] q/k/v             680-946         319-402
//   [512, 512] out projections    282-302         119-164
//   [2048, 512] + ReLU           1096-1201        484-585
//   [512, 2048]                   564-640         359-462
//   [8000, 512] logits           4462-4706       3507-3816
//   whole step                  25.7-27.0 ms    15.4-17.4 ms  (same tokens)
//
// and at batch 8 (register tile either way) 33.9-36.1 vs 34.2-34.7 ms a step.
// KernelBench's gemv_b* cases time them alone, the weight from DRAM.
//
// bf16 weights (kiln-weight-precision): the algorithm widens each weight element by its
// bits (widenToF32: per 16 weights one vpmovzxwd load and one vpslld, then the same FMAs
// as f32), so the sums are the f32 kernel's over the same values, the interpreter's to
// rounding. KernelBench, f32 and bf16 cases in one run, 2T, on a 2-core Zen 4 EPYC VM
// (cpu family 25) shared with other builds (load average 6-7, so absolute figures are
// low; the ratios are the point); "GB/s" is of weight bytes, the weight from DRAM:
//
//   case                                        f32                bf16
//   gemv b1 [1536, 512] (matrix-vector)    0.149 ms  21 GB/s   0.066 ms  24 GB/s  2.3x
//   gemv b1 [512, 512]                     0.045     23        0.026     21       1.7x
//   gemv b1 [2048, 512]                    0.191     22        0.095     22       2.0x
//   gemv b1 [512, 2048]                    0.154     27        0.076     28       2.0x
//   gemv b1 [8000, 512]                    0.656     25        0.364     23       1.8x
//   gemv b8 [1536, 512] (register tile)    0.357      9        0.247      6       1.4x
//   gemv b8 [2048, 512]                    0.488      9        0.364      6       1.3x
//   gemv b8 [8000, 512]                    1.939      9        1.458      6       1.3x
//   linear [8,1,512] x [2048,512]^T, cached   99 GFLOP/s          101 GFLOP/s
//   linear [1024,512] x [2048,512]^T (dot)    90                   94
//   linear [1024,512] x [1536,512]^T (dot)    94                   96
//   linear [1024,2048] x [512,2048]^T (panel) 92                   93
//
// At batch 1 the matrix-vector order streams the bf16 weight at the f32 weight's GB/s,
// so a linear takes about half the time: the bytes are what bound it. At batch 8 the
// register tile reads 6 weight rows side by side from DRAM, which bounds f32 and bf16
// alike well below the stream rate (the table above); bf16 still gains 1.3-1.4x. The
// encoder's shapes lose nothing: the register tile converts 6 weight vectors per 24
// FMAs, the panel schedule once per panel as it packs. The panel's transpose widens a
// 16 x 16 block of the weight with dense loads first and gathers f32 from it: gathering
// the 16-bit elements makes LLVM use AVX512-FP16's vmovw (Halide 14 compiles
// avx512_sapphirerapids for LLVM's sapphirerapids CPU), which Zen 4 lacks (SIGILL).
// vdpbf16ps (bf16 pairs into f32 sums) is not used and was not measured: it rounds the
// activations to bf16, which the interpreter-exact tests and the translator's accuracy
// bar rule out as a default, and at batch 1, where bf16 weights matter most, the FMAs
// already wait for DRAM, so halving them cannot help; only the compute-bound encoder
// shapes could gain, behind an opt-in option.
//
// Dynamic extents need tails: the output's loops use GuardWithIf (a predicated vector
// store on x86, never a scalar loop), the accumulators round up (the algorithm clamps
// what they read).
//
//===----------------------------------------------------------------------===//

#include "CpuTuning.h"
#include "PanelPrefetch.h"
#include "SchedulesCpu.h"
#include "SchedulesCpuSupport.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::cpu;

namespace {

/// The output tiling shared by both matmul schedules.
struct MatmulTiles {
  /// The dimension whose entries are the tile rows (matmulRowDimension).
  int rowDim = 1;
  int colTile = 0, rowTile = 0;
  Var no{"no"}, ni{"ni"}, ro{"ro"}, ri{"ri"};
  /// The loop at which one output tile's accumulators are computed, and the loop of
  /// one column panel (which may contain several row tiles).
  Var tile, panel;
  /// Consecutive iterations of the parallel loop that one task runs.
  int64_t iterationsPerTask = 1;
};

/// Makes `loop` of `out` parallel in tasks of consecutive iterations. Neighbouring
/// panels read neighbouring rhs and output columns, and a core that runs a run of them
/// streams better than two cores taking turns: 2T GFLOP/s, [128, 512] x [512, 2048]
/// with 32 panels: 152 with a task per panel, 157 (2 panels a task), 171 (4), 177
/// (8), 182 (16); at M = 512: 175 -> 203. 8 tasks keep both cores busy when another
/// process takes one for a while. An unknown iteration count (a dynamic N) gets tasks
/// of ~16 MFLOP. Returns the iterations a task runs.
int64_t parallelTasks(Stage out, Var loop, double flopsPerIteration, int64_t iterations,
                      bool countIsStatic) {
  int64_t group = countIsStatic
                      ? iterations / 8
                      : static_cast<int64_t>(16e6 / std::max(flopsPerIteration, 1.0));
  if (group <= 1) {
    out.parallel(loop);
    return 1;
  }
  Var task(loop.name() + "_task");
  out.split(loop, task, loop, static_cast<int>(group), kGuard).parallel(task);
  return group;
}

/// Splits `out` (the output or one of its specializations) into colTile x rowTile
/// tiles, the rows with `rowTail`. Loop nest, innermost first: the tile, the row tiles
/// and the batch dimensions the rhs does not vary along (they share one rhs panel), the
/// column panels, the batch dimensions the rhs varies along. Parallel over panels when
/// there are enough of them to feed the cores (each then packs or streams its rhs
/// panel once), otherwise over row tiles. With `rowBlockTiles`, the panels pass over
/// the rows a block of that many row tiles at a time, the blocks and the other batch
/// dimensions outermost, so that each block's lhs rows stay in L2 (lhsBlockTiles).
MatmulTiles tileOutput(const MatmulKernel &kernel, Stage out, int rowDim, int colTile,
                       int rowTile, TailStrategy rowTail = kGuard,
                       int64_t rowBlockTiles = 0) {
  MatmulTiles t;
  t.rowDim = rowDim;
  t.colTile = colTile;
  t.rowTile = rowTile;
  const Extents &ext = kernel.extents;
  int rank = static_cast<int>(ext.size());
  out.split(kernel.vars[0], t.no, t.ni, colTile, kGuard)
      .split(kernel.vars[rowDim], t.ro, t.ri, rowTile, rowTail);
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
    if (rowBlockTiles > 0) {
      Var rob("rob");
      out.split(t.ro, rob, t.ro, static_cast<int>(rowBlockTiles), kGuard);
      std::vector<VarOrRVar> blocked = {t.ni, t.ri, t.ro};
      blocked.insert(blocked.end(), varying.begin(), varying.end());
      blocked.push_back(rob);
      blocked.insert(blocked.end(), shared.begin() + 1, shared.end());
      out.reorder(blocked);
      rowTiles = std::min(rowTiles, rowBlockTiles);
    }
    t.panel = fuseLoops(out, varying, "panels");
    t.tile = t.ro;
    t.iterationsPerTask =
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

/// Copies the lhs rows of each register tile (regRows x K) to the stack before its k
/// loop. The product reads lhsRows at unclamped rows, and a staged copy has them at
/// constant offsets from one pointer; read in place, each row's address is its own
/// clamp, and LLVM computed the six of them in vector registers on every k step
/// (vpaddq, vpextrq, vmovq), on the port that Intel's cores share with the second
/// 512-bit FMA. KernelBench, 2T, 2-core Cascade Lake VM (Xeon, family 6 model 85;
/// OpenBLAS 2048^3 sgemm 250 GFLOP/s), GFLOP/s, in place / staged, alternated twice:
/// linear [1024, 512] -> 2048 151-152 / 195-197, [1024, 2048] -> 512 164-165 /
/// 198-202, [128, 512] -> 2048 145-147 / 189-194, [128, 2048] -> 512 144-146 /
/// 179-187. Staging the 24-row output tile instead: the same at 128 rows, 176 / 151 at
/// 1024; staging it k-major (the six rows' values side by side): 114-154. Only for a
/// static K whose rows fit a stack tile (Halide sizes it statically), `stagedK` of
/// each row where the k loop runs in blocks; a dynamic K reads in place.
/// Where the row clamp is `likely` (MatmulKernel::lhsRowsInPlace, chooseLhsRowsInPlace),
/// the register tiles before the last read their rows in place with the same k loop as
/// the staged copy's, 6 broadcasts at constant offsets from one pointer, and nothing is
/// staged.
bool stageRegisterTileRows(const MatmulKernel &kernel, Func product, Var regTile,
                           int regRows, int64_t stagedK) {
  constexpr int64_t kStagedRowsBytes = 64 << 10;
  if (kernel.lhsRowsInPlace || !isStatic(kernel.contraction) ||
      regRows * stagedK * static_cast<int64_t>(sizeof(float)) > kStagedRowsBytes)
    return false;
  Func lhsRows = kernel.lhsRows;
  lhsRows.compute_at(product, regTile).store_in(MemoryType::Stack);
  return true;
}

/// Whether each register tile prefetches the lhs rows that the next one stages
/// (makeRowsPrefetchPass), `stagedK` of each: the staging copy is a loop of its own
/// before the k loop, and where the rows come from L3 (an encode of 8 x 128 rows: 2 MB
/// of lhs at K = 512, which every column panel reads) it waits for each line.
/// transformer_base encode, 2-core Cascade Lake VM (Xeon, family 6 model 85), kiln-run
/// --threads 2 --trace, median us a call, without / with, two rounds: B=8 S=128 q/k/v
/// linear 8139, 8211 / 7828, 7839; output projection group 2966, 3024 / 2835, 2830;
/// whole encode 219.0, 222.2 / 216.1, 216.8 ms; B=1 S=128 (112 valid) 24.8, 24.8 /
/// 24.3, 24.4 ms. Only while the next rows fit beside this tile's in L1 (12 KB: 512 of
/// K): prefetching the next 48 KB at K = 2048 evicted the rows in use and took the
/// feed-forward group from 21.4 to 28.2 ms at B=8; a larger K runs in blocks of 512
/// (contractionBlock) for this prefetch.
bool prefetchNextRows(int64_t stagedK, int regRows) {
  constexpr int64_t kMaxRowsBytes = 12 << 10;
  return regRows * stagedK * static_cast<int64_t>(sizeof(float)) <= kMaxRowsBytes;
}

/// The k steps of one block where the panel schedule runs a static contraction in
/// blocks, each over all the register tiles of an output tile (the accumulators wait
/// in the tile's stack buffer between blocks), or 0 for one pass over the whole of K.
/// Staged block by block, a register tile's rows are 12 KB instead of 48 at K = 2048,
/// small enough for each register tile to prefetch the next one's block
/// (prefetchNextRows); the panel's block (128 KB) serves the output tile's register
/// tiles from L2 as the whole panel did. transformer_base encode (the feed-forward's
/// second linear has K = 2048), 2-core Cascade Lake VM (Xeon, family 6 model 85),
/// kiln-run --threads 2 --trace --repeat 21, one pass / blocks of 512, alternated six
/// times at B=8 S=128 and four at B=1 S=128 (112 valid); the VM's load moved the
/// kernels' times by up to 30 % between processes, so each is the fastest call of the
/// feed-forward group over the fastest of the q/k/v linear (K = 512, unchanged) in the
/// same process: B=8 2.80-3.08 (median 2.86) / 2.45-2.72 (2.67), the group 21.9-22.3 ms
/// / 20.7-21.1 in the three quiet rounds; B=1 2.75-2.88 / 2.68-2.88, level. The outputs
/// are bit for bit the same (each sum still runs along k in order). Staging blocks of
/// 512 inside one pass over K, the register tile outermost, had been level (21.6-21.9
/// ms either way): what gains is the prefetch. Blocks of 256 at K = 512 were no faster
/// (q/k/v linear 7698-8013 us against 7657-7819). Only where 512 divides K (other K not
/// measured).
int64_t contractionBlock(const MatmulKernel &kernel) {
  constexpr int64_t kBlock = 512;
  int64_t k = kernel.contraction;
  return isStatic(k) && k > kBlock && k % kBlock == 0 ? kBlock : 0;
}

/// The columns of the panel schedule's register tile and of one weight panel for a
/// target of `width` f32 lanes: 4 vectors with AVX-512, 2 with AVX2 (see
/// schedulePanelProduct).
int panelColumns(int width) { return (width >= 16 ? 4 : 2) * width; }

/// When the panel schedule's output tiles span two panels instead of one: an Expr of
/// the run-time sizes (undefined: never). Every output tile reads the lhs rows of all
/// its row tiles, so each panel of the weight streams the whole lhs; in an output tile
/// of two panels each register tile stages its rows once for both, which halves what
/// the product reads of the lhs. That matters where the lhs is past a core's L2 (1 MB
/// on Cascade Lake, Zen 4 and Zen 5) and comes from L3 for every output tile: an
/// encode of 8 x 128 rows has 2 MB of lhs at K = 512 and 8 MB at K = 2048, read 24 to
/// 32 times a layer. transformer_base encode, 2-core Cascade Lake VM (Xeon, family 6
/// model 85), the builds' calls alternated one by one in one process (the VM's load
/// moved single calls by up to 30 %; bench/compare_builds.cpp), median of the per-call
/// ratios to one-panel tiles:
///   two panels at every row count:  B=8 S=128 0.94-0.96 in four runs of 20-40 rounds
///                                   (q/k/v linear 0.89-0.90); B=1 S=128 (112 valid,
///                                   256 KB of lhs at K = 512) 1.02-1.03
///   two past 1 MB of lhs (this):    B=8 0.94-0.97 in three runs (q/k/v linear
///                                   0.89-0.92, feed-forward group 0.95-0.98, output
///                                   projection group 0.96-0.99); B=1 0.99-1.00
/// with the outputs bit for bit the same (each sum still runs along k in order). Only
/// for a static K and a static column count that makes at least 4 output tiles of two
/// panels, so that the tiling's loops are those of the few-rows form
/// (chooseFewRowsLimit). Not measured with AVX2's 32-column panels.
Expr wideOutputTiles(const MatmulKernel &kernel, int width) {
  constexpr int64_t kL2Bytes = 1 << 20;
  const int64_t columns = kernel.extents[0], twoPanels = 2 * panelColumns(width);
  if (!isStatic(columns) || columns % twoPanels != 0 || columns < 4 * twoPanels ||
      !isStatic(kernel.contraction))
    return Expr();
  // The rows that share the weight: the row dimension and the batch dimensions that
  // the rhs does not vary along.
  int rowDim = matmulRowDimension(kernel);
  Expr rows = kernel.sizes[rowDim];
  for (size_t d = 1; d < kernel.sizes.size(); ++d)
    if (static_cast<int>(d) != rowDim && !kernel.rhsVaries[d])
      rows *= kernel.sizes[d];
  int64_t rowBytes = kernel.contraction * static_cast<int64_t>(sizeof(float));
  return Internal::simplify(rows > static_cast<int>(kL2Bytes / rowBytes));
}

/// Whether the register tiles of a product over a weight in panels prefetch the next
/// panel (PanelPrefetch.h). The first register tile of a panel otherwise reads it from
/// DRAM, at a core's ~10 GB/s, while the FMAs could take it at ~40: transformer_base
/// encode B=1 S=128 (112 valid), 2-core Cascade Lake VM (Xeon, family 6 model 85),
/// kiln-run --threads 2 --trace, median us a call, without / with, two rounds: q/k/v
/// linear 958, 948 / 851, 873; feed-forward group 2621, 2588 / 2382, 2456; whole
/// encode 25.8, 25.6 / 23.6, 24.8 ms (B=8: 217-221 ms either way). Only while the two
/// panels fill at most a quarter of L2 (1 MB a core on Cascade Lake, Zen 4 and Zen 5):
/// the feed-forward's second linear (K = 2048, 512 KB panels, beside a 0.9 MB lhs)
/// took the group to 3194 us with it. Only where a task runs several panels, so that
/// the next panel is mostly the same core's: the output projection (8 panels, a task
/// each) went from 345-348 to 350-359 us with it. Needs the panel schedule's loops as
/// tileOutput makes them with panels outermost, and a static K.
/// Where K runs in blocks (`kBlock`, contractionBlock), the unit is a panel's block
/// (128 KB at 512 x 64) rather than the panel: the first output tile of a panel
/// reads each block first, from DRAM, so its register tiles prefetch all of the next
/// block while they multiply by this one (and, where a task runs several panels, the
/// next panel's first block during the last). transformer_base encode, where the
/// feed-forward's second linear (K = 2048, 8 panels of 512 KB, a task each) takes it,
/// 2-core Cascade Lake VM (Xeon, family 6 model 85), bench/compare_builds, median of
/// the per-call ratios to the build without: B=1 S=128 (112 valid) 0.984 and 0.978 in
/// 60 and 80 rounds (feed-forward group 0.972, 0.967), B=1 S=64 0.981 (group 0.964),
/// B=8 S=128 1.005 (0.986; there the wide tiles of two panels take the rows, with no
/// panel prefetch), the outputs bit for bit the same. Small, at the edge of the tool's
/// noise (kernels 0.97-1.02), but the same way in all three B=1 runs.
bool prefetchNextPanel(const MatmulKernel &kernel, const MatmulTiles &tiles,
                       int64_t kBlock) {
  constexpr int64_t kMaxPanelBytes = 128 << 10;
  return isStatic(kernel.contraction) && tiles.tile.name() == tiles.ro.name() &&
         (tiles.iterationsPerTask >= 2 || kBlock) &&
         (kBlock ? kBlock : kernel.contraction) * kernel.panelWidth *
                 kernel.rhs.type().bytes() <=
             kMaxPanelBytes;
}

/// The general schedule: the rhs panel is packed with n contiguous, and a register tile
/// of 4 vectors x 6 rows is updated inside the k loop.
void schedulePanelProduct(const MatmulKernel &kernel, int width, Stage out,
                          CodegenRequests &codegen) {
  Func product = kernel.product, packed = kernel.packedRhs;
  const Extents &ext = kernel.extents;
  int rowDim = matmulRowDimension(kernel);
  Var n = kernel.vars[0], row = kernel.vars[rowDim];

  // 4 vectors of columns x 6 rows = 24 accumulators, plus 4 rhs vectors and one
  // broadcast lhs value: 29 of AVX-512's 32 zmm registers (AVX2's 16 ymm: 2 x 6).
  // Four register tiles stacked make the 64 x 24 output tile, which reuses each row of
  // the 64-column rhs panel 24 times from L1. Measured (K = 512, N = 2048): 103
  // GFLOP/s 1T at M = 512 (88% of the FMA peak), 204 2T (87%); 90 / 188 at M = 128.
  // The DESIGN.md variant without packing is level at M = 512 and ~5% slower at 128.
  // With many rows the output tile spans two panels (wideOutputTiles).
  int regRows = 6, rowTile = 24;
  int colTile = panelColumns(width);
  if (isStatic(ext[0]) && ext[0] < colTile)
    colTile = static_cast<int>((ext[0] + width - 1) / width * width);
  int64_t rows = ext[rowDim];
  if (isStatic(rows) && rows < rowTile) {
    regRows = static_cast<int>(std::min<int64_t>(rows, regRows));
    rowTile = static_cast<int>((rows + regRows - 1) / regRows * regRows);
  }
  // Where the output tiles may span two panels (a specialization on the rows, unless
  // they are static), the accumulator tile has room for two and computes the columns
  // of the output tile it is at, one panel or two.
  Expr wide = wideOutputTiles(kernel, width);
  const bool alwaysWide = wide.defined() && is_const_one(wide);
  if (wide.defined() && !alwaysWide && !is_const_zero(wide)) {
    Stage wideOut = out.specialize(wide);
    MatmulTiles w = tileOutput(kernel, wideOut, rowDim, 2 * colTile, rowTile);
    wideOut.vectorize(w.ni, width);
  }
  MatmulTiles t =
      tileOutput(kernel, out, rowDim, alwaysWide ? 2 * colTile : colTile, rowTile);
  out.vectorize(t.ni, width);

  // The accumulator tile always has the full tile's columns (the algorithm clamps what
  // it reads), so that the register tile's loops have constant extents and unroll. Its
  // rows are the output tile's rounded up to the register tile's, not the whole 24:
  // S = 128 rows are 5 x 24 + 8, and computing the last tile whole cost 12.5 %.
  // (2T GFLOP/s, 2-core Zen 5 EPYC VM, KernelBench, whole / rounded up, alternated 3
  // times: [8, 128, 2048] x [512, 2048]^T 407-414 / 444-455; [1, 128, 2048] x [512,
  // 2048]^T 350-365 / 337-387, ahead in 2 rounds of 3.) On the stack, Halide sizes every
  // tile's storage by the largest (24 rows), a fixed array; left to choose, it sized the
  // last tile's from the row count and called halide_malloc for it.
  product.compute_at(kernel.output, t.tile)
      .align_bounds(row, regRows)
      .store_in(MemoryType::Stack)
      .vectorize(n, width);
  const bool panelLoop = wide.defined() && !is_const_zero(wide);
  if (panelLoop)
    product.align_bounds(n, colTile).bound_storage(n, 2 * colTile);
  else
    product.bound_extent(n, colTile);
  Var nv("nv"), nu("nu"), np("np"), rr("rr"), ru("ru");
  RVar kk("kk"), ku("ku"), ko("ko"), kb("kb");
  const int64_t kBlock = contractionBlock(kernel);
  // An output tile's panels inside the register tile's row loop: its rows staged once
  // for both.
  std::vector<VarOrRVar> loops = {nv, nu, ru, ku, kk};
  if (panelLoop)
    loops.push_back(np);
  loops.push_back(rr);
  if (kBlock)
    loops.push_back(ko);
  for (const VarOrRVar &d : otherDims(kernel, rowDim))
    loops.push_back(d);
  Stage update = product.update();
  if (panelLoop)
    update.split(n, np, nu, colTile, kRoundUp)
        .split(nu, nu, nv, width, TailStrategy::GuardWithIf);
  else
    update.split(n, nu, nv, width, kRoundUp);
  update.split(row, rr, ru, regRows, kRoundUp);
  if (kBlock)
    update.split(kernel.k.x, ko, kb, static_cast<int>(kBlock))
        .split(kb, kk, ku, 2, kGuard);
  else
    update.split(kernel.k.x, kk, ku, 2, kGuard);
  update.reorder(loops).vectorize(nv).unroll(nu).unroll(ru).unroll(ku);
  const int64_t stagedK = kBlock ? kBlock : kernel.contraction;
  if (stageRegisterTileRows(kernel, product, rr, regRows, stagedK) &&
      prefetchNextRows(stagedK, regRows)) {
    RowsPrefetchLoops rows;
    std::string kLoop = product.name() + ".s1." + kernel.k.x.name() + ".";
    rows.kLoop = kLoop + (kBlock ? kb.name() + "." : "") + kk.name();
    rows.registerTileLoop = product.name() + ".s1." + row.name() + "." + rr.name();
    rows.stagedRows = kernel.lhsRows.name();
    rows.rows = regRows;
    rows.rowElements = stagedK;
    rows.rowStride = kernel.contraction;
    rows.iterations = (stagedK + 1) / 2;
    codegen.passes.push_back(makeRowsPrefetchPass(rows));
    codegen.prefetchIntoL1 = true;
  }

  // The panel, n innermost and contiguous: for transpose_rhs a transpose in
  // width x width blocks (gathers down k, vector stores along n; staging each block
  // with dense loads first, as the transpose schedule does, measured 2-5% slower here),
  // otherwise a copy that also keeps the panel's rows from aliasing in L1 when N is a
  // power of two. The transpose takes width weight rows at a time along the whole of
  // k: the weight mostly comes from DRAM, and width streams keep the prefetchers
  // ahead, where taking all the panel's rows a block of k at a time (64 streams) left
  // the q/k/v product of transformer_base's encode b1 at 705-714 us against 554-630
  // for the dot form.
  Var pno("pno"), pni("pni"), pko("pko"), pki("pki");
  if (kernel.panelWidth) {
    // Stored in panels already: each register tile reads its columns' vectors in place.
    packed.compute_inline();
    if (!alwaysWide && prefetchNextPanel(kernel, t, kBlock)) {
      PanelPrefetchLoops prefetch;
      std::string productLoop = product.name() + ".s1.";
      prefetch.kLoop = productLoop + kernel.k.x.name() + "." +
                       (kBlock ? kb.name() + "." : "") + kk.name();
      prefetch.registerTileLoop = productLoop + row.name() + "." + rr.name();
      if (panelLoop)
        prefetch.panelLoop = productLoop + n.name() + "." + np.name();
      prefetch.outputTileLoop =
          kernel.output.name() + ".s0." + row.name() + "." + t.ro.name();
      prefetch.weight = kernel.rhs.name();
      prefetch.registerTilesPerOutputTile = rowTile / regRows;
      prefetch.panelElements = (kBlock ? kBlock : kernel.contraction) * kernel.panelWidth;
      if (kBlock) {
        prefetch.blockLoop = productLoop + kernel.k.x.name() + "." + ko.name();
        prefetch.nextPanelInTask = t.iterationsPerTask >= 2;
      }
      prefetch.elementsPerIteration = 2 * kernel.panelWidth;
      codegen.passes.push_back(makePanelPrefetchPass(prefetch));
      codegen.prefetchIntoL1 = true;
    }
    return;
  }
  packed.compute_at(kernel.output, t.panel);
  if (kernel.transposeRhs) {
    packed.split(kernel.packN, pno, pni, width, kRoundUp)
        .split(kernel.packK, pko, pki, width, kGuard)
        .reorder(pni, pki, pko, pno)
        .vectorize(pni)
        .unroll(pki);
    // A bf16 weight is widened a width x width block at a time, with dense loads along
    // k, and the transpose gathers from the f32 block. Gathering the 16-bit elements
    // themselves would not run here: Halide 14 compiles avx512_sapphirerapids for
    // LLVM's sapphirerapids CPU, whose AVX512-FP16 `vmovw` LLVM then uses to insert
    // them, and Zen 4 has no AVX512-FP16 (SIGILL).
    if (Func widened = kernel.widenedRhs; widened.defined())
      widened.compute_at(packed, pko).vectorize(widened.args()[0], width);
  } else {
    packed.vectorize(kernel.packN, width, kRoundUp);
  }
}

/// The row tiles of an lhs block that stays in a core's L2 while every column panel
/// passes over it: 256 KB of lhs rows (128 rows at K = 512). Unblocked, each 6-column
/// panel streams the whole lhs, which past the L2 (1 MB a core) comes from L3. 2T
/// GFLOP/s on a 2-core Zen 5 EPYC VM (cpu family 26, 454 GFLOP/s OpenBLAS 2048^3
/// sgemm), [8, 128, 512] x [N, 512]^T, median of KernelBench runs, unblocked / blocks
/// of 64, 128, 256 rows: N = 2048 329-337 / 389 / 382-391 / 379; N = 1536 356-373 /
/// 403 / 401-405 / 431. [1, 128, 512] is one block either way (394-428).
int64_t lhsBlockTiles(const MatmulKernel &kernel, int tileRows) {
  constexpr int64_t kLhsBlockBytes = 256 << 10;
  int64_t k = isStatic(kernel.contraction) ? kernel.contraction : 512;
  int64_t rows = kLhsBlockBytes / (k * static_cast<int64_t>(sizeof(float)));
  return std::max<int64_t>(1, rows / tileRows);
}

/// For x . W^T: dot products along k, where both operands are contiguous, so the weight
/// is streamed as it is instead of transposed into panels. Each lane accumulates every
/// width-th product (rfactor) and a horizontal sum per output ends it. Two orders of
/// the k loop over one output tile of 6 columns:
///  - register tile, for 4 rows or more: a 6-column x 4-row tile of accumulators (24 +
///    4 lhs vectors + 1 rhs vector = 29 zmm) updated inside the k loop. One register
///    tile per output tile: wider output tiles measured 10-15% slower (1T, 48 x 4: 84 vs
///    100 GFLOP/s at M = 512).
///  - matrix-vector, for fewer rows: a tile of 1 row, in one of two orders (the rows
///    after the first reuse the 6 weight rows from L1 either way). Tuned for Zen 4
///    (CpuTuning.h), each column's whole dot product in turn, one weight row after the
///    next, so that the weight is read in one ascending stream as it lies; otherwise the
///    6 columns' dot products side by side, each k step one FMA into each of 6
///    accumulators. Side by side reads 6 streams 2 KB apart at K = 512, two in each 4 KB
///    page, and on Zen 4 the hardware prefetchers did not keep up with them: KernelBench
///    gemv_b1, weight from DRAM, 2T, 2-core Zen 4 EPYC VM (cpu family 25 model 17;
///    bench/stream_read 28-30 GB/s), GB/s, median of six alternated runs, side by side /
///    in turn: [1536, 512] 22.4-23.2 / 29.1-31.4, [2048, 512] 23.4-24.7 / 31.4-31.8,
///    [512, 512] 22.6-22.9 / 29.6-30.1, [8000, 512] 22.8-24.1 / 29.9-31.8, [512, 2048]
///    29.5-30.0 / 31.4-31.5; two columns side by side, 18-22. transformer_base's
///    decode_step at batch 1 (bench/generate_bench, median of 512 steps, five alternated
///    runs) went from 4.16-4.52 to 2.65-3.53 ms, the same logits bit for bit; bf16
///    weights (the same schedule) from 13-17 to 27-34 GB/s. On a 2-core Zen 5 EPYC VM
///    (cpu family 26; streaming read 42 GB/s) it went the other way, in turn / side by
///    side: [1536, 512] 34-38 / 42, [2048, 512] 30-35 / 44-48, [8000, 512] 31-37 / 38-50,
///    [512, 2048] 42-44 / 45-48, decode_step 2.85-3.10 / 2.32-2.49 ms (703b28d), and side
///    by side streamed at the streaming read's rate on a Cascade Lake VM
///    (docs/benchmarks.md). Not the one chain of dependent FMAs that in turn runs, as
///    703b28d supposed: with the weight cached, 1T on the Zen 4 VM, in turn read [1536,
///    512] at 77-78 GB/s and [512, 2048] at 63-73, over twice a core's share of DRAM. Why
///    Zen 5 prefers 6 streams is not known.
/// A dynamic row count (a decode step's batch, an encode's few rows) gets both,
/// specialized on the count.
void scheduleDotProduct(const MatmulKernel &kernel, int width, Stage out,
                        CodegenRequests &codegen) {
  Func product = kernel.product, packed = kernel.packedRhs;
  int rowDim = matmulRowDimension(kernel);
  Var n = kernel.vars[0], row = kernel.vars[rowDim];
  int cols = width >= 16 ? 6 : 3, regRows = width >= 16 ? 4 : 3;
  packed.compute_inline();

  Var lane("lane");
  RVar ko("ko"), ki("ki");
  Func partial =
      product.update().split(kernel.k.x, ko, ki, width, kGuard).rfactor(ki, lane);
  product.update().atomic().vectorize(ki);
  std::vector<Var> storage = {lane, n, row};
  std::vector<VarOrRVar> tileLoops = {lane, n, row, ko}, vectorLoops = {lane, ko, n, row};
  for (const VarOrRVar &d : otherDims(kernel, rowDim)) {
    storage.push_back(d.var);
    tileLoops.push_back(d);
    vectorLoops.push_back(d);
  }
  // The register tile reads its panel's cols weight rows side by side; with K = 512
  // each is 2 KB, too short a stream for the hardware prefetchers to run ahead of, so
  // every panel waited for DRAM (the weight is read once, from DRAM: a decode step's,
  // a short encode's). Each k step also prefetches the same k of the next panel's rows
  // (a weight's rows are contiguous: cols x K elements on), so the next panel is in L1
  // when its turn comes. Only for a 2-D weight, and while both panels fit in L1 with
  // room to spare (48 KB on Zen 5; 2 x 12 KB at K = 512 in f32): at K = 2048 a panel is
  // 48 KB, and prefetching the next evicted the one in use. KernelBench, weight from
  // DRAM, 2T, 2-core Zen 5 VM, ms, without / with, two runs: gemv_b8_512_to_2048
  // 0.141-0.173 / 0.082-0.107, encode_short_1x16x512_to_2048 0.183-0.190 /
  // 0.125-0.147; at K = 2048 gemv_b8_2048_to_512 0.123-0.139 / 0.116-0.125 but
  // encode_short_1x64x2048_to_512 0.53-0.58 / 0.63.
  // Those figures are Halide's prefetchnta (KernelBench is JIT-compiled); a model's
  // kernels get prefetcht0 (EmitObject.cpp), since prefetchnta made the form 2x slower
  // than no prefetch on a 2-core Cascade Lake VM (Xeon, family 6 model 85):
  // transformer_base encode, kiln-run --repeat 15, median ms, nta / t0 / none, two
  // rounds: B=1 S=16 10.9-11.0 / 5.5-5.7 / 6.0-6.1, B=1 S=64 15.0-15.2 / 8.0-8.1 /
  // 7.9-8.0, B=8 S=8 64.1-65.6 / 32.7-32.9 / 31.5-31.8 (greedy b8, model bench: 21.1
  // -> 12.2 ms a position with t0). On Zen 4, t0 was level with no prefetch, and the
  // prefetch fills L2 instead (below).
  // Where the prefetch fills L2 instead (Zen 4, below), panels of up to 64 KB take it:
  // the feed-forward's second linear (K = 2048, 48 KB panels) prefetches too, one panel
  // ahead. transformer_base greedy b8 on a 2-core Zen 4 EPYC VM (cpu family 25 model
  // 17), bench/generate_bench --profile, mean us a call of the feed-forward group (8
  // MB), three alternated runs: no prefetch at K = 2048 292-299; one panel ahead
  // 256-259; two 260-268; four 268-278.
  const bool zen4 = coreTuning() == CoreTuning::Zen4;
  constexpr int64_t kL1PanelBytes = 16 << 10, kL2PanelBytes = 64 << 10;
  int64_t panelBytes = cols * kernel.contraction * kernel.rhs.type().bytes();
  // The next panel lies cols x K elements on: a whole number of k steps when the
  // vectors divide K.
  bool prefetchNextPanel = kernel.rhs.dimensions() == 2 && isStatic(kernel.contraction) &&
                           kernel.contraction % width == 0 &&
                           panelBytes <= (zen4 ? kL2PanelBytes : kL1PanelBytes);
  // How many panels ahead the register tile prefetches. On Zen 4 two of L1's size:
  // transformer_base greedy b8 (generate_bench, median step of 256, four alternated
  // runs) 6.89-7.31 ms against 7.40-7.80 at one panel (7.43-7.53 at four, one run 9.9),
  // encode B=1 S=16 0.942 and S=64 0.987 of one panel's time (compare_builds, 150 and
  // 60 rounds); one of the larger panels (above). Neither Zen 5 nor Intel was measured
  // at two: they keep one.
  const int prefetchPanels = zen4 && panelBytes <= kL1PanelBytes ? 2 : 1;
  // On Zen 4 the prefetch fills L2, not L1 (prefetcht1; PrefetchLevel): with
  // prefetcht0 the register tiles were no faster than without any prefetch.
  // transformer_base greedy b8 on a 2-core Zen 4 EPYC VM (cpu family 25 model 17;
  // bench/stream_read 34 GB/s), bench/generate_bench --profile, median step of 192 and
  // the fastest call of the biggest linears, us, in six alternated runs, prefetcht0 /
  // prefetcht1: step 6.3-7.4 / 5.2-6.0 ms; q/k/v linear [1536, 512] 127-135 / 81-90
  // (23-25 / 35-39 GB/s); feed-forward group (8 MB) 340-360 / 270-298; logits [8000,
  // 512] 644-678 / 431-501. In two runs more, no prefetch at all: step 7.0-7.1 ms, the
  // linears level with prefetcht0's. prefetcht2 was level with prefetcht1. Two panels
  // ahead stayed best into L2 (4 panels: step 6.3 ms, 8: 6.6). A kernel whose panel
  // schedule prefetches into L1 as well keeps prefetcht0 for all of them
  // (CodegenRequests). transformer_base's encoder multiplies weights in panels, whose
  // prefetches are the panel schedule's: all of them into L2 measured 0.978 of an
  // encode B=1 S=16 and 1.020 of B=1 S=128 (16 padded; compare_builds, 100 rounds), so
  // they keep L1. Intel and Zen 5 keep prefetcht0 (not measured into L2).
  auto registerTile = [&](Stage update) {
    update.reorder(tileLoops).vectorize(lane).unroll(n).unroll(row);
    if (!prefetchNextPanel)
      return;
    update.prefetch(kernel.rhs, ko, ko,
                    static_cast<int>(prefetchPanels * cols * kernel.contraction / width),
                    PrefetchBoundStrategy::NonFaulting);
    (zen4 ? codegen.prefetchIntoL2 : codegen.prefetchIntoL1) = true;
  };
  const bool columnsInTurn = zen4;
  if (!columnsInTurn)
    std::swap(vectorLoops[1], vectorLoops[2]);
  auto matrixVector = [&](Stage update) {
    update.reorder(vectorLoops).vectorize(lane);
    if (!columnsInTurn)
      update.unroll(n);
  };

  int64_t rows = kernel.extents[rowDim];
  MatmulTiles t;
  if (isStatic(rows)) {
    // Fewer static rows than the register tile: a tile of that many rows, not a full
    // one over clamped copies of the same row.
    int tileRows = static_cast<int>(std::clamp<int64_t>(rows, 1, regRows));
    int64_t blockTiles = lhsBlockTiles(kernel, tileRows);
    bool blocked = tileRows == regRows && rows > blockTiles * tileRows;
    t = tileOutput(kernel, out, rowDim, cols, tileRows, kGuard, blocked ? blockTiles : 0);
    product.bound_extent(row, tileRows);
    if (tileRows == 1)
      matrixVector(partial.update());
    else
      registerTile(partial.update());
  } else {
    // The row tiles of the register tile shift inwards (a last tile overlaps the one
    // before it), so that each has a constant 4 rows without reading past the lhs.
    Expr enoughRows = kernel.sizes[rowDim] >= regRows;
    t = tileOutput(kernel, out.specialize(enoughRows), rowDim, cols, regRows,
                   TailStrategy::ShiftInwards, lhsBlockTiles(kernel, regRows));
    tileOutput(kernel, out, rowDim, cols, 1);
    registerTile(partial.update().specialize(enoughRows));
    matrixVector(partial.update());
  }
  product.compute_at(kernel.output, t.tile).bound_extent(n, cols);
  partial.compute_at(kernel.output, t.tile).reorder_storage(storage).vectorize(lane);
}

/// Which schedule a transposed rhs gets: the dot form for few rows, the panel for the
/// rest. Measured 1T on an earlier VM, GFLOP/s, dot vs panel:
///   M = 16 (decode), N = 2048, K = 512:  101 vs  44 (the panel transposes the weight
///                                                    for 16 rows)
///   M = 512, N = 512, K = 2048:           75 vs  92 (each 6-column panel streams
///                                                    4 MB of lhs)
///   M = 512, N = 512, K = 64 (q.k^T):     60 vs  97 (4 k steps per horizontal sum)
/// A contraction of 256 to 1024 took the dot form at any row count until the panel's
/// last row tile stopped being computed whole and its transpose began walking 16
/// weight rows at a time. transformer_base encode, 2-core Zen 5 EPYC VM (cpu family 26),
/// 2T, old / new alternated 3 times, ms: b1 s128 14.6-15.0 / 13.2-13.6, b8 s128
/// 101-104 / 93 (one run 103).
///
/// Few is at most fewRowsLimit rows, counted at run time for a weight
/// (MatmulKernel::fewRowsForm): an encode's rows are batch x length, and a short
/// sentence's few rows spent more time having the panel transpose the weight than
/// multiplying by it. transformer_base encode on the same VM, 2T, median ms of 21
/// runs, two rounds alternated, the panel at every row count against the dot form up
/// to 64 rows:
///   B x S   1x8      1x16     1x32     1x48     1x64       1x80       8x8
///   panel   4.5-9.4  5.1-5.5  6.5-7.2  7.2-7.4  10.9-11.1  10.5-10.8  16.6-16.8
///   dot     3.1-3.3  4.1-4.2  5.7      7.3-7.4  9.2        (panel)    12.0-13.2
/// and past 64 rows the dot form lost (a build with it at every row count: 1x96
/// 13.2-13.4 ms against the panel's 11.8, 1x128 16.1-16.3 against 14.4-14.5). Static
/// row counts take the same limit; 49 to 64 of them were not measured apart.
///
/// On a 2-core Intel Cascade Lake VM (Xeon, family 6 model 85, Halide target
/// avx512_skylake), with the model kernels' prefetcht0 (EmitObject.cpp), the two forms
/// are level at 32 rows and the panel wins past them: transformer_base encode, kiln-run
/// --repeat 15, median ms, limit 64 / 16 alternated twice, every position valid:
/// 1x24 11.0-11.1 / 11.5-11.9, 1x32 13.8-13.9 / 13.7-13.8, 1x48 19.4-19.7 / 15.7-15.8,
/// 1x64 24.5-25.1 / 21.8. Zen 4 and Zen 5, where the figures above come from, are the
/// machines of this kind for which Halide's host target has AVX512_SapphireRapids, so
/// that feature is what tells them apart here; other targets, measured or not, take the
/// Intel limit.
int64_t fewRowsLimit(const Target &target) {
  return target.has_feature(Target::AVX512_SapphireRapids) ? 64 : 32;
}

bool useDotProduct(const MatmulKernel &kernel, const Target &target) {
  if (!kernel.transposeRhs || kernel.panelWidth)
    return false;
  int rowDim = matmulRowDimension(kernel);
  int64_t rows = kernel.extents[rowDim];
  bool fewRows = rowDim == 2 || (isStatic(rows) && rows <= fewRowsLimit(target));
  return fewRows;
}

} // namespace

void cpu::schedule(const MatmulKernel &kernel, const Target &target,
                   CodegenRequests &codegen) {
  const int width = target.natural_vector_size(Float(32));
  if (kernel.emptyProduct.defined()) {
    // An empty contraction writes zeros, an empty output nothing; every schedule below
    // is for a non-empty product.
    Func out = kernel.output;
    out.specialize(kernel.emptyProduct);
  }
  if (kernel.fewRows.defined()) {
    // Each form's Funcs are computed at loops of the output that both forms' tilings
    // have (the row tiles "ro", the column panels "no"): Halide places a Func computed
    // at the output in every specialization, and skips it where nothing reads it.
    MatmulKernel few = kernel;
    few.product = kernel.fewRowsForm.product;
    few.lhsRows = kernel.fewRowsForm.lhsRows;
    few.packedRhs = kernel.fewRowsForm.packedRhs;
    few.widenedRhs = kernel.fewRowsForm.widenedRhs;
    Func out = kernel.output;
    scheduleDotProduct(few, width, out.specialize(kernel.fewRows), codegen);
    schedulePanelProduct(kernel, width, out, codegen);
    return;
  }
  if (useDotProduct(kernel, target))
    scheduleDotProduct(kernel, width, kernel.output, codegen);
  else
    schedulePanelProduct(kernel, width, kernel.output, codegen);
}

int64_t cpu::chooseFewRowsLimit(const Target &target, int64_t columns) {
  // Both forms must tile the columns into at least 4 panels, so that their loops
  // match (see cpu::schedule above): 64 columns a panel with AVX-512, 16 with AVX2.
  const int width = target.natural_vector_size(Float(32));
  if (!isStatic(columns) || columns < 4 * panelColumns(width))
    return 0;
  return fewRowsLimit(target);
}

/// Staging costs a copy of the lhs for every column panel, 6 rows of K loads and
/// stores before each register tile's k loop. A standalone C loop of the register tile
/// (its panel in L2) ran at 116 GFLOP/s on one core of a 2-core Zen 4 EPYC VM (cpu
/// family 25 model 17; 114-116 is that core's FMA peak), 109 with 114 lhs rows staged
/// from L2 and 105 with 1020 rows from L3. With the clamp peeled off, the rows read in
/// place were faster on that VM: transformer_base encode, bench/compare_builds, median
/// of the per-call ratios to the staged build (the outputs bit for bit the same): B=1
/// S=128 with 16 padded 0.949 (80 rounds; q/k/v linear 0.952, feed-forward group
/// 0.942), 48 padded 0.925, B=1 S=64 0.923, B=1 S=16 0.915 (150 rounds), B=8 S=128
/// 0.977 (12 rounds). Tuned for Zen 4 only: the staged copy was measured against the
/// clamped reads on Intel Cascade Lake (stageRegisterTileRows), the rows in place
/// against neither Intel nor Zen 5.
bool cpu::chooseLhsRowsInPlace(const Target &) {
  return coreTuning() == CoreTuning::Zen4;
}

int64_t cpu::chooseWeightPanelWidth(const Target &target) {
  // The panel schedule's column tile (schedulePanelProduct), so that one tile's columns
  // are one panel.
  return panelColumns(target.natural_vector_size(Float(32)));
}

/// Per sequence, the panel schedule's 6-row register tiles leave a partial tile (S = 128
/// is 21 tiles and 2 rows), which computes 6 rows for the 2 and reads them through the
/// row clamp; over B*S rows there is one per call. KernelBench, 2T, 2-core Zen 4 EPYC VM
/// (cpu family 25 model 17), linears over 64-column panels, GFLOP/s, [8, 128, K] /
/// [1, 1024, K] in one run: 512 -> 1536 210.3 / 218.9, 512 -> 512 216.4 / 222.2, 512 ->
/// 2048 214.8 / 219.1, 2048 -> 512 218.4 / 224.7. transformer_base encode on that VM,
/// bench/compare_builds, median of the per-call ratios to the build without: B=8 S=128
/// 0.978 (16 rounds; q/k/v linear 0.985, output projection group 0.972, feed-forward
/// group 0.979), B=8 S=16 0.912 (60 rounds: 22 register tiles instead of 8 x 3, a
/// partial one in each), B=1 S=128 with 16 padded 1.002 and B=1 S=16 1.007 (one
/// sequence either way). The outputs differ in the last bits (at most 4e-6 after six
/// layers at B=2 S=126), though each sum runs along k in the same order: LLVM contracts
/// more of the layer norm's multiply-adds into FMAs in the new loop nest (6 against 4
/// in the output projection group's). Not measured on Intel or Zen 5, whose tiles are
/// the same.
bool cpu::chooseCollapsedRows(const Halide::Target &) { return true; }
