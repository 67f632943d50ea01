//===- Transformer.cpp - The encoder-decoder Transformer ------------------===//

#include "kiln/frontend/nn/Transformer.h"

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::nn;

TransformerConfig TransformerConfig::base() { return TransformerConfig(); }

TransformerConfig TransformerConfig::tiny() {
  TransformerConfig config;
  config.dModel = 16;
  config.heads = 2;
  config.encoderLayers = config.decoderLayers = 2;
  config.dFF = 32;
  config.srcVocab = config.tgtVocab = 20;
  config.maxDecodeLength = 8;
  return config;
}

static std::string layerPrefix(const std::string &stack, size_t i) {
  return stack + ".layers." + std::to_string(i) + ".";
}

/// [B, S] additive key mask from lengths, shaped [B, 1, 1, S] for [B, H, Tq, S]; S is
/// keysLike's dimension 1.
static Tensor keyPaddingMask(const Tensor &lengths, const Tensor &keysLike) {
  return reshape(paddingMask(lengths, keysLike, /*axis=*/1), {0, 1, 1, -1});
}

EncoderLayer::EncoderLayer(ModelBuilder &m, const std::string &prefix,
                           const TransformerConfig &c)
    : module_(m, "nn::EncoderLayer", prefix),
      selfAttn_(m, prefix + "self_attn.", c.dModel, c.heads),
      feedForward_(m, prefix, c.dModel, c.dFF, c.activation),
      norm1_(m, prefix + "norm1", c.dModel, c.layerNormEps),
      norm2_(m, prefix + "norm2", c.dModel, c.layerNormEps), normFirst_(c.normFirst) {}

Tensor EncoderLayer::operator()(const Tensor &x, const Tensor &srcMask,
                                std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (normFirst_) {
    Tensor n = norm1_(x);
    Tensor h = x + selfAttn_(n, n, n, srcMask);
    return h + feedForward_(norm2_(h));
  }
  Tensor h = norm1_(x + selfAttn_(x, x, x, srcMask));
  return norm2_(h + feedForward_(h));
}

DecoderLayer::DecoderLayer(ModelBuilder &m, const std::string &prefix,
                           const TransformerConfig &c)
    : module_(m, "nn::DecoderLayer", prefix),
      selfAttn_(m, prefix + "self_attn.", c.dModel, c.heads),
      crossAttn_(m, prefix + "multihead_attn.", c.dModel, c.heads),
      feedForward_(m, prefix, c.dModel, c.dFF, c.activation),
      norm1_(m, prefix + "norm1", c.dModel, c.layerNormEps),
      norm2_(m, prefix + "norm2", c.dModel, c.layerNormEps),
      norm3_(m, prefix + "norm3", c.dModel, c.layerNormEps), normFirst_(c.normFirst),
      prefix_(prefix), dModel_(c.dModel), heads_(c.heads),
      maxDecodeLength_(c.maxDecodeLength) {}

Tensor DecoderLayer::sublayers(const Tensor &x, const Sublayer &selfAttend,
                               const Sublayer &crossAttend) const {
  if (normFirst_) {
    Tensor n1 = norm1_(x);
    Tensor h = x + selfAttend(n1);
    h = h + crossAttend(norm2_(h));
    return h + feedForward_(norm3_(h));
  }
  Tensor h = norm1_(x + selfAttend(x));
  h = norm2_(h + crossAttend(h));
  return norm3_(h + feedForward_(h));
}

Tensor DecoderLayer::operator()(const Tensor &x, const Tensor &memory,
                                const Tensor &causalMask, const Tensor &memoryMask,
                                std::source_location loc) const {
  auto scope = module_.enter(loc);
  return sublayers(
      x, [&](const Tensor &in) { return selfAttn_(in, in, in, causalMask); },
      [&](const Tensor &in) { return crossAttn_(in, memory, memory, memoryMask); });
}

/// The declaration of a dimension that a tensor has: its name, or its static size.
static Dim declared(const SymDim &dim) {
  return dim.isStatic() ? Dim(dim.size) : dyn(dim.expr);
}

