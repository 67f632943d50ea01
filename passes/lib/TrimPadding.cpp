//===- TrimPadding.cpp - Entries that may run without their trailing padding -===//
//
// A batch of sequences padded to S positions, with their lengths as an input, often
// computes nothing at positions past the longest sequence that a position before it
// reads: every op works position by position, and the ops that mix positions
// (attention over keys) mask the padded keys. Such an entry gives the same values at
// positions before T = max(lengths) whether it runs over S positions or over T, so the
// runtime may run it over T and write zeros past T (what PyTorch's nested-tensor
// encoder returns there too). This pass proves that, op by op, and marks the entry;
// an op it cannot prove keeps the entry whole (with a remark saying which, and why).
//
//===----------------------------------------------------------------------===//

#include "PassDetail.h"

#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringExtras.h"

#include <cctype>

using namespace mlir;
using namespace kiln;

namespace {

/// Whether dimension expression `expr` mentions name `dim` (as a whole word).
bool mentions(llvm::StringRef expr, llvm::StringRef dim) {
  for (size_t at = expr.find(dim); at != llvm::StringRef::npos;
       at = expr.find(dim, at + 1)) {
    auto isWordChar = [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    };
    bool before = at > 0 && isWordChar(expr[at - 1]);
    size_t end = at + dim.size();
    bool after = end < expr.size() && isWordChar(expr[end]);
    if (!before && !after)
      return true;
  }
  return false;
}

/// The proof for one candidate: positions along dimension `dim`, lengths in argument
/// `lengthsArg` of `func`.
class PositionCheck {
public:
  PositionCheck(FuncOp func, const SymbolicShapeMap &shapes, llvm::StringRef dim,
                unsigned lengthsArg)
      : func_(func), shapes_(shapes), dim_(dim), lengthsArg_(lengthsArg) {}

  /// The first op whose positions before T may read positions past it, and why; null
  /// when there is none.
  Operation *firstMixing(std::string &reason) {
    Operation *found = nullptr;
    func_.walk([&](Operation *op) {
      if (found)
        return;
      if (!check(op, reason))
        found = op;
    });
    return found;
  }

  /// Whether axis `axis` of `value` is a position axis.
  bool carries(Value value, int64_t axis) const {
    const SymShape *shape = shapeOf(value);
    return !shape || axis < 0 || axis >= int64_t(shape->size()) ||
           mentions((*shape)[size_t(axis)].expr, dim_);
  }

  bool carriesAny(Value value) const {
    const SymShape *shape = shapeOf(value);
    if (!shape)
      return true;
    for (const SymDim &d : *shape)
      if (mentions(d.expr, dim_))
        return true;
    return false;
  }

  /// Each position axis of `value` is exactly the dimension (the runtime cuts and pads
  /// whole positions of inputs and outputs).
  bool positionsAreWhole(Value value) const {
    const SymShape *shape = shapeOf(value);
    if (!shape)
      return false;
    for (const SymDim &d : *shape)
      if (mentions(d.expr, dim_) && d.expr != dim_)
        return false;
    return true;
  }

private:
  const SymShape *shapeOf(Value value) const {
    auto it = shapes_.find(value);
    if (it == shapes_.end())
      it = shapes_.find(outsideFusion(value));
    return it == shapes_.end() ? nullptr : &it->second;
  }

  int64_t rankOf(Value value) const {
    return value.getType().cast<RankedTensorType>().getRank();
  }

