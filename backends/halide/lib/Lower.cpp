//===- Lower.cpp - kiln ops as Halide algorithms --------------------------===//
//
// The algorithm of each op, written once for every target; the schedules live in
// Schedules*.cpp. Each input is an ImageParam pinned to what the op's type says
// (static extents, minimum 0, dense row-major strides): a constant extent and a unit
// stride are what let Halide emit unpredicated vector loads. A dynamic extent is
// tied to the input it comes from, so a caller whose buffers disagree gets Halide's
// error at run time instead of a read out of bounds.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "Schedules.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;
using Halide::Expr;
using Halide::Func;
using Halide::ImageParam;
using Halide::OutputImageParam;
using Halide::Var;

namespace {

RankedTensorType tensorType(Value value) {
  return value.getType().cast<RankedTensorType>();
}

/// The type's dimensions in Halide order (index 0 is the last tensor dimension).
Extents extentsOf(RankedTensorType type) {
  Extents extents;
  for (int64_t d : llvm::reverse(type.getShape()))
    extents.push_back(ShapedType::isDynamic(d) ? kDynamicExtent : d);
  return extents;
}

bool isStatic(int64_t extent) { return extent != kDynamicExtent; }

/// Halide's element type for `type`; f32 and i32 are the dialect's element types.
Halide::Type halideType(RankedTensorType type) {
  return type.getElementType().isF32() ? Halide::Float(32) : Halide::Int(32);
}

/// The extent of dimension `dim` of `buffer`: the static one when the type knows it.
Expr extentOf(const OutputImageParam &buffer, const Extents &extents, int dim) {
  return isStatic(extents[dim]) ? Expr(static_cast<int>(extents[dim]))
                                : buffer.dim(dim).extent();
}

/// Pins `buffer` to its type: minimum 0, static extents, dense row-major strides.
void constrainLayout(OutputImageParam buffer, const Extents &extents) {
  Expr stride = 1;
  for (int i = 0; i < static_cast<int>(extents.size()); ++i) {
    Halide::Internal::Dimension dim = buffer.dim(i);
    if (isStatic(extents[i])) {
      dim.set_bounds(0, static_cast<int>(extents[i]));
    } else {
      dim.set_min(0);
      // Only autoschedulers read estimates; a sequence of a few hundred is typical.
      dim.set_estimate(0, 128);
    }
    dim.set_stride(stride);
    stride = stride * extentOf(buffer, extents, i);
  }
}

ImageParam makeInput(Value operand, const std::string &name) {
  RankedTensorType type = tensorType(operand);
  ImageParam param(halideType(type), type.getRank(), name);
  constrainLayout(param, extentsOf(type));
  return param;
}

std::vector<Var> makeVars(int rank) {
  std::vector<Var> vars;
  for (int i = 0; i < rank; ++i)
    vars.emplace_back("d" + std::to_string(i));
  return vars;
}

std::vector<Expr> asExprs(const std::vector<Var> &vars) {
  return std::vector<Expr>(vars.begin(), vars.end());
}

/// Indices into an operand broadcast (NumPy style) to an output indexed by `vars`:
/// dimensions align from the innermost, and a static size-1 dimension reads index 0.
std::vector<Expr> broadcastIndex(const Extents &operand, const std::vector<Var> &vars) {
  std::vector<Expr> index;
  for (size_t i = 0; i < operand.size(); ++i)
    index.push_back(operand[i] == 1 ? Expr(0) : Expr(vars[i]));
  return index;
}

/// Where the extent of each output dimension comes from: one operand's dimension
/// (the first that has it and does not broadcast there), or the static type.
struct ExtentSource {
  std::vector<std::pair<ImageParam, Extents>> operands;

