//===- DataMovement.cpp - Reference reshape, transpose, slice and concat --===//
//
// These work on either element type (token ids are reshaped and joined too). Transpose
// and slice come down to gather(): each result element names the input element it copies.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <numeric>

using namespace kiln::reference;

/// The concrete shape `newShape` (entries > 0, 0 = keep, -1 = infer) denotes for
/// `input`, or why there is none.
static llvm::Expected<Shape> resolveReshape(llvm::ArrayRef<int64_t> input,
                                            llvm::ArrayRef<int64_t> newShape) {
  Shape result;
  int64_t inferred = -1, known = 1;
  for (size_t i = 0; i < newShape.size(); ++i) {
    int64_t s = newShape[i];
    if (s == -1) {
      if (inferred != -1)
        return makeError("reshape may infer only one dimension (-1)");
      inferred = i;
      result.push_back(-1);
      continue;
    }
    if (s == 0 && i >= input.size())
      return makeError("reshape entry 0 at position " + std::to_string(i) +
                       " copies a dimension that input " + shapeToString(input) +
                       " does not have");
    if (s < 0)
      return makeError("reshape size " + std::to_string(s) + " is invalid");
    result.push_back(s == 0 ? input[i] : s);
    known *= result.back();
  }
  int64_t count = product(input);
  if (inferred != -1) {
    if (known == 0 || count % known != 0)
      return makeError("reshape of " + shapeToString(input) + " to " +
                       shapeToString(result) + ": cannot infer the -1 entry from " +
                       std::to_string(count) + " elements");
    result[inferred] = count / known;
  } else if (known != count) {
    return makeError("reshape of " + shapeToString(input) + " to " +
                     shapeToString(result) + " changes the element count");
  }
  return result;
}

llvm::Expected<HostTensor> kiln::reference::reshape(const HostTensor &input,
                                                    llvm::ArrayRef<int64_t> newShape) {
  llvm::Expected<Shape> shape = resolveReshape(input.shape, newShape);
  if (!shape)
    return shape.takeError();
  // Row-major data reads the same under any shape with the same element count.
  HostTensor out = input;
  out.shape = std::move(*shape);
  return out;
}

llvm::Expected<HostTensor>
kiln::reference::transpose(const HostTensor &input, llvm::ArrayRef<int64_t> permutation) {
  size_t rank = input.shape.size();
  Shape sorted(permutation.begin(), permutation.end());
  std::sort(sorted.begin(), sorted.end());
  Shape identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted != identity)
    return makeError("transpose permutation is not a permutation of the " +
                     std::to_string(rank) + " dimensions of " +
                     shapeToString(input.shape));
  Shape inStrides = rowMajorStrides(input.shape);
  // Result dimension i walks input dimension permutation[i].
  Shape outShape, strides;
  for (int64_t p : permutation) {
    outShape.push_back(input.shape[p]);
    strides.push_back(inStrides[p]);
  }
  std::vector<int64_t> source;
  forEachIndex(outShape, [&](llvm::ArrayRef<int64_t> index) {
    source.push_back(dot(index, strides));
  });
  return gather(input, outShape, source);
}

llvm::Expected<HostTensor> kiln::reference::slice(const HostTensor &input, int64_t axis,
                                                  int64_t start, int64_t end) {
  llvm::Expected<AxisLines> lines = axisLines(input.shape, axis, "slice");
  if (!lines)
    return lines.takeError();
  // The verifier checks a static size; a dynamic one is first known here.
  if (start < 0 || end <= start || end > lines->length)
    return makeError("slice [" + std::to_string(start) + ", " + std::to_string(end) +
                     ") does not fit dimension " + std::to_string(axis) + " of " +
                     shapeToString(input.shape));
  Shape outShape = input.shape;
  outShape[axis] = end - start;
  std::vector<int64_t> source;
  for (int64_t o = 0; o < lines->outer; ++o)
    for (int64_t j = start; j < end; ++j)
      for (int64_t i = 0; i < lines->inner; ++i)
        source.push_back(lines->at(o, i, j));
  return gather(input, outShape, source);
}

llvm::Expected<HostTensor> kiln::reference::unpackPanels(const HostTensor &panels,
                                                         int64_t rows) {
  if (panels.shape.size() != 3)
    return makeError("unpack_panels: expected [P, K, W] panels, got " +
                     shapeToString(panels.shape));
  int64_t count = panels.shape[0], k = panels.shape[1], width = panels.shape[2];
  if (rows < 1 || width < 1 || (rows + width - 1) / width != count)
    return makeError("unpack_panels: " + std::to_string(rows) + " rows do not fit " +
                     shapeToString(panels.shape));
  std::vector<int64_t> source;
  for (int64_t n = 0; n < rows; ++n)
    for (int64_t j = 0; j < k; ++j)
      source.push_back(((n / width) * k + j) * width + n % width);
  return gather(panels, {rows, k}, source);
}

llvm::Expected<HostTensor>
kiln::reference::concat(llvm::ArrayRef<const HostTensor *> inputs, int64_t axis) {
  if (inputs.empty())
    return makeError("concat needs at least one operand");
  const HostTensor &first = *inputs.front();
  llvm::Expected<AxisLines> firstLines = axisLines(first.shape, axis, "concat");
  if (!firstLines)
    return firstLines.takeError();
  Shape outShape = first.shape;
  outShape[axis] = 0;
  for (const HostTensor *in : inputs) {
    Shape expected = first.shape;
    if (in->shape.size() == expected.size())
      expected[axis] = in->shape[axis];
    if (in->shape != expected || in->isInt != first.isInt || in->isI64 != first.isI64)
      return makeError("concat operand " + shapeToString(in->shape) +
                       " does not fit operand #0 " + shapeToString(first.shape) +
                       " along axis " + std::to_string(axis));
    outShape[axis] += in->shape[axis];
  }
  // Row-major, each index of the dims before `axis` holds one contiguous block per
  // operand (its `axis` dim and everything after); the result lays them end to end.
  HostTensor out = emptyLike(first, outShape);
  for (int64_t o = 0; o < firstLines->outer; ++o)
    for (const HostTensor *in : inputs) {
      int64_t block = product(llvm::ArrayRef<int64_t>(in->shape).drop_front(axis));
      for (int64_t k = 0; k < block; ++k)
        appendElement(out, *in, o * block + k);
    }
  return out;
}
