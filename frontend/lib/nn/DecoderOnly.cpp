//===- DecoderOnly.cpp - GPT-2 and LLaMA style language models ------------===//

#include "kiln/frontend/nn/DecoderOnly.h"

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::nn;

using Layout = DecoderOnlyConfig::Layout;

DecoderOnlyConfig DecoderOnlyConfig::gpt2(int64_t vocab, int64_t dModel, int64_t heads,
                                          int64_t layers, int64_t maxPositions) {
  DecoderOnlyConfig c;
  c.vocab = vocab;
  c.dModel = dModel;
  c.heads = heads;
  c.layers = layers;
  c.dFF = 4 * dModel;
  c.maxPositions = maxPositions;
  return c;
}

DecoderOnlyConfig DecoderOnlyConfig::llama(int64_t vocab, int64_t dModel, int64_t heads,
                                           int64_t layers, int64_t dFF,
                                           int64_t maxPositions) {
  DecoderOnlyConfig c = gpt2(vocab, dModel, heads, layers, maxPositions);
  c.layout = Layout::Llama;
  c.dFF = dFF;
  c.normEpsilon = 1e-6f;
  c.activation = Activation::SiLU;
  c.tiedHead = false;
  return c;
}

CausalSelfAttention::CausalSelfAttention(ModelBuilder &m, const std::string &prefix,
                                         const DecoderOnlyConfig &c)
    : module_(m, "nn::CausalSelfAttention", prefix), layout_(c.layout), dModel_(c.dModel),
      heads_(c.heads), ropeBase_(c.ropeBase) {
  if (layout_ == Layout::GPT2) {
    packed_.emplace(m, prefix + ".c_attn", c.dModel, 3 * c.dModel);
    gpt2Out_.emplace(m, prefix + ".c_proj", c.dModel, c.dModel);
    return;
  }
  for (const char *name : {".q_proj", ".k_proj", ".v_proj", ".o_proj"})
    llamaProjections_.emplace_back(m, prefix + name, c.dModel, c.dModel, /*bias=*/false);
}

Tensor CausalSelfAttention::heads(const Tensor &x, int part, const Tensor &positions,
                                  std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (layout_ == Layout::GPT2)
    return splitHeads(packed_->columns(x, part * dModel_, (part + 1) * dModel_), heads_);
  Tensor h = splitHeads(llamaProjections_[part](x), heads_);
  return part == 2 ? h : rotary(h, positions, ropeBase_);
}

Tensor CausalSelfAttention::out(const Tensor &merged, std::source_location loc) const {
  auto scope = module_.enter(loc);
  return layout_ == Layout::GPT2 ? (*gpt2Out_)(merged) : llamaProjections_[3](merged);
}

DecoderMLP::DecoderMLP(ModelBuilder &m, const std::string &prefix,
                       const DecoderOnlyConfig &c)
    : module_(m, "nn::DecoderMLP", prefix), activation_(c.activation) {
  if (c.layout == Layout::GPT2) {
    fc_.emplace(m, prefix + ".c_fc", c.dModel, c.dFF);
    proj_.emplace(m, prefix + ".c_proj", c.dFF, c.dModel);
    return;
  }
  swiglu_.emplace_back(m, prefix + ".gate_proj", c.dModel, c.dFF, /*bias=*/false);
  swiglu_.emplace_back(m, prefix + ".up_proj", c.dModel, c.dFF, /*bias=*/false);
  swiglu_.emplace_back(m, prefix + ".down_proj", c.dFF, c.dModel, /*bias=*/false);
}

Tensor DecoderMLP::operator()(const Tensor &x, std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (fc_)
    return (*proj_)(activate((*fc_)(x), activation_));
  return swiglu_[2](silu(swiglu_[0](x)) * swiglu_[1](x));
}

static std::variant<LayerNorm, RMSNorm>
makeNorm(ModelBuilder &m, const std::string &prefix, const DecoderOnlyConfig &c) {
  if (c.layout == Layout::GPT2)
    return LayerNorm(m, prefix, c.dModel, c.normEpsilon);
  return RMSNorm(m, prefix, c.dModel, c.normEpsilon);
}

