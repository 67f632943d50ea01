//===- DecoderOnly.h - GPT-2 and LLaMA style language models ----*- C++ -*-===//
//
// A pre-norm decoder-only Transformer, laid out as Hugging Face's GPT2LMHeadModel or
// LlamaForCausalLM so that their checkpoints load under their own parameter names
// (docs/hugging-face.md has the mapping). It builds the decoder-only entry contract:
// `forward` over a whole sequence, `prefill` of a prompt into key/value caches, and
// `step` of one position.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_NN_DECODERONLY_H
#define KILN_FRONTEND_NN_DECODERONLY_H

#include "kiln/frontend/nn/Attention.h"

#include <functional>
#include <variant>
#include <vector>

namespace kiln::dsl::nn {

struct DecoderOnlyConfig {
  /// Whose checkpoint the model reads, which fixes the parameter names and the parts:
  ///   GPT2:  learned positions (`wpe`), LayerNorm, Conv1D projections with biases
  ///          (q | k | v packed in `c_attn`), MLP c_fc -> activation -> c_proj;
  ///   Llama: rotary positions, RMSNorm, separate q/k/v/o projections without bias,
  ///          SwiGLU MLP down(silu(gate(x)) · up(x)).
  enum class Layout { GPT2, Llama };
  Layout layout = Layout::GPT2;
  int64_t vocab = 50257;
  int64_t dModel = 768;
  int64_t heads = 12;
  int64_t layers = 12;
  /// The MLP's hidden width (GPT-2: 4·dModel; LLaMA's intermediate_size).
  int64_t dFF = 3072;
  /// Positions a sequence may have: rows of GPT-2's `wpe`, and the capacity of the
  /// key/value caches of prefill and step.
  int64_t maxPositions = 1024;
  /// layer_norm_epsilon (GPT-2) or rms_norm_eps (LLaMA).
  float normEpsilon = 1e-5f;
  /// The GPT2 layout's MLP activation: GELUTanh is GPT-2's gelu_new.
  Activation activation = Activation::GELUTanh;
  /// The LM head is the token embedding table (GPT-2; LLaMA's tie_word_embeddings);
  /// otherwise its own `lm_head.weight` [vocab, dModel].
  bool tiedHead = true;
  /// The Llama layout's rope_theta.
  float ropeBase = 10000.f;

  /// GPT-2 small's shape with the given sizes.
  static DecoderOnlyConfig gpt2(int64_t vocab, int64_t dModel, int64_t heads,
                                int64_t layers, int64_t maxPositions);
  /// A LLaMA-style model with the given sizes (separate head, eps 1e-6).
  static DecoderOnlyConfig llama(int64_t vocab, int64_t dModel, int64_t heads,
                                 int64_t layers, int64_t dFF, int64_t maxPositions);
};

/// The attention of one block: projections in the layout's names, rotary positions
/// for Llama. Splitting it into heads() and out() lets the caller put caches between.
class CausalSelfAttention {
public:
  CausalSelfAttention(ModelBuilder &m, const std::string &prefix,
                      const DecoderOnlyConfig &c);
  /// Part `part` (0: queries, 1: keys, 2: values) of x [B, T, D] in heads
  /// [B, H, T, D/H]; queries and keys of the Llama layout rotated by the i32
  /// `positions` [T].
  Tensor heads(const Tensor &x, int part, const Tensor &positions,
               std::source_location loc = std::source_location::current()) const;
  /// The output projection of attended heads merged, [B, T, D].
  Tensor out(const Tensor &merged,
             std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  DecoderOnlyConfig::Layout layout_;
  int64_t dModel_, heads_;
  float ropeBase_;
  std::optional<Conv1D> packed_, gpt2Out_;
  std::vector<Linear> llamaProjections_; // q, k, v, o
};

/// GPT-2's c_fc -> activation -> c_proj, or LLaMA's down(silu(gate(x)) · up(x)).
class DecoderMLP {
public:
  DecoderMLP(ModelBuilder &m, const std::string &prefix, const DecoderOnlyConfig &c);
  Tensor operator()(const Tensor &x,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  Activation activation_;
  std::optional<Conv1D> fc_, proj_;
  std::vector<Linear> swiglu_; // gate, up, down
};

/// LayerNorm (GPT2 layout) or RMSNorm (Llama).
class DecoderNorm {
public:
  DecoderNorm(ModelBuilder &m, const std::string &prefix, const DecoderOnlyConfig &c);
  Tensor operator()(const Tensor &x) const;

private:
  std::variant<LayerNorm, RMSNorm> norm_;
};

/// One pre-norm block: x + attn(norm1(x)), then h + mlp(norm2(h)).
class DecoderBlock {
public:
  DecoderBlock(ModelBuilder &m, const std::string &prefix, const DecoderOnlyConfig &c);

