//===- SchedulesCudaAttention.cpp - The CUDA schedule of fused attention --===//
//
// Flash-style on the GPU: one block per (query tile, batch...) (batch and heads are
// the batch dimensions), which keeps its online-softmax state and the current key
// tile's keys, values, scores and weights in shared memory while it walks the key
// tiles in order (the state's update loop over key tiles is a serial loop of the
// block). Causal key tiles past a query tile's diagonal are not visited: the algorithm
// states the bound per query tile, and Halide lifts it into that loop's bounds as on
// the CPU. A fully masked row ends as masked_row_value (0), by the algorithm. None of
// this has run on a GPU yet: it compiles to PTX (CudaRowsScheduleTest.cpp checks that
// every stage became device code, and the shared-memory budget); no timings exist.
//
// A block has 32 x 8 threads; each per-tile stage maps its two dimensions onto them
// (the contiguous one on the 32), serial loops covering the rest:
//   K and V tiles (c, key)     loaded per key tile        channel x key threads
//   scores (ii, jj) over d     per key tile               key x query threads
//   tile max / sum (ii)        per key tile               a thread per query row
//   weights (ii, jj)           per key tile               key x query threads
//   P.v (c, ii) over the keys  per key tile               channel x query threads
//   state update (ii)          per key tile               a thread per query row,
//                                                         its channels in order
//   result (c, i)              once per block             channel x query threads
// The state's update runs a query row's channels in order in one thread: every
// channel reads the running max, which is the row's last channel (LowerAttention.cpp),
// so threads over channels would race with the thread that writes it. The query tile
// is read from global memory (through L1): a warp of the scores reads one query
// element at a time, a broadcast. The accumulators of scores and P.v live in shared
// memory, not in registers (a register tile per thread as in cuda_mat_mul is the next
// step, with the measurements to choose it).
//
// Shared memory per block, QT query rows, KT keys, head dim d = dv, floats: the K tile
// d (KT + 1), the V tile dv KT, scores and weights 2 QT KT, P.v QT dv, the state
// QT (dv + 2): at QT = KT = 32 and d = 64, 41 KiB of the 48 KiB a block may have
// without opting in; 16 x 16 tiles for d = 128 (35 KiB) and 8 x 8 beyond.
//
// The decode step (dotScores: 1 to 4 queries): the same block per (query tile, batch)
// with the query tile being those rows, against 64-key tiles: the K tile is loaded
// coalesced along d and each of 64 key threads takes one dot product from shared
// memory, the weights are parallel over the keys and P.v over the channels (34-36 KiB of
// shared memory at d = 64). Blocks are batch x heads, e.g. 64 at B = 8, H = 8: a split
// over the keys (flash-decoding) would fill more SMs for long caches at small
// batches, and is not done yet.
//
//===----------------------------------------------------------------------===//

#include "SchedulesCpuSupport.h"
#include "SchedulesCuda.h"

#include <algorithm>

using namespace Halide;
using namespace kiln::halide_backend;

namespace {

constexpr TailStrategy kGuard = TailStrategy::GuardWithIf;
constexpr int kThreadsX = 32, kThreadsY = 8;

/// Maps `x` and `y` of `stage` to kThreadsX x kThreadsY threads, serial loops over
/// the rest of them outside; `inner` (RVars of an update) stay serial inside a thread.
void threads2D(Stage stage, Var x, Var y, const std::vector<RVar> &inner = {}) {
  Var xo(x.name() + "o"), xi(x.name() + "i"), yo(y.name() + "o"), yi(y.name() + "i");
  stage.split(x, xo, xi, kThreadsX, kGuard).split(y, yo, yi, kThreadsY, kGuard);
  std::vector<VarOrRVar> order(inner.begin(), inner.end());
  for (Var v : {xi, yi, xo, yo})
    order.push_back(v);
  stage.reorder(order).gpu_threads(xi, yi);
}

/// Maps `x` of `stage` to kThreadsX threads (serial loops over the rest outside),
/// `inner` serial inside a thread.
void threads1D(Stage stage, Var x, const std::vector<RVar> &inner = {}) {
  Var xo(x.name() + "o"), xi(x.name() + "i");
  stage.split(x, xo, xi, kThreadsX, kGuard);
  std::vector<VarOrRVar> order(inner.begin(), inner.end());
  order.push_back(xi);
  order.push_back(xo);
  stage.reorder(order).gpu_threads(xi);
}

/// Stages the rows of `input` (keys or values: (channel, row, batch...)) that
/// `consumer` reads in one key tile in shared memory, once per key tile, loaded with
/// the threads along the channels (coalesced). With `keysInner` the tile is stored
/// key-major with rows of keyTile + 1: the scores' threads read one channel of
/// consecutive keys, which a channel-major tile would put in one bank (a stride of d
/// floats), and the odd row length spreads the loading threads' stores over the banks.
void stageTile(ImageParam input, const Func &consumer, const Func &state, RVar keyTile,
               int keyTileSize, bool keysInner) {
  Func tile = input.in(consumer);
  std::vector<Var> args = tile.args();
  tile.compute_at(state, keyTile);
  threads2D(tile, args[0], args[1]);
  if (keysInner)
    tile.reorder_storage(args[1], args[0]).bound_storage(args[1], keyTileSize + 1);
  else
    tile.bound_storage(args[1], keyTileSize);
}

} // namespace

