//===- TinyGpt.cpp - E2E model: a tiny GPT-style decoder-only model -------===//
//
// The decoder-only entry contract (README, "Generating text with a decoder-only
// model") on the smallest model that has every part of one: learned token and position
// embeddings, pre-norm blocks (layerNorm, causal self-attention, a gelu MLP), a final
// norm and the LM head tied to the token table. `forward` runs a whole sequence;
// `prefill` writes a prompt's keys and values into the caches in one run (kvAppend of a
// block at position 0); `step` appends one position. Written from the DSL's ops, not the
// nn library's blocks, so that it depends only on what the runtime contract needs.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"
#include "kiln/frontend/nn/Layers.h"

#include <cmath>
#include <functional>
#include <optional>

using namespace kiln::dsl;

namespace {

constexpr int64_t kVocab = 23, kDModel = 16, kHeads = 2, kLayers = 2, kDFF = 32;
constexpr int64_t kHeadDim = kDModel / kHeads;

/// What attention reads as keys and values: this run's own (forward) or a cache's
/// prefix after appending this run's (prefill, step). Arguments: layer, k, v (heads).
using KeysValues =
    std::function<std::pair<Tensor, Tensor>(int64_t, const Tensor &, const Tensor &)>;

class TinyGpt {
public:
  explicit TinyGpt(ModelBuilder &m)
      : m_(m), tokens_(m.parameter("wte.weight", {kVocab, kDModel})),
        positions_(m.parameter("wpe.weight", {kiln::e2e::kTinyGptPositions, kDModel})),
        finalNorm_(m, "ln_f", kDModel, 1e-5f) {
    for (int64_t l = 0; l < kLayers; ++l) {
      std::string p = "h." + std::to_string(l) + ".";
      blocks_.push_back({nn::LayerNorm(m, p + "ln_1", kDModel, 1e-5f),
                         nn::Linear(m, p + "attn.q_proj", kDModel, kDModel),
                         nn::Linear(m, p + "attn.k_proj", kDModel, kDModel),
                         nn::Linear(m, p + "attn.v_proj", kDModel, kDModel),
                         nn::Linear(m, p + "attn.c_proj", kDModel, kDModel),
                         nn::LayerNorm(m, p + "ln_2", kDModel, 1e-5f),
                         nn::Linear(m, p + "mlp.c_fc", kDModel, kDFF),
                         nn::Linear(m, p + "mlp.c_proj", kDFF, kDModel)});
    }
  }

  /// ids [B, T] at positions `at` ([T] or [] i32) -> hidden states [B, T, D] after the
  /// final norm.
  Tensor hidden(const Tensor &ids, const Tensor &at, const std::optional<Tensor> &mask,
                const KeysValues &keysValues) const {
    Tensor x = embedding(tokens_, ids) + embedding(positions_, at);
    for (int64_t l = 0; l < kLayers; ++l) {
      const Block &b = blocks_[size_t(l)];
      Tensor in = b.ln1(x);
      auto [k, v] = keysValues(l, heads(b.k(in)), heads(b.v(in)));
      Tensor scores = matmul(heads(b.q(in)), k, false, true) / std::sqrt(float(kHeadDim));
      if (mask)
        scores = scores + *mask;
      x = x + b.out(mergeHeads(matmul(softmax(scores), v)));
      x = x + b.fc2(gelu(b.fc1(b.ln2(x))));
    }
    return finalNorm_(x);
  }

  /// [..., D] -> [..., V] through the tied token table.
  Tensor logits(const Tensor &x) const { return matmul(x, tokens_, false, true); }

  /// Row T-1 of x [B, T, D] -> [B, 1, D]: a softmax over the positions scaled far
  /// apart is exactly one-hot at the last one (exp(-1e4) is 0 in f32), without a
  /// dynamic slice.
  Tensor lastPosition(const Tensor &x, const Tensor &at) const {
    std::vector<float> ramp;
    for (int64_t p = 0; p < kiln::e2e::kTinyGptPositions; ++p)
      ramp.push_back(float(p));
    Tensor table = constant(m_, {kiln::e2e::kTinyGptPositions, 1}, ramp);
    Tensor select = softmax(reshape(embedding(table, at), {1, 1, -1}) * 1e4f);
    return matmul(select, x);
  }

private:
  struct Block {
    nn::LayerNorm ln1;
    nn::Linear q, k, v, out;
    nn::LayerNorm ln2;
    nn::Linear fc1, fc2;
  };

  /// [B, T, D] -> [B, H, T, D/H]
  static Tensor heads(const Tensor &x) {
    return transpose(reshape(x, {0, 0, kHeads, kHeadDim}), {0, 2, 1, 3});
  }
  /// [B, H, T, D/H] -> [B, T, D]
  static Tensor mergeHeads(const Tensor &x) {
    return reshape(transpose(x, {0, 2, 1, 3}), {0, 0, kDModel});
  }

  ModelBuilder &m_;
  Parameter tokens_, positions_;
  nn::LayerNorm finalNorm_;
  std::vector<Block> blocks_;
};

std::string cacheName(int64_t layer, const char *what) {
  return "h." + std::to_string(layer) + ".attn." + what + "_cache";
}

} // namespace

Model kiln::e2e::buildTinyGptModel() {
  ModelBuilder m("e2e_tiny_gpt");
  TinyGpt gpt(m);
  const int64_t capacity = kTinyGptPositions;
  Dim batch = dyn("B");
  Bounds vocabulary{0, kVocab - 1};

  Entry forward = m.entry("forward");
  Tensor ids = forward.input("ids", DType::I32, {batch, dyn("T")}, vocabulary);
  Tensor own = positions(ids, 1);
  forward.output("logits",
                 gpt.logits(gpt.hidden(ids, own, causalMask(ids, 1),
                                       [](int64_t, const Tensor &k, const Tensor &v) {
                                         return std::pair{k, v};
                                       })));

  // The caches: B from the prompt, every position of the model.
  Entry prefill = m.entry("prefill");
  Tensor prompt = prefill.input("ids", DType::I32, {batch, dyn("N")}, vocabulary);
  for (int64_t l = 0; l < kLayers; ++l)
    for (const char *what : {"k", "v"})
      prefill.stateAlloc(cacheName(l, what), {batch, kHeads, capacity, kHeadDim});
  Tensor promptPositions = positions(prompt, 1);
  Tensor hidden =
      gpt.hidden(prompt, promptPositions, causalMask(prompt, 1),
                 [&](int64_t l, const Tensor &k, const Tensor &v) {
                   return std::pair{kvAppend(cacheName(l, "k"), k, 2, 0, capacity),
                                    kvAppend(cacheName(l, "v"), v, 2, 0, capacity)};
                 });
  prefill.output("logits", reshape(gpt.logits(gpt.lastPosition(hidden, promptPositions)),
                                   {0, kVocab}));

  Entry step = m.entry("step");
  Tensor next = step.input("ids", DType::I32, {batch, 1}, vocabulary);
  Dim p = dyn("P");
  Tensor position = step.valueInput("position", p, {1, capacity - 1});
  // The newest position sees every one the cache holds: nothing to mask.
  Tensor stepHidden = gpt.hidden(
      next, position, std::nullopt, [&](int64_t l, const Tensor &k, const Tensor &v) {
        return std::pair{kvAppend(cacheName(l, "k"), k, 2, p, capacity),
                         kvAppend(cacheName(l, "v"), v, 2, p, capacity)};
      });
  step.output("logits", reshape(gpt.logits(stepHidden), {0, kVocab}));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildTinyGptModel);
