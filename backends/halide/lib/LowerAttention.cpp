//===- LowerAttention.cpp - kiln.attention as a flash-style Halide kernel -===//
//
// softmax(scale q.k^T + mask) v computed one query tile at a time, visiting the keys
// one key tile at a time with an online softmax (FlashAttention's rescaling), so that
// no [Tq, Tk] tensor ever exists: per query tile the kernel holds the tile's state
// (queryTile x (dv + 2) floats), the transposed query tile and one key tile's scores
// and weights. Memory per head is O(S d).
//
// Per key tile t, for every query i of the tile:
//
//   s(i, j)  = scale q_i.k_j + mask(i, j)   (-inf past the causal diagonal or Tk)
//   tm(i)    = max_j s(i, j)                the tile's own max
//   p(i, j)  = exp(s(i, j) - tm(i))         <= 1: large scores cannot overflow
//   a'(i, :) = a(i, :) alpha + (sum_j p(i, j) v_j) beta
//   l'(i)    = l(i) alpha + (sum_j p(i, j)) beta
//   m'(i)    = max(m(i), tm(i)),  alpha = exp(m - m'),  beta = exp(tm - m')
//
// and at the end result(i, :) = a(i, :) / l(i). One of alpha, beta is 1 and the other
// exp(-|m - tm|), so each step costs one exp per query row.
//
// Why the weights are relative to the tile's max and not to the running max as in
// FlashAttention: Halide has no cycles between Funcs, and the running state is a Func
// updated once per key tile (its update's loop over key tiles is the loop that every
// per-tile Func is computed in). Exponentiating against the running max would make the
// weights (computed inside that loop) read the state that the same loop writes, a
// cycle. Against the tile's max, everything per tile depends on the scores alone, and
// only the state's own update reads the state. (The other known structure, the
// running max as a scan Func over key tiles and then the accumulation with rescale
// factors, needs every tile's max before the first accumulation: q.k^T computed
// twice, 1.5x the FLOPs, or a [queryTile, Tk] slab of scores kept per tile.)
//
// How the state is laid out, and why: one Func of channels per query row, [a..., l, m,
// padding], padded to whole vectors. The update of channel x reads channel x itself
// and channel m (the old running max), an in-place update that reads another element.
// Halide evaluates an update in loop order, and m is the last meaningful channel, so
// every channel reads the old m, in scalar order and in vector order alike (a vector's
// loads precede its stores); Halide cannot prove that and would reject vectorising the
// channel loop, hence allow_race_conditions() in the schedule, scoped to that update.
// The alternative, a Tuple state (a, l, m) per channel, needs no such escape hatch but
// exponentiates per channel (each lane its own copy of m), and measured 12% slower
// (1T, [1, 8, 1024, 64], no mask, prototype: Tuple 27.3 ms, channels 24.3 ms, and 24.4
// with the update replaced by a plain sum, i.e. the channel update costs ~nothing).
// Halide 14 also stores a Tuple update's elements one by one when their reads of each
// other hide inside calls (strict_float, reinterpret), so l read the new m there until
// m became the last element; the channel layout has no such trap.
//
// -inf and NaN: Halide compiles with no-infinities/no-NaNs fast-math flags, so -inf is
// tested on the bit pattern (an integer compare the flags cannot touch), produced as a
// bit pattern (floatBits), and arithmetic that may meet it is strict_float. A key tile
// whose scores are all -inf has tm = -inf and contributes nothing (beta = 0; its
// weights are computed against 0, never (-inf) - (-inf)); a state that has seen only
// such tiles keeps m = -inf (the safe start), and such a row ends as masked_row_value.
// Finite scores, however negative, are a softmax (uniform when equal). A NaN score
// makes its weight NaN (Halide's exp maps NaN to 0, so the weight selects it), which
// reaches l through strict_float arithmetic, and the row ends NaN, as the reference's.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

/// Whether `x` is -inf, on its bits: immune to the fast-math flags.
Expr isNegInf(const Expr &x) {
  return Halide::reinterpret(Halide::Int(32), x) == kNegInfBits;
}

/// `value` (which may be -inf or NaN) as an f32 Expr built from its bits.
Expr floatConstant(float value) { return floatBits(llvm::bit_cast<int32_t>(value)); }

