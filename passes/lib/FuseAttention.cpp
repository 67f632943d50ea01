//===- FuseAttention.cpp - scale, mask, softmax and matmul into kiln.attention ===//
//
// A pattern anchored on the final matmul (the weights times V) asks AttentionMatcher
// whether the graph above it is attention; if so it builds kiln.attention and the
// greedy driver erases what became dead. When it is not, the pattern keeps the
// matcher's reason for that softmax, so that the pass can tell the user, at the
// softmax's location (their model's line), why it stayed unfused.
//
//===----------------------------------------------------------------------===//

#include "AttentionMatch.h"
#include "PassDetail.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"

#include <atomic>

using namespace mlir;
using namespace kiln;

namespace {

/// Why each softmax was left unfused: the last reason its matmul's match gave.
using ReasonMap = llvm::DenseMap<Operation *, std::string>;

std::atomic<bool> remarksEverywhere{false};

/// The f32 twin of a boolean mask: its builder and data movement re-run with f32
/// results, which builders define as the additive form (0 kept, -inf masked).
Value rebuildAdditive(const MaskTerm &term, PatternRewriter &rewriter) {
  Value current;
  for (Operation *op : term.booleanChain) {
    Operation *clone = rewriter.clone(*op);
    if (current)
      clone->setOperand(0, current);
    auto type = op->getResult(0).getType().cast<RankedTensorType>();
    clone->getResult(0).setType(
        RankedTensorType::get(type.getShape(), rewriter.getF32Type()));
    current = clone->getResult(0);
  }
  return current;
}

/// The one mask operand of the fused op (null: none); sets `causal` when a term is the
/// scores' own causal mask.
Value buildMask(const AttentionMatch &found, bool &causal, Location loc,
                PatternRewriter &rewriter) {
  Value mask;
  for (const MaskTerm &term : found.masks) {
    if (term.causal) {
      causal = true;
      continue;
    }
    Value additive =
        term.booleanChain.empty() ? term.value : rebuildAdditive(term, rewriter);
    if (!mask) {
      mask = additive;
      continue;
    }
    // The matcher allowed at most one term that is not 0 / -inf, so this sum is exact.
    auto shapeOfValue = [](Value v) {
      return shapeOf(v.getType().cast<RankedTensorType>());
    };
    ShapeResult sum = shape_rules::broadcast(shapeOfValue(mask), shapeOfValue(additive));
    auto type = RankedTensorType::get(staticShape(sum.shape), rewriter.getF32Type());
    mask = rewriter.create<AddOp>(loc, type, mask, additive);
  }
  return mask;
}

AttentionOp buildAttention(const AttentionMatch &found, MatmulOp root,
                           PatternRewriter &rewriter) {
  Location loc = rewriter.getFusedLoc(found.locations);
  Value key = found.key;
  if (found.transposeKey) {
    auto type = key.getType().cast<RankedTensorType>();
    int64_t rank = type.getRank();
    llvm::SmallVector<int64_t, 4> perm,
        shape(type.getShape().begin(), type.getShape().end());
    for (int64_t i = 0; i < rank; ++i)
      perm.push_back(i);
    std::swap(perm[rank - 2], perm[rank - 1]);
    std::swap(shape[rank - 2], shape[rank - 1]);
    auto transposed = RankedTensorType::get(shape, type.getElementType());
    key = rewriter.create<TransposeOp>(loc, transposed, key,
                                       rewriter.getI64ArrayAttr(perm));
  }
  bool causal = false;
  Value mask = buildMask(found, causal, loc, rewriter);
  llvm::SmallVector<Value, 4> operands = {found.query, key, found.value};
  if (mask)
    operands.push_back(mask);
  llvm::SmallVector<NamedAttribute, 2> attributes;
  attributes.push_back(rewriter.getNamedAttr(
      "scale", rewriter.getF32FloatAttr(static_cast<float>(found.scale))));
  if (causal)
    attributes.push_back(rewriter.getNamedAttr("causal", rewriter.getBoolAttr(true)));
  return rewriter.create<AttentionOp>(loc, TypeRange{root.getType()}, operands,
                                      attributes);
}

struct FuseAttentionPattern : public OpRewritePattern<MatmulOp> {
  FuseAttentionPattern(MLIRContext *context, ReasonMap &reasons)
      : OpRewritePattern<MatmulOp>(context), reasons(reasons) {}

  LogicalResult matchAndRewrite(MatmulOp root, PatternRewriter &rewriter) const override {
    auto softmax = root.lhs().getDefiningOp<SoftmaxOp>();
    if (!softmax)
      return rewriter.notifyMatchFailure(root, "the lhs is not a kiln.softmax");
    AttentionMatcher matcher(root->getParentOfType<FuncOp>());
    Optional<AttentionMatch> found = matcher.match(root, softmax);
    if (!found) {
      reasons[softmax] = matcher.reason();
      return rewriter.notifyMatchFailure(root, matcher.reason());
    }
    reasons.erase(softmax);
    rewriter.replaceOp(root, buildAttention(*found, root, rewriter).getResult());
    return success();
  }

  ReasonMap &reasons;
};

struct FuseAttentionPass : public FuseAttentionBase<FuseAttentionPass> {
  FuseAttentionPass() = default;
  explicit FuseAttentionPass(bool emitRemarks) { remarks = emitRemarks; }

  void runOnOperation() override {
    FuncOp func = getOperation();
    ReasonMap reasons;
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseAttentionPattern>(&getContext(), reasons);
    // Not converging only means some folding was left undone; the IR stays valid.
    (void)applyPatternsAndFoldGreedily(func, std::move(patterns));
    if (!remarks && !fusionRemarksEverywhere())
      return;
    func.walk([&](SoftmaxOp softmax) {
      std::string reason = reasons.lookup(softmax);
      if (reason.empty())
        reason = "its result is not the lhs of a kiln.matmul (the attention weights "
                 "times V)";
      emitRemark(softmax.getLoc())
          << "kiln.softmax not fused into kiln.attention: " << reason;
    });
  }
};

} // namespace

void kiln::setFusionRemarksEverywhere(bool enabled) { remarksEverywhere = enabled; }
bool kiln::fusionRemarksEverywhere() { return remarksEverywhere; }

std::unique_ptr<Pass> kiln::createFuseAttentionPass() {
  return std::make_unique<FuseAttentionPass>();
}

std::unique_ptr<Pass> kiln::createFuseAttentionPass(bool remarks) {
  return std::make_unique<FuseAttentionPass>(remarks);
}
