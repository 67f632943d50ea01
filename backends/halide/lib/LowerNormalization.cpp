//===- LowerNormalization.cpp - Row reductions as Halide algorithms -------===//
//
// softmax, log_softmax, layer_norm, rms_norm and argmax: per-row statistics (reductions
// along one axis) and a pass that uses them. The -inf and NaN cases follow the reference
// interpreter; because Halide compiles with no-infinities/no-NaNs fast-math flags, every
// test for them is strict_float (or is_nan, which always is), and results that are -inf
// or NaN are selected as bit patterns (floatBits) rather than as float constants.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

/// The output has the input's shape: pin its dynamic extents to the input's.
void sameExtentsAsInput(Func out, const ImageParam &input, const Extents &extents) {
  constrainLayout(out.output_buffer(), extents);
  std::vector<Expr> source;
  for (size_t d = 0; d < extents.size(); ++d)
    source.push_back(input.dim(static_cast<int>(d)).extent());
  tieOutputExtents(out, extents, source);
}

/// Starts a reduction of `input`, whose extents `shape` has, along its tensor axis
/// `axis`: the kernel's Vars, extents, Halide axis and the reduction over it.
void beginRowReduction(RowReductionKernel &kernel, Value input, const ImageParam &shape,
                       int64_t axis) {
  RankedTensorType type = tensorType(input);
  int rank = type.getRank();
  kernel.extents = extentsOf(type);
  kernel.vars = makeVars(rank);
  kernel.axis = halideDim(rank, axis);
  kernel.r = RDom(0, extentOf(shape, kernel.extents, kernel.axis), "r");
}

/// Starts a row reduction (see above) of an op's own input: returns the input.
ImageParam beginRowReduction(RowReductionKernel &kernel, Value input, int64_t axis) {
  ImageParam param = makeInput(input, "input");
  beginRowReduction(kernel, input, param, axis);
  return param;
}

/// What softmax and log_softmax share: the input and the row statistics.
struct SoftmaxRows {
  ImageParam input;
  std::vector<Var> rows; // the Vars of a row statistic
  Expr xr;               // the input at the reduction's position along the axis
  Expr rowInvalid;       // whether the row holds a NaN or +inf
  Expr safeMax;          // the max to subtract: 0 for a fully masked row
};

/// Starts a softmax of `value` along its tensor axis `axis` with the max and a flag for
/// a NaN or +inf in the row in one reduction (a Tuple): one pass over the row. Such a
/// row is NaN, as in the interpreter and PyTorch, rather than renormalised around the
/// bad value. Defines `kernel.max`.
SoftmaxRows beginSoftmax(SoftmaxKernel &kernel, Value value, int64_t axis) {
  ImageParam input = beginRowReduction(kernel, value, axis);
  std::vector<Var> rows = withoutAxis(kernel.vars, kernel.axis);
  Expr xr = input(withAxis(kernel.vars, kernel.axis, kernel.r.x));
  Expr invalid = Halide::cast<uint8_t>(Halide::strict_float(!(xr < kInf)));
  kernel.max = Func("row_max");
  kernel.max(rows) = Halide::Tuple(-kInf, Halide::cast<uint8_t>(0));
  kernel.max(rows) = Halide::Tuple(Halide::max(kernel.max(rows)[0], xr),
                                   Halide::max(kernel.max(rows)[1], invalid));
  // A fully masked row has max -inf; subtracting 0 instead keeps (-inf) - (-inf) out
  // (softmax's zero-sum guard then turns the row into zeros). Halide compiles with
  // no-infinities fast-math flags, so the test for -inf is strict_float; callers select
  // masked elements to 0 rather than trusting exp(-inf).
  Expr max = kernel.max(rows)[0];
  Expr rowInvalid = kernel.max(rows)[1] != 0;
  Expr safeMax = Halide::strict_float(Halide::select(max == -kInf, 0.0f, max));
  return {input, rows, xr, rowInvalid, safeMax};
}

KernelAlgorithm lowerSoftmax(SoftmaxOp op) {
  SoftmaxKernel kernel;
  SoftmaxRows s = beginSoftmax(kernel, op.input(), op.axis());
  const std::vector<Var> &rows = s.rows;
  // Masked elements are selected to 0 rather than trusted to exp(-inf).
  Expr x = s.input(kernel.vars);
  kernel.exp = Func("row_exp");
  kernel.exp(kernel.vars) =
      Halide::select(Halide::strict_float(x == -kInf), 0.0f, Halide::exp(x - s.safeMax));
  kernel.sum = Func("row_sum");
  kernel.sum(rows) = 0.0f;
  kernel.sum(rows) += kernel.exp(withAxis(kernel.vars, kernel.axis, kernel.r.x));
  Expr sum = kernel.sum(rows);
  Expr invSum = Halide::select(sum == 0.0f, 0.0f, 1.0f / sum);
  kernel.output = Func("result");
  // NaN is written as bits: fast-math may fold a NaN constant through the select.
  kernel.output(kernel.vars) = floatBits(Halide::select(
      s.rowInvalid, kNaNBits,
      Halide::reinterpret(Halide::Int(32), kernel.exp(kernel.vars) * invSum)));

  sameExtentsAsInput(kernel.output, s.input, kernel.extents);
  return {{s.input}, {kernel}};
}