DecoderNorm::DecoderNorm(ModelBuilder &m, const std::string &prefix,
                         const DecoderOnlyConfig &c)
    : norm_(makeNorm(m, prefix, c)) {}

Tensor DecoderNorm::operator()(const Tensor &x) const {
  return std::visit([&](const auto &norm) { return norm(x); }, norm_);
}

DecoderBlock::DecoderBlock(ModelBuilder &m, const std::string &prefix,
                           const DecoderOnlyConfig &c)
    : module_(m, "nn::DecoderBlock", prefix),
      attnPrefix_(prefix + (c.layout == Layout::GPT2 ? ".attn" : ".self_attn")),
      norm1_(m, prefix + (c.layout == Layout::GPT2 ? ".ln_1" : ".input_layernorm"), c),
      norm2_(m,
             prefix + (c.layout == Layout::GPT2 ? ".ln_2" : ".post_attention_layernorm"),
             c),
      attn_(m, attnPrefix_, c), mlp_(m, prefix + ".mlp", c) {}

Tensor DecoderBlock::operator()(const Tensor &x, const Tensor &positions,
                                const Attend &attend, std::source_location loc) const {
  auto scope = module_.enter(loc);
  Tensor n = norm1_(x);
  // Named in order: the IR should read q, k, v.
  Tensor q = attn_.heads(n, 0, positions);
  Tensor k = attn_.heads(n, 1, positions);
  Tensor v = attn_.heads(n, 2, positions);
  Tensor h = x + attn_.out(attend(attnPrefix_, q, k, v));
  return h + mlp_(norm2_(h));
}

static std::string modelPrefix(const DecoderOnlyConfig &c) {
  return c.layout == Layout::GPT2 ? "transformer" : "model";
}

DecoderOnlyLM::DecoderOnlyLM(ModelBuilder &m, const DecoderOnlyConfig &c)
    : module_(m, "nn::DecoderOnlyLM", modelPrefix(c)), config_(c),
      tokens_(m.parameter(modelPrefix(c) + (c.layout == Layout::GPT2
                                                ? ".wte.weight"
                                                : ".embed_tokens.weight"),
                          {c.vocab, c.dModel})),
      finalNorm_(m, modelPrefix(c) + (c.layout == Layout::GPT2 ? ".ln_f" : ".norm"), c) {
  if (c.layout == Layout::GPT2)
    positions_ = m.parameter("transformer.wpe.weight", {c.maxPositions, c.dModel});
  if (!c.tiedHead)
    head_ = m.parameter("lm_head.weight", {c.vocab, c.dModel});
  std::string blocks = modelPrefix(c) + (c.layout == Layout::GPT2 ? ".h." : ".layers.");
  for (int64_t i = 0; i < c.layers; ++i)
    blocks_.emplace_back(m, blocks + std::to_string(i), c);
}

Tensor DecoderOnlyLM::embed(const Tensor &ids, const Tensor &positions) const {
  Tensor x = embedding(tokens_, ids);
  // [T, D], broadcast over the batch.
  return positions_ ? x + embedding(*positions_, positions) : x;
}

Tensor DecoderOnlyLM::run(Tensor x, const Tensor &positions,
                          const DecoderBlock::Attend &attend) const {
  for (const DecoderBlock &block : blocks_)
    x = block(x, positions, attend);
  return finalNorm_(x);
}

Tensor DecoderOnlyLM::head(const Tensor &x) const {
  return matmul(x, head_ ? *head_ : tokens_, /*transposeLhs=*/false,
                /*transposeRhs=*/true);
}

Tensor DecoderOnlyLM::forward(const Tensor &ids, std::source_location loc) const {
  auto scope = module_.enter(loc);
  Tensor causal = causalMask(ids, /*axis=*/1);
  auto attend = [&](const std::string &, const Tensor &q, const Tensor &k,
                    const Tensor &v) {
    return scaledDotProductAttention(q, k, v, causal);
  };
  Tensor at = positions(ids, /*axis=*/1);
  return head(run(embed(ids, at), at, attend));
}

