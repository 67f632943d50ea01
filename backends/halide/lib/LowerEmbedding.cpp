//===- LowerEmbedding.cpp - Embeddings, positions and masks as Halide -----===//
//
// The inputs side of an encoder-decoder: rows of an embedding table, positions and
// their sinusoidal or rotary encodings, and the masks (additive: 0 to keep, -inf to mask;
// or boolean: 1 to mask, held as i32). Ops with a `like` operand read only its shape: its
// buffer is an argument of the kernel whose extent sizes the result. All of them are
// pointwise kernels.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "Lowerings.h"

#include "kiln/abi/Manifest.h"
#include "kiln/ir/ValueRange.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

/// The pointwise kernel of `output` over `extents`, pinned to them and to `source` for
/// the dynamic ones.
PointwiseKernel finishPointwise(Func output, const std::vector<Var> &vars,
                                const Extents &extents, const std::vector<Expr> &source) {
  constrainLayout(output.output_buffer(), extents);
  tieOutputExtents(output, extents, source);
  return {output, vars, extents};
}

/// The size of dimension `axis` (a tensor dimension) of the `like` operand.
Expr likeExtent(const ImageParam &like, Value likeValue, int64_t axis) {
  Extents extents = extentsOf(tensorType(likeValue));
  return extentOf(like, extents, halideDim(static_cast<int>(extents.size()), axis));
}

/// What decides an embedding's kernel beside its types: a checked kernel names its
/// table in its message, so kernels of different tables differ.
void printEmbedding(EmbeddingOp op, llvm::raw_ostream &os) {
  if (embeddingChecksIds(op))
    os << "{checked='" << gatherTableName(op.table()) << "'}";
  else
    os << "{proven}";
}

/// The gathered rows as a kernel of their own (embeddingAt).
FailureOr<KernelAlgorithm> lowerEmbedding(EmbeddingOp op, const Halide::Target &target) {
  ImageParam table = makeInput(op.table(), "table"), ids = makeInput(op.ids(), "ids");
  Extents tableExt = extentsOf(tensorType(op.table()));
  Extents extents = extentsOf(tensorType(op.result()));
  std::vector<Var> vars = makeVars(static_cast<int>(extents.size()));
  KernelAlgorithm algorithm{{table, ids}, {}};
  Func output("result");
  output(vars) = embeddingAt(op, table, ids, asExprs(vars), target, algorithm.stages);
  std::vector<Expr> source = {extentOf(table, tableExt, 0)};
  for (int d = 0; d + 1 < static_cast<int>(extents.size()); ++d)
    source.push_back(ids.dim(d).extent());
  algorithm.stages.push_back(finishPointwise(output, vars, extents, source));
  return algorithm;
}

KernelAlgorithm lowerRange(RangeOp op) {
  ImageParam like = makeInput(op.like(), "like");
  Var i("d0");
  Func output("result");
  output(i) = i;
  return {{like},
          {finishPointwise(output, {i}, extentsOf(tensorType(op.result())),
                           {likeExtent(like, op.like(), op.axis())})}};
}

/// pi / 2 in three parts of 26, 26 and 53 bits (Cody and Waite): k * part is exact
/// for |k| < 2^27, so the reduced angle is exact to ~1e-16 for positions up to 2e8
/// (beyond, up to i32's 2^31, it is off by ~1e-7).
constexpr double kHalfPi1 = 0x1.921fb50000000p+0;
constexpr double kHalfPi2 = 0x1.110b460000000p-26;
constexpr double kHalfPi3 = 0x1.1a62633145c07p-54;
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;

/// Halide has no implicit double -> Expr conversion (it would hide f64 arithmetic).
Expr f64(double value) { return Expr(value); }

/// (-1)^floor(n/2) / n!, the coefficient of r^n in the Taylor series of sin (n odd)
/// or cos (n even) at 0.
Expr taylorCoefficient(int n) {
  return f64(((n / 2) % 2 ? -1.0 : 1.0) / std::tgamma(n + 1.0));
}