/// x - max - log(sum(exp(x - max))) in three passes over the row: the max (with a flag
/// for a NaN or +inf in the row, the two values that make the interpreter's row NaN),
/// the sum, the result. exp runs in the sum only, so it is not staged as in softmax.
KernelAlgorithm lowerLogSoftmax(LogSoftmaxOp op) {
  SoftmaxKernel kernel;
  SoftmaxRows s = beginSoftmax(kernel, op.input(), op.axis());
  const std::vector<Var> &rows = s.rows;
  Expr xr = s.xr, safeMax = s.safeMax;
  // As in softmax: a fully masked row subtracts 0, masked elements add 0.
  kernel.sum = Func("row_sum");
  kernel.sum(rows) = 0.0f;
  // The subtraction is strict for the reason given at `value` below.
  kernel.sum(rows) += Halide::select(Halide::strict_float(xr == -kInf), 0.0f,
                                     Halide::exp(Halide::strict_float(xr - safeMax)));
  // sum >= 1 (the max contributes exp(0)) unless every element is -inf, and then every
  // element takes the -inf branch: log(0) is computed but never selected.
  Expr logSum = Halide::log(kernel.sum(rows));
  Expr x = s.input(kernel.vars);
  // strict_float: with fast-math flags the subtraction would be assumed never to meet
  // an infinity, and LLVM then drops the -inf branch below (measured: masked rows came
  // out NaN); it also keeps the two subtractions in the interpreter's order.
  Expr value =
      Halide::reinterpret(Halide::Int(32), Halide::strict_float((x - safeMax) - logSum));
  kernel.output = Func("result");
  kernel.output(kernel.vars) = floatBits(Halide::select(
      s.rowInvalid, kNaNBits, Halide::strict_float(x == -kInf), kNegInfBits, value));

  sameExtentsAsInput(kernel.output, s.input, kernel.extents);
  return {{s.input}, {kernel}};
}

/// What layer_norm and rms_norm share: a row reduction over the last dimension of
/// their input, read through the boundary (in a group: the prologue), and 1-D
/// parameters of the row's length.
struct NormalizedRows {
  Operand input;
  std::vector<ImageParam> parameters;
  std::vector<Var> rows; // the Vars of a row statistic
  Expr count;            // the row's length, as a float
};

NormalizedRows
beginNormalization(RowReductionKernel &kernel, Value input, KernelBoundary &boundary,
                   std::initializer_list<std::pair<Value, const char *>> parameters) {
  NormalizedRows n;
  n.input = boundary.operand(input, "input");
  beginRowReduction(kernel, input, n.input.shape, tensorType(input).getRank() - 1);
  Expr features = extentOf(n.input.shape, kernel.extents, 0);
  for (auto [value, name] : parameters) {
    n.parameters.push_back(boundary.input(value, name));
    if (!isStatic(kernel.extents[0]))
      n.parameters.back().dim(0).set_extent(features);
  }
  n.rows = withoutAxis(kernel.vars, 0);
  n.count = Halide::cast<float>(features);
  return n;
}

KernelAlgorithm lowerLayerNorm(LayerNormOp op, KernelBoundary &boundary) {
  LayerNormKernel kernel;
  NormalizedRows n = beginNormalization(kernel, op.input(), boundary,
                                        {{op.gamma(), "gamma"}, {op.beta(), "beta"}});
  Func input = n.input.values;
  ImageParam gamma = n.parameters[0], beta = n.parameters[1];
  const std::vector<Var> &rows = n.rows;
  Expr count = n.count;

  // Two passes over the row, both relative to its first element: the deviations
  // (x - x0) - mean(x - x0) stay accurate when every x is ~1000 with unit spread, where
  // a float mean itself is off by half an ulp of 1000 and E[x^2] - E[x]^2 cancels to
  // noise. strict_float keeps Halide's default reassociation from folding the two
  // subtractions back into x - (x0 + mean).
  Expr first = input(withAxis(kernel.vars, 0, 0));
  kernel.sum = Func("row_sum");
  kernel.sum(rows) = 0.0f;
  kernel.sum(rows) += input(withAxis(kernel.vars, 0, kernel.r.x)) - first;
  Expr mean = kernel.sum(rows) / count;
  auto deviation = [&](Expr x) { return Halide::strict_float((x - first) - mean); };
  kernel.squares = Func("row_squares");
  kernel.squares(rows) = 0.0f;
  Expr d = deviation(input(withAxis(kernel.vars, 0, kernel.r.x)));
  kernel.squares(rows) += d * d;
  Expr epsilon = op.epsilon().convertToFloat();
  Expr invStd = 1.0f / Halide::sqrt(kernel.squares(rows) / count + epsilon);
  Var feature = kernel.vars[0];
  kernel.output = Func("result");
  kernel.output(kernel.vars) = boundary.store(
      deviation(input(kernel.vars)) * invStd * gamma(feature) + beta(feature),
      kernel.vars);

  sameExtentsAsInput(kernel.output, n.input.shape, kernel.extents);
  return {boundary.inputs(), {kernel}};
}

