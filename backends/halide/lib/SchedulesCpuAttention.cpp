//===- SchedulesCpuAttention.cpp - CPU schedule of the fused attention ----===//
//
// Parallel over (query tile, batch...) tasks; per task, the state of one query tile
// stays in L1/L2 while the loop over key tiles computes, per key tile, q.k^T (a
// register-tiled product), the tile's max, the weights (one exp each), their sum, and
// P.v (a register-tiled product, vectors along the value row) block by block right
// where the state's update consumes it.
//
// Measured on the project machine (2 cores of a Zen 5 EPYC, AVX-512, 117 GFLOP/s fp32
// FMA peak per core) by bench/attention_bench.cpp: JIT, [1, 8, S, 64], causal, medians.
// GFLOP/s count the useful causal work, 2 S (S + 1) / 2 (d + dv) per head:
//
//                 1T                  2T                 unfused kernels, 2T
//   S = 512    3.59 ms  75 GFLOP/s   1.86 ms  144          6.0-6.3 ms (3.3x slower)
//   S = 1024   13.5     79           6.9      156          19.5-19.9  (2.9x)
//   S = 2048   51.8     83           25.9     166          74.7-79.6  (2.9x)
//   (no mask, not causal, S = 1024, 1T: 24.3 ms, 88 GFLOP/s, 75% of the FMA peak)
//
// perf on the AOT kernel (1T, S = 1024, causal): the two register-tiled products take
// ~75% of the cycles and run at ~113 GFLOP/s while they do (97% of the peak); the exp
// of the weights ~10%; the rest is the max and sum passes, the state's update and the
// causal waste (whole tiles on the diagonal: 6% more products than the useful work at
// S = 1024 with 64 x 64 tiles, 24% at S = 512). bench/attention_bench.cpp compares the
// kernel with the unfused kernels and PyTorch.
//
//===----------------------------------------------------------------------===//

#include "CpuTuning.h"
#include "SchedulesCpu.h"
#include "SchedulesCpuSupport.h"
#include "TaskPrefetch.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::cpu;

