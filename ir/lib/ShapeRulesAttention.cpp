//===- ShapeRulesAttention.cpp - Shape rules of attention and masks -------===//
//
// The fused kiln.attention op checks here, once, everything its kernels rely on (ranks,
// head and key dimensions, batch broadcasting, the mask's shape), so that passes and
// backends never re-check it. As elsewhere, messages name the operand and the sizes.
//
//===----------------------------------------------------------------------===//

#include "kiln/ir/ShapeRules.h"

using namespace kiln;

static bool isOne(const SymDim &d) { return d.isStatic() && d.size == 1; }

bool shape_rules::broadcastsInto(llvm::ArrayRef<SymDim> small,
                                 llvm::ArrayRef<SymDim> target) {
  if (small.size() > target.size())
    return false;
  for (size_t i = 0; i < small.size(); ++i) {
    const SymDim &s = small[small.size() - 1 - i];
    const SymDim &t = target[target.size() - 1 - i];
    if (!isOne(s) && !dimsCompatible(s, t))
      return false;
  }
  return true;
}

ShapeResult shape_rules::attention(llvm::ArrayRef<SymDim> q, llvm::ArrayRef<SymDim> k,
                                   llvm::ArrayRef<SymDim> v, const SymShape *mask) {
  if (q.size() < 3 || k.size() != q.size() || v.size() != q.size())
    return ShapeResult::failure("needs q, k and v of one rank >= 3 "
                                "([..., T, d]), got q " +
                                toString(q) + ", k " + toString(k) + " and v " +
                                toString(v));
  size_t r = q.size();
  if (!dimsCompatible(q[r - 1], k[r - 1]))
    return ShapeResult::failure("head dimensions differ: q " + toString(q) + " has " +
                                q[r - 1].str() + ", k " + toString(k) + " has " +
                                k[r - 1].str());
  if (!dimsCompatible(k[r - 2], v[r - 2]))
    return ShapeResult::failure("keys and values differ in number: k " + toString(k) +
                                " has " + k[r - 2].str() + ", v " + toString(v) +
                                " has " + v[r - 2].str());
  ShapeResult batch = broadcast(q.drop_back(2), k.drop_back(2));
  if (batch.succeeded())
    batch = broadcast(batch.shape, v.drop_back(2));
  if (!batch.succeeded())
    return ShapeResult::failure("batch dimensions: " + batch.error);
  if (mask) {
    SymShape scores = batch.shape;
    scores.push_back(q[r - 2]);
    scores.push_back(k[r - 2]);
    if (!broadcastsInto(*mask, scores))
      return ShapeResult::failure("mask " + toString(*mask) +
                                  " does not broadcast to the scores " +
                                  toString(scores) + " ([..., Tq, Tk])");
  }
  SymShape result = std::move(batch.shape);
  result.push_back(q[r - 2]);
  result.push_back(v[r - 1]);
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::maskedFill(llvm::ArrayRef<SymDim> input,
                                    llvm::ArrayRef<SymDim> mask) {
  if (!broadcastsInto(mask, input))
    return ShapeResult::failure("mask " + toString(mask) +
                                " does not broadcast to the input " + toString(input));
  return ShapeResult::ok(SymShape(input.begin(), input.end()));
}