/// The Taylor series of sin and cos at 0 in f64, to r^11 and r^12: the truncation error
/// is < 1e-11 for |r| <= pi / 4.
Expr sinSeries(const Expr &r) {
  Expr r2 = r * r, sum = f64(0);
  for (int n = 11; n >= 3; n -= 2)
    sum = (sum + taylorCoefficient(n)) * r2;
  return r + r * sum;
}

Expr cosSeries(const Expr &r) {
  Expr r2 = r * r, sum = f64(0);
  for (int n = 12; n >= 2; n -= 2)
    sum = (sum + taylorCoefficient(n)) * r2;
  return f64(1) + sum;
}

/// An f64 angle x = r + k pi/2, reduced to r in [-pi/4, pi/4] and the quadrant k, so
/// that sin and cos of x come from the Taylor series of r.
struct ReducedAngle {
  explicit ReducedAngle(const Expr &x) {
    Expr k = Halide::round(x * f64(kTwoOverPi));
    // strict_float: reassociated, the three subtractions would fold into one.
    Expr r = Halide::strict_float(((x - k * f64(kHalfPi1)) - k * f64(kHalfPi2)) -
                                  k * f64(kHalfPi3));
    quadrant = Halide::cast<int>(k);
    sinR = sinSeries(r);
    cosR = cosSeries(r);
  }

  /// sin(x + n pi/2) = sin(r + (k + n) pi/2); the quadrant wraps mod 4.
  Expr sinPlusQuarterTurns(const Expr &n) const {
    Expr q = (quadrant + n) & 3;
    return Halide::select(q == 0, sinR, q == 1, cosR, q == 2, -sinR, -cosR);
  }

  Expr quadrant, sinR, cosR;
};

/// The positions' sinusoids as a kernel of their own (sinusoidAt).
KernelAlgorithm lowerSinusoid(SinusoidOp op) {
  ImageParam positions = makeInput(op.positions(), "positions");
  Extents extents = extentsOf(tensorType(op.result()));
  std::vector<Var> vars = makeVars(static_cast<int>(extents.size()));
  Func output("result");
  std::vector<Var> positionVars(vars.begin() + 1, vars.end());
  output(vars) = sinusoidAt(op, positions(positionVars), vars[0]);
  std::vector<Expr> source = {static_cast<int>(extents[0])};
  for (int d = 0; d + 1 < static_cast<int>(extents.size()); ++d)
    source.push_back(positions.dim(d).extent());
  return {{positions}, {finishPointwise(output, vars, extents, source)}};
}

/// result(d, t, ...) = x(d) cos(theta) - x(d') sin(theta) for the first feature d of a
/// pair (d, d'), x(d) cos(theta) + x(d') sin(theta) for the second, theta = p(t) w(i)
/// for pair i, w(i) = base^(-2i / D). cos and sin are a stage of their own over
/// (i, t), computed once per kernel call ([D/2, T]) and read by every batch and head,
/// in f64 as the sinusoid's (the angle in f32 would be 1e-4 off at p = 2048), then
/// rounded to f32, as the rotation itself is done. The output is a pointwise kernel
/// vectorised along d, whose partner reads x(d') are a permutation within the row.
KernelAlgorithm lowerRotary(RotaryOp op) {
  ImageParam input = makeInput(op.input(), "input"),
             positions = makeInput(op.positions(), "positions");
  Extents extents = extentsOf(tensorType(op.result()));
  int features = static_cast<int>(extents[0]); // static, positive, even: the verifier
  int half = features / 2;
  // In double from the f32 attribute, as the interpreter computes it.
  double base = op.base().convertToFloat();
  Halide::Buffer<double> frequency(half, "rotary_frequency");
  for (int i = 0; i < half; ++i)
    frequency(i) = std::pow(base, -2.0 * i / features);

  Var i("i"), t("t");
  Func trig("rotary_cos_sin");
  ReducedAngle angle(Halide::cast<double>(positions(t)) * frequency(i));
  trig(i, t) = {Halide::cast<float>(angle.sinPlusQuarterTurns(1)),
                Halide::cast<float>(angle.sinPlusQuarterTurns(0))};
  Extents trigExtents = {half, extents[1]};

  std::vector<Var> vars = makeVars(static_cast<int>(extents.size()));
  Var d = vars[0];
  bool interleaved = op.style() == "interleaved";
  Expr pair = interleaved ? d / 2 : d % half;
  // Clamped only for bounds inference, which cannot bound d ^ 1.
  Expr partner =
      interleaved ? Halide::clamp(d ^ 1, 0, features - 1) : (d + half) % features;
  Expr first = interleaved ? (d & 1) == 0 : d < half;
  std::vector<Expr> at = asExprs(vars), partnerAt = asExprs(vars);
  partnerAt[0] = partner;
  Expr rotated = Halide::select(first, -input(partnerAt), input(partnerAt));
  Func output("result");
  output(vars) = input(at) * trig(pair, vars[1])[0] + rotated * trig(pair, vars[1])[1];
  std::vector<Expr> source;
  for (size_t dim = 0; dim < extents.size(); ++dim)
    source.push_back(input.dim(static_cast<int>(dim)).extent());
  return {{input, positions},
          {PointwiseKernel{trig, {i, t}, trigExtents},
           finishPointwise(output, vars, extents, source)}};
}