  /// Pins output dimension `dim` (static `extent`, or dynamic) to its source and every
  /// other non-broadcasting operand of that dimension to the same size. `operandDims`
  /// gives, per operand, the dimension that corresponds (-1: none).
  void tie(OutputImageParam output, int dim, int64_t extent,
           llvm::ArrayRef<int> operandDims) {
    if (isStatic(extent))
      return; // constrainLayout pinned every side already
    llvm::Optional<Expr> source;
    for (size_t i = 0; i < operands.size(); ++i) {
      int d = operandDims[i];
      if (d < 0 || operands[i].second[d] == 1)
        continue;
      Expr e = operands[i].first.dim(d).extent();
      if (!source)
        source = e;
      else
        operands[i].first.dim(d).set_extent(*source);
    }
    if (source)
      output.dim(dim).set_extent(*source);
  }
};

//===----------------------------------------------------------------------===//
// The algorithms
//===----------------------------------------------------------------------===//

/// An elementwise op of broadcast operands: `combine` receives the operands' values.
LoweredKernel
lowerPointwise(Operation *op, const std::vector<std::string> &names,
               const std::function<Expr(const std::vector<Expr> &)> &combine,
               const Halide::Target &target) {
  LoweredKernel lowered;
  PointwiseKernel kernel;
  RankedTensorType resultType = tensorType(op->getResult(0));
  kernel.extents = extentsOf(resultType);
  kernel.vars = makeVars(resultType.getRank());
  ExtentSource sources;
  std::vector<Expr> values;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    ImageParam input = makeInput(op->getOperand(i), names[i]);
    Extents extents = extentsOf(tensorType(op->getOperand(i)));
    values.push_back(input(broadcastIndex(extents, kernel.vars)));
    lowered.inputs.push_back(input);
    sources.operands.emplace_back(input, extents);
  }
  kernel.output = Func("result");
  kernel.output(kernel.vars) = combine(values);
  OutputImageParam out = kernel.output.output_buffer();
  constrainLayout(out, kernel.extents);
  for (int d = 0; d < resultType.getRank(); ++d) {
    llvm::SmallVector<int> dims;
    for (const auto &operand : sources.operands)
      dims.push_back(d < static_cast<int>(operand.second.size()) ? d : -1);
    sources.tie(out, d, kernel.extents[d], dims);
  }
  schedulePointwiseCpu(kernel, target);
  lowered.output = kernel.output;
  return lowered;
}