llvm::Error cuda::schedule(const AttentionKernel &kernel, const Target &) {
  const AttentionTiles &tiles = kernel.tiles;
  Func out = kernel.output, state = kernel.state;
  Var c = kernel.c, ii = kernel.ii, jj = kernel.jj;

  // Blocks: a query tile of a batch index; threads: channels x rows of the tile.
  Var qo("qo"), qi("qi");
  out.split(kernel.i, qo, qi, tiles.queryTile, kGuard);
  std::vector<Var> blockVars = {qo};
  blockVars.insert(blockVars.end(), kernel.batch.begin(), kernel.batch.end());
  threads2D(out, c, qi);
  std::vector<VarOrRVar> order = {Var(c.name() + "i"), Var(qi.name() + "i"),
                                  Var(c.name() + "o"), Var(qi.name() + "o")};
  order.insert(order.end(), blockVars.begin(), blockVars.end());
  out.reorder(order);
  Var block = cpu::fuseLoops(out, blockVars, "tiles");
  out.gpu_blocks(block);

  state.compute_at(out, block);
  threads2D(state, c, ii);
  RVar channel = kernel.step.x, keyTile = kernel.step.y;
  state.update().reorder(channel, ii, keyTile);
  threads1D(state.update(), ii, {channel});

  // Per key tile, in the loop over key tiles that the state's update runs: the key and
  // value tiles, then the stages that read them. The query tile is not staged (each
  // warp of the scores reads one query element at a time, a broadcast from L1).
  Func scores = kernel.scores, weights = kernel.weights, weighted = kernel.weighted;
  RVar d = kernel.contraction.x, key = kernel.keys.x;
  stageTile(kernel.key, scores, state, keyTile, tiles.keyTile, /*keysInner=*/true);
  stageTile(kernel.value, weighted, state, keyTile, tiles.keyTile, /*keysInner=*/false);
  scores.compute_at(state, keyTile);
  threads2D(scores, jj, ii);
  threads2D(scores.update(), jj, ii, {d});
  for (Func stats : {kernel.tileMax, kernel.tileSum}) {
    stats.compute_at(state, keyTile);
    threads1D(stats, ii);
    threads1D(stats.update(), ii, {key});
  }
  weights.compute_at(state, keyTile);
  threads2D(weights, jj, ii);
  weighted.compute_at(state, keyTile);
  threads2D(weighted, c, ii);
  threads2D(weighted.update(), c, ii, {key});

  // Shared allocations of a constant size (whole tiles), not sized at each launch from
  // the guarded tails at the ends of the query and key ranges.
  for (Func f : {state, scores, weights, weighted, kernel.tileMax, kernel.tileSum})
    f.bound_storage(ii, tiles.queryTile);
  for (Func f : {scores, weights})
    f.bound_storage(jj, tiles.keyTile);
  if (cpu::isStatic(kernel.channels))
    state.bound_storage(c, static_cast<int>(kernel.channels));
  if (cpu::isStatic(kernel.valueDim))
    weighted.bound_storage(c, static_cast<int>(kernel.valueDim));

  // Made after the schedule, so that the empty case keeps the block and thread loops
  // (it reads nothing, so none of the stages above are computed there).
  if (kernel.empty.defined())
    out.specialize(kernel.empty);
  return llvm::Error::success();
}

/// Tiles as the file comment says: 32 x 32 for head dims up to 64, 16 x 16 up to 128,
/// 8 x 8 beyond; a decode step's queries against 64-key tiles. No vectors: `width` 1,
/// so the state is dv + 2 channels, unpadded.
llvm::Expected<AttentionTiles> cuda::chooseAttentionTiles(const Target &, int64_t queries,
                                                          int64_t, int64_t valueDim) {
  AttentionTiles tiles;
  tiles.width = 1;
  tiles.scoreKeys = 1;
  if (cpu::isStatic(queries) && queries <= 4) {
    tiles.dotScores = true;
    tiles.queryTile = static_cast<int>(std::max<int64_t>(queries, 1));
    tiles.valueRows = tiles.queryTile;
    tiles.keyTile = 64;
    return tiles;
  }
  int64_t headDim = cpu::isStatic(valueDim) ? valueDim : 64;
  tiles.queryTile = headDim <= 64 ? 32 : headDim <= 128 ? 16 : 8;
  tiles.keyTile = tiles.queryTile;
  tiles.valueRows = 1;
  return tiles;
}
