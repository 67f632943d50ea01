//===- AttentionMatch.cpp - Recognising attention in a kiln graph ---------===//
//
// Walks from `matmul(softmax(x), V)` back through the masks and scales to the Q·Kᵀ
// matmul. Every way out that is not a match says why, because a fusion that silently
// does not happen is what users of ML compilers complain about most.
//
// What is accepted keeps the graph's meaning: scales multiply (the scores' rounding
// aside); masks are additive tensors, or masked_fill with -inf of a mask builder's
// boolean output, which equals adding the builder's additive output (for finite
// scores; a score that is already +inf or NaN would give NaN instead of -inf). A
// finite masked_fill value is refused: a row masked everywhere would get uniform
// weights, which kiln.attention does not express.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatch.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace kiln;

/// `x` as printed in a message.
static std::string str(double x) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << x;
  return os.str();
}

static RankedTensorType tensorType(Value v) {
  return v.getType().cast<RankedTensorType>();
}

/// Whether `perm` swaps the last two dimensions and keeps the others.
static bool swapsLastTwo(ArrayRef<int64_t> perm) {
  size_t rank = perm.size();
  if (rank < 2)
    return false;
  for (size_t i = 0; i + 2 < rank; ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return perm[rank - 2] == static_cast<int64_t>(rank - 1) &&
         perm[rank - 1] == static_cast<int64_t>(rank - 2);
}

/// The value of a splat kiln.constant, or None.
static Optional<double> splatValue(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  if (!constant || !constant.value().isSplat())
    return None;
  return double(constant.value().getSplatValue<float>());
}

namespace {
/// One multiplication of the scores by a constant, as kiln.scale, kiln.mul or kiln.div.
struct ScaleStep {
  double factor = 1.0;
  Value input;
  /// Set when `op` scales by something that is not one constant factor.
  std::string problem;
};
} // namespace

/// The scale `op` applies, or None when `op` is no scale at all.
static Optional<ScaleStep> asScale(Operation *op) {
  ScaleStep step;
  if (auto scale = dyn_cast<ScaleOp>(op)) {
    step.factor = scale.factor().convertToFloat();
    step.input = scale.input();
    return step;
  }
  if (!isa<MulOp, DivOp>(op))
    return None;
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  bool isDiv = isa<DivOp>(op);
  // x * c and c * x scale x; x / c scales x by 1/c; c / x is no scale.
  bool constantRhs = rhs.getDefiningOp<ConstantOp>() != nullptr;
  bool constantLhs = !isDiv && lhs.getDefiningOp<ConstantOp>() != nullptr;
  step.input = constantRhs ? lhs : rhs;
  Value constant = constantRhs ? rhs : lhs;
  std::string opName = op->getName().getStringRef().str();
  if (isDiv && !constantRhs && lhs.getDefiningOp<ConstantOp>()) {
    step.problem = "the scores divide a kiln.constant ('kiln.div' of a constant by "
                   "them), which is no scale";
    return step;
  }
  if (!constantRhs && !constantLhs) {
    step.problem = "the scores go through a '" + opName +
                   "' by a tensor that is not a "
                   "kiln.constant, so the scale is not one known factor";
    return step;
  }
  Optional<double> value = splatValue(constant);
  if (!value) {
    step.problem = "the scores go through a '" + opName +
                   "' by a kiln.constant that is "
                   "not a splat, so the scale is not one factor";
    return step;
  }
  if (op->getResult(0).getType() != step.input.getType()) {
    step.problem = "the kiln.constant of '" + opName + "' broadcasts the scores to " +
                   "the larger shape of its result";
    return step;
  }
  step.factor = isDiv ? 1.0 / *value : *value;
  if (!std::isfinite(step.factor))
    step.problem = "the scores are divided by 0";
  return step;
}

/// Follows `v` back through reshapes and transposes to the mask builder that made it,
/// collecting those ops (builder first) in `chain`; null when something else made it.
static Operation *maskBuilder(Value v, llvm::SmallVectorImpl<Operation *> &chain) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<PaddingMaskOp, CausalMaskOp>(def)) {
      chain.insert(chain.begin(), def);
      return def;
    }
    if (!isa<ReshapeOp, TransposeOp>(def))
      return nullptr;
    chain.insert(chain.begin(), def);
    v = def->getOperand(0);
  }
  return nullptr;
}

