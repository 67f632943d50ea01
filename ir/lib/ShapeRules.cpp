//===- ShapeRules.cpp - Symbolic shape rules of kiln ops ------------------===//
//
// Messages name the operand and both sizes, because they end up in front of a user at
// the line of their model that built the op.
//
//===----------------------------------------------------------------------===//

#include "kiln/ir/ShapeRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <map>
#include <set>

using namespace kiln;

std::string SymDim::str() const {
  if (isStatic())
    return std::to_string(size);
  return expr.empty() ? "?" : expr;
}

std::string kiln::toString(llvm::ArrayRef<SymDim> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

SymShape kiln::shapeOf(mlir::RankedTensorType type) {
  SymShape shape;
  for (int64_t d : type.getShape())
    shape.push_back(mlir::ShapedType::isDynamic(d) ? SymDim::unknown()
                                                   : SymDim::fixed(d));
  return shape;
}

llvm::SmallVector<int64_t, 4> kiln::staticShape(llvm::ArrayRef<SymDim> shape) {
  llvm::SmallVector<int64_t, 4> result;
  for (const SymDim &d : shape)
    result.push_back(d.isStatic() ? d.size : mlir::ShapedType::kDynamicSize);
  return result;
}

bool kiln::dimsCompatible(const SymDim &a, const SymDim &b) {
  if (a.isUnknown() || b.isUnknown())
    return true;
  return a == b;
}

/// The better-known of two compatible dims.
static SymDim mergeDims(const SymDim &a, const SymDim &b) {
  return a.isUnknown() ? b : a;
}

static bool isOne(const SymDim &d) { return d.isStatic() && d.size == 1; }

namespace {
/// A dim as coefficient * product of opaque factors, so that a reshape can cancel the
/// dims it keeps: (B*S*512) / 512 -> B*S.
struct Monomial {
  int64_t coefficient = 1;
  std::multiset<std::string> factors;

  static Monomial of(const SymDim &d) {
    Monomial m;
    if (d.isStatic()) {
      m.coefficient = d.size;
      return m;
    }
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(d.expr).split(parts, '*');
    bool simpleProduct = llvm::none_of(d.expr, [](char c) {
      return c == '+' || c == '-' || c == '/' || c == '(' || c == ')';
    });
    if (!simpleProduct) {
      m.factors.insert("(" + d.expr + ")");
      return m;
    }
    for (llvm::StringRef p : parts) {
      int64_t value;
      if (!p.getAsInteger(10, value))
        m.coefficient *= value;
      else
        m.factors.insert(p.str());
    }
    return m;
  }

  void multiply(const Monomial &o) {
    coefficient *= o.coefficient;
    factors.insert(o.factors.begin(), o.factors.end());
  }

  /// Divides by `o` when it divides exactly; returns false otherwise.
  bool divide(const Monomial &o) {
    if (o.coefficient == 0 || coefficient % o.coefficient != 0)
      return false;
    std::multiset<std::string> rest = factors;
    for (const std::string &f : o.factors) {
      auto it = rest.find(f);
      if (it == rest.end())
        return false;
      rest.erase(it);
    }
    coefficient /= o.coefficient;
    factors = std::move(rest);
    return true;
  }

  SymDim toDim() const {
    if (factors.empty())
      return SymDim::fixed(coefficient);
    std::string e;
    for (const std::string &f : factors)
      e += (e.empty() ? "" : "*") + f;
    if (coefficient != 1)
      e += "*" + std::to_string(coefficient);
    return SymDim::named(e);
  }
};
} // namespace

ShapeResult shape_rules::matmul(llvm::ArrayRef<SymDim> lhs, llvm::ArrayRef<SymDim> rhs,
                                bool transposeLhs, bool transposeRhs) {
  if (lhs.size() < 2 || rhs.size() < 2)
    return ShapeResult::failure("matmul operands need rank >= 2, got lhs " +
                                toString(lhs) + " and rhs " + toString(rhs));
  size_t lr = lhs.size(), rr = rhs.size();
  const SymDim &m = transposeLhs ? lhs[lr - 1] : lhs[lr - 2];
  const SymDim &kl = transposeLhs ? lhs[lr - 2] : lhs[lr - 1];
  const SymDim &kr = transposeRhs ? rhs[rr - 1] : rhs[rr - 2];
  const SymDim &n = transposeRhs ? rhs[rr - 2] : rhs[rr - 1];
  if (!dimsCompatible(kl, kr))
    return ShapeResult::failure("matmul contraction dimensions differ: lhs " +
                                toString(lhs) + " contracts " + kl.str() + ", rhs " +
                                toString(rhs) + " contracts " + kr.str());
  ShapeResult batch = broadcast(lhs.drop_back(2), rhs.drop_back(2));
  if (!batch.succeeded())
    return ShapeResult::failure("matmul batch dimensions: " + batch.error);
  batch.shape.push_back(m);
  batch.shape.push_back(n);
  return batch;
}

ShapeResult shape_rules::broadcast(llvm::ArrayRef<SymDim> lhs,
                                   llvm::ArrayRef<SymDim> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SymShape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the trailing dimension, as NumPy does.
    bool hasL = i < lhs.size(), hasR = i < rhs.size();
    SymDim l = hasL ? lhs[lhs.size() - 1 - i] : SymDim::fixed(1);
    SymDim r = hasR ? rhs[rhs.size() - 1 - i] : SymDim::fixed(1);
    SymDim &out = result[rank - 1 - i];
    if (isOne(l))
      out = r;
    else if (isOne(r))
      out = l;
    else if (dimsCompatible(l, r))
      out = mergeDims(l, r);
    else
      return ShapeResult::failure("shapes " + toString(lhs) + " and " + toString(rhs) +
                                  " do not broadcast: " + l.str() + " vs " + r.str());
  }
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::softmax(llvm::ArrayRef<SymDim> input, int64_t axis) {
  if (axis < 0 || axis >= static_cast<int64_t>(input.size()))
    return ShapeResult::failure("softmax axis " + std::to_string(axis) +
                                " is out of range for shape " + toString(input));
  return ShapeResult::ok(SymShape(input.begin(), input.end()));
}

/// Checks the 1-D parameters of a normalisation over the last dimension of `input`.
static ShapeResult normalization(
    const char *op, llvm::ArrayRef<SymDim> input,
    std::initializer_list<std::pair<const char *, llvm::ArrayRef<SymDim>>> parameters) {
  if (input.empty())
    return ShapeResult::failure(std::string(op) + " needs an input of rank >= 1");
  const SymDim &features = input.back();
  for (auto [name, p] : parameters) {
    if (p.size() != 1 || !dimsCompatible(p[0], features))
      return ShapeResult::failure(std::string(op) + " " + name + " has shape " +
                                  toString(p) + ", expected [" + features.str() +
                                  "] to match the last dimension of " + toString(input));
  }
  return ShapeResult::ok(SymShape(input.begin(), input.end()));
}

ShapeResult shape_rules::layerNorm(llvm::ArrayRef<SymDim> input,
                                   llvm::ArrayRef<SymDim> gamma,
                                   llvm::ArrayRef<SymDim> beta) {
  return normalization("layer_norm", input, {{"gamma", gamma}, {"beta", beta}});
}

ShapeResult shape_rules::rmsNorm(llvm::ArrayRef<SymDim> input,
                                 llvm::ArrayRef<SymDim> gamma) {
  return normalization("rms_norm", input, {{"gamma", gamma}});
}

ShapeResult shape_rules::reshape(llvm::ArrayRef<SymDim> input,
                                 llvm::ArrayRef<int64_t> newShape) {
  SymShape result;
  int inferred = -1;
  Monomial known;
  for (size_t i = 0; i < newShape.size(); ++i) {
    int64_t s = newShape[i];
    if (s == -1) {
      if (inferred != -1)
        return ShapeResult::failure("reshape may infer only one dimension (-1)");
      inferred = i;
      result.push_back(SymDim::unknown());
      continue;
    }
    if (s == 0) {
      if (i >= input.size())
        return ShapeResult::failure("reshape entry 0 at position " + std::to_string(i) +
                                    " copies a dimension that input " + toString(input) +
                                    " does not have");
      result.push_back(input[i]);
    } else if (s > 0) {
      result.push_back(SymDim::fixed(s));
    } else {
      return ShapeResult::failure("reshape size " + std::to_string(s) +
                                  " is invalid (use > 0, 0 to keep or -1 to infer)");
    }
    known.multiply(Monomial::of(result.back()));
  }
  // Result dims are static or copied from the input, so only the input can hide sizes.
  bool anyUnknown = llvm::any_of(input, [](const SymDim &d) { return d.isUnknown(); });
  Monomial total;
  for (const SymDim &d : input)
    total.multiply(Monomial::of(d));
  if (inferred != -1) {
    if (anyUnknown) {
      result[inferred] = SymDim::unknown();
    } else if (!total.divide(known)) {
      return ShapeResult::failure("reshape of " + toString(input) + " to " +
                                  toString(result) +
                                  ": the element count is not divisible");
    } else {
      result[inferred] = total.toDim();
    }
    return ShapeResult::ok(std::move(result));
  }
  if (!anyUnknown) {
    Monomial rest = total;
    if (!rest.divide(known) || rest.coefficient != 1 || !rest.factors.empty())
      return ShapeResult::failure("reshape of " + toString(input) + " to " +
                                  toString(result) + " changes the element count");
  }
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::transpose(llvm::ArrayRef<SymDim> input,
                                   llvm::ArrayRef<int64_t> permutation) {
  if (permutation.size() != input.size())
    return ShapeResult::failure(
        "transpose permutation has " + std::to_string(permutation.size()) +
        " entries for an input of rank " + std::to_string(input.size()));
  llvm::SmallVector<bool, 4> seen(input.size(), false);
  SymShape result;
  for (int64_t p : permutation) {
    if (p < 0 || p >= static_cast<int64_t>(input.size()) || seen[p])
      return ShapeResult::failure("transpose permutation is not a permutation of 0.." +
                                  std::to_string(input.size() - 1));
    seen[p] = true;
    result.push_back(input[p]);
  }
  return ShapeResult::ok(std::move(result));
}
