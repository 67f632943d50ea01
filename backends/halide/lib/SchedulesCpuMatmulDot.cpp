//===- SchedulesCpuMatmulDot.cpp - The CPU dot-product form of a product ---===//
//
// x . W^T over few rows (a decode step's linears, a short encode's): dot products along
// the contiguous k of both operands, the weight streamed as it lies.
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
//===----------------------------------------------------------------------===//

#include "CpuTuning.h"
#include "SchedulesCpuMatmul.h"
#include "SchedulesCpuSupport.h"

#include <algorithm>
#include <utility>

using namespace Halide;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::cpu;
using namespace kiln::halide_backend::cpu::matmul;

namespace {

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

} // namespace

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
void matmul::scheduleDotProduct(const MatmulKernel &kernel, int width, Stage out,
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
  // In turn, the weight is one ascending stream, and each k step also prefetches into
  // L2 the line 4 KB further on (a weight's rows are contiguous, so past a row's end
  // that is the next row's, or the next panel's): the hardware prefetchers alone did
  // not keep as many lines in flight as the memory serves. transformer_base decode_step
  // at batch 1 after a 64-token source on a 2-core Zen 4 EPYC VM (cpu family 25 model
  // 17), bench/compare_builds --decode-steps 32, 60 rounds, median of the per-round
  // ratios to no prefetch: 1 KB ahead 0.922, 2 KB 0.916, 4 KB 0.909, 6 KB 0.963, 8 KB
  // 0.992, a copy of the build without it 0.987 (at 4 KB the q/k/v linear 0.929, the
  // output projection groups 0.870, the feed-forward group 0.916, the logits 0.945); a
  // second run, 2 KB 0.922, 4 KB 0.914, the copy 0.989, prefetcht0 at 4 KB 0.945 where
  // prefetcht1 gave 0.912. A C++ loop reading 104 MB on 2 threads gained as much with
  // prefetcht1 4-24 KB ahead (2.86-2.98 ms a pass against 3.30, 40 alternated rounds);
  // in the model, 8 KB gained nothing. Side by side (other cores) reads 6 streams and
  // was not measured with it; the register tile prefetches its next panels (above).
  const bool prefetchAheadInTurn = columnsInTurn && kernel.rhs.dimensions() == 2 &&
                                   isStatic(kernel.contraction) &&
                                   kernel.contraction % width == 0;
  constexpr int64_t kInTurnPrefetchBytes = 4 << 10;
  auto matrixVector = [&](Stage update) {
    update.reorder(vectorLoops).vectorize(lane);
    if (!columnsInTurn)
      update.unroll(n);
    if (!prefetchAheadInTurn)
      return;
    update.prefetch(
        kernel.rhs, ko, ko,
        static_cast<int>(kInTurnPrefetchBytes / (width * kernel.rhs.type().bytes())),
        PrefetchBoundStrategy::NonFaulting);
    codegen.prefetchIntoL2 = true;
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
