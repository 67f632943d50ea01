//===- Layers.h - Basic layers of the Kiln DSL ------------------*- C++ -*-===//
//
// Layers own their parameters, named as PyTorch names them, so that a state_dict saved
// from the equivalent PyTorch module loads with no renaming.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_NN_LAYERS_H
#define KILN_FRONTEND_NN_LAYERS_H

#include "kiln/frontend/ModelBuilder.h"
#include "kiln/frontend/Ops.h"
#include "kiln/frontend/nn/Module.h"

#include <optional>

namespace kiln::dsl::nn {

/// y = x·Wᵀ + b with W stored [out, in] (`PREFIX.weight`, `PREFIX.bias`); without
/// `bias`, y = x·Wᵀ and no `PREFIX.bias` (LLaMA's projections).
class Linear {
public:
  Linear(ModelBuilder &m, const std::string &prefix, int64_t in, int64_t out,
         bool bias = true);
  Tensor operator()(const Tensor &x,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  Parameter weight_;
  std::optional<Parameter> bias_;
};

/// GPT-2's Conv1D: y = x·W + b with W stored [in, out] (`PREFIX.weight`,
/// `PREFIX.bias`), so that GPT-2 checkpoints load under their own names, unconverted.
class Conv1D {
public:
  Conv1D(ModelBuilder &m, const std::string &prefix, int64_t in, int64_t out);
  Tensor operator()(const Tensor &x,
                    std::source_location loc = std::source_location::current()) const;
  /// Output columns [begin, end) only: one of the q | k | v parts of a packed
  /// projection (GPT-2's c_attn).
  Tensor columns(const Tensor &x, int64_t begin, int64_t end,
                 std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  Parameter weight_, bias_;
  int64_t out_;
};

/// LayerNorm over the last dimension (`PREFIX.weight`, `PREFIX.bias`).
class LayerNorm {
public:
  LayerNorm(ModelBuilder &m, const std::string &prefix, int64_t dim, float epsilon);
  Tensor operator()(const Tensor &x,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  Parameter weight_, bias_;
  float epsilon_;
};

/// LLaMA's RMSNorm over the last dimension: x · rsqrt(mean(x²) + eps) · weight
/// (`PREFIX.weight`, no bias).
class RMSNorm {
public:
  RMSNorm(ModelBuilder &m, const std::string &prefix, int64_t dim, float epsilon);
  Tensor operator()(const Tensor &x,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  Parameter weight_;
  float epsilon_;
};

/// GELU is the exact (erf) one; GELUTanh its tanh approximation (GPT-2's gelu_new,
/// PyTorch's gelu(approximate="tanh")); SiLU is x·sigmoid(x).
enum class Activation { ReLU, GELU, GELUTanh, SiLU };

/// `activation` applied elementwise.
Tensor activate(const Tensor &x, Activation activation);

/// The position-wise feed-forward network: linear2(act(linear1(x))).
class FeedForward {
public:
  FeedForward(ModelBuilder &m, const std::string &prefix, int64_t dModel, int64_t dFF,
              Activation activation);
  Tensor operator()(const Tensor &x,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  Linear linear1_, linear2_;
  Activation activation_;
};

/// Token embeddings scaled by √d_model plus sinusoidal positions, as in the paper. The
/// table (`PREFIX.weight`, [vocab, d_model]) also serves as the tied output projection.
class Embedding {
public:
  Embedding(ModelBuilder &m, const std::string &prefix, int64_t vocab, int64_t dModel);
  /// ids [B, T] -> [B, T, d_model]
  Tensor operator()(const Tensor &ids,
                    std::source_location loc = std::source_location::current()) const;
  /// ids [B, 1] at the position given by the rank-0 i32 `position` (a decoding step)
  /// -> [B, 1, d_model]: the row operator() gives that position in a whole sequence.
  Tensor atPosition(const Tensor &ids, const Tensor &position,
                    std::source_location loc = std::source_location::current()) const;
  /// x [B, T, d_model] -> logits [B, T, vocab] through the transposed table.
  Tensor project(const Tensor &x,
                 std::source_location loc = std::source_location::current()) const;
  int64_t vocab() const { return vocab_; }

private:
  /// The table's rows for ids, scaled by sqrt(d_model), before positions are added.
  Tensor scaledRows(const Tensor &ids) const;

  Module module_;
  Parameter table_;
  int64_t vocab_, dModel_;
};

} // namespace kiln::dsl::nn

#endif // KILN_FRONTEND_NN_LAYERS_H
