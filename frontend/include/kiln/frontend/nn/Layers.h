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

namespace kiln::dsl::nn {

/// y = x·Wᵀ + b with W stored [out, in] (`PREFIX.weight`, `PREFIX.bias`).
class Linear {
public:
  Linear(ModelBuilder &m, const std::string &prefix, int64_t in, int64_t out);
  Tensor operator()(const Tensor &x,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  Parameter weight_, bias_;
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

enum class Activation { ReLU, GELU };

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
