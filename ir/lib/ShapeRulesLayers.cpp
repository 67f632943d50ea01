//===- ShapeRulesLayers.cpp - Shape rules of embedding, mask and layer ops ===//
//
// The rules of the ops an encoder-decoder needs around attention: embeddings, positions,
// masks, linear layers, slicing and joining, and the output head. As in ShapeRules.cpp,
// messages name the op, the operand and the sizes, because a user reads them at the
// line of their model that built the op.
//
//===----------------------------------------------------------------------===//

#include "kiln/ir/ShapeRules.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace kiln;

/// Why `axis` is not a dimension of `shape`, or "" when it is.
static std::string checkAxis(llvm::ArrayRef<SymDim> shape, int64_t axis) {
  if (axis >= 0 && axis < static_cast<int64_t>(shape.size()))
    return "";
  return "axis " + std::to_string(axis) + " is out of range for shape " + toString(shape);
}

ShapeResult shape_rules::linear(llvm::ArrayRef<SymDim> input,
                                llvm::ArrayRef<SymDim> weight,
                                llvm::ArrayRef<SymDim> bias) {
  if (input.empty())
    return ShapeResult::failure("needs an input of rank >= 1");
  if (weight.size() != 2)
    return ShapeResult::failure("weight must have rank 2 ([out, in]), got " +
                                toString(weight));
  if (!dimsCompatible(input.back(), weight[1]))
    return ShapeResult::failure("input " + toString(input) + " has " +
                                input.back().str() + " features but weight " +
                                toString(weight) + " takes " + weight[1].str());
  if (bias.size() != 1 || !dimsCompatible(bias[0], weight[0]))
    return ShapeResult::failure(
        "bias has shape " + toString(bias) + ", expected [" + weight[0].str() +
        "] to match the output dimension of weight " + toString(weight));
  SymShape result(input.begin(), input.end());
  result.back() = weight[0];
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::quantizedLinear(llvm::ArrayRef<SymDim> input,
                                         llvm::ArrayRef<SymDim> weight,
                                         llvm::ArrayRef<SymDim> scale,
                                         const SymShape *bias) {
  if (scale.size() != 1 || weight.size() != 2 || !dimsCompatible(scale[0], weight[0]))
    return ShapeResult::failure("weight_scale has shape " + toString(scale) +
                                ", expected one scale per output channel of weight " +
                                toString(weight));
  // Without a bias, the scale stands in for it: the rule only compares shapes.
  return linear(input, weight, bias ? llvm::ArrayRef<SymDim>(*bias) : scale);
}

ShapeResult shape_rules::logSoftmax(llvm::ArrayRef<SymDim> input, int64_t axis) {
  if (std::string error = checkAxis(input, axis); !error.empty())
    return ShapeResult::failure(error);
  return ShapeResult::ok(SymShape(input.begin(), input.end()));
}

ShapeResult shape_rules::argmax(llvm::ArrayRef<SymDim> input, int64_t axis) {
  if (std::string error = checkAxis(input, axis); !error.empty())
    return ShapeResult::failure(error);
  SymShape result(input.begin(), input.end());
  result.erase(result.begin() + axis);
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::reduce(llvm::ArrayRef<SymDim> input,
                                llvm::ArrayRef<int64_t> axes, bool keepDim) {
  int64_t rank = static_cast<int64_t>(input.size());
  if (axes.empty())
    return ShapeResult::failure("needs at least one axis");
  std::vector<bool> reduced(input.size(), false);
  for (int64_t axis : axes) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
      return ShapeResult::failure("axis " + std::to_string(axis) +
                                  " is out of range for shape " + toString(input) +
                                  " (expected " + std::to_string(-rank) + " to " +
                                  std::to_string(rank - 1) + ")");
    if (reduced[a])
      return ShapeResult::failure(
          "axes [" +
          llvm::join(llvm::map_range(axes, [](int64_t x) { return std::to_string(x); }),
                     ", ") +
          "] name dimension " + std::to_string(a) + " twice");
    reduced[a] = true;
  }
  SymShape result;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduced[d])
      result.push_back(input[d]);
    else if (keepDim)
      result.push_back(SymDim::fixed(1));
  return ShapeResult::ok(std::move(result));
}

llvm::SmallVector<int64_t, 4> shape_rules::normaliseAxes(llvm::ArrayRef<int64_t> axes,
                                                         int64_t rank) {
  llvm::SmallVector<int64_t, 4> result;
  for (int64_t axis : axes)
    result.push_back(axis < 0 ? axis + rank : axis);
  llvm::sort(result);
  return result;
}

