//===- Transformer.h - The encoder-decoder Transformer ----------*- C++ -*-===//
//
// "Attention Is All You Need" in the DSL, with torch.nn.Transformer's parameter names
// under `PREFIX.` (e.g. transformer.encoder.layers.0.self_attn.in_proj_weight).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_NN_TRANSFORMER_H
#define KILN_FRONTEND_NN_TRANSFORMER_H

#include "kiln/frontend/nn/Attention.h"

#include <functional>
#include <vector>

namespace kiln::dsl::nn {

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
  /// Positions the self-attention key/value caches of incremental decoding hold:
  /// `decode_step` accepts steps 0 .. maxDecodeLength - 1.
  int64_t maxDecodeLength = 128;

  /// The paper's base model.
  static TransformerConfig base();
  /// A two-layer model of width 16 over 20 tokens, decoding up to 8 positions: small
  /// enough for a test to compile and run in milliseconds.
  static TransformerConfig tiny();
};

class EncoderLayer {
public:
  EncoderLayer(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);
  Tensor operator()(const Tensor &x, const Tensor &srcMask,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  MultiHeadAttention selfAttn_;
  FeedForward feedForward_;
  LayerNorm norm1_, norm2_;
  bool normFirst_;
};

class DecoderLayer {
public:
  DecoderLayer(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);
  Tensor operator()(const Tensor &x, const Tensor &memory, const Tensor &causalMask,
                    const Tensor &memoryMask,
                    std::source_location loc = std::source_location::current()) const;

  // Incremental decoding, one target position per run, with states named after the
  // layer (PREFIX is e.g. `transformer.decoder.layers.0.`):
  //   PREFIX.multihead_attn.memory_k / memory_v  [B, H, S, d_k], the memory's
  //     cross-attention keys and values;
  //   PREFIX.self_attn.k_cache / v_cache  [B, H, maxDecodeLength, d_k], the keys and
  //     values of the target positions so far;
  // and the Decoder's (below) memory padding mask, which every layer's step reads.

  /// Writes the cross-attention keys and values of memory [B, S, D] and allocates empty
  /// self-attention caches.
  void startDecoding(Entry &entry, const Tensor &memory,
                     std::source_location loc = std::source_location::current()) const;
  /// x [B, 1, D], the target at position `position` (P) -> [B, 1, D]: appends its keys
  /// and values to the caches and attends over positions 0..P, then over the memory's
  /// `source` (S) positions, masked by `memoryMask` [B, 1, 1, S]. Equals operator() at
  /// position P of a prefix of P + 1 targets.
  Tensor step(Entry &entry, const Tensor &x, const Dim &position, const Dim &source,
              const Tensor &memoryMask,
              std::source_location loc = std::source_location::current()) const;

private:
  using Sublayer = std::function<Tensor(const Tensor &)>;
  /// The layer around its two attentions (each x -> x's shape): residuals, norms (pre-
  /// or post-norm) and the feed-forward block, shared by operator() and step().
  Tensor sublayers(const Tensor &x, const Sublayer &selfAttend,
                   const Sublayer &crossAttend) const;

