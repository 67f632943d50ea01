//===- demo.cpp - The demo model: one unfused Transformer encoder block ---===//
//
// Small enough to compile in seconds and to check op by op, yet it exercises every op of
// the dialect the way a real model does: projections, split heads, scaled dot-product
// attention written out by hand, merge heads, residual + LayerNorm, feed-forward.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

#include <cmath>

using namespace kiln::dsl;

namespace {
constexpr int64_t kModelDim = 64;
constexpr int64_t kHeads = 4;
constexpr int64_t kHeadDim = kModelDim / kHeads;
constexpr int64_t kFeedForwardDim = 256;

/// A weight matrix stored [out, in] as PyTorch does, with its bias.
struct Linear {
  Linear(ModelBuilder &m, const std::string &name, int64_t in, int64_t out)
      : weight(m.parameter(name + ".weight", {out, in})),
        bias(m.parameter(name + ".bias", {out})) {}
  Tensor operator()(const Tensor &x) const {
    return matmul(x, weight, false, true) + bias;
  }
  Parameter weight, bias;
};

struct LayerNorm {
  LayerNorm(ModelBuilder &m, const std::string &name, int64_t dim)
      : weight(m.parameter(name + ".weight", {dim})),
        bias(m.parameter(name + ".bias", {dim})) {}
  Tensor operator()(const Tensor &x) const { return layerNorm(x, weight, bias, 1e-5f); }
  Parameter weight, bias;
};

/// [B, S, D] -> [B, H, S, D/H]
Tensor splitHeads(const Tensor &x) {
  return transpose(reshape(x, {0, 0, kHeads, kHeadDim}), {0, 2, 1, 3});
}

/// [B, H, S, D/H] -> [B, S, D]
Tensor mergeHeads(const Tensor &x) {
  return reshape(transpose(x, {0, 2, 1, 3}), {0, 0, kModelDim});
}
} // namespace

Model buildDemo() {
  ModelBuilder m("demo");
  Linear wq(m, "block.self_attn.q_proj", kModelDim, kModelDim);
  Linear wk(m, "block.self_attn.k_proj", kModelDim, kModelDim);
  Linear wv(m, "block.self_attn.v_proj", kModelDim, kModelDim);
  Linear wo(m, "block.self_attn.out_proj", kModelDim, kModelDim);
  LayerNorm norm1(m, "block.norm1", kModelDim);
  Linear linear1(m, "block.linear1", kModelDim, kFeedForwardDim);
  Linear linear2(m, "block.linear2", kFeedForwardDim, kModelDim);
  LayerNorm norm2(m, "block.norm2", kModelDim);

  Entry forward = m.entry("forward");
  Tensor x = forward.input("x", DType::F32, {dyn("B"), dyn("S"), kModelDim});

  Tensor q = splitHeads(wq(x)), k = splitHeads(wk(x)), v = splitHeads(wv(x));
  Tensor scores = matmul(q, k, /*transposeLhs=*/false, /*transposeRhs=*/true) *
                  (1.0f / std::sqrt(static_cast<float>(kHeadDim)));
  Tensor attention = mergeHeads(matmul(softmax(scores, /*axis=*/-1), v));
  Tensor h = norm1(x + wo(attention));
  Tensor feedForward = linear2(relu(linear1(h)));
  forward.output("y", norm2(h + feedForward));
  return m.finish();
}

KILN_MODEL(buildDemo);