void DecoderLayer::startDecoding(Entry &entry, const Tensor &memory,
                                 std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (!memory.valid())
    return; // The op that made it has said why.
  stateWrite(prefix_ + "multihead_attn.memory_k", crossAttn_.heads(memory, 1));
  stateWrite(prefix_ + "multihead_attn.memory_v", crossAttn_.heads(memory, 2));
  // Full capacity up front: each step then writes one position in place.
  std::vector<Dim> cache = {declared(memory.dim(0)), heads_, maxDecodeLength_,
                            dModel_ / heads_};
  entry.stateAlloc(prefix_ + "self_attn.k_cache", cache);
  entry.stateAlloc(prefix_ + "self_attn.v_cache", cache);
}

Tensor DecoderLayer::step(Entry &entry, const Tensor &x, const Dim &position,
                          const Dim &source, const Tensor &memoryMask,
                          std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (!x.valid())
    return {};
  auto selfAttend = [&](const Tensor &in) {
    Tensor q = selfAttn_.heads(in, 0);
    Tensor k = kvAppend(prefix_ + "self_attn.k_cache", selfAttn_.heads(in, 1), /*axis=*/2,
                        position, maxDecodeLength_);
    Tensor v = kvAppend(prefix_ + "self_attn.v_cache", selfAttn_.heads(in, 2), /*axis=*/2,
                        position, maxDecodeLength_);
    // The newest position sees itself and every earlier one, which is all the cache
    // holds: the causal mask of operator() has nothing left to mask.
    return selfAttn_.attend(q, k, v, std::nullopt);
  };
  auto crossAttend = [&](const Tensor &in) {
    Tensor q = crossAttn_.heads(in, 0);
    std::vector<Dim> memory = {declared(x.dim(0)), heads_, source, dModel_ / heads_};
    Tensor k = entry.stateRead(prefix_ + "multihead_attn.memory_k", memory);
    Tensor v = entry.stateRead(prefix_ + "multihead_attn.memory_v", memory);
    return crossAttn_.attend(q, k, v, memoryMask);
  };
  return sublayers(x, selfAttend, crossAttend);
}

Encoder::Encoder(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c)
    : module_(m, "nn::Encoder", prefix) {
  for (int64_t i = 0; i < c.encoderLayers; ++i)
    layers_.emplace_back(m, layerPrefix(prefix, i), c);
  if (c.finalNorm)
    norm_.emplace(m, prefix + ".norm", c.dModel, c.layerNormEps);
}

Tensor Encoder::operator()(Tensor x, const Tensor &srcMask,
                           std::source_location loc) const {
  auto scope = module_.enter(loc);
  for (const EncoderLayer &layer : layers_)
    x = layer(x, srcMask);
  return norm_ ? (*norm_)(x) : x;
}

Decoder::Decoder(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c)
    : module_(m, "nn::Decoder", prefix), prefix_(prefix) {
  for (int64_t i = 0; i < c.decoderLayers; ++i)
    layers_.emplace_back(m, layerPrefix(prefix, i), c);
  if (c.finalNorm)
    norm_.emplace(m, prefix + ".norm", c.dModel, c.layerNormEps);
}

Tensor Decoder::operator()(Tensor x, const Tensor &memory, const Tensor &causalMask,
                           const Tensor &memoryMask, std::source_location loc) const {
  auto scope = module_.enter(loc);
  for (const DecoderLayer &layer : layers_)
    x = layer(x, memory, causalMask, memoryMask);
  return norm_ ? (*norm_)(x) : x;
}

void Decoder::startDecoding(Entry &entry, const Tensor &memory, const Tensor &srcLengths,
                            std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (!memory.valid() || !srcLengths.valid())
    return; // The op that made it has said why.
  stateWrite(prefix_ + ".memory_mask", keyPaddingMask(srcLengths, memory));
  for (const DecoderLayer &layer : layers_)
    layer.startDecoding(entry, memory);
}

Tensor Decoder::step(Entry &entry, Tensor x, const Dim &position, const Dim &source,
                     std::source_location loc) const {
  auto scope = module_.enter(loc);
  if (!x.valid())
    return {};
  // A state read is no kernel: the mask is decode_start's, one for every layer.
  Tensor memoryMask =
      entry.stateRead(prefix_ + ".memory_mask", {declared(x.dim(0)), 1, 1, source});
  for (const DecoderLayer &layer : layers_)
    x = layer.step(entry, x, position, source, memoryMask);
  return norm_ ? (*norm_)(x) : x;
}