/// Batch indices of an operand of the output's rank: a static 1 reads index 0.
std::vector<Expr> batchIndex(const Extents &extents, const std::vector<Var> &batch) {
  std::vector<Expr> index;
  for (size_t d = 2; d < extents.size(); ++d)
    index.push_back(extents[d] == 1 ? Expr(0) : Expr(batch[d - 2]));
  return index;
}

/// `prefix` followed by `rest`.
std::vector<Expr> join(std::vector<Expr> prefix, const std::vector<Expr> &rest) {
  prefix.insert(prefix.end(), rest.begin(), rest.end());
  return prefix;
}

/// The size that dimension `ad` of `a` and `bd` of `b` share: the static one if either
/// type has it, and the other's dynamic extent pinned to it.
Expr sharedExtent(ImageParam a, const Extents &aExt, int ad, ImageParam b,
                  const Extents &bExt, int bd) {
  bool aStatic = isStatic(aExt[ad]), bStatic = isStatic(bExt[bd]);
  if (!aStatic && !bStatic) {
    b.dim(bd).set_extent(a.dim(ad).extent());
    return a.dim(ad).extent();
  }
  Expr size = static_cast<int>(aStatic ? aExt[ad] : bExt[bd]);
  if (!aStatic)
    a.dim(ad).set_extent(size);
  if (!bStatic)
    b.dim(bd).set_extent(size);
  return size;
}

int64_t roundUp(int64_t x, int64_t multiple) {
  return (x + multiple - 1) / multiple * multiple;
}

/// What every form of the kernel reads: the op, its operands and their sizes.
struct AttentionOperands {
  AttentionOp op;
  ImageParam q, k, v;
  /// Undefined without a mask.
  ImageParam mask;
  Extents qExt, kExt, vExt, mExt;
  Expr Tq, Tk, D, Dv;
};

