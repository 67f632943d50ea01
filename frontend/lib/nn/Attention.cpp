//===- Attention.cpp - Multi-head attention in the Kiln DSL ---------------===//

#include "kiln/frontend/nn/Attention.h"

#include <cmath>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::nn;

Tensor nn::splitHeads(const Tensor &x, int64_t heads) {
  if (!x.valid())
    return {};
  return transpose(reshape(x, {0, 0, heads, x.dim(-1).size / heads}), {0, 2, 1, 3});
}

Tensor nn::mergeHeads(const Tensor &x) {
  if (!x.valid())
    return {};
  return reshape(transpose(x, {0, 2, 1, 3}), {0, 0, x.dim(1).size * x.dim(3).size});
}

Tensor nn::scaledDotProductAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                                     const std::optional<Tensor> &mask) {
  if (!q.valid())
    return {};
  float headDim = static_cast<float>(q.dim(-1).size);
  Tensor scores = matmul(q, k, /*transposeLhs=*/false, /*transposeRhs=*/true) *
                  (1.0f / std::sqrt(headDim));
  if (mask)
    scores = scores + *mask;
  return mergeHeads(matmul(softmax(scores, /*axis=*/-1), v));
}

MultiHeadAttention::MultiHeadAttention(ModelBuilder &m, const std::string &prefix,
                                       int64_t dModel, int64_t heads)
    : module_(m, "nn::MultiHeadAttention", prefix),
      inWeight_(m.parameter(prefix + "in_proj_weight", {3 * dModel, dModel})),
      inBias_(m.parameter(prefix + "in_proj_bias", {3 * dModel})),
      outProj_(m, prefix + "out_proj", dModel, dModel), dModel_(dModel), heads_(heads) {}

Tensor MultiHeadAttention::project(const Tensor &x, int part) const {
  int64_t begin = part * dModel_, end = begin + dModel_;
  return linear(x, slice(inWeight_, 0, begin, end), slice(inBias_, 0, begin, end));
}

Tensor MultiHeadAttention::heads(const Tensor &x, int part,
                                 std::source_location loc) const {
  auto scope = module_.enter(loc);
  return splitHeads(project(x, part), heads_);
}

Tensor MultiHeadAttention::attend(const Tensor &q, const Tensor &k, const Tensor &v,
                                  const std::optional<Tensor> &mask,
                                  std::source_location loc) const {
  auto scope = module_.enter(loc);
  return outProj_(scaledDotProductAttention(q, k, v, mask));
}

Tensor MultiHeadAttention::operator()(const Tensor &query, const Tensor &key,
                                      const Tensor &value,
                                      const std::optional<Tensor> &mask,
                                      std::source_location loc) const {
  auto scope = module_.enter(loc);
  // Named in order: argument evaluation order is unspecified, and the IR should read
  // q, k, v.
  Tensor q = heads(query, 0);
  Tensor k = heads(key, 1);
  Tensor v = heads(value, 2);
  return attend(q, k, v, mask);
}
