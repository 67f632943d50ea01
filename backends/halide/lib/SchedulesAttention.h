//===- SchedulesAttention.h - The fused attention kernel's contract -*- C++ -*-===//
//
// What LowerAttention.cpp hands to the attention schedule: the Funcs of a flash-style
// kernel and the tiling they were written for. Unlike the other kernels, two tile
// sizes are part of the algorithm itself: the online softmax visits the keys one key
// tile at a time (the order of its rescalings), and the causal bound that skips key
// tiles is stated per query tile. So the schedule side picks the tiles first, per
// target (chooseAttentionTiles in Scheduler.h), the algorithm is written for them, and
// the schedule then orders the loops. A query count known only at run time may get the
// algorithm twice, for the general tiles and for smaller ones (fewQueriesForm), and the
// output picks one by the count, as a linear's few-rows form does.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_SCHEDULESATTENTION_H
#define KILN_BACKENDS_HALIDE_SCHEDULESATTENTION_H

#include "Schedules.h"

#include <memory>

namespace kiln::halide_backend {

/// The tiling of one attention kernel.
struct AttentionTiles {
  /// Queries per tile: a multiple of `width` (the scores are vectorised across
  /// queries), or with dotScores the static query count.
  int queryTile = 64;
  /// Keys per step of the online softmax; a multiple of `scoreKeys`.
  int keyTile = 64;
  /// The register tile of q.k^T: queryTile / width vectors of queries x scoreKeys keys
  /// (with dotScores: scoreKeys dot products of one query at a time).
  int scoreKeys = 4;
  /// The register tile of P.v: the value row's vectors x valueRows queries; divides
  /// queryTile.
  int valueRows = 4;
  /// f32 lanes of a vector; the state's channel layout is padded to it.
  int width = 16;
  /// For a few static queries (a decode step): q.k^T as dot products, vectors along
  /// the head dimension, instead of vectors across queries (which would be mostly
  /// copies of the last query). queryTile is then the query count itself.
  bool dotScores = false;
  /// Whether the last key tile visits only the keys there are, not a whole tile with
  /// the rest masked: the loops over a tile's keys carry `t * keyTile + key < Tk`,
  /// which Halide lifts into their bounds. A whole tile gives those keys weight 0, so
  /// the outputs are the same (bit for bit in transformer_base's encodes).
  bool partialKeyTiles = false;
};

/// softmax(scale q.k^T + mask) v without the [Tq, Tk] scores. Halide dimension names:
/// c a head channel (d or dv), i a query, j = t * keyTile + jj a key (t its key tile),
/// i = qt * queryTile + ii (qt the query tile), then the batch dimensions.
struct AttentionKernel {
  static constexpr const char *kind = "attention";
  Halide::Func output;
  /// The running state of one query tile, (c, ii, qt, batch...): channels [0, dv) are
  /// the unnormalised output rows, channel dv the running sum l, channel dv + 1 the
  /// running max m; padded to `channels`. Pure: (0, 0, -inf); one update over `step`.
  Halide::Func state;
  /// The query tile transposed, (ii, c, qt, batch...): queries contiguous.
  Halide::Func queries;
  /// q.k^T of one query tile and key tile, (ii, jj, t, qt, batch...): 0, then one
  /// update over `contraction`.
  Halide::Func scores;
  /// Per query of a key tile, (ii, t, qt, batch...): the max of the masked, scaled
  /// scores (over `keys`), and the sum of `weights`.
  Halide::Func tileMax, tileSum;
  /// exp(score - tileMax), (ii, jj, t, qt, batch...).
  Halide::Func weights;
  /// weights . v of one key tile, (c, ii, t, qt, batch...): 0, then one update over
  /// `keys`.
  Halide::Func weighted;
  /// The key and value inputs, which `scores` and `weighted` read: a schedule may stage
  /// a key tile's rows of them (ImageParam::in).
  Halide::ImageParam key, value;
  Halide::Var c{"c"}, i{"i"}, ii{"ii"}, jj{"jj"}, t{"t"}, qt{"qt"};
  /// The output's batch dimensions (Halide dimensions 2...).
  std::vector<Halide::Var> batch;
  /// Over the head dimension d; over the keys of a tile; and the state's update:
  /// x the channel, y the key tile (with the causal bound as a predicate).
  Halide::RDom contraction, keys, step;
  AttentionTiles tiles;
  /// dv and the state's channel count (dv + 2 rounded up to `width`), or
  /// kDynamicExtent.
  int64_t valueDim = kDynamicExtent, channels = kDynamicExtent;
  /// The key rows' length (d) and count (Tk), or kDynamicExtent.
  int64_t keyDim = kDynamicExtent, keyCount = kDynamicExtent;
  /// The output's extents.
  Extents extents;
  /// When defined: the condition (an empty output or no keys) under which the output is
  /// written without reading anything; a schedule specializes on it.
  Halide::Expr empty;
  /// For a query count known only at run time, where the target has such tiles
  /// (chooseFewQueriesTiles in Scheduler.h): the same kernel written for a smaller
  /// query tile, with Funcs of its own, which the output reads while `fewQueries`
  /// holds; a schedule specializes on it. Its `output` is this kernel's, and it has no
  /// form of its own.
  std::shared_ptr<AttentionKernel> fewQueriesForm;
  Halide::Expr fewQueries;
};

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_SCHEDULESATTENTION_H