/// Defines `kernel`'s Funcs for its tiles (kernel.tiles; kernel.batch is set), each
/// name ending in `suffix`, and returns the output's value at (c, i, batch...).
Expr defineForm(AttentionKernel &kernel, const AttentionOperands &o,
                const std::string &suffix) {
  AttentionOp op = o.op;
  ImageParam q = o.q, k = o.k, v = o.v;
  Expr Tq = o.Tq, Tk = o.Tk, D = o.D, Dv = o.Dv;
  const AttentionTiles &tiles = kernel.tiles;
  const int queryTile = tiles.queryTile, keyTile = tiles.keyTile;
  kernel.valueDim = o.vExt[0];
  kernel.keyDim = o.kExt[0];
  kernel.keyCount = o.kExt[1];
  if (isStatic(o.vExt[0]))
    kernel.channels = roundUp(o.vExt[0] + 2, tiles.width);
  Expr channels = isStatic(kernel.channels)
                      ? Expr(static_cast<int>(kernel.channels))
                      : (Dv + 2 + tiles.width - 1) / tiles.width * tiles.width;
  // The state's channels after the value rows: the running sum, then the running max
  // (last, which is what makes the in-place update exact; see the file comment).
  Expr sumLane = Dv, maxLane = Dv + 1;

  Var c = kernel.c, i = kernel.i, ii = kernel.ii, jj = kernel.jj, t = kernel.t,
      qt = kernel.qt;
  std::vector<Expr> batch(kernel.batch.begin(), kernel.batch.end());
  std::vector<Expr> qBatch = batchIndex(o.qExt, kernel.batch),
                    kBatch = batchIndex(o.kExt, kernel.batch),
                    vBatch = batchIndex(o.vExt, kernel.batch);
  const Expr negInf = floatBits(kNegInfBits), nan = floatBits(kNaNBits);

  // Query row ii of tile qt, and key jj of tile t. Whole tiles are computed: rows past
  // Tq read the last query (and are not stored), keys past Tk are masked below and
  // read the last key.
  Expr row = qt * queryTile + ii, key = t * keyTile + jj;
  kernel.queries = Func("query_tile" + suffix);
  kernel.queries(join({ii, c, qt}, batch)) =
      q(join({c, Halide::clamp(row, 0, Tq - 1)}, qBatch));

  kernel.contraction = RDom(0, D, "d");
  Expr rc = kernel.contraction.x;
  std::vector<Expr> tileArgs = join({ii, jj, t, qt}, batch);
  kernel.scores = Func("scores" + suffix);
  kernel.scores(tileArgs) = 0.0f;
  kernel.scores(tileArgs) += kernel.queries(join({ii, rc, qt}, batch)) *
                             k(join({rc, Halide::clamp(key, 0, Tk - 1)}, kBatch));

  // The logits, as the unfused graph rounds them: the product, times the scale, plus
  // the mask (strict_float: no FMA contraction, and the mask may be -inf).
  Expr logit = kernel.scores(tileArgs) * op.scale().convertToFloat();
  if (o.mask.defined()) {
    // The mask broadcasts to the scores (key, query, batch...) without enlarging them.
    std::vector<Expr> index;
    for (size_t d = 0; d < o.mExt.size(); ++d) {
      if (o.mExt[d] == 1)
        index.push_back(0);
      else if (d == 0)
        index.push_back(Halide::clamp(key, 0, Tk - 1));
      else if (d == 1)
        index.push_back(Halide::clamp(row, 0, Tq - 1));
      else
        index.push_back(kernel.batch[d - 2]);
    }
    logit = logit + o.mask(index);
  }
  logit = Halide::strict_float(logit);
  // Causal: query i sees keys j <= i + (Tk - Tq), the diagonal aligned bottom-right.
  Expr lastKey = op.causal() ? Halide::min(row + (Tk - Tq), Tk - 1) : Tk - 1;
  Func logits("logits" + suffix);
  logits(tileArgs) = Halide::select(key > lastKey, negInf, logit);

  kernel.keys = RDom(0, keyTile, "key");
  Expr rj = kernel.keys.x;
  if (tiles.partialKeyTiles)
    kernel.keys.where(t * keyTile + rj < Tk);
  std::vector<Expr> rowArgs = join({ii, t, qt}, batch);
  std::vector<Expr> keyArgs = join({ii, rj, t, qt}, batch);
  kernel.tileMax = Func("tile_max" + suffix);
  kernel.tileMax(rowArgs) = negInf;
  kernel.tileMax(rowArgs) =
      Halide::strict_float(Halide::max(kernel.tileMax(rowArgs), logits(keyArgs)));
  // A tile with every key masked exponentiates against 0: its weights are exp(-inf) = 0
  // (clamped to exp(-128), which Halide's exp flushes to 0, so that no infinity reaches
  // the exp), and the state ignores the tile anyway.
  Expr tileMax = kernel.tileMax(rowArgs);
  Expr shift = Halide::select(isNegInf(tileMax), 0.0f, tileMax);
  Expr x = logits(tileArgs);
  kernel.weights = Func("weights" + suffix);
  kernel.weights(tileArgs) =
      Halide::select(Halide::is_nan(x), nan,
                     Halide::exp(Halide::strict_float(Halide::max(x - shift, -128.0f))));
  kernel.tileSum = Func("tile_sum" + suffix);
  kernel.tileSum(rowArgs) = 0.0f;
  kernel.tileSum(rowArgs) += kernel.weights(keyArgs);
  kernel.weighted = Func("weighted" + suffix);
  std::vector<Expr> valueArgs = join({c, ii, t, qt}, batch);
  kernel.weighted(valueArgs) = 0.0f;
  kernel.weighted(valueArgs) +=
      kernel.weights(keyArgs) *
      v(join({c, Halide::clamp(Halide::likely(t * keyTile + rj), 0, Tk - 1)}, vBatch));

  // The state, updated once per key tile. Causal: a query tile's last row sees keys up
  // to row + Tk - Tq, so later key tiles are not visited at all (Halide lifts the
  // predicate, which depends only on the tile loops, into the key tile loop's bounds).
  Expr keyTiles = (Tk + keyTile - 1) / keyTile;
  kernel.step = RDom(0, channels, 0, keyTiles, "step");
  Expr ch = kernel.step.x, kt = kernel.step.y;
  if (op.causal())
    kernel.step.where(kt * keyTile <=
                      Halide::min(qt * queryTile + queryTile - 1, Tq - 1) + (Tk - Tq));
  std::vector<Expr> stateArgs = join({c, ii, qt}, batch);
  kernel.state = Func("state" + suffix);
  kernel.state(stateArgs) = Halide::select(c == maxLane, negInf, 0.0f);
  {
    Expr self = kernel.state(join({ch, ii, qt}, batch));
    Expr m = kernel.state(join({maxLane, ii, qt}, batch));
    Expr tm = kernel.tileMax(join({ii, kt, qt}, batch));
    // m and tm, with an infinite one replaced so that their difference is finite (0
    // when either is -inf): alpha = 1 then, and beta = 1 unless the tile is all -inf.
    Expr tileMasked = isNegInf(tm), fresh = isNegInf(m);
    Expr mSafe = Halide::select(fresh, Halide::select(tileMasked, 0.0f, tm), m);
    Expr tSafe = Halide::select(tileMasked, mSafe, tm);
    Expr difference = mSafe - tSafe;
    Expr decay = Halide::exp(-Halide::abs(difference));
    Expr keepMax = difference >= 0.0f;
    Expr alpha = Halide::select(keepMax, 1.0f, decay);
    Expr beta = Halide::select(tileMasked, 0.0f, keepMax, decay, 1.0f);
    Expr newMax = Halide::select(tileMasked, m, Halide::max(mSafe, tm));
    Expr rowValue = kernel.weighted(join({Halide::min(ch, Dv - 1), ii, kt, qt}, batch));
    Expr rowSum = kernel.tileSum(join({ii, kt, qt}, batch));
    kernel.state(join({ch, ii, qt}, batch)) =
        Halide::select(ch < Dv, self * alpha + rowValue * beta,
                       // strict_float: a NaN sum must survive a beta of 0.
                       ch == sumLane, Halide::strict_float(self * alpha + rowSum * beta),
                       ch == maxLane, newMax, 0.0f);
  }

  // The result, from the state of row i % queryTile of tile i / queryTile.
  std::vector<Expr> at = join({c, i % queryTile, i / queryTile}, batch);
  Expr a = kernel.state(at);
  Expr l = kernel.state(join({sumLane, i % queryTile, i / queryTile}, batch));
  Expr m = kernel.state(join({maxLane, i % queryTile, i / queryTile}, batch));
  Expr maskedRow = floatConstant(op.masked_row_value().convertToFloat());
  return Halide::select(Halide::is_nan(l), nan, isNegInf(m), maskedRow, a / l);
}