Transformer::Transformer(ModelBuilder &m, const std::string &prefix,
                         const TransformerConfig &c)
    : module_(m, "nn::Transformer", prefix), config_(c),
      srcEmbed_(m, c.sharedEmbeddings ? "embed" : "src_embed", c.srcVocab, c.dModel),
      tgtEmbed_(m, c.sharedEmbeddings ? "embed" : "tgt_embed", c.tgtVocab, c.dModel),
      encoder_(m, prefix + ".encoder", c), decoder_(m, prefix + ".decoder", c) {}

Tensor Transformer::encode(const Tensor &srcIds, const Tensor &srcLengths,
                           std::source_location loc) const {
  auto scope = module_.enter(loc);
  return encoder_(srcEmbed_(srcIds), keyPaddingMask(srcLengths, srcIds));
}

Tensor Transformer::decode(const Tensor &tgtIds, const Tensor &memory,
                           const Tensor &srcLengths, std::source_location loc) const {
  auto scope = module_.enter(loc);
  Tensor causal = causalMask(tgtIds, /*axis=*/1);
  Tensor out =
      decoder_(tgtEmbed_(tgtIds), memory, causal, keyPaddingMask(srcLengths, memory));
  return tgtEmbed_.project(out);
}

void Transformer::startDecoding(Entry &entry, const Tensor &memory,
                                const Tensor &srcLengths,
                                std::source_location loc) const {
  auto scope = module_.enter(loc);
  decoder_.startDecoding(entry, memory, srcLengths);
}

Tensor Transformer::decodeStep(Entry &entry, const Tensor &tgtIds, const Tensor &step,
                               const Dim &position, const Dim &source,
                               std::source_location loc) const {
  auto scope = module_.enter(loc);
  Tensor out = decoder_.step(entry, tgtEmbed_.atPosition(tgtIds, step), position, source);
  // [B, 1, V] -> [B, V]: one position per run.
  return reshape(tgtEmbed_.project(out), {0, config_.tgtVocab});
}

void Transformer::declareEntries(ModelBuilder &m, std::source_location loc) const {
  auto scope = module_.enter(loc);
  Dim batch = dyn("B"), src = dyn("S"), tgt = dyn("T"), position = dyn("P");

  Entry enc = m.entry("encode");
  Tensor srcIds =
      enc.input("src_ids", DType::I32, {batch, src}, {0, config_.srcVocab - 1});
  Tensor srcLengths = enc.input("src_lengths", DType::I32, {batch}, {1, "S"});
  enc.output("memory", encode(srcIds, srcLengths));

  Entry dec = m.entry("decode");
  Tensor tgtIds =
      dec.input("tgt_ids", DType::I32, {batch, tgt}, {0, config_.tgtVocab - 1});
  Tensor memory = dec.input("memory", DType::F32, {batch, src, config_.dModel});
  Tensor memLengths = dec.input("src_lengths", DType::I32, {batch}, {1, "S"});
  dec.output("logits", decode(tgtIds, memory, memLengths));

  Entry start = m.entry("decode_start");
  Tensor startMemory = start.input("memory", DType::F32, {batch, src, config_.dModel});
  // From 0: an empty memory (S = 0) has no length of 1 to give.
  startDecoding(start, startMemory,
                start.input("src_lengths", DType::I32, {batch}, {0, "S"}));

  Entry step = m.entry("decode_step");
  Tensor nextIds =
      step.input("tgt_ids", DType::I32, {batch, 1}, {0, config_.tgtVocab - 1});
  Tensor stepIndex = step.valueInput("step", position, {0, config_.maxDecodeLength - 1});
  // The step masks the memory with decode_start's mask state, not these lengths; the
  // input stays, checked against its bounds, so that the drivers that pass it (the
  // runtime's KVCacheDecoder, the bindings, every caller of the entry) keep working.
  // S is bound by the memory states the step reads.
  step.input("src_lengths", DType::I32, {batch}, {1, src});
  step.output("logits", decodeStep(step, nextIds, stepIndex, position, src));
}