/// Whether `reshape` only adds or drops leading 1s around a static trailing matrix, so
/// that a causal mask stays causal (a transpose would flip it).
static bool keepsTrailingMatrix(Operation *reshape) {
  if (!isa<ReshapeOp>(reshape))
    return false;
  auto in = tensorType(reshape->getOperand(0)), out = tensorType(reshape->getResult(0));
  if (!in.hasStaticShape() || !out.hasStaticShape() || in.getRank() < 2 ||
      out.getRank() < 2)
    return false;
  auto leadingOnes = [](ArrayRef<int64_t> shape) {
    return llvm::all_of(shape.drop_back(2), [](int64_t d) { return d == 1; });
  };
  return in.getShape().take_back(2) == out.getShape().take_back(2) &&
         leadingOnes(in.getShape()) && leadingOnes(out.getShape());
}

LogicalResult AttentionMatcher::fail(unsigned depth, const llvm::Twine &why) {
  if (reason_.empty() || depth > reasonDepth_) {
    reason_ = why.str();
    reasonDepth_ = depth;
  }
  return failure();
}

bool AttentionMatcher::provesCausal(CausalMaskOp mask, Value scores) {
  ArrayRef<int64_t> n = tensorType(mask.getResult()).getShape();
  ArrayRef<int64_t> s = tensorType(scores).getShape();
  int64_t tq = s[s.size() - 2], tk = s.back();
  if (!ShapedType::isDynamic(n[0]) && !ShapedType::isDynamic(tq) &&
      !ShapedType::isDynamic(tk))
    return n[0] == tq && n[0] == tk;
  // Dynamic sizes are equal when the entry's named dims say so (both "T").
  if (!shapes_)
    shapes_ = inferSymbolicShapes(func_, /*emitErrors=*/false);
  if (failed(*shapes_))
    return false;
  const SymbolicShapeMap &map = **shapes_;
  auto maskShape = map.find(mask.getResult()), scoreShape = map.find(scores);
  if (maskShape == map.end() || scoreShape == map.end())
    return false;
  const SymDim &size = maskShape->second[0];
  const SymShape &sym = scoreShape->second;
  return !size.isUnknown() && size == sym[sym.size() - 2] && size == sym.back();
}

LogicalResult AttentionMatcher::addMask(Value mask, Value scores, bool boolean,
                                        AttentionMatch &found, unsigned depth) {
  MaskTerm term;
  term.value = mask;
  llvm::SmallVector<Operation *, 4> chain;
  Operation *builder = maskBuilder(mask, chain);
  if (boolean) {
    if (!builder)
      return fail(depth, "the boolean mask of kiln.masked_fill is not made by "
                         "kiln.padding_mask or kiln.causal_mask (through reshapes and "
                         "transposes), so it has no additive form to fuse");
    term.booleanChain = chain;
  }
  term.zeroOrNegInf = builder != nullptr;
  if (auto causal = dyn_cast_or_null<CausalMaskOp>(builder)) {
    bool keepsCausal =
        llvm::all_of(llvm::makeArrayRef(chain).drop_front(), keepsTrailingMatrix);
    term.causal = keepsCausal && provesCausal(causal, scores);
  }
  // Outer scales (between this mask and the softmax) scale the mask too: harmless for
  // 0 / -inf and a positive factor, not otherwise.
  if (found.scale != 1.0) {
    if (!term.zeroOrNegInf)
      return fail(depth, "an additive mask is added before a scale (by " +
                             str(found.scale) +
                             "), which fusing would have to apply to the mask as well");
    if (found.scale <= 0.0)
      return fail(depth, "a mask is added before a scale by " + str(found.scale) +
                             ", which turns its -inf into +inf or NaN");
  }
  bool general = !term.zeroOrNegInf;
  if (general &&
      llvm::any_of(found.masks, [](const MaskTerm &t) { return !t.zeroOrNegInf; }))
    return fail(depth, "the scores get two additive masks that are not 0/-inf masks; "
                       "fusing them into one mask operand would change how their sum "
                       "rounds");
  found.masks.push_back(std::move(term));
  return success();
}