namespace {

int64_t roundUp(int64_t x, int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

/// The largest power of two <= x (x >= 1).
int floorPowerOfTwo(int64_t x) {
  int p = 1;
  while (2 * p <= x)
    p *= 2;
  return p;
}

} // namespace

/// Register tiles of 16 accumulators: 4 query vectors x 4 keys for q.k^T (+ 4 query
/// vectors and 1 broadcast key value loaded per step of d), 4 value vectors x 4 rows
/// for P.v. On AVX-512 (32 zmm) bigger tiles were no faster: 1T, S = 1024, no mask,
/// ms: 64-row query tiles with 4 x 4 tiles 24.3; 48 rows, 3 x 8 and 4 x 6 tiles 25.4;
/// 32 rows, 2 x 12 and 4 x 4: 26.2; 96 rows, 6 x 4 / 4 x 6: 26.0; 4 x 8 for P.v: 25.4.
/// Key tiles of 128 were 1% faster at S = 1024 without causality but visit up to 64
/// more masked keys per diagonal tile; 64 it is (S = 512 causal, 1T: 64 x 64 tiles
/// 3.62 ms, 64 x 32 3.76, 32 x 64 3.73, 32 x 32 3.53: within the noise). AVX2 (16
/// ymm) gets 8 accumulators (not tuned).
/// The last key tile visits only the keys there are (partialKeyTiles): a sentence of
/// 80 tokens had cost what one of 128 does. KernelBench attention_encoder_1x8xSx64
/// (q, k, v head splits, a padding mask), 2T, 2-core Zen 4 EPYC VM (cpu family 25),
/// ms, whole / partial last tile, two alternated runs: S = 80 0.204-0.207 / 0.173-0.174,
/// 96 0.206-0.207 / 0.187-0.188, 112 (the model benchmark's trimmed sentence)
/// 0.209-0.240 / 0.201, 128 0.210-0.213 / 0.210-0.217. In transformer_base's encode
/// (bench/compare_builds, the attention kernel's median ratio to whole tiles) B=1 S=16
/// 0.78, S=128 with 48 padded 0.86, with 16 padded 0.97. The query tiles are still
/// computed whole.
AttentionTiles cpu::chooseAttentionTiles(const Target &target, int64_t queries,
                                         int64_t keys, int64_t valueDim) {
  AttentionTiles tiles;
  const int width = target.natural_vector_size(Float(32));
  const int accumulators = width >= 16 ? 16 : 8;
  tiles.width = width;
  if (isStatic(queries) && queries <= 4) {
    // A decode step (one query) or a few queries: one tile of exactly those rows.
    tiles.dotScores = true;
    tiles.queryTile = static_cast<int>(std::max<int64_t>(queries, 1));
    tiles.valueRows = tiles.queryTile;
    tiles.scoreKeys = 8;
    tiles.keyTile = 64;
    return tiles;
  }
  tiles.queryTile = 4 * width;
  tiles.partialKeyTiles = true;
  // Fewer static queries: one vector of rows, or two, not four.
  if (isStatic(queries))
    tiles.queryTile =
        static_cast<int>(std::min<int64_t>(tiles.queryTile, roundUp(queries, width)));
  int queryVectors = tiles.queryTile / width;
  tiles.scoreKeys = floorPowerOfTwo(std::max(1, accumulators / queryVectors));
  tiles.keyTile = 64;
  if (isStatic(keys))
    tiles.keyTile = static_cast<int>(
        std::min<int64_t>(tiles.keyTile, roundUp(std::max<int64_t>(keys, 1), width)));
  tiles.keyTile = static_cast<int>(roundUp(tiles.keyTile, tiles.scoreKeys));
  int64_t valueVectors = (isStatic(valueDim) ? roundUp(valueDim, width) : 64) / width;
  tiles.valueRows = std::min(floorPowerOfTwo(std::max<int64_t>(
                                 1, accumulators / std::max<int64_t>(valueVectors, 1))),
                             tiles.queryTile);
  return tiles;
}

namespace {

/// q.k^T with vectors across queries: a 4-vector x 4-key register tile is updated
/// inside the loop over d (4 loads of the transposed query tile and 4 broadcast key
/// values per 16 FMAs, all from L1/L2). The row statistics and the weights are
/// vectors across queries too: no horizontal steps anywhere.
void scheduleScoresAcrossQueries(const AttentionKernel &kernel, const Func &out, Var task,
                                 RVar keyTile) {
  const AttentionTiles &tiles = kernel.tiles;
  const int width = tiles.width;
  Func state = kernel.state, queries = kernel.queries, scores = kernel.scores,
       weights = kernel.weights;
  // The query tile is a transpose (gathers of `width` query rows): all of d for one
  // vector of rows, then the next. q is usually a head split of a packed projection,
  // rows 6 KB apart (3 x 512 floats), whose lines fall in few L1 sets: d outermost,
  // each d's gathers touched all 64 rows' lines, which evicted each other before the
  // next d read them again. KernelBench attention_encoder_* (q, k, v head splits of a
  // [B, 128, 1536] buffer), 2-core Zen 5 VM, 2T, ms, d outermost / innermost, three
  // runs: B = 8 1.02-1.07 / 0.86-0.90, B = 1 0.12-0.136 / 0.104-0.114; on dense q the
  // same 0.79-0.81 either way.
  Var queryVector("qv"), queryVectors("qvs");
  queries.compute_at(out, task)
      .split(kernel.ii, queryVectors, queryVector, width)
      .reorder(queryVector, kernel.c, queryVectors)
      .vectorize(queryVector);
  scores.compute_at(state, keyTile).vectorize(kernel.ii, width);
  Var iv("iv"), io("io"), ji("ji"), jo("jo");
  scores.update()
      .split(kernel.ii, io, iv, width)
      .split(kernel.jj, jo, ji, tiles.scoreKeys)
      .reorder(iv, io, ji, kernel.contraction.x, jo)
      .vectorize(iv)
      .unroll(io)
      .unroll(ji);
  for (Func stats : {kernel.tileMax, kernel.tileSum}) {
    stats.compute_at(state, keyTile).vectorize(kernel.ii, width);
    stats.update().vectorize(kernel.ii, width);
  }
  weights.compute_at(state, keyTile).vectorize(kernel.ii, width);
}

/// Reduces `stats` (one update over `r`, per query row) with `width` lanes of partial
/// results along the keys and one horizontal step per row.
void vectorizeOverKeys(Func stats, RVar r, int width, const Func &state, RVar keyTile) {
  Var lane("lane");
  RVar outer("ko"), inner("ki");
  Func partial = stats.update().split(r, outer, inner, width).rfactor(inner, lane);
  stats.compute_at(state, keyTile);
  stats.update().atomic().vectorize(inner);
  partial.compute_at(state, keyTile).vectorize(lane);
  partial.update().vectorize(lane);
}

/// For a few queries (a decode step): q.k^T as dot products along d, `width` lanes of
/// partial sums per key (rfactor) and one horizontal sum per key, scoreKeys keys in
/// registers at a time, as the matmul's dot-product schedule does for x . W^T; the
/// query rows are stored with d contiguous. Everything else runs along the keys.
/// Measured, [B, 8, 1, 64] against a cache of Tk keys, 2T, ms, this schedule vs the
/// one across queries (16 lanes, 15 of them copies of the query), and the unfused
/// kernels (matmul, softmax, matmul; no scale or mask kernel counted):
///   B = 1, Tk = 2048:  0.15 vs 0.55-0.78    unfused 0.22
///   B = 8, Tk = 512:   0.40 vs 1.5-2.8      unfused 0.47
///   B = 8, Tk = 2048:  3.0  vs 5.4-10.8     unfused 3.7  (K and V streamed from
///                                                         memory: 67 MB)
/// The rfactor's partial sums need their lanes innermost in storage (reorder_storage
/// below): inheriting the scores' key-major order, they were 3x slower.
/// In a decoding step the keys and values are strided views of [B, H, capacity, d]
/// caches (kv_append's prefix; LowerState.cpp): only their rows and positions have
/// pinned strides, the head and batch strides are the caller's, and nothing here
/// depends on those. Measured, [B, 8, 1, 64], 1T, CPU ms, the kernel for strided k/v on
/// the first Tk positions of a cache vs the dense kernel on dense k/v:
///   B = 1, Tk = 2048 of 4096:  0.136 vs 0.136
///   B = 8, Tk = 512 of 1024:   0.29  vs 0.25   (the strided kernel on the dense k/v:
///   B = 8, Tk = 2048 of 4096:  2.0   vs 1.95    0.245 and 1.9: what differs is where
///                                               the rows lie in memory, not the code)
void scheduleDotScores(const AttentionKernel &kernel, const Func &out, Var task,
                       RVar keyTile) {
  const AttentionTiles &tiles = kernel.tiles;
  const int width = tiles.width;
  Func state = kernel.state, queries = kernel.queries, scores = kernel.scores,
       weights = kernel.weights;
  queries.compute_at(out, task)
      .reorder_storage(kernel.c, kernel.ii)
      .vectorize(kernel.c, width, kGuard);

  Var lane("lane"), jo("jo"), ji("ji");
  RVar dOuter("do"), dInner("di");
  Func partial = scores.update()
                     .split(kernel.contraction.x, dOuter, dInner, width, kGuard)
                     .rfactor(dInner, lane);
  scores.compute_at(state, keyTile).reorder_storage(kernel.jj, kernel.ii);
  scores.update().atomic().vectorize(dInner);
  std::vector<VarOrRVar> loops = {lane, ji, kernel.ii, dOuter, jo};
  partial.compute_at(state, keyTile)
      .reorder_storage(lane, kernel.jj, kernel.ii)
      .vectorize(lane)
      .unroll(kernel.jj);
  partial.update()
      .split(kernel.jj, jo, ji, tiles.scoreKeys)
      .reorder(loops)
      .vectorize(lane)
      .unroll(ji)
      .unroll(kernel.ii);
  vectorizeOverKeys(kernel.tileMax, kernel.keys.x, width, state, keyTile);
  vectorizeOverKeys(kernel.tileSum, kernel.keys.x, width, state, keyTile);
  weights.compute_at(state, keyTile)
      .reorder_storage(kernel.jj, kernel.ii)
      .vectorize(kernel.jj, width);
}

/// Whether the tasks of a decode step's attention run in runs, each task prefetching
/// the next one's keys and values (runsOfTasks): the few-queries form, whose tasks
/// each read a head's whole cache and compute little, for rows of a static length.
/// Tuned for Zen 4, where it was measured.
bool prefetchesNextTask(const AttentionKernel &kernel) {
  return kernel.tiles.dotScores && isStatic(kernel.keyDim) && isStatic(kernel.valueDim) &&
         coreTuning() == CoreTuning::Zen4;
}

/// Splits the `task` loop of `out` into parallel runs of consecutive tasks, each task
/// prefetching into L2 the key and value rows of the next task of its run
/// (TaskPrefetch.h); returns the loop over a run's tasks. Taking turns over single tasks,
/// a core's next task is not the next one; as runs, it is. Up to 64 tasks (batch 8 of 8
/// heads) make 8 runs (runs of one below 16 tasks); past that the runs stay 8 tasks long
/// and grow in number, so that a batch of 32 on a machine of 16 or 32 cores gets 32 runs,
/// not 8 of 32 tasks with most cores idle. transformer_base greedy on a 2-core Zen 4 EPYC
/// VM (cpu family 25 model 17), bench/generate_bench --profile, mean us a call, three
/// alternated runs, without / with the runs and their prefetch: batch 8 (64 tasks, 2 MB
/// of cross-attention keys and values) cross-attention 91-99 / 77-82, self-attention
/// 65-70 / 46-48, step 4.72-4.76 / 4.50-4.58 ms; batch 4 cross 44-47 / 39-43, self 31-35
/// / 25-27, step 3.68-3.76 / 3.63-3.65; batch 1 (8 tasks: runs of one, nothing
/// prefetched) level. Runs of twice the length (4 runs) were level at batch 8. Without
/// runs, at batch 8, prefetching task t + 1 took the cross-attention to 76-110 us (90-133
/// without, in the same runs), and t + 2, the next task of the same core when two take
/// turns (which would tie the schedule to the thread count), to 74-99. prefetcht0 (L1)
/// was no faster than L2. Batch 16 (128 tasks) on the same 2 cores, three alternated
/// runs, 8 runs of 16 / 16 runs of 8: cross-attention 182-205 / 169-195, self-attention
/// 105-121 / 100-111, step 8.2-9.7 / 8.2-9.2 ms.
Var runsOfTasks(const AttentionKernel &kernel, Stage out, Var task,
                CodegenRequests &codegen) {
  constexpr int kRuns = 8, kLongestRun = 8;
  OutputImageParam output = kernel.output.output_buffer();
  Expr tasks =
      (output.dim(1).extent() + kernel.tiles.queryTile - 1) / kernel.tiles.queryTile;
  for (int d = 2; d < output.dimensions(); ++d)
    tasks *= output.dim(d).extent();
  Expr runLength = Halide::clamp(tasks / kRuns, 1, kLongestRun);
  Var run("task_run"), inRun("in_run");
  out.split(task, run, inRun, runLength, TailStrategy::GuardWithIf).parallel(run);
  const int64_t keys = isStatic(kernel.keyCount) ? kernel.keyCount : 0;
  TaskPrefetchLoops loops;
  loops.taskLoop = inRun.name();
  loops.reads = {{kernel.key.name(), kernel.keyDim, keys},
                 {kernel.value.name(), kernel.valueDim, keys}};
  codegen.passes.push_back(makeNextTaskPrefetchPass(loops));
  codegen.prefetchIntoL2 = true;
  return inRun;
}

/// Schedules one form of the kernel: `out` is the output's stage (or the
/// specialization) that reads it.
void scheduleForm(const AttentionKernel &kernel, Stage out, CodegenRequests &codegen) {
  const AttentionTiles &tiles = kernel.tiles;
  const int width = tiles.width;
  Func state = kernel.state;

  // Tasks: one query tile of one batch index (B x H x ceil(Tq / queryTile) of them:
  // 64 at B = 1, H = 8, S = 512), big enough (~1-20 MFLOP) to hide the thread pool.
  bool staticValues = isStatic(kernel.valueDim);
  TailStrategy valueTail =
      staticValues && kernel.valueDim % width == 0 ? TailStrategy::Auto : kGuard;
  Var qo("qo"), qi("qi");
  out.split(kernel.i, qo, qi, tiles.queryTile, kGuard)
      .vectorize(kernel.c, width, valueTail);
  std::vector<VarOrRVar> order = {kernel.c, qi, qo};
  std::vector<Var> taskVars = {qo};
  for (const Var &b : kernel.batch) {
    order.push_back(b);
    taskVars.push_back(b);
  }
  out.reorder(order);
  Var task = fuseLoops(out, taskVars, "tasks");
  if (prefetchesNextTask(kernel))
    task = runsOfTasks(kernel, out, task, codegen);
  else
    out.parallel(task);

  // The state lives for one task. Its update: the channels vectorised
  // (allow_race_conditions: every channel reads the running max in the last
  // meaningful channel, which is exact, see LowerAttention.cpp), queries in blocks of
  // valueRows, each block's P.v computed right before the block's update reads it
  // (from registers, not a 16 KB buffer).
  state.compute_at(kernel.output, task).vectorize(kernel.c, width, kRoundUp);
  RVar channel = kernel.step.x, keyTile = kernel.step.y;
  RVar co("co"), cv("cv");
  Var rowBlock("row_block"), row("row");
  Stage update = state.update();
  update.allow_race_conditions()
      .split(kernel.ii, rowBlock, row, tiles.valueRows)
      .split(channel, co, cv, width,
             isStatic(kernel.channels) ? TailStrategy::Auto : kGuard)
      .reorder(cv, co, row, rowBlock, keyTile)
      .vectorize(cv)
      .unroll(row);
  if (isStatic(kernel.channels))
    update.unroll(co);

  if (tiles.dotScores)
    scheduleDotScores(kernel, kernel.output, task, keyTile);
  else
    scheduleScoresAcrossQueries(kernel, kernel.output, task, keyTile);

  // P.v of one block of rows: vectors along the value row x valueRows rows, updated
  // inside the loop over the tile's keys (a broadcast weight per row and the value
  // row's vectors per key).
  Func weighted = kernel.weighted;
  Var wo("wo"), wv("wv");
  weighted.compute_at(state, rowBlock)
      .vectorize(kernel.c, width, valueTail)
      .unroll(kernel.ii);
  Stage product = weighted.update();
  product.split(kernel.c, wo, wv, width, valueTail)
      .reorder(wv, wo, kernel.ii, kernel.keys.x)
      .vectorize(wv)
      .unroll(kernel.ii);
  if (staticValues)
    product.unroll(wo);

  // Each block of valueRows queries reads the key tile's value rows again. As a head
  // split of a packed projection, 64 rows 4-6 KB apart do not stay in L1 (they share
  // few sets), so the tile is copied to a dense 16 KB block once per key tile. Same
  // runs as the query tile's, strided q, k, v, ms, without / with the copy: B = 8
  // 0.86-0.90 / 0.82-0.85, B = 1 0.104-0.114 / 0.102-0.104; dense operands (rarer:
  // the fusion pass makes attention read projections in place) pay for the copy, 0.80
  // / 0.82-0.84. A decode step's few queries read each value row once.
  if (!tiles.dotScores) {
    ImageParam value = kernel.value;
    Func valueTile = value.in(weighted);
    std::vector<Var> args = valueTile.args();
    valueTile.compute_at(state, keyTile)
        .vectorize(args[0], width, kGuard)
        .bound_storage(args[1], tiles.keyTile);
    for (size_t d = 2; d < args.size(); ++d)
      valueTile.bound_storage(args[d], 1);
    if (staticValues)
      valueTile.bound_storage(args[0], static_cast<int>(kernel.valueDim));
  }
}

} // namespace

void cpu::schedule(const AttentionKernel &kernel, const Target &,
                   CodegenRequests &codegen) {
  Func out = kernel.output;
  if (kernel.empty.defined())
    out.specialize(kernel.empty);
  if (kernel.fewQueriesForm)
    scheduleForm(*kernel.fewQueriesForm, out.specialize(kernel.fewQueries), codegen);
  scheduleForm(kernel, out, codegen);
}

/// A run-time query count of at most half the general tile (32 with AVX-512) takes
/// tiles of one vector of queries (16), computed across queries like the general ones:
/// the general tile computes whole 64-query tiles, so a short sentence's 16 queries
/// cost what 64 do, and a batch of 8-token sentences, one tile per sentence and head,
/// 8 times its work. transformer_base encode on a 2-core Cascade Lake VM (Xeon, family
/// 6 model 85), kiln-run --trace, median us per attention call, general tile only /
/// with this form, alternated twice: B=1 S=16 122 / 49, B=8 S=8 748-904 / 273-336,
/// B=1 S=32 109-132 / 70-87, B=1 S=112 (the general tile either way) 429-437 /
/// 432-435.
std::optional<std::pair<AttentionTiles, int64_t>>
cpu::chooseFewQueriesTiles(const Target &target, int64_t queries, int64_t keys,
                           int64_t valueDim) {
  if (isStatic(queries))
    return std::nullopt;
  const int width = target.natural_vector_size(Float(32));
  AttentionTiles general = chooseAttentionTiles(target, queries, keys, valueDim);
  AttentionTiles few = chooseAttentionTiles(target, width, keys, valueDim);
  if (few.dotScores || few.queryTile >= general.queryTile)
    return std::nullopt;
  return std::pair(few, int64_t{general.queryTile / 2});
}
