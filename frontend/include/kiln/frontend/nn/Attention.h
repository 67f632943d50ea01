//===- Attention.h - Multi-head attention in the Kiln DSL -------*- C++ -*-===//
//
// Written out op by op, as in the paper: finding the fused attention in it is the
// compiler's job (kiln-fuse-attention), not the model author's.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_NN_ATTENTION_H
#define KILN_FRONTEND_NN_ATTENTION_H

#include "kiln/frontend/nn/Layers.h"

#include <optional>

namespace kiln::dsl::nn {

/// [B, T, H·Dh] -> [B, H, T, Dh]
Tensor splitHeads(const Tensor &x, int64_t heads);
/// [B, H, T, Dh] -> [B, T, H·Dh]
Tensor mergeHeads(const Tensor &x);
/// softmax(q·kᵀ/√Dh + mask)·v of q [B, H, Tq, Dh] over k, v [B, H, Tk, Dh], heads
/// merged: [B, Tq, H·Dh]. Written so that kiln-fuse-attention finds it; `mask` is
/// additive (0 or -inf) and broadcasts to [B, H, Tq, Tk].
Tensor scaledDotProductAttention(const Tensor &q, const Tensor &k, const Tensor &v,
                                 const std::optional<Tensor> &mask);

/// torch.nn.MultiheadAttention's parameters: `PREFIX.in_proj_weight` [3D, D] (q, k, v
/// stacked by rows), `PREFIX.in_proj_bias` [3D], `PREFIX.out_proj.{weight,bias}`.
class MultiHeadAttention {
public:
  MultiHeadAttention(ModelBuilder &m, const std::string &prefix, int64_t dModel,
                     int64_t heads);

  /// query [B, Tq, D], key/value [B, Tk, D]; `mask` is additive (0 or -inf) and
  /// broadcasts to [B, H, Tq, Tk]. The same as attend(heads(query, 0), heads(key, 1),
  /// heads(value, 2), mask).
  Tensor operator()(const Tensor &query, const Tensor &key, const Tensor &value,
                    const std::optional<Tensor> &mask,
                    std::source_location loc = std::source_location::current()) const;

  // The two halves, for callers that keep keys and values between runs (incremental
  // decoding: the keys of earlier steps come from a cache, not from this run's input).

  /// Part `part` of the input projection (0: queries, 1: keys, 2: values) of x
  /// [B, T, D], split into heads: [B, H, T, D/H].
  Tensor heads(const Tensor &x, int part,
               std::source_location loc = std::source_location::current()) const;
  /// Scaled dot-product attention of q [B, H, Tq, D/H] over k, v [B, H, Tk, D/H], heads
  /// merged and projected out: softmax(q·kᵀ/√(D/H) + mask)·v -> [B, Tq, D].
  Tensor attend(const Tensor &q, const Tensor &k, const Tensor &v,
                const std::optional<Tensor> &mask,
                std::source_location loc = std::source_location::current()) const;

private:
  /// Rows [part·D, (part+1)·D) of the stacked input projection.
  Tensor project(const Tensor &x, int part) const;

  Module module_;
  Parameter inWeight_, inBias_;
  Linear outProj_;
  int64_t dModel_, heads_;
};

} // namespace kiln::dsl::nn

#endif // KILN_FRONTEND_NN_ATTENTION_H
