//===- DataMovement.cpp - Reference kernels of reshape and transpose ------===//
//
// These work on either element type (token ids are reshaped too).
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