/// The kernel, written for the tiles that `target`'s attention schedule chooses, and,
/// where the target has smaller ones for a run-time query count, for those too.
FailureOr<KernelAlgorithm> lowerAttention(AttentionOp op, const Halide::Target &target) {
  AttentionKernel kernel;
  RankedTensorType resultType = tensorType(op.result());
  int rank = resultType.getRank();
  kernel.extents = extentsOf(resultType);
  AttentionOperands o;
  o.op = op;
  // Only the innermost strides are pinned: q, k and v may be head splits of a packed
  // projection or cache prefixes, read in place (Plan.cpp), and rows of d contiguous
  // floats are all the schedules vectorise over.
  o.q = makeInnerDenseInput(op.query(), "query");
  o.k = makeInnerDenseInput(op.key(), "key");
  o.v = makeInnerDenseInput(op.value(), "value");
  o.qExt = extentsOf(tensorType(op.query()));
  o.kExt = extentsOf(tensorType(op.key()));
  o.vExt = extentsOf(tensorType(op.value()));
  ImageParam q = o.q, k = o.k, v = o.v;
  const Extents &qExt = o.qExt, &kExt = o.kExt, &vExt = o.vExt;
  KernelAlgorithm lowered;
  lowered.inputs = {q, k, v};
  kernel.key = k;
  kernel.value = v;

  // Sizes, each taken from a static type where one has it, and the other operands'
  // dynamic extents tied to it (a caller whose buffers disagree gets Halide's error).
  o.Tq = extentOf(q, qExt, 1);
  o.Dv = extentOf(v, vExt, 0);
  o.Tk = sharedExtent(k, kExt, 1, v, vExt, 1);
  o.D = sharedExtent(q, qExt, 0, k, kExt, 0);
  Expr Tq = o.Tq, Tk = o.Tk, Dv = o.Dv;
  int64_t staticKeys = isStatic(kExt[1]) ? kExt[1] : vExt[1];
  if (Value maskValue = op.mask()) {
    o.mask = makeInput(maskValue, "mask");
    o.mExt = extentsOf(tensorType(maskValue));
    std::vector<Expr> sizes = {Tk, Tq};
    for (size_t d = 0; d < 2 && d < o.mExt.size(); ++d)
      if (!isStatic(o.mExt[d]) && o.mExt[d] != 1)
        o.mask.dim(static_cast<int>(d)).set_extent(sizes[d]);
    lowered.inputs.push_back(o.mask);
  }

  llvm::Expected<AttentionTiles> chosen =
      chooseAttentionTiles(target, qExt[1], staticKeys, vExt[0]);
  if (!chosen) {
    op.emitError() << llvm::toString(chosen.takeError());
    return failure();
  }
  kernel.tiles = *chosen;
  for (int d = 2; d < rank; ++d)
    kernel.batch.emplace_back("b" + std::to_string(d));
  Expr value = defineForm(kernel, o, "");
  if (auto few = chooseFewQueriesTiles(target, qExt[1], staticKeys, vExt[0])) {
    auto form = std::make_shared<AttentionKernel>(kernel);
    form->tiles = few->first;
    Expr fewValue = defineForm(*form, o, "_few_queries");
    kernel.fewQueries = Tq <= static_cast<int>(few->second);
    kernel.fewQueriesForm = form;
    value = Halide::select(kernel.fewQueries, fewValue, value);
  }

  // Empty extents: the output (if anything) is masked_row_value, without a read.
  std::vector<Expr> empty;
  if (!isStatic(kExt[1]) || !isStatic(vExt[1]))
    empty.push_back(Tk == 0);
  if (!isStatic(qExt[1]))
    empty.push_back(Tq == 0);
  if (!isStatic(vExt[0]))
    empty.push_back(Dv == 0);
  for (int d = 2; d < rank; ++d)
    for (auto [param, ext] : {std::pair{q, qExt}, {k, kExt}, {v, vExt}})
      if (!isStatic(ext[d]))
        empty.push_back(param.dim(d).extent() == 0);
  for (const Expr &condition : empty)
    kernel.empty = kernel.empty.defined() ? kernel.empty || condition : condition;
  Expr maskedRow = floatConstant(op.masked_row_value().convertToFloat());
  if (kernel.empty.defined())
    value = Halide::select(kernel.empty, maskedRow, value);

  std::vector<Var> outVars = {kernel.c, kernel.i};
  outVars.insert(outVars.end(), kernel.batch.begin(), kernel.batch.end());
  kernel.output = Func("result");
  kernel.output(outVars) = value;
  if (kernel.fewQueriesForm)
    kernel.fewQueriesForm->output = kernel.output;

  // The result may be a permuted view of the merged heads (Plan.cpp): dense rows only.
  Halide::OutputImageParam out = kernel.output.output_buffer();
  constrainStridedLayout(out, kernel.extents, /*lastDenseDim=*/0);
  if (!isStatic(kernel.extents[0]))
    out.dim(0).set_extent(Dv);
  if (!isStatic(kernel.extents[1]))
    out.dim(1).set_extent(Tq);
  ExtentSource sources;
  sources.operands = {{q, qExt}, {k, kExt}, {v, vExt}};
  for (int d = 2; d < rank; ++d)
    sources.tie(out, d, kernel.extents[d], {d, d, d});
  if (o.mask.defined()) {
    // The mask's dynamic batch dimensions have the output's sizes.
    for (size_t d = 2; d < o.mExt.size(); ++d)
      if (!isStatic(o.mExt[d]))
        o.mask.dim(static_cast<int>(d)).set_extent(out.dim(static_cast<int>(d)).extent());
  }

  lowered.stages = {kernel};
  return lowered;
}

} // namespace

void kiln::halide_backend::populateAttentionLowerings(LoweringTable &table) {
  table.add<AttentionOp>(lowerAttention, [](AttentionOp op, llvm::raw_ostream &os) {
    os << "{scale=" << op.scaleAttr() << ",causal=" << op.causal()
       << ",masked_row_value=" << op.masked_row_valueAttr() << "}";
  });
}
