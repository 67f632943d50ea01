//===- Matmul.cpp - Reference kernels of kiln.matmul and kiln.linear -----===//

#include "Kernels.h"

using namespace kiln::reference;

llvm::Expected<HostTensor> kiln::reference::matmul(const HostTensor &lhs,
                                                   const HostTensor &rhs,
                                                   bool transposeLhs, bool transposeRhs) {
  if (lhs.shape.size() < 2 || rhs.shape.size() < 2)
    return makeError("matmul operands need rank >= 2, got " + shapeToString(lhs.shape) +
                     " and " + shapeToString(rhs.shape));
  size_t lr = lhs.shape.size(), rr = rhs.shape.size();
  // Stored as [.., rows, cols]; a transpose flag swaps which of the two is contracted.
  int64_t lhsRows = lhs.shape[lr - 2], lhsCols = lhs.shape[lr - 1];
  int64_t rhsRows = rhs.shape[rr - 2], rhsCols = rhs.shape[rr - 1];
  int64_t m = transposeLhs ? lhsCols : lhsRows, k = transposeLhs ? lhsRows : lhsCols;
  int64_t kr = transposeRhs ? rhsCols : rhsRows, n = transposeRhs ? rhsRows : rhsCols;
  if (k != kr)
    return makeError("matmul contraction sizes differ: lhs " + shapeToString(lhs.shape) +
                     " contracts " + std::to_string(k) + ", rhs " +
                     shapeToString(rhs.shape) + " contracts " + std::to_string(kr));

  Shape lhsBatch(lhs.shape.begin(), lhs.shape.end() - 2);
  Shape rhsBatch(rhs.shape.begin(), rhs.shape.end() - 2);
  llvm::Expected<Shape> batch = broadcastShapes(lhsBatch, rhsBatch);
  if (!batch)
    return batch.takeError();
  // Batch strides in units of whole matrices.
  Shape lhsBatchStrides = broadcastStrides(lhsBatch, batch->size());
  Shape rhsBatchStrides = broadcastStrides(rhsBatch, batch->size());

  Shape outShape = *batch;
  outShape.push_back(m);
  outShape.push_back(n);
  HostTensor out = HostTensor::floats(outShape);
  auto lhsAt = [&](int64_t base, int64_t i, int64_t j) {
    return transposeLhs ? lhs.f32[base + j * m + i] : lhs.f32[base + i * k + j];
  };
  auto rhsAt = [&](int64_t base, int64_t i, int64_t j) {
    return transposeRhs ? rhs.f32[base + j * k + i] : rhs.f32[base + i * n + j];
  };
  int64_t o = 0;
  forEachIndex(*batch, [&](llvm::ArrayRef<int64_t> index) {
    int64_t lhsBase = dot(index, lhsBatchStrides) * m * k;
    int64_t rhsBase = dot(index, rhsBatchStrides) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        // A float product is exact in double, so only the sum rounds.
        double sum = 0.0;
        for (int64_t c = 0; c < k; ++c)
          sum += double(lhsAt(lhsBase, i, c)) * double(rhsAt(rhsBase, c, j));
        out.f32[o++] = static_cast<float>(sum);
      }
  });
  return out;
}

llvm::Expected<HostTensor> kiln::reference::linear(const HostTensor &input,
                                                   const HostTensor &weight,
                                                   const HostTensor &bias) {
  if (input.shape.empty() || weight.shape.size() != 2 || bias.shape.size() != 1)
    return makeError(
        "linear needs input [..., in], weight [out, in] and bias [out], got " +
        shapeToString(input.shape) + ", " + shapeToString(weight.shape) + " and " +
        shapeToString(bias.shape));
  int64_t out = weight.shape[0], in = weight.shape[1];
  if (input.shape.back() != in || bias.shape[0] != out)
    return makeError("linear input " + shapeToString(input.shape) + ", weight " +
                     shapeToString(weight.shape) + " and bias " +
                     shapeToString(bias.shape) + " do not fit together");
  Shape outShape = input.shape;
  outShape.back() = out;
  HostTensor result = HostTensor::floats(outShape);
  int64_t rows = product(llvm::ArrayRef<int64_t>(input.shape).drop_back());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      // y = x . W^T + b: row o of the [out, in] weight is output feature o.
      double sum = bias.f32[o];
      for (int64_t i = 0; i < in; ++i)
        sum += double(input.f32[r * in + i]) * double(weight.f32[o * in + i]);
      result.f32[r * out + o] = static_cast<float>(sum);
    }
  return result;
}