LoweredKernel lowerMatmul(MatmulOp op, const Halide::Target &target) {
  MatmulKernel kernel;
  Extents lhsExt = extentsOf(tensorType(op.lhs())),
          rhsExt = extentsOf(tensorType(op.rhs()));
  ImageParam lhs = makeInput(op.lhs(), "lhs"), rhs = makeInput(op.rhs(), "rhs");
  int rank = tensorType(op.result()).getRank();
  kernel.extents = extentsOf(tensorType(op.result()));
  kernel.vars = makeVars(rank);
  kernel.transposeRhs = op.transpose_rhs();
  kernel.lhsVaries.assign(rank, false);
  kernel.rhsVaries.assign(rank, false);
  for (int d = 2; d < rank; ++d) {
    kernel.lhsVaries[d] = d < static_cast<int>(lhsExt.size()) && lhsExt[d] != 1;
    kernel.rhsVaries[d] = d < static_cast<int>(rhsExt.size()) && rhsExt[d] != 1;
  }
  Var n = kernel.vars[0], m = kernel.vars[1];

  // Halide dims of the matrix dimensions: [..., M, K] is (k, m), transposed (m, k).
  int lhsK = op.transpose_lhs() ? 1 : 0, lhsM = 1 - lhsK;
  int rhsK = op.transpose_rhs() ? 0 : 1, rhsN = 1 - rhsK;
  Expr M = extentOf(lhs, lhsExt, lhsM), N = extentOf(rhs, rhsExt, rhsN);
  kernel.contraction = isStatic(lhsExt[lhsK]) ? lhsExt[lhsK] : rhsExt[rhsK];
  Expr K = isStatic(kernel.contraction) ? Expr(static_cast<int>(kernel.contraction))
                                        : lhs.dim(lhsK).extent();
  if (!isStatic(lhsExt[lhsK]) && isStatic(kernel.contraction))
    lhs.dim(lhsK).set_extent(K);
  if (!isStatic(rhsExt[rhsK]))
    rhs.dim(rhsK).set_extent(K);
  kernel.k = Halide::RDom(0, K, "k");
  Expr k = kernel.k.x;

  // A schedule computes whole register tiles and drops what lies past the end, so the
  // rows it reads are clamped; the clamp is per row, hoisted out of the k loop.
  std::vector<Expr> lhsIndex = broadcastIndex(lhsExt, kernel.vars);
  lhsIndex[lhsK] = k;
  lhsIndex[lhsM] = Halide::clamp(m, 0, M - 1);
  for (size_t d = 2; d < lhsIndex.size(); ++d)
    if (kernel.lhsVaries[d])
      lhsIndex[d] = Halide::clamp(kernel.vars[d], 0, lhs.dim(d).extent() - 1);

  // The same holds for columns; `likely` lets Halide peel the clamp off every panel
  // but the last.
  kernel.packN = Var("pn");
  kernel.packK = Var("pk");
  std::vector<Var> packVars = {kernel.packN, kernel.packK};
  for (size_t d = 2; d < rhsExt.size(); ++d)
    packVars.emplace_back("pb" + std::to_string(d));
  std::vector<Expr> rhsIndex = asExprs(packVars);
  rhsIndex[rhsN] = Halide::clamp(Halide::likely(kernel.packN), 0, N - 1);
  rhsIndex[rhsK] = kernel.packK;
  kernel.packedRhs = Func("packed_rhs");
  kernel.packedRhs(packVars) = rhs(rhsIndex);

  std::vector<Expr> packIndex = broadcastIndex(rhsExt, kernel.vars);
  packIndex[0] = n;
  packIndex[1] = k;
  kernel.product = Func("product");
  kernel.product(kernel.vars) = 0.0f;
  kernel.product(kernel.vars) += lhs(lhsIndex) * kernel.packedRhs(packIndex);
  kernel.output = Func("result");
  if (isStatic(kernel.contraction)) {
    kernel.output(kernel.vars) = kernel.product(kernel.vars);
  } else {
    kernel.emptyContraction = K == 0;
    kernel.output(kernel.vars) =
        Halide::select(kernel.emptyContraction, 0.0f, kernel.product(kernel.vars));
  }

  OutputImageParam out = kernel.output.output_buffer();
  constrainLayout(out, kernel.extents);
  if (!isStatic(kernel.extents[0]))
    out.dim(0).set_extent(N);
  if (!isStatic(kernel.extents[1]))
    out.dim(1).set_extent(M);
  ExtentSource sources;
  sources.operands = {{lhs, lhsExt}, {rhs, rhsExt}};
  for (int d = 2; d < rank; ++d)
    sources.tie(out, d, kernel.extents[d],
                {d < static_cast<int>(lhsExt.size()) ? d : -1,
                 d < static_cast<int>(rhsExt.size()) ? d : -1});
  scheduleMatmulCpu(kernel, target);
  return {{lhs, rhs}, kernel.output};
}

/// Replaces the `axis` entry of `vars` by `value`.
std::vector<Expr> withAxis(const std::vector<Var> &vars, int axis, Expr value) {
  std::vector<Expr> index = asExprs(vars);
  index[axis] = std::move(value);
  return index;
}

std::vector<Var> withoutAxis(const std::vector<Var> &vars, int axis) {
  std::vector<Var> rest = vars;
  rest.erase(rest.begin() + axis);
  return rest;
}