  bool check(Operation *op, std::string &reason) {
    // Ops that compute each position from the same position of their operands (or
    // from its index alone: positions, their encodings, the masks).
    if (isa<ParameterOp, ConstantOp, ReturnOp, YieldOp, FusionOp, AddOp, SubOp, MulOp,
            DivOp, WhereOp, CastOp, MaskedFillOp, ScaleOp, ReluOp, GeluOp, TanhOp,
            GeluTanhOp, SiluOp, RsqrtOp, ExpOp, NegOp, LogOp, SigmoidOp, SqrtOp, PowOp,
            TransposeOp, EmbeddingOp, RangeOp, SinusoidOp, RotaryOp, PaddingMaskOp,
            CausalMaskOp>(op))
      return true;
    if (auto reshape = dyn_cast<ReshapeOp>(op))
      return checkReshape(reshape, reason);
    if (auto linear = dyn_cast<LinearOp>(op))
      return notAlong(linear.input(), rankOf(linear.input()) - 1, "contracts", reason);
    if (auto linear = dyn_cast<QuantizedLinearOp>(op))
      return notAlong(linear.input(), rankOf(linear.input()) - 1, "contracts", reason);
    if (auto matmul = dyn_cast<MatmulOp>(op)) {
      int64_t lhsRank = rankOf(matmul.lhs()), rhsRank = rankOf(matmul.rhs());
      return notAlong(matmul.lhs(), matmul.transpose_lhs() ? lhsRank - 2 : lhsRank - 1,
                      "contracts", reason) &&
             notAlong(matmul.rhs(), matmul.transpose_rhs() ? rhsRank - 1 : rhsRank - 2,
                      "contracts", reason);
    }
    if (isa<LayerNormOp, RmsNormOp>(op))
      return notAlong(op->getOperand(0), rankOf(op->getOperand(0)) - 1, "normalizes",
                      reason);
    if (auto softmax = dyn_cast<SoftmaxOp>(op))
      return notAlong(softmax.input(), normalized(softmax.axis(), softmax.input()),
                      "normalizes", reason);
    if (auto softmax = dyn_cast<LogSoftmaxOp>(op))
      return notAlong(softmax.input(), normalized(softmax.axis(), softmax.input()),
                      "normalizes", reason);
    if (auto argmax = dyn_cast<ArgmaxOp>(op))
      return notAlong(argmax.input(), normalized(argmax.axis(), argmax.input()),
                      "reduces", reason);
    if (isa<ReduceSumOp, ReduceMeanOp, ReduceMaxOp>(op)) {
      auto axes = op->getAttrOfType<ArrayAttr>("axes");
      for (Attribute axis : axes)
        if (!notAlong(op->getOperand(0),
                      normalized(axis.cast<IntegerAttr>().getInt(), op->getOperand(0)),
                      "reduces", reason))
          return false;
      return true;
    }
    if (auto slice = dyn_cast<SliceOp>(op))
      return notAlong(slice.input(), normalized(slice.axis(), slice.input()), "slices",
                      reason);
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      for (Value input : concat.inputs())
        if (!notAlong(input, normalized(concat.axis(), input), "concatenates", reason))
          return false;
      return true;
    }
    if (auto attention = dyn_cast<AttentionOp>(op))
      return checkAttention(attention, reason);
    // Anything else (states, caches) only where no position axis reaches it.
    for (Value v : op->getOperands())
      if (v.getType().isa<RankedTensorType>() && carriesAny(v)) {
        reason = "it is not known to keep positions apart";
        return false;
      }
    for (Value v : op->getResults())
      if (v.getType().isa<RankedTensorType>() && carriesAny(v)) {
        reason = "it is not known to keep positions apart";
        return false;
      }
    return true;
  }

  int64_t normalized(int64_t axis, Value value) const {
    return axis < 0 ? axis + rankOf(value) : axis;
  }

  bool notAlong(Value value, int64_t axis, llvm::StringRef verb, std::string &reason) {
    if (!carries(value, axis))
      return true;
    reason = ("it " + verb + " along " + dim_).str();
    return false;
  }

  /// A reshape keeps each position whole when every position axis of its result is one
  /// of its input with the same size before it (the elements of one position stay
  /// together, at the same place in the order).
  bool checkReshape(ReshapeOp reshape, std::string &reason) {
    const SymShape *in = shapeOf(reshape.input()), *out = shapeOf(reshape.result());
    if (!in || !out) {
      reason = "its shapes are not known";
      return false;
    }
    auto before = [](const SymShape &shape, size_t axis) {
      std::pair<std::vector<std::string>, int64_t> key{{}, 1};
      for (size_t d = 0; d < axis; ++d) {
        if (shape[d].isStatic())
          key.second *= shape[d].size;
        else
          key.first.push_back(shape[d].expr);
      }
      llvm::sort(key.first);
      return key;
    };
    auto positionAxes = [&](const SymShape &shape) {
      std::vector<std::pair<std::string, decltype(before(shape, 0))>> axes;
      for (size_t d = 0; d < shape.size(); ++d)
        if (mentions(shape[d].expr, dim_))
          axes.push_back({shape[d].expr, before(shape, d)});
      return axes;
    };
    if (positionAxes(*in) == positionAxes(*out))
      return true;
    reason = ("it merges or splits the positions along " + dim_).str();
    return false;
  }

  /// Attention mixes its keys; padded keys that its mask hides count for nothing, so
  /// keys along the dimension need a padding mask of the entry's lengths.
  bool checkAttention(AttentionOp attention, std::string &reason) {
    Value q = attention.query(), k = attention.key(), v = attention.value();
    if (!notAlong(q, rankOf(q) - 1, "contracts", reason) ||
        !notAlong(v, rankOf(v) - 1, "contracts", reason))
      return false;
    int64_t keys = rankOf(k) - 2;
    if (attention.causal() && (carries(q, rankOf(q) - 2) || carries(k, keys))) {
      // The causal mask aligns the last query with the last key: both must be cut alike.
      const SymShape *qs = shapeOf(q), *ks = shapeOf(k);
      if (!qs || !ks || (*qs)[qs->size() - 2] != (*ks)[size_t(keys)]) {
        reason = "its causal mask aligns queries and keys of different lengths";
        return false;
      }
    }
    if (!carries(k, keys))
      return true;
    Value mask = attention.mask();
    if (!mask || !carries(mask, rankOf(mask) - 1) || !masksPadding(mask)) {
      reason = ("it attends over keys along " + dim_ +
                " without a padding mask of the lengths")
                   .str();
      return false;
    }
    return true;
  }