/// A mask's value where `masked` holds or not: for an f32 result 0 or -inf (as a bit
/// pattern: see floatBits), for an i1 result 0 or 1 (held as i32, see halideType).
Expr maskValue(Value result, const Expr &masked) {
  if (tensorType(result).getElementType().isInteger(1))
    return Halide::select(masked, 1, 0);
  return floatBits(Halide::select(masked, kNegInfBits, 0));
}

/// result(j, b) = 0 where j < lengths(b), else -inf; the boolean form is true (1) where
/// the additive one is -inf.
KernelAlgorithm lowerPaddingMask(PaddingMaskOp op) {
  ImageParam lengths = makeInput(op.lengths(), "lengths"),
             like = makeInput(op.like(), "like");
  Var j("d0"), b("d1");
  Func output("result");
  output(j, b) = maskValue(op.result(), j >= lengths(b));
  return {{lengths, like},
          {finishPointwise(
              output, {j, b}, extentsOf(tensorType(op.result())),
              {likeExtent(like, op.like(), op.axis()), lengths.dim(0).extent()})}};
}

/// result(j, i) = 0 where key j <= query i, else -inf (boolean form: 1).
KernelAlgorithm lowerCausalMask(CausalMaskOp op) {
  ImageParam like = makeInput(op.like(), "like");
  Var j("d0"), i("d1");
  Func output("result");
  output(j, i) = maskValue(op.result(), j > i);
  Expr n = likeExtent(like, op.like(), op.axis());
  return {{like},
          {finishPointwise(output, {j, i}, extentsOf(tensorType(op.result())), {n, n})}};
}

} // namespace

/// result(d, i...) = table(d, ids(i...)): one gathered row per id, copied with vectors
/// along d. Ids proven in range are used as they are; others are checked (a Halide
/// `require`, which the runtime reports as "embedding of 'wpe.weight' (32 rows): index
/// 39 out of range"), never clamped: a clamped id is a wrong row, silently. Either way
/// bounds inference is promised the table's rows, as it cannot see the proof or the
/// check. On a GPU target the checked ids are a stage of their own that runs on the
/// host (PointwiseKernel::onHost): device code cannot raise the message, and the ids
/// are a few integers per token.
Expr kiln::halide_backend::embeddingAt(EmbeddingOp op, const ImageParam &table,
                                       const ImageParam &ids,
                                       const std::vector<Expr> &index,
                                       const Halide::Target &target,
                                       llvm::SmallVectorImpl<KernelDescription> &stages) {
  Expr rows = extentOf(table, extentsOf(tensorType(op.table())), 1);
  std::vector<Var> idVars = makeVars(static_cast<int>(tensorType(op.ids()).getRank()));
  Expr id = ids(idVars);
  bool checked = embeddingChecksIds(op);
  if (checked) {
    // Halide joins the message's parts with spaces: a static row count goes in the text.
    std::string what = std::string(abi::kRequirementMarker) + "embedding of '" +
                       gatherTableName(op.table());
    int64_t staticRows = tensorType(op.table()).getDimSize(0);
    id =
        ShapedType::isDynamic(staticRows)
            ? Halide::require(id >= 0 && id < rows, id, what + "' (a table of", rows,
                              "rows): index", id, "out of range")
            : Halide::require(id >= 0 && id < rows, id,
                              what + "' (" + std::to_string(staticRows) + " rows): index",
                              id, "out of range");
  }
  // Inlined, unless it is the host stage of a GPU target.
  Func rowIds(checked ? "checked_ids" : "row_ids");
  rowIds(idVars) = id;
  if (checked && target.has_gpu_feature())
    stages.push_back(
        PointwiseKernel{rowIds, idVars, extentsOf(tensorType(op.ids())), true});
  std::vector<Expr> idIndex(index.begin() + 1, index.end());
  return table(index[0], Halide::unsafe_promise_clamped(rowIds(idIndex), 0, rows - 1));
}

