//===- Attention.cpp - Reference kernel of the fused kiln.attention -------===//
//
// Written from the op's definition, one query row at a time, and on purpose not by
// calling the softmax and matmul kernels: the tests compare this kernel against the
// unfused graph run op by op, which only means something if the two share no code.
//
// Rounding follows the unfused graph: a score is rounded to f32 where that graph stores
// it (after q·kT, after the scale, after the mask) and so is each softmax weight, while
// sums are taken in double as the reference's matmul and softmax take them. Fused and
// unfused then agree to f32 rounding even where scores are large and exp() magnifies
// every rounding of them.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace kiln::reference;

namespace {
/// The shapes of one call, checked against each other.
struct AttentionShapes {
  int64_t queries = 0, keys = 0, headDim = 0, valueDim = 0;
  Shape batch;
  /// Strides, in whole matrices, of each operand's batch dims over `batch`.
  Shape queryBatch, keyBatch, valueBatch;
  /// Element strides of the mask over the scores [batch..., Tq, Tk].
  Shape mask;
};
} // namespace

static llvm::Expected<AttentionShapes> checkShapes(const HostTensor &q,
                                                   const HostTensor &k,
                                                   const HostTensor &v,
                                                   const HostTensor *mask) {
  size_t rank = q.shape.size();
  if (rank < 3 || k.shape.size() != rank || v.shape.size() != rank)
    return makeError("attention needs q, k and v of one rank >= 3, got " +
                     shapeToString(q.shape) + ", " + shapeToString(k.shape) + " and " +
                     shapeToString(v.shape));
  AttentionShapes s;
  s.queries = q.shape[rank - 2];
  s.headDim = q.shape[rank - 1];
  s.keys = k.shape[rank - 2];
  s.valueDim = v.shape[rank - 1];
  if (k.shape[rank - 1] != s.headDim || v.shape[rank - 2] != s.keys)
    return makeError("attention q " + shapeToString(q.shape) + ", k " +
                     shapeToString(k.shape) + " and v " + shapeToString(v.shape) +
                     " do not fit together ([..., Tq, d], [..., Tk, d], [..., Tk, dv])");
  llvm::ArrayRef<int64_t> qb = llvm::makeArrayRef(q.shape).drop_back(2);
  llvm::ArrayRef<int64_t> kb = llvm::makeArrayRef(k.shape).drop_back(2);
  llvm::ArrayRef<int64_t> vb = llvm::makeArrayRef(v.shape).drop_back(2);
  llvm::Expected<Shape> qk = broadcastShapes(qb, kb);
  if (!qk)
    return qk.takeError();
  llvm::Expected<Shape> batch = broadcastShapes(*qk, vb);
  if (!batch)
    return batch.takeError();
  s.batch = *batch;
  s.queryBatch = broadcastStrides(qb, s.batch.size());
  s.keyBatch = broadcastStrides(kb, s.batch.size());
  s.valueBatch = broadcastStrides(vb, s.batch.size());
  if (mask) {
    Shape scores = s.batch;
    scores.push_back(s.queries);
    scores.push_back(s.keys);
    llvm::Expected<Shape> masked = broadcastShapes(scores, mask->shape);
    if (!masked)
      return masked.takeError();
    if (*masked != scores)
      return makeError("attention mask " + shapeToString(mask->shape) +
                       " would enlarge the scores " + shapeToString(scores));
    s.mask = broadcastStrides(mask->shape, scores.size());
  }
  return s;
}

llvm::Expected<HostTensor>
kiln::reference::attention(const HostTensor &q, const HostTensor &k, const HostTensor &v,
                           const HostTensor *mask, const AttentionAttributes &attrs) {
  llvm::Expected<AttentionShapes> checked = checkShapes(q, k, v, mask);
  if (!checked)
    return checked.takeError();
  const AttentionShapes &s = *checked;
  Shape outShape = s.batch;
  outShape.push_back(s.queries);
  outShape.push_back(s.valueDim);
  HostTensor out = HostTensor::floats(outShape);

  const float inf = std::numeric_limits<float>::infinity();
  // Causal: query i sees keys j <= i + (Tk - Tq), the diagonal aligned bottom-right.
  const int64_t offset = s.keys - s.queries;
  size_t batchRank = s.batch.size();
  std::vector<float> scores(s.keys), weights(s.keys);
  int64_t row = 0;
  forEachIndex(s.batch, [&](llvm::ArrayRef<int64_t> index) {
    // data() + offset, not &f32[offset]: an operand with a zero extent is an empty
    // vector, which operator[] may not index even at 0.
    const float *qm = q.f32.data() + dot(index, s.queryBatch) * s.queries * s.headDim;
    const float *km = k.f32.data() + dot(index, s.keyBatch) * s.keys * s.headDim;
    const float *vm = v.f32.data() + dot(index, s.valueBatch) * s.keys * s.valueDim;
    Shape scoreIndex(index.begin(), index.end());
    scoreIndex.resize(batchRank + 2);
    for (int64_t i = 0; i < s.queries; ++i, ++row) {
      scoreIndex[batchRank] = i;
      bool hasNaN = false;
      float max = -inf;
      for (int64_t j = 0; j < s.keys; ++j) {
        double sum = 0.0;
        for (int64_t c = 0; c < s.headDim; ++c)
          sum += double(qm[i * s.headDim + c]) * double(km[j * s.headDim + c]);
        float score = static_cast<float>(sum) * attrs.scale;
        if (mask) {
          scoreIndex[batchRank + 1] = j;
          score += mask->f32[dot(scoreIndex, s.mask)];
        }
        if (attrs.causal && j > i + offset)
          score += -inf;
        scores[j] = score;
        hasNaN |= std::isnan(score);
        max = std::max(max, score);
      }
      float *y = out.f32.data() + row * s.valueDim;
      if (hasNaN || max == -inf) {
        // Every key masked: the defined value, never exp(-inf - -inf).
        float fill =
            hasNaN ? std::numeric_limits<float>::quiet_NaN() : attrs.maskedRowValue;
        std::fill(y, y + s.valueDim, fill);
        continue;
      }
      double total = 0.0;
      for (int64_t j = 0; j < s.keys; ++j)
        total += std::exp(double(scores[j]) - double(max));
      for (int64_t j = 0; j < s.keys; ++j)
        weights[j] =
            static_cast<float>(std::exp(double(scores[j]) - double(max)) / total);
      for (int64_t c = 0; c < s.valueDim; ++c) {
        double sum = 0.0;
        for (int64_t j = 0; j < s.keys; ++j)
          sum += double(weights[j]) * double(vm[j * s.valueDim + c]);
        y[c] = static_cast<float>(sum);
      }
    }
  });
  return out;
}