  Module module_;
  MultiHeadAttention selfAttn_, crossAttn_;
  FeedForward feedForward_;
  LayerNorm norm1_, norm2_, norm3_;
  bool normFirst_;
  std::string prefix_;
  int64_t dModel_, heads_, maxDecodeLength_;
};

class Encoder {
public:
  Encoder(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);
  Tensor operator()(Tensor x, const Tensor &srcMask,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  std::vector<EncoderLayer> layers_;
  std::optional<LayerNorm> norm_;
};

class Decoder {
public:
  Decoder(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);
  Tensor operator()(Tensor x, const Tensor &memory, const Tensor &causalMask,
                    const Tensor &memoryMask,
                    std::source_location loc = std::source_location::current()) const;
  /// DecoderLayer::startDecoding of every layer, and state PREFIX.memory_mask [B, 1, 1,
  /// S]: memory [B, S, D]'s padding mask past each sequence's srcLengths [B], which
  /// depends on nothing a step changes, so it is built once per sequence rather than
  /// by every step.
  void startDecoding(Entry &entry, const Tensor &memory, const Tensor &srcLengths,
                     std::source_location loc = std::source_location::current()) const;
  /// DecoderLayer::step through every layer, each reading the memory_mask state, then
  /// the final norm.
  Tensor step(Entry &entry, Tensor x, const Dim &position, const Dim &source,
              std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  std::string prefix_;
  std::vector<DecoderLayer> layers_;
  std::optional<LayerNorm> norm_;
};

/// Embeddings + encoder + decoder + tied output projection.
///
/// declareEntries() gives a compiled model these entry points:
///   encode(src_ids [B, S], src_lengths [B]) -> memory [B, S, D]
///   decode(tgt_ids [B, T], memory [B, S, D], src_lengths [B]) -> logits [B, T, V]
///   decode_start(memory [B, S, D], src_lengths [B])  (no outputs: it writes the
///     session's states)
///   decode_step(tgt_ids [B, 1], step, src_lengths [B]) -> logits [B, V]
/// `decode` re-reads the whole target prefix on every call. Incremental decoding keeps
/// keys and values in the session instead: a driver runs `encode`, then
/// `decode_start(memory, src_lengths)` once per batch, then `decode_step` at step = 0,
/// 1, 2, ...,
/// feeding at step P the token at position P (the start token at step 0, then each
/// step's chosen token). decode_step at step P gives what decode(tgt_ids[:, :P+1]) gives
/// at position P, at a cost that grows with P rather than P²; step must stay below
/// maxDecodeLength (the runtime rejects it otherwise). Rows of the batch may be
/// reordered between steps (a beam search's survivors) with
/// kiln_session_gather_states.
class Transformer {
public:
  Transformer(ModelBuilder &m, const std::string &prefix, const TransformerConfig &c);

  /// src_ids [B, S] (i32), src_lengths [B] -> memory [B, S, D]
  Tensor encode(const Tensor &srcIds, const Tensor &srcLengths,
                std::source_location loc = std::source_location::current()) const;
  /// tgt_ids [B, T], memory [B, S, D], src_lengths [B] -> logits [B, T, tgt_vocab];
  /// every target position sees only itself and earlier ones.
  Tensor decode(const Tensor &tgtIds, const Tensor &memory, const Tensor &srcLengths,
                std::source_location loc = std::source_location::current()) const;

  /// Incremental decoding (see the class comment): writes the decoder's states from
  /// memory [B, S, D] and src_lengths [B].
  void startDecoding(Entry &entry, const Tensor &memory, const Tensor &srcLengths,
                     std::source_location loc = std::source_location::current()) const;
  /// tgt_ids [B, 1] at position `position` (P; `step` is the rank-0 i32 input whose
  /// value binds it), with the memory of `source` (S) positions -> logits [B,
  /// tgt_vocab] of that position.
  Tensor decodeStep(Entry &entry, const Tensor &tgtIds, const Tensor &step,
                    const Dim &position, const Dim &source,
                    std::source_location loc = std::source_location::current()) const;

  /// Declares the entry points `encode`, `decode`, `decode_start` and `decode_step`
  /// (the class comment) with dynamic B, S, T and P, and value bounds on ids, lengths
  /// and steps so the runtime rejects bad input.
  void declareEntries(ModelBuilder &m,
                      std::source_location loc = std::source_location::current()) const;

  const TransformerConfig &config() const { return config_; }

private:
  Module module_;
  TransformerConfig config_;
  Embedding srcEmbed_, tgtEmbed_;
  Encoder encoder_;
  Decoder decoder_;
};

} // namespace kiln::dsl::nn

#endif // KILN_FRONTEND_NN_TRANSFORMER_H