/// PE(d, p) = sin(p w(d)) for even d, cos(p w(d)) for odd d, w(d) = 10000^-(2 floor(d/2)
/// / D), to f32 rounding of the interpreter's double. In f32 the angle alone would be
/// off by up to 1.2e-4 at p = 2048 (p w rounded to 24 bits; the tolerance is 1e-5), and
/// Halide 14's sin/cos are scalar libm calls (fast_sin/fast_cos are 1e-5 absolute), so
/// the kernel works in f64 with its own vectorisable sin and cos: the angle p w(d)
/// (w(d) computed in double here, as the interpreter does, and compiled into the
/// kernel as a table of D/2 entries, one per pair of columns, so that a pair's columns
/// share one reduction: indexed by d, the even and odd columns' loads differed and each
/// reduced its own copy of the angle, 57-65 against 69-73 us for transformer_base's
/// embedding kernel at B=1 S=128, the same output), reduced to r in [-pi/4, pi/4] and
/// quadrant q, then the Taylor series of sin or cos of r as q and the column's parity
/// pick. It is a small table ([S, D] for a sequence of S), so the f64 work costs
/// little: [128, 512] in 72 us on one core (SchedulesCpu.cpp).
Expr kiln::halide_backend::sinusoidAt(SinusoidOp op, const Expr &position,
                                      const Expr &d) {
  // Static, positive, even: the verifier.
  int features = static_cast<int>(tensorType(op.result()).getShape().back());
  Halide::Buffer<double> frequency(features / 2, "sinusoid_frequency");
  for (int i = 0; i < features / 2; ++i)
    frequency(i) = 1.0 / std::pow(10000.0, double(2 * i) / features);
  ReducedAngle angle(Halide::cast<double>(position) * frequency(d / 2));
  // cos(x) = sin(x + pi/2): odd columns are a quarter turn ahead.
  return Halide::cast<float>(angle.sinPlusQuarterTurns(d & 1));
}

bool kiln::halide_backend::embeddingChecksIds(Operation *op) {
  auto embedding = dyn_cast<EmbeddingOp>(op);
  if (!embedding)
    return false;
  int64_t rows = tensorType(embedding.table()).getDimSize(0);
  llvm::Optional<IndexRange> ids = indexRange(embedding.ids());
  return ShapedType::isDynamic(rows) || !ids || ids->min < 0 || ids->max >= rows;
}

void kiln::halide_backend::populateEmbeddingLowerings(LoweringTable &table) {
  table.add<EmbeddingOp>(lowerEmbedding, printEmbedding);
  table.add<RangeOp>(lowerRange, printAxis);
  table.add<SinusoidOp>(lowerSinusoid);
  table.add<RotaryOp>(lowerRotary, [](RotaryOp op, llvm::raw_ostream &os) {
    os << "{base=" << op.baseAttr() << ", style=" << op.style() << "}";
  });
  table.add<PaddingMaskOp>(lowerPaddingMask, printAxis);
  table.add<CausalMaskOp>(lowerCausalMask, printAxis);
}