LoweredKernel lowerSoftmax(SoftmaxOp op, const Halide::Target &target) {
  SoftmaxKernel kernel;
  ImageParam input = makeInput(op.input(), "input");
  RankedTensorType type = tensorType(op.input());
  int rank = type.getRank();
  kernel.extents = extentsOf(type);
  kernel.vars = makeVars(rank);
  kernel.axis = rank - 1 - static_cast<int>(op.axis());
  std::vector<Var> rows = withoutAxis(kernel.vars, kernel.axis);
  kernel.r = Halide::RDom(0, extentOf(input, kernel.extents, kernel.axis), "r");
  const float inf = std::numeric_limits<float>::infinity();

  kernel.max = Func("row_max");
  kernel.max(rows) = -inf;
  kernel.max(rows) = Halide::max(kernel.max(rows),
                                 input(withAxis(kernel.vars, kernel.axis, kernel.r.x)));
  // A fully masked row has max -inf; subtracting 0 instead keeps (-inf) - (-inf) out,
  // and the zero-sum guard below turns the row into zeros. Halide compiles with
  // no-infinities fast-math flags, so the tests for -inf are strict_float, and masked
  // elements are selected to 0 rather than trusted to exp(-inf).
  Expr max = kernel.max(rows);
  Expr safeMax = Halide::strict_float(Halide::select(max == -inf, 0.0f, max));
  Expr x = input(kernel.vars);
  kernel.exp = Func("row_exp");
  kernel.exp(kernel.vars) =
      Halide::select(Halide::strict_float(x == -inf), 0.0f, Halide::exp(x - safeMax));
  kernel.sum = Func("row_sum");
  kernel.sum(rows) = 0.0f;
  kernel.sum(rows) += kernel.exp(withAxis(kernel.vars, kernel.axis, kernel.r.x));
  Expr sum = kernel.sum(rows);
  Expr invSum = Halide::select(sum == 0.0f, 0.0f, 1.0f / sum);
  kernel.output = Func("result");
  kernel.output(kernel.vars) = kernel.exp(kernel.vars) * invSum;

  OutputImageParam out = kernel.output.output_buffer();
  constrainLayout(out, kernel.extents);
  for (int d = 0; d < rank; ++d)
    if (!isStatic(kernel.extents[d]))
      out.dim(d).set_extent(input.dim(d).extent());
  scheduleSoftmaxCpu(kernel, target);
  return {{input}, kernel.output};
}

LoweredKernel lowerLayerNorm(LayerNormOp op, const Halide::Target &target) {
  LayerNormKernel kernel;
  ImageParam input = makeInput(op.input(), "input");
  ImageParam gamma = makeInput(op.gamma(), "gamma"), beta = makeInput(op.beta(), "beta");
  RankedTensorType type = tensorType(op.input());
  int rank = type.getRank();
  kernel.extents = extentsOf(type);
  kernel.vars = makeVars(rank);
  Expr features = extentOf(input, kernel.extents, 0);
  if (!isStatic(kernel.extents[0])) {
    gamma.dim(0).set_extent(features);
    beta.dim(0).set_extent(features);
  }
  std::vector<Var> rows = withoutAxis(kernel.vars, 0);
  kernel.r = Halide::RDom(0, features, "r");
  Expr count = Halide::cast<float>(features);

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
  kernel.output(kernel.vars) =
      deviation(input(kernel.vars)) * invStd * gamma(feature) + beta(feature);

  OutputImageParam out = kernel.output.output_buffer();
  constrainLayout(out, kernel.extents);
  for (int i = 0; i < rank; ++i)
    if (!isStatic(kernel.extents[i]))
      out.dim(i).set_extent(input.dim(i).extent());
  scheduleLayerNormCpu(kernel, target);
  return {{input, gamma, beta}, kernel.output};
}

/// `permutation` in Halide order: output Halide dim j reads input Halide dim
/// source[j].
std::vector<int> halideSources(TransposeOp op) {
  int rank = tensorType(op.result()).getRank();
  std::vector<int> source(rank);
  for (auto it : llvm::enumerate(op.permutation())) {
    int tensorDim = static_cast<int>(it.index());
    int from = static_cast<int>(it.value().cast<IntegerAttr>().getInt());
    source[rank - 1 - tensorDim] = rank - 1 - from;
  }
  return source;
}

/// A transpose that keeps the innermost dimension copies rows (a pointwise kernel);
/// one that moves it transposes tiles.
LoweredKernel lowerTranspose(TransposeOp op, const Halide::Target &target) {
  ImageParam input = makeInput(op.input(), "input");
  Extents extents = extentsOf(tensorType(op.result()));
  int rank = static_cast<int>(extents.size());
  std::vector<Var> vars = makeVars(rank);
  std::vector<int> source = halideSources(op);
  std::vector<Expr> index(rank);
  for (int j = 0; j < rank; ++j)
    index[source[j]] = vars[j];
  Func output("result");
  output(vars) = input(index);
  OutputImageParam out = output.output_buffer();
  constrainLayout(out, extents);
  for (int j = 0; j < rank; ++j)
    if (!isStatic(extents[j]))
      out.dim(j).set_extent(input.dim(source[j]).extent());

  if (rank == 0 || source[0] == 0) {
    schedulePointwiseCpu({output, vars, extents}, target);
  } else {
    TransposeKernel kernel{output, input, vars, extents};
    kernel.inputOfOutputInner = source[0];
    for (int j = 0; j < rank; ++j)
      if (source[j] == 0)
        kernel.readsInputInner = j;
    scheduleTransposeCpu(kernel, target);
  }
  return {{input}, output};
}

