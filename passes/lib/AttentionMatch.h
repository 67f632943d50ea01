//===- AttentionMatch.h - Recognising attention in a kiln graph -*- C++ -*-===//
//
// The matching half of kiln-fuse-attention: starting from a matmul of a softmax with V,
// walks back to the Q·Kᵀ matmul and says either what kiln.attention would replace the
// graph with, or, in words a user can act on, why it must not. Nothing here changes
// the IR; FuseAttention.cpp does the rewrite.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_ATTENTIONMATCH_H
#define KILN_PASSES_ATTENTIONMATCH_H

#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace kiln {

/// A term added to the scores between the Q·Kᵀ matmul and the softmax.
struct MaskTerm {
  /// The additive f32 mask; or, when `booleanChain` is not empty, the i1 mask of a
  /// masked_fill with -inf, to be rebuilt in additive form by re-running
  /// `booleanChain` (its builder first, then the reshapes and transposes) with f32
  /// results.
  mlir::Value value;
  llvm::SmallVector<mlir::Operation *, 4> booleanChain;
  /// Holds only 0 and -inf (a mask builder made it), so adding it to a sum of other
  /// terms rounds exactly as adding it to the scores first would.
  bool zeroOrNegInf = false;
  /// Proven to be the causal mask of the scores' own queries and keys (Tq = Tk = N):
  /// becomes `causal = true` instead of an operand.
  bool causal = false;
};

/// What kiln.attention would be made of.
struct AttentionMatch {
  MatmulOp scores;
  mlir::Value query, key, value;
  /// `key` is stored [..., d, Tk] and needs a transpose of its last two dims.
  bool transposeKey = false;
  /// The product of every scale found (on the scores, on Q, on K).
  double scale = 1.0;
  llvm::SmallVector<MaskTerm, 2> masks;
  /// The ops of the chain from the scores to the softmax, for the fused location.
  llvm::SmallVector<mlir::Location, 4> locations;
};

/// Matches one `matmul(softmax(...), V)`. Create one per attempt: it caches the
/// function's symbolic shapes, which a rewrite would make stale.
class AttentionMatcher {
public:
  explicit AttentionMatcher(mlir::FuncOp func) : func_(func) {}

  /// The match for `root`, whose lhs is `softmax`; on failure, reason() says why.
  llvm::Optional<AttentionMatch> match(MatmulOp root, SoftmaxOp softmax);
  const std::string &reason() const { return reason_; }

private:
  mlir::LogicalResult matchRoot(MatmulOp root, SoftmaxOp softmax, AttentionMatch &found);
  mlir::LogicalResult matchChain(mlir::Value scores, AttentionMatch &found,
                                 unsigned depth);
  mlir::LogicalResult matchScoresMatmul(MatmulOp matmul, AttentionMatch &found,
                                        unsigned depth);
  mlir::LogicalResult addMask(mlir::Value mask, mlir::Value scores, bool boolean,
                              AttentionMatch &found, unsigned depth);
  mlir::LogicalResult checkOperands(MatmulOp root, AttentionMatch &found);
  bool provesCausal(CausalMaskOp mask, mlir::Value scores);
  /// Records `why` unless a deeper attempt already failed: of two alternatives (which
  /// operand of an add is the mask), the one that got further explains best.
  mlir::LogicalResult fail(unsigned depth, const llvm::Twine &why);

  mlir::FuncOp func_;
  std::string reason_;
  unsigned reasonDepth_ = 0;
  llvm::Optional<mlir::FailureOr<SymbolicShapeMap>> shapes_;
};

} // namespace kiln

#endif // KILN_PASSES_ATTENTIONMATCH_H
