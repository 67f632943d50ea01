//===- Transformer.h - The encoder-decoder Transformer ----------*- C++ -*-===//
//
// "Attention Is All You Need" in the DSL, with torch.nn.Transformer's parameter names
// under `PREFIX.` (e.g. transformer.encoder.layers.0.self_attn.in_proj_weight).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_NN_TRANSFORMER_H
#define KILN_FRONTEND_NN_TRANSFORMER_H

#include "kiln/frontend/nn/Attention.h"

#include <vector>

namespace kiln::nn {

struct TransformerConfig {
  int64_t dModel = 512;
  int64_t heads = 8;
  int64_t encoderLayers = 6;
  int64_t decoderLayers = 6;
  int64_t dFF = 2048;
  int64_t srcVocab = 8000;
  int64_t tgtVocab = 8000;
  /// One table (`embed.weight`) for source, target and the output projection; otherwise
  /// `src_embed.weight` and `tgt_embed.weight`, the latter tied to the output.
  bool sharedEmbeddings = true;
  /// Pre-norm (LayerNorm before each sublayer) instead of the paper's post-norm.
  bool normFirst = false;
  /// A LayerNorm after each stack, as torch.nn.Transformer has (`encoder.norm`).
  bool finalNorm = true;
  float layerNormEps = 1e-5f;
  Activation activation = Activation::ReLU;

  /// The paper's base model.
  static TransformerConfig base();
};

class EncoderLayer {
public:
  EncoderLayer(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);
  Tensor operator()(const Tensor &x, const Tensor &srcMask) const;

private:
  MultiHeadAttention selfAttn_;
  FeedForward feedForward_;
  LayerNorm norm1_, norm2_;
  bool normFirst_;
};

class DecoderLayer {
public:
  DecoderLayer(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);
  Tensor operator()(const Tensor &x, const Tensor &memory, const Tensor &causalMask,
                    const Tensor &memoryMask) const;

private:
  MultiHeadAttention selfAttn_, crossAttn_;
  FeedForward feedForward_;
  LayerNorm norm1_, norm2_, norm3_;
  bool normFirst_;
};

class Encoder {
public:
  Encoder(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);
  Tensor operator()(Tensor x, const Tensor &srcMask) const;

private:
  std::vector<EncoderLayer> layers_;
  std::optional<LayerNorm> norm_;
};

class Decoder {
public:
  Decoder(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);
  Tensor operator()(Tensor x, const Tensor &memory, const Tensor &causalMask,
                    const Tensor &memoryMask) const;

private:
  std::vector<DecoderLayer> layers_;
  std::optional<LayerNorm> norm_;
};

/// Embeddings + encoder + decoder + tied output projection.
class Transformer {
public:
  Transformer(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);

  /// src_ids [B, S] (i32), src_lengths [B] -> memory [B, S, D]
  Tensor encode(const Tensor &srcIds, const Tensor &srcLengths) const;
  /// tgt_ids [B, T], memory [B, S, D], src_lengths [B] -> logits [B, T, tgt_vocab];
  /// every target position sees only itself and earlier ones.
  Tensor decode(const Tensor &tgtIds, const Tensor &memory,
                const Tensor &srcLengths) const;

  /// Declares the entry points `encode` and `decode` with dynamic B, S and T, and value
  /// bounds on ids and lengths so the runtime rejects bad input.
  void declareEntries(ModelBuilder &m) const;

  const TransformerConfig &config() const { return config_; }

private:
  /// [B, S] additive key mask from lengths, shaped [B, 1, 1, S] for [B, H, Tq, S].
  Tensor keyPaddingMask(const Tensor &lengths, const Tensor &keysLike) const;

  TransformerConfig config_;
  Embedding srcEmbed_, tgtEmbed_;
  Encoder encoder_;
  Decoder decoder_;
};

} // namespace kiln::nn

#endif // KILN_FRONTEND_NN_TRANSFORMER_H