LogicalResult AttentionMatcher::matchChain(Value v, AttentionMatch &found,
                                           unsigned depth) {
  for (;; ++depth) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return fail(depth, "the scores the softmax reads are an entry input, not a "
                         "kiln.matmul of Q and K");
    std::string opName = def->getName().getStringRef().str();
    if (!v.hasOneUse())
      return fail(depth, "the scores computed by '" + opName +
                             "' have another use, which would still need them unfused");
    found.locations.push_back(def->getLoc());
    if (auto matmul = dyn_cast<MatmulOp>(def))
      return matchScoresMatmul(matmul, found, depth);
    if (auto add = dyn_cast<AddOp>(def)) {
      // Either operand may be the mask: try both, the one that looks like scores
      // first; of two failures, the deeper one (else the first) explains.
      auto scoresLike = [](Value operand) {
        Operation *d = operand.getDefiningOp();
        return d && isa<MatmulOp, ScaleOp, MulOp, DivOp, AddOp, MaskedFillOp>(d);
      };
      unsigned first = !scoresLike(add.lhs()) && scoresLike(add.rhs()) ? 1 : 0;
      for (unsigned side : {first, 1 - first}) {
        Value scores = add->getOperand(side), mask = add->getOperand(1 - side);
        if (scores.getType() != add.getType()) {
          (void)fail(depth,
                     "the mask " + llvm::Twine(side == 0 ? "(rhs)" : "(lhs)") +
                         " of the kiln.add broadcasts the scores to a larger shape");
          continue;
        }
        AttentionMatch attempt = found;
        if (succeeded(addMask(mask, scores, /*boolean=*/false, attempt, depth)) &&
            succeeded(matchChain(scores, attempt, depth + 1))) {
          found = std::move(attempt);
          return success();
        }
      }
      return failure();
    }
    if (auto fill = dyn_cast<MaskedFillOp>(def)) {
      float value = fill.value().convertToFloat();
      if (!(std::isinf(value) && value < 0)) {
        return fail(depth, "kiln.masked_fill fills with " + str(value) +
                               ", not -inf: with a finite fill a row masked everywhere "
                               "gets uniform weights where kiln.attention gives 0 (only "
                               "-inf fills fuse)");
      }
      if (failed(addMask(fill.mask(), fill.input(), /*boolean=*/true, found, depth)))
        return failure();
      v = fill.input();
      continue;
    }
    if (Optional<ScaleStep> step = asScale(def)) {
      if (!step->problem.empty())
        return fail(depth, step->problem);
      found.scale *= step->factor;
      v = step->input;
      continue;
    }
    return fail(depth, "the scores the softmax reads are computed by '" + opName +
                           "', which is neither a scale, a mask nor the Q·Kᵀ matmul");
  }
}

LogicalResult AttentionMatcher::matchScoresMatmul(MatmulOp matmul, AttentionMatch &found,
                                                  unsigned depth) {
  if (matmul.transpose_lhs())
    return fail(depth, "the Q·Kᵀ matmul transposes Q (transpose_lhs); kiln.attention "
                       "takes Q as [..., Tq, d]");
  found.scores = matmul;
  Value key = matmul.rhs();
  found.transposeKey = !matmul.transpose_rhs();
  if (auto transpose = key.getDefiningOp<TransposeOp>();
      found.transposeKey && transpose &&
      swapsLastTwo(extractFromI64ArrayAttr(transpose.permutation()))) {
    key = transpose.input();
    found.transposeKey = false;
  }
  // A scale of Q or K (before the matmul) is a scale of the scores: fold it in. The
  // scaled tensor stays where something else uses it.
  auto peel = [&](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      Optional<ScaleStep> step = asScale(def);
      if (!step || !step->problem.empty())
        break;
      found.scale *= step->factor;
      v = step->input;
    }
    return v;
  };
  found.query = peel(matmul.lhs());
  found.key = peel(key);
  return success();
}