/// x * rsqrt(mean(x^2) + epsilon) * gamma: one pass for the sum of squares (in f32, as
/// LLaMA's RMSNorm accumulates after its cast; the schedule sums in vector lanes), one
/// for the result. rsqrt is 1 / sqrt, not an approximate reciprocal square root.
KernelAlgorithm lowerRmsNorm(RmsNormOp op, KernelBoundary &boundary) {
  RmsNormKernel kernel;
  NormalizedRows n =
      beginNormalization(kernel, op.input(), boundary, {{op.gamma(), "gamma"}});
  Func input = n.input.values;
  Expr x = input(withAxis(kernel.vars, 0, kernel.r.x));
  kernel.squares = Func("row_squares");
  kernel.squares(n.rows) = 0.0f;
  kernel.squares(n.rows) += x * x;
  Expr epsilon = op.epsilon().convertToFloat();
  Expr invRms = 1.0f / Halide::sqrt(kernel.squares(n.rows) / n.count + epsilon);
  kernel.output = Func("result");
  kernel.output(kernel.vars) = boundary.store(
      input(kernel.vars) * invRms * n.parameters[0](kernel.vars[0]), kernel.vars);

  sameExtentsAsInput(kernel.output, n.input.shape, kernel.extents);
  return {boundary.inputs(), {kernel}};
}

/// The first index of the row's maximum, or of its first NaN, in two vectorisable
/// passes: the max, then the least key over the row, where element j's key is j for a
/// NaN, L + j for an element equal to the max, 2L otherwise (L: the row length). Both
/// are min/max reductions, which Halide can split into vector lanes (rfactor); the
/// textbook argmax (keep {index, value}, replace on greater) is a serial chain, and
/// its lanes, each holding every 16th element, would have to be merged by index
/// to keep the first of equal maxima. When a NaN is present the max may be anything
/// (fast-math max drops NaNs in either operand order), but then a NaN's key wins.
KernelAlgorithm lowerArgmax(ArgmaxOp op) {
  ArgmaxKernel kernel;
  ImageParam input = beginRowReduction(kernel, op.input(), op.axis());
  int rank = static_cast<int>(kernel.vars.size());
  std::vector<Var> rows = withoutAxis(kernel.vars, kernel.axis);
  Expr length = extentOf(input, kernel.extents, kernel.axis);
  Expr j = kernel.r.x;
  Expr x = input(withAxis(kernel.vars, kernel.axis, j));

  kernel.max = Func("row_max");
  kernel.max(rows) = -kInf;
  kernel.max(rows) = Halide::max(kernel.max(rows), x);
  Expr none = 2 * length;
  kernel.key = Func("row_key");
  kernel.key(rows) = none;
  Expr isMax = Halide::strict_float(x == kernel.max(rows));
  kernel.key(rows) = Halide::min(
      kernel.key(rows), Halide::select(Halide::is_nan(x), j, isMax, j + length, none));
  Expr key = kernel.key(rows);
  Expr index = Halide::select(key >= length, key - length, key);
  // An empty row has no index to give (the interpreter's error): a run-time error,
  // raised only when the result has elements.
  if (!isStatic(kernel.extents[kernel.axis]))
    index = Halide::require(length > 0, index, "argmax along an axis of size 0");
  kernel.output = Func("result");
  kernel.output(rows) = index;

  Extents outExtents = kernel.extents;
  outExtents.erase(outExtents.begin() + kernel.axis);
  constrainLayout(kernel.output.output_buffer(), outExtents);
  std::vector<Expr> source;
  for (int d = 0; d < rank; ++d)
    if (d != kernel.axis)
      source.push_back(input.dim(d).extent());
  tieOutputExtents(kernel.output, outExtents, source);
  return {{input}, {kernel}};
}

} // namespace

void kiln::halide_backend::populateNormalizationLowerings(LoweringTable &table) {
  table.add<SoftmaxOp>(lowerSoftmax, printAxis);
  table.add<LogSoftmaxOp>(lowerLogSoftmax, printAxis);
  table.addAnchor<LayerNormOp>(lowerLayerNorm, [](LayerNormOp op, llvm::raw_ostream &os) {
    os << "{epsilon=" << op.epsilonAttr() << "}";
  });
  table.addAnchor<RmsNormOp>(lowerRmsNorm, [](RmsNormOp op, llvm::raw_ostream &os) {
    os << "{epsilon=" << op.epsilonAttr() << "}";
  });
  table.add<ArgmaxOp>(lowerArgmax, printAxis);
}
