//===- Embedding.cpp - Reference embeddings, positions and masks ----------===//
//
// The inputs side of an encoder-decoder: token embeddings, positions and their
// sinusoidal encodings, and the masks of attention: additive (0 to keep, -inf to mask,
// added to the scores) or boolean (1 = masked, for masked_fill). Ops that take a `like`
// operand read only its shape.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <cmath>
#include <limits>

using namespace kiln::reference;

llvm::Expected<HostTensor> kiln::reference::embedding(const HostTensor &table,
                                                      const HostTensor &ids,
                                                      const std::string &tableName) {
  if (table.shape.size() != 2)
    return makeError("embedding table must have rank 2, got " +
                     shapeToString(table.shape));
  int64_t vocabulary = table.shape[0], features = table.shape[1];
  Shape outShape = ids.shape;
  outShape.push_back(features);
  // An id outside the table is the caller's error, never a crash nor a clamped row; the
  // message starts as a compiled kernel's check does.
  for (int64_t k = 0; k < ids.numElements(); ++k)
    if (ids.i32[k] < 0 || ids.i32[k] >= vocabulary)
      return makeError("embedding of '" + tableName + "' (" + std::to_string(vocabulary) +
                       " rows): index " + std::to_string(ids.i32[k]) +
                       " out of range (ids element " +
                       shapeToString(unravelIndex(k, ids.shape)) + ")");
  std::vector<int64_t> source;
  for (int32_t id : ids.i32)
    for (int64_t d = 0; d < features; ++d)
      source.push_back(id * features + d);
  return gather(table, outShape, source);
}

llvm::Expected<HostTensor> kiln::reference::range(const HostTensor &like, int64_t axis) {
  llvm::Expected<AxisLines> lines = axisLines(like.shape, axis, "range");
  if (!lines)
    return lines.takeError();
  HostTensor out = HostTensor::ints({lines->length});
  for (int64_t i = 0; i < lines->length; ++i)
    out.i32[i] = static_cast<int32_t>(i);
  return out;
}

llvm::Expected<HostTensor> kiln::reference::sinusoid(const HostTensor &positions,
                                                     int64_t dim) {
  if (dim <= 0 || dim % 2 != 0)
    return makeError("sinusoid feature size must be positive and even, got " +
                     std::to_string(dim));
  Shape outShape = positions.shape;
  outShape.push_back(dim);
  HostTensor out = HostTensor::floats(outShape);
  for (int64_t k = 0; k < positions.numElements(); ++k)
    for (int64_t i = 0; i < dim / 2; ++i) {
      // PE[p, 2i] = sin(p / 10000^(2i/D)), PE[p, 2i+1] = cos(same angle), in double.
      double angle = double(positions.i32[k]) / std::pow(10000.0, double(2 * i) / dim);
      out.f32[k * dim + 2 * i] = static_cast<float>(std::sin(angle));
      out.f32[k * dim + 2 * i + 1] = static_cast<float>(std::cos(angle));
    }
  return out;
}

/// A [rows, cols] mask, additive or boolean, masked where `masked(r, c)`.
template <typename Pred>
static HostTensor makeMask(int64_t rows, int64_t cols, bool boolean, Pred masked) {
  HostTensor out =
      boolean ? HostTensor::ints({rows, cols}) : HostTensor::floats({rows, cols});
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      bool m = masked(r, c);
      if (boolean)
        out.i32[r * cols + c] = m ? 1 : 0;
      else
        out.f32[r * cols + c] = m ? -inf : 0.0f;
    }
  return out;
}

llvm::Expected<HostTensor> kiln::reference::paddingMask(const HostTensor &lengths,
                                                        const HostTensor &like,
                                                        int64_t axis, bool boolean) {
  if (lengths.shape.size() != 1)
    return makeError("padding_mask lengths must have rank 1, got " +
                     shapeToString(lengths.shape));
  llvm::Expected<AxisLines> lines = axisLines(like.shape, axis, "padding_mask");
  if (!lines)
    return lines.takeError();
  // A length beyond the keys masks nothing, a negative one everything; an input's
  // kiln.bounds is where such lengths are rejected.
  return makeMask(lengths.shape[0], lines->length, boolean,
                  [&](int64_t b, int64_t j) { return j >= lengths.i32[b]; });
}

llvm::Expected<HostTensor> kiln::reference::causalMask(const HostTensor &like,
                                                       int64_t axis, bool boolean) {
  llvm::Expected<AxisLines> lines = axisLines(like.shape, axis, "causal_mask");
  if (!lines)
    return lines.takeError();
  // Query i sees keys 0..i.
  int64_t n = lines->length;
  return makeMask(n, n, boolean, [](int64_t i, int64_t j) { return j > i; });
}
