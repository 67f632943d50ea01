//===- SchedulesCpuMatmulPanel.cpp - The CPU panel schedule of a product ---===//
//
// The product over a weight (or rhs) in 64-column panels, n contiguous, a 4-vector x
// 6-row register tile of accumulators updated inside the k loop and stored after it
// (or, where K runs in blocks, kept on the stack between blocks): what encodes and
// other products over many rows take. What it reads, and when, is tuned per core:
// staged or in-place lhs rows, K in blocks, output tiles two panels wide past the L2,
// and the prefetches of the next rows and panel (PanelPrefetch.h).
//
//===----------------------------------------------------------------------===//

#include "PanelPrefetch.h"
#include "SchedulesCpuMatmul.h"
#include "SchedulesCpuSupport.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::cpu;
using namespace kiln::halide_backend::cpu::matmul;

namespace {

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
bool stageRegisterTileRows(const MatmulKernel &kernel, const LoopLevel &registerTile,
                           int regRows, int64_t stagedK) {
  constexpr int64_t kStagedRowsBytes = 64 << 10;
  if (kernel.lhsRowsInPlace || !isStatic(kernel.contraction) ||
      regRows * stagedK * static_cast<int64_t>(sizeof(float)) > kStagedRowsBytes)
    return false;
  Func lhsRows = kernel.lhsRows;
  lhsRows.compute_at(registerTile).store_in(MemoryType::Stack);
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

/// Where a register tile's k loop runs, as the prefetch passes find it (full lowered
/// loop names; empty: no such loop), and the loop level at which one register tile's
/// lhs rows are staged.
struct AccumulatorLoops {
  LoopLevel registerTile;
  std::string kLoop, registerTileLoop, outputTileLoop, panelLoop, blockLoop;
  int registerTilesPerOutputTile = 1;
};

/// The name of the lowered loop of `var` in stage `stage` of `func` (`var` as split
/// from its parents, outermost first).
std::string loopName(const Func &func, int stage,
                     std::initializer_list<std::string> var) {
  std::string name = func.name() + ".s" + std::to_string(stage);
  for (const std::string &part : var)
    name += "." + part;
  return name;
}

/// Where K runs in one pass, each register tile's accumulators live in registers over
/// the whole of it, and the tile's outputs are stored (with the epilogue: bias, ReLU,
/// a residual) right after its k loop: the output is tiled in register tiles (6 rows x
/// a panel, or two panels side by side past the L2, wideOutputTiles, split into
/// `panel`s of one), and the product is computed at each panel of one. Output tiles of
/// 24 rows with their accumulators on the stack (what a K in blocks still takes,
/// tileInOutputTiles) zeroed them there (a memset, 0.55-1.4 % of an encode), loaded
/// and stored them around each k loop, and stored the whole tile at its end, where each
/// line of a fresh output waits for memory: 5-6 % of the K = 512 linears' samples at
/// B=8. transformer_base encode, 2-core Zen 4 VM (family 25 model 17),
/// bench/compare_builds, median of the per-call ratios to the stack tiles: B=8 S=128
/// 0.963 and 0.966 in 20 and 30 rounds (q/k/v linear 0.943-0.964, output projection
/// group 0.927-0.963, feed-forward group 0.971-0.984: its second linear has K in
/// blocks); B=1 S=128 (112 valid) 0.968 in 100 rounds.
MatmulTiles tileInRegisterTiles(const MatmulKernel &kernel, Stage out, int rowDim,
                                int columns, int colTile, int regRows, int width,
                                Var panel) {
  MatmulTiles t = tileOutput(kernel, out, rowDim, columns, regRows);
  Var nu("nu");
  out.split(t.ni, panel, nu, colTile, kGuard)
      .reorder(nu, t.ri, panel)
      .vectorize(nu, width)
      .unroll(nu)
      .unroll(t.ri);
  return t;
}

AccumulatorLoops accumulateInRegisterTiles(const MatmulKernel &kernel,
                                           const MatmulTiles &t, int rowDim, int colTile,
                                           int regRows, int width, Var panel,
                                           bool panelLoop) {
  Func product = kernel.product;
  Var n = kernel.vars[0], row = kernel.vars[rowDim];
  // The accumulators always have a whole register tile's rows and columns (the
  // algorithm clamps what it reads), so that their loops have constant extents and
  // unroll; the last register tile's rows past the end are computed and not stored.
  product.compute_at(kernel.output, panel)
      .store_in(MemoryType::Stack)
      .bound_extent(n, colTile)
      .bound_extent(row, regRows)
      .vectorize(n, width)
      .unroll(n)
      .unroll(row);
  RVar kk("kk"), ku("ku");
  std::vector<VarOrRVar> loops = {n, row, ku, kk};
  for (const VarOrRVar &d : otherDims(kernel, rowDim))
    loops.push_back(d);
  product.update()
      .split(kernel.k.x, kk, ku, 2, kGuard)
      .reorder(loops)
      .vectorize(n, width)
      .unroll(n)
      .unroll(row)
      .unroll(ku);
  AccumulatorLoops names;
  // One iteration of the tile loop is one register tile: the row tiles' loop, or where
  // few panels make the row tiles the parallel loop, that fused with the batch's.
  names.registerTile = LoopLevel(kernel.output, t.tile);
  names.kLoop = loopName(product, 1, {kernel.k.x.name(), kk.name()});
  if (t.tile.name() == t.ro.name())
    names.outputTileLoop = loopName(kernel.output, 0, {row.name(), t.ro.name()});
  if (panelLoop)
    names.panelLoop = loopName(kernel.output, 0, {n.name(), t.ni.name(), panel.name()});
  return names;
}

/// Where K runs in blocks (contractionBlock), the output in tiles of 24 rows, whose
/// register tiles' accumulators wait on the stack between blocks.
MatmulTiles tileInOutputTiles(const MatmulKernel &kernel, Stage out, int rowDim,
                              int columns, int rowTile, int width) {
  MatmulTiles t = tileOutput(kernel, out, rowDim, columns, rowTile);
  out.vectorize(t.ni, width);
  return t;
}

AccumulatorLoops accumulateInOutputTiles(const MatmulKernel &kernel, const MatmulTiles &t,
                                         int rowDim, int colTile, int regRows,
                                         int rowTile, int width, bool panelLoop,
                                         int64_t kBlock) {
  Func product = kernel.product;
  Var n = kernel.vars[0], row = kernel.vars[rowDim];
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
  if (panelLoop)
    product.align_bounds(n, colTile).bound_storage(n, 2 * colTile);
  else
    product.bound_extent(n, colTile);
  Var nv("nv"), nu("nu"), np("np"), rr("rr"), ru("ru");
  RVar kk("kk"), ku("ku"), ko("ko"), kb("kb");
  // An output tile's panels inside the register tile's row loop: its rows staged once
  // for both; the blocks of k outermost.
  std::vector<VarOrRVar> loops = {nv, nu, ru, ku, kk};
  if (panelLoop)
    loops.push_back(np);
  loops.push_back(rr);
  loops.push_back(ko);
  for (const VarOrRVar &d : otherDims(kernel, rowDim))
    loops.push_back(d);
  Stage update = product.update();
  if (panelLoop)
    update.split(n, np, nu, colTile, kRoundUp)
        .split(nu, nu, nv, width, TailStrategy::GuardWithIf);
  else
    update.split(n, nu, nv, width, kRoundUp);
  update.split(row, rr, ru, regRows, kRoundUp)
      .split(kernel.k.x, ko, kb, static_cast<int>(kBlock))
      .split(kb, kk, ku, 2, kGuard)
      .reorder(loops)
      .vectorize(nv)
      .unroll(nu)
      .unroll(ru)
      .unroll(ku);

  AccumulatorLoops names;
  names.registerTile = LoopLevel(product, rr);
  const std::string k = kernel.k.x.name();
  names.kLoop = loopName(product, 1, {k, kb.name(), kk.name()});
  names.registerTileLoop = loopName(product, 1, {row.name(), rr.name()});
  names.outputTileLoop = loopName(kernel.output, 0, {row.name(), t.ro.name()});
  if (panelLoop)
    names.panelLoop = loopName(product, 1, {n.name(), np.name()});
  names.blockLoop = loopName(product, 1, {k, ko.name()});
  names.registerTilesPerOutputTile = rowTile / regRows;
  return names;
}

} // namespace

void matmul::schedulePanelProduct(const MatmulKernel &kernel, int width, Stage out,
                                  CodegenRequests &codegen) {
  Func packed = kernel.packedRhs;
  const Extents &ext = kernel.extents;
  int rowDim = matmulRowDimension(kernel);

  // 4 vectors of columns x 6 rows = 24 accumulators, plus 4 rhs vectors and one
  // broadcast lhs value: 29 of AVX-512's 32 zmm registers (AVX2's 16 ymm: 2 x 6).
  // Register tiles over the 64-column rhs panel reuse each of its rows 6 times from
  // L1 and the panel from L2. Measured with four register tiles stacked in an output
  // tile (K = 512, N = 2048): 103 GFLOP/s 1T at M = 512 (88% of the FMA peak), 204 2T
  // (87%); 90 / 188 at M = 128. The DESIGN.md variant without packing is level at M =
  // 512 and ~5% slower at 128. With many rows the tiles span two panels
  // (wideOutputTiles).
  int regRows = 6, rowTile = 24;
  int colTile = panelColumns(width);
  if (isStatic(ext[0]) && ext[0] < colTile)
    colTile = static_cast<int>((ext[0] + width - 1) / width * width);
  int64_t rows = ext[rowDim];
  if (isStatic(rows) && rows < rowTile) {
    regRows = static_cast<int>(std::min<int64_t>(rows, regRows));
    rowTile = static_cast<int>((rows + regRows - 1) / regRows * regRows);
  }
  const int64_t kBlock = contractionBlock(kernel);
  Var panel("np");
  auto tile = [&](Stage s, int columns) {
    return kBlock ? tileInOutputTiles(kernel, s, rowDim, columns, rowTile, width)
                  : tileInRegisterTiles(kernel, s, rowDim, columns, colTile, regRows,
                                        width, panel);
  };
  // Where the tiles may span two panels (a specialization on the rows, unless they
  // are static), a register tile's accumulators cover one panel at a time, and an
  // output tile's stack buffer has room for two.
  Expr wide = wideOutputTiles(kernel, width);
  const bool alwaysWide = wide.defined() && is_const_one(wide);
  if (wide.defined() && !alwaysWide && !is_const_zero(wide))
    tile(out.specialize(wide), 2 * colTile);
  MatmulTiles t = tile(out, alwaysWide ? 2 * colTile : colTile);
  const bool panelLoop = wide.defined() && !is_const_zero(wide);
  const AccumulatorLoops loops =
      kBlock ? accumulateInOutputTiles(kernel, t, rowDim, colTile, regRows, rowTile,
                                       width, panelLoop, kBlock)
             : accumulateInRegisterTiles(kernel, t, rowDim, colTile, regRows, width,
                                         panel, panelLoop);

  const int64_t stagedK = kBlock ? kBlock : kernel.contraction;
  // The loop whose iterations stage one register tile's rows each.
  const std::string &stagingLoop =
      loops.registerTileLoop.empty() ? loops.outputTileLoop : loops.registerTileLoop;
  if (stageRegisterTileRows(kernel, loops.registerTile, regRows, stagedK) &&
      prefetchNextRows(stagedK, regRows) && !stagingLoop.empty()) {
    RowsPrefetchLoops rows;
    rows.kLoop = loops.kLoop;
    rows.registerTileLoop = stagingLoop;
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
      prefetch.kLoop = loops.kLoop;
      prefetch.registerTileLoop = loops.registerTileLoop;
      prefetch.panelLoop = loops.panelLoop;
      prefetch.outputTileLoop = loops.outputTileLoop;
      prefetch.weight = kernel.rhs.name();
      prefetch.registerTilesPerOutputTile = loops.registerTilesPerOutputTile;
      prefetch.panelElements = (kBlock ? kBlock : kernel.contraction) * kernel.panelWidth;
      if (kBlock) {
        prefetch.blockLoop = loops.blockLoop;
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