  /// What attends for the block: q, k, v [B, H, T, D/H] of this run's positions ->
  /// heads merged [B, T, D]; the whole sequence masks causally, a cached run reads and
  /// appends the caches first.
  using Attend = std::function<Tensor(const std::string &prefix, const Tensor &q,
                                      const Tensor &k, const Tensor &v)>;
  /// x [B, T, D] at i32 `positions` [T] -> [B, T, D].
  Tensor operator()(const Tensor &x, const Tensor &positions, const Attend &attend,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  std::string attnPrefix_;
  DecoderNorm norm1_, norm2_;
  CausalSelfAttention attn_;
  DecoderMLP mlp_;
};

/// Embeddings, blocks, final norm and LM head; the entries of the decoder-only
/// contract (declareEntries()):
///   forward(ids [B, T]) -> logits [B, T, V]
///   prefill(ids [B, N]) -> logits [B, V]: allocates the key/value caches
///     (`<attention prefix>.k_cache` / `v_cache`, [B, H, maxPositions, D/H]), writes
///     positions [0, N) and returns the next-token logits after the last prompt token;
///   step(ids [B, 1], position P) -> logits [B, V]: appends position P to every cache.
/// prefill then step at N, N + 1, ... gives what forward gives at those positions.
class DecoderOnlyLM {
public:
  DecoderOnlyLM(ModelBuilder &m, const DecoderOnlyConfig &c);

  /// ids [B, T] -> logits [B, T, V], each position seeing itself and earlier ones.
  Tensor forward(const Tensor &ids,
                 std::source_location loc = std::source_location::current()) const;
  /// ids [B, N] -> logits [B, V] of the last position, filling the caches.
  Tensor prefill(Entry &entry, const Tensor &ids,
                 std::source_location loc = std::source_location::current()) const;
  /// ids [B, 1] at the position the rank-0 i32 `position` holds (binding `positionDim`)
  /// -> logits [B, V].
  Tensor step(const Tensor &ids, const Tensor &position, const Dim &positionDim,
              std::source_location loc = std::source_location::current()) const;

  /// Declares `forward`, `prefill` and `step` with dynamic B, T, N and P, ids bounded
  /// by the vocabulary and P by the caches' capacity.
  void declareEntries(ModelBuilder &m,
                      std::source_location loc = std::source_location::current()) const;

  const DecoderOnlyConfig &config() const { return config_; }

private:
  /// Blocks and final norm over x [B, T, D] at `positions` -> [B, T, D].
  Tensor run(Tensor x, const Tensor &positions, const DecoderBlock::Attend &attend) const;
  /// The LM head: [..., D] -> logits [..., V].
  Tensor head(const Tensor &x) const;
  /// Token (and, for GPT-2, learned position) embeddings of ids at `positions`.
  Tensor embed(const Tensor &ids, const Tensor &positions) const;

  Module module_;
  DecoderOnlyConfig config_;
  Parameter tokens_;
  std::optional<Parameter> positions_, head_;
  std::vector<DecoderBlock> blocks_;
  DecoderNorm finalNorm_;
};

} // namespace kiln::dsl::nn

#endif // KILN_FRONTEND_NN_DECODERONLY_H