LogicalResult AttentionMatcher::checkOperands(MatmulOp root, AttentionMatch &found) {
  // Past the chain: these reasons are final, whatever an earlier attempt said.
  reason_.clear();
  int64_t rank = tensorType(found.query).getRank();
  if (tensorType(found.key).getRank() != rank ||
      tensorType(found.value).getRank() != rank)
    return fail(0, "Q, K and V have ranks " + llvm::Twine(rank) + ", " +
                       llvm::Twine(tensorType(found.key).getRank()) + " and " +
                       llvm::Twine(tensorType(found.value).getRank()) +
                       "; kiln.attention takes them of one rank");
  if (rank < 3)
    return fail(0,
                "Q, K and V have rank " + llvm::Twine(rank) +
                    "; kiln.attention needs a batch dimension ([..., T, d], rank >= 3)");
  float scale = static_cast<float>(found.scale);
  if (!std::isfinite(scale) || (scale != 0.0f && !std::isnormal(scale)))
    return fail(0,
                "the scales combine to " + str(found.scale) + ", which f32 cannot hold");

  SymShape key = shapeOf(tensorType(found.key));
  if (found.transposeKey)
    std::swap(key[rank - 2], key[rank - 1]);
  llvm::Optional<SymShape> mask;
  for (const MaskTerm &term : found.masks) {
    if (term.causal)
      continue;
    SymShape shape = shapeOf(tensorType(term.value));
    mask = mask ? shape_rules::broadcast(*mask, shape).shape : shape;
  }
  ShapeResult inferred =
      shape_rules::attention(shapeOf(tensorType(found.query)), key,
                             shapeOf(tensorType(found.value)), mask ? &*mask : nullptr);
  if (!inferred.succeeded())
    return fail(0, "the shapes do not fit kiln.attention: " + inferred.error);
  SymShape declared = shapeOf(tensorType(root.getResult()));
  for (size_t i = 0; i < declared.size(); ++i)
    if (declared[i].isStatic() && inferred.shape[i].isStatic() &&
        declared[i].size != inferred.shape[i].size)
      return fail(0, "kiln.attention would give " + toString(inferred.shape) +
                         " where the matmul with V gives " + toString(declared));
  return success();
}

LogicalResult AttentionMatcher::matchRoot(MatmulOp root, SoftmaxOp softmax,
                                          AttentionMatch &found) {
  if (root.transpose_lhs())
    return fail(0, "the matmul with V transposes the attention weights (transpose_lhs)");
  if (root.transpose_rhs())
    return fail(0, "the matmul with V takes V transposed (transpose_rhs); kiln.attention "
                   "takes V as [..., Tk, dv]");
  int64_t rank = tensorType(softmax.getResult()).getRank();
  if (static_cast<int64_t>(softmax.axis()) != rank - 1)
    return fail(0, "the softmax is over axis " + llvm::Twine(softmax.axis()) +
                       ", not the last axis (" + llvm::Twine(rank - 1) +
                       ") that indexes the keys");
  if (!softmax.getResult().hasOneUse())
    return fail(0,
                "the attention weights (the softmax's result) have another use besides "
                "the matmul with V, which would still need them");
  if (failed(matchChain(softmax.input(), found, 1)))
    return failure();
  found.value = root.rhs();
  if (failed(checkOperands(root, found)))
    return failure();
  found.locations.push_back(softmax.getLoc());
  found.locations.push_back(root.getLoc());
  return success();
}

Optional<AttentionMatch> AttentionMatcher::match(MatmulOp root, SoftmaxOp softmax) {
  AttentionMatch found;
  if (failed(matchRoot(root, softmax, found)))
    return None;
  return found;
}