ShapeResult shape_rules::slice(llvm::ArrayRef<SymDim> input, int64_t axis, int64_t start,
                               int64_t end) {
  if (std::string error = checkAxis(input, axis); !error.empty())
    return ShapeResult::failure(error);
  if (start < 0 || end <= start)
    return ShapeResult::failure("needs 0 <= start < end, got start " +
                                std::to_string(start) + " and end " +
                                std::to_string(end));
  // A dynamic size is checked when the op runs: the rule cannot know it.
  const SymDim &size = input[axis];
  if (size.isStatic() && end > size.size)
    return ShapeResult::failure("end " + std::to_string(end) + " exceeds dimension " +
                                std::to_string(axis) + " of " + toString(input));
  SymShape result(input.begin(), input.end());
  result[axis] = SymDim::fixed(end - start);
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::concat(llvm::ArrayRef<SymShape> inputs, int64_t axis) {
  if (inputs.empty())
    return ShapeResult::failure("needs at least one operand");
  const SymShape &first = inputs.front();
  if (std::string error = checkAxis(first, axis); !error.empty())
    return ShapeResult::failure(error);
  SymShape result = first;
  int64_t staticSum = 0;
  std::string named;
  bool unknown = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const SymShape &in = inputs[i];
    if (in.size() != first.size())
      return ShapeResult::failure("operands need the same rank, got operand #0 " +
                                  toString(first) + " and operand #" + std::to_string(i) +
                                  " " + toString(in));
    for (size_t d = 0; d < in.size(); ++d) {
      if (static_cast<int64_t>(d) == axis || dimsCompatible(in[d], result[d])) {
        if (static_cast<int64_t>(d) != axis && result[d].isUnknown())
          result[d] = in[d];
        continue;
      }
      return ShapeResult::failure("operand #" + std::to_string(i) + " " + toString(in) +
                                  " differs from operand #0 " + toString(first) +
                                  " in dimension " + std::to_string(d) + ": " +
                                  in[d].str() + " vs " + result[d].str());
    }
    // The joined size: static parts summed, named ones kept as an expression.
    const SymDim &part = in[axis];
    if (part.isStatic())
      staticSum += part.size;
    else if (part.isUnknown())
      unknown = true;
    else
      named += (named.empty() ? "" : "+") + part.expr;
  }
  if (unknown)
    result[axis] = SymDim::unknown();
  else if (named.empty())
    result[axis] = SymDim::fixed(staticSum);
  else
    result[axis] =
        SymDim::named(staticSum ? named + "+" + std::to_string(staticSum) : named);
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::embedding(llvm::ArrayRef<SymDim> table,
                                   llvm::ArrayRef<SymDim> ids) {
  if (table.size() != 2)
    return ShapeResult::failure("table must have rank 2 ([vocabulary, "
                                "features]), got " +
                                toString(table));
  SymShape result(ids.begin(), ids.end());
  result.push_back(table[1]);
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::range(llvm::ArrayRef<SymDim> like, int64_t axis) {
  if (std::string error = checkAxis(like, axis); !error.empty())
    return ShapeResult::failure(error);
  return ShapeResult::ok({like[axis]});
}

ShapeResult shape_rules::sinusoid(llvm::ArrayRef<SymDim> positions, int64_t dim) {
  if (dim <= 0 || dim % 2 != 0)
    return ShapeResult::failure("feature size must be static, positive and even, got " +
                                SymDim{dim, {}}.str());
  SymShape result(positions.begin(), positions.end());
  result.push_back(SymDim::fixed(dim));
  return ShapeResult::ok(std::move(result));
}

ShapeResult shape_rules::rotary(llvm::ArrayRef<SymDim> input,
                                llvm::ArrayRef<SymDim> positions) {
  if (input.size() < 2)
    return ShapeResult::failure("rotary input must be [..., T, D], got " +
                                toString(input));
  const SymDim &features = input.back(), &length = input[input.size() - 2];
  if (!features.isStatic() || features.size <= 0 || features.size % 2 != 0)
    return ShapeResult::failure("rotary feature size D must be static, positive and "
                                "even (pairs of features rotate), got " +
                                toString(input));
  if (positions.size() != 1 || !dimsCompatible(positions[0], length))
    return ShapeResult::failure("rotary positions must be [" + length.str() +
                                "], one per row of the input " + toString(input) +
                                ", got " + toString(positions));
  return ShapeResult::ok(SymShape(input.begin(), input.end()));
}

ShapeResult shape_rules::paddingMask(llvm::ArrayRef<SymDim> lengths,
                                     llvm::ArrayRef<SymDim> like, int64_t axis) {
  if (lengths.size() != 1)
    return ShapeResult::failure("lengths must have rank 1 ([batch]), got " +
                                toString(lengths));
  if (std::string error = checkAxis(like, axis); !error.empty())
    return ShapeResult::failure(error);
  return ShapeResult::ok({lengths[0], like[axis]});
}

ShapeResult shape_rules::causalMask(llvm::ArrayRef<SymDim> like, int64_t axis) {
  if (std::string error = checkAxis(like, axis); !error.empty())
    return ShapeResult::failure(error);
  return ShapeResult::ok({like[axis], like[axis]});
}