/// The attributes that decide what a kernel computes, read through the accessors so
/// that a defaulted attribute and an explicit default give the same signature.
void printKernelAttributes(Operation *op, llvm::raw_ostream &os) {
  llvm::TypeSwitch<Operation *>(op)
      .Case<MatmulOp>([&](MatmulOp m) {
        os << "{transpose_lhs=" << m.transpose_lhs()
           << ",transpose_rhs=" << m.transpose_rhs() << "}";
      })
      .Case<ScaleOp>([&](ScaleOp s) { os << "{factor=" << s.factorAttr() << "}"; })
      .Case<SoftmaxOp>([&](SoftmaxOp s) { os << "{axis=" << s.axis() << "}"; })
      .Case<LayerNormOp>(
          [&](LayerNormOp l) { os << "{epsilon=" << l.epsilonAttr() << "}"; })
      .Case<TransposeOp>(
          [&](TransposeOp t) { os << "{permutation=" << t.permutation() << "}"; })
      .Default([&](Operation *other) { os << other->getAttrDictionary(); });
}

} // namespace

bool kiln::halide_backend::needsKernel(Operation *op) {
  return isa<MatmulOp, AddOp, MulOp, ScaleOp, ReluOp, SoftmaxOp, LayerNormOp,
             TransposeOp>(op);
}

std::string kiln::halide_backend::kernelSignature(Operation *op) {
  std::string signature;
  llvm::raw_string_ostream os(signature);
  os << op->getName().getStringRef();
  printKernelAttributes(op, os);
  os << "(";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << ")->(";
  llvm::interleaveComma(op->getResultTypes(), os);
  os << ")";
  return os.str();
}

FailureOr<LoweredKernel> kiln::halide_backend::lowerOp(Operation *op,
                                                       const Halide::Target &target) {
  if (!needsKernel(op)) {
    op->emitError() << "'" << op->getName() << "' is not lowered to a kernel";
    return failure();
  }
  // Every lower* applies the CPU schedules; SchedulesCuda.cpp (a later issue) adds the
  // GPU family, to be chosen here.
  if (target.has_gpu_feature()) {
    op->emitError() << "the Halide backend has no GPU schedule for '" << op->getName()
                    << "' yet (target " << target.to_string() << ")";
    return failure();
  }
  using Values = std::vector<Expr>;
  LoweredKernel kernel =
      llvm::TypeSwitch<Operation *, LoweredKernel>(op)
          .Case<AddOp>([&](AddOp) {
            return lowerPointwise(
                op, {"lhs", "rhs"}, [](const Values &v) { return v[0] + v[1]; }, target);
          })
          .Case<MulOp>([&](MulOp) {
            return lowerPointwise(
                op, {"lhs", "rhs"}, [](const Values &v) { return v[0] * v[1]; }, target);
          })
          .Case<ScaleOp>([&](ScaleOp s) {
            Expr factor = s.factor().convertToFloat();
            return lowerPointwise(
                op, {"input"}, [&](const Values &v) { return v[0] * factor; }, target);
          })
          .Case<ReluOp>([&](ReluOp) {
            return lowerPointwise(
                op, {"input"}, [](const Values &v) { return Halide::max(v[0], 0.0f); },
                target);
          })
          .Case<MatmulOp>([&](MatmulOp m) { return lowerMatmul(m, target); })
          .Case<SoftmaxOp>([&](SoftmaxOp s) { return lowerSoftmax(s, target); })
          .Case<LayerNormOp>([&](LayerNormOp l) { return lowerLayerNorm(l, target); })
          .Case<TransposeOp>([&](TransposeOp t) { return lowerTranspose(t, target); });
  return kernel;
}