/// x [B, N, D] -> its last position [B, D], for a dynamic N. There is no slice at a
/// dynamic index, so the row is selected by a one-hot weight built from the causal mask:
/// relu(mask + 1) is the lower triangle of ones, its row sums count 1..N (exact in f32),
/// and relu(count - N + 1) is 1 at N alone. Costs an N x N mask, nothing beside the
/// model.
static Tensor lastPosition(const Tensor &x) {
  if (!x.valid())
    return {};
  Tensor one = constant(*x.builder(), 1.f);
  Tensor lower = relu(causalMask(x, /*axis=*/1) + one);
  Tensor count = reduceSum(lower, {1}, /*keepDim=*/true); // [N, 1]
  Tensor oneHot = relu(count - reduceMax(count, {0}, /*keepDim=*/true) + one);
  return reduceSum(x * oneHot, {1});
}

Tensor DecoderOnlyLM::prefill(Entry &entry, const Tensor &ids,
                              std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (!ids.valid())
    return {};
  const SymDim &batch = ids.dim(0);
  std::vector<Dim> cache = {batch.isStatic() ? Dim(batch.size) : dyn(batch.expr),
                            config_.heads, config_.maxPositions,
                            config_.dModel / config_.heads};
  Tensor causal = causalMask(ids, /*axis=*/1);
  auto attend = [&](const std::string &prefix, const Tensor &q, const Tensor &k,
                    const Tensor &v) {
    entry.stateAlloc(prefix + ".k_cache", cache);
    entry.stateAlloc(prefix + ".v_cache", cache);
    // A prefill starts at position 0: the caches then hold exactly this run's keys.
    Tensor keys =
        kvAppend(prefix + ".k_cache", k, /*axis=*/2, Dim(0), config_.maxPositions);
    Tensor values =
        kvAppend(prefix + ".v_cache", v, /*axis=*/2, Dim(0), config_.maxPositions);
    return scaledDotProductAttention(q, keys, values, causal);
  };
  Tensor at = positions(ids, /*axis=*/1);
  return head(lastPosition(run(embed(ids, at), at, attend)));
}

Tensor DecoderOnlyLM::step(const Tensor &ids, const Tensor &position,
                           const Dim &positionDim, std::source_location loc) const {
  auto scope = module_.enter(loc);
  auto attend = [&](const std::string &prefix, const Tensor &q, const Tensor &k,
                    const Tensor &v) {
    Tensor keys =
        kvAppend(prefix + ".k_cache", k, /*axis=*/2, positionDim, config_.maxPositions);
    Tensor values =
        kvAppend(prefix + ".v_cache", v, /*axis=*/2, positionDim, config_.maxPositions);
    // The new position sees itself and every earlier one, which is all the cache
    // holds: nothing is left to mask.
    return scaledDotProductAttention(q, keys, values, std::nullopt);
  };
  Tensor at = reshape(position, {1});
  // [B, 1, V] -> [B, V]: one position per run.
  return reshape(head(run(embed(ids, at), at, attend)), {0, config_.vocab});
}

void DecoderOnlyLM::declareEntries(ModelBuilder &m, std::source_location loc) const {
  auto scope = module_.enter(loc);
  Dim batch = dyn("B");
  Bounds tokens{0, config_.vocab - 1};

  Entry forwardEntry = m.entry("forward");
  Tensor ids = forwardEntry.input("ids", DType::I32,
                                  {batch, dyn("T", config_.maxPositions)}, tokens);
  forwardEntry.output("logits", forward(ids));

  Entry prefillEntry = m.entry("prefill");
  Tensor prompt = prefillEntry.input("ids", DType::I32,
                                     {batch, dyn("N", config_.maxPositions)}, tokens);
  prefillEntry.output("logits", prefill(prefillEntry, prompt));

  Entry stepEntry = m.entry("step");
  Tensor next = stepEntry.input("ids", DType::I32, {batch, 1}, tokens);
  Dim position = dyn("P");
  Tensor at = stepEntry.valueInput("position", position, {1, config_.maxPositions - 1});
  stepEntry.output("logits", step(next, at, position));
}