  /// Whether additive mask `mask` is -inf wherever a padding mask of the lengths is:
  /// such a mask, reshaped, or added to another mask.
  bool masksPadding(Value mask) {
    mask = outsideFusion(mask);
    Operation *def = mask.getDefiningOp();
    if (!def)
      return false;
    if (auto reshape = dyn_cast<ReshapeOp>(def))
      return masksPadding(reshape.input());
    if (auto add = dyn_cast<AddOp>(def))
      return masksPadding(add.lhs()) || masksPadding(add.rhs());
    if (auto padding = dyn_cast<PaddingMaskOp>(def)) {
      auto lengths = outsideFusion(padding.lengths()).dyn_cast<BlockArgument>();
      return lengths && lengths.getOwner()->getParentOp() == func_.getOperation() &&
             lengths.getArgNumber() == lengthsArg_ &&
             carries(padding.like(), normalized(padding.axis(), padding.like()));
    }
    return false;
  }

  FuncOp func_;
  const SymbolicShapeMap &shapes_;
  llvm::StringRef dim_;
  unsigned lengthsArg_;
};

struct TrimPaddingPass : public TrimPaddingBase<TrimPaddingPass> {
  TrimPaddingPass() = default;
  explicit TrimPaddingPass(bool remarks) { this->remarks = remarks; }

  void runOnOperation() override {
    FuncOp func = getOperation();
    func->removeAttr(kTrimAttr);
    FailureOr<SymbolicShapeMap> shapes = inferSymbolicShapes(func, /*emitErrors=*/false);
    if (failed(shapes))
      return;
    llvm::SmallVector<DimBinding> bindings = entryDimBindings(func);
    auto boundByShape = [&](llvm::StringRef name) {
      return llvm::any_of(bindings, [&](const DimBinding &b) {
        return b.kind == DimBinding::Shape && b.name == name;
      });
    };
    bool remark = remarks || fusionRemarksEverywhere();
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      // Lengths: a vector of integers bounded by a dimension an input's shape binds.
      auto type = func.getArgument(i).getType().dyn_cast<RankedTensorType>();
      auto bounds = func.getArgAttrOfType<ArrayAttr>(i, kBoundsAttr);
      if (!type || type.getRank() != 1 || !type.getElementType().isInteger(32) ||
          !bounds || bounds.size() != 2)
        continue;
      auto lo = bounds[0].dyn_cast<StringAttr>();
      auto hi = bounds[1].dyn_cast<StringAttr>();
      int64_t low = 0;
      if (!lo || !hi || lo.getValue().getAsInteger(10, low) || low < 0 ||
          !boundByShape(hi.getValue()))
        continue;
      llvm::StringRef dim = hi.getValue();
      PositionCheck check(func, *shapes, dim, i);
      std::string reason;
      Operation *mixing = check.firstMixing(reason);
      // The runtime cuts inputs and pads outputs a whole position at a time.
      auto returned = cast<ReturnOp>(func.getBody().back().getTerminator());
      SmallVector<Value> ends(func.getArguments().begin(), func.getArguments().end());
      ends.append(returned.operand_begin(), returned.operand_end());
      for (Value v : ends)
        if (!mixing && v.getType().isa<RankedTensorType>() &&
            !check.positionsAreWhole(v)) {
          mixing = returned;
          reason = ("an input or output has " + dim + " inside a larger dimension").str();
        }
      if (mixing) {
        if (remark)
          mixing->emitRemark() << "entry '" << func.getName()
                               << "' runs over all its padding: " << reason
                               << " (so positions before the longest sequence may read "
                                  "the padding after it)";
        continue;
      }
      Builder b(func.getContext());
      func->setAttr(kTrimAttr, b.getDictionaryAttr(
                                   {b.getNamedAttr("dim", b.getStringAttr(dim)),
                                    b.getNamedAttr("lengths", b.getI64IntegerAttr(i))}));
      return;
    }
  }
};

} // namespace

std::unique_ptr<Pass> kiln::createTrimPaddingPass() {
  return std::make_unique<TrimPaddingPass>();
}

std::unique_ptr<Pass> kiln::createTrimPaddingPass(bool remarks) {
  return std::make_unique<TrimPaddingPass>(remarks);
}
