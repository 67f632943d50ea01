//===- Bert.h - A BERT-style encoder classifier -----------------*- C++ -*-===//
//
// Hugging Face's BertForSequenceClassification in the DSL, under its parameter names
// (bert.embeddings.word_embeddings.weight, bert.encoder.layer.0.attention.self.query.
// weight, ..., classifier.weight), so that its checkpoints load unconverted: learned
// positions and token types, post-norm layers with exact GELU, a tanh pooler over the
// first token and a linear classifier.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_NN_BERT_H
#define KILN_FRONTEND_NN_BERT_H

#include "kiln/frontend/nn/Attention.h"

#include <vector>

namespace kiln::dsl::nn {

/// BertConfig's fields that shape the model (bert-base-uncased by default).
struct BertConfig {
  int64_t vocab = 30522;
  int64_t dModel = 768;
  int64_t heads = 12;
  int64_t layers = 12;
  /// intermediate_size.
  int64_t dFF = 3072;
  /// max_position_embeddings: rows of the position table.
  int64_t maxPositions = 512;
  /// type_vocab_size.
  int64_t tokenTypes = 2;
  int64_t numLabels = 2;
  float layerNormEps = 1e-12f;
};

/// One post-norm encoder layer (`bert.encoder.layer.N`): self-attention with query,
/// key and value projections, attention.output.dense + LayerNorm over the residual,
/// then intermediate.dense -> GELU -> output.dense + LayerNorm over the residual.
class BertLayer {
public:
  BertLayer(ModelBuilder &m, const std::string &prefix, const BertConfig &c);
  /// x [B, S, D], additive key mask broadcasting to [B, H, S, S] -> [B, S, D].
  Tensor operator()(const Tensor &x, const Tensor &mask,
                    std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  Linear query_, key_, value_, attentionOut_, intermediate_, output_;
  LayerNorm attentionNorm_, outputNorm_;
  int64_t heads_;
};

/// BertForSequenceClassification. declareEntries() gives a compiled model the entry
///   classify(ids [B, S], token_type_ids [B, S], lengths [B]) -> logits [B, num_labels]
/// where keys at and past a sequence's length are masked (padding), as HF's
/// attention_mask of ones then zeros does.
class BertClassifier {
public:
  BertClassifier(ModelBuilder &m, const BertConfig &c);
  Tensor operator()(const Tensor &ids, const Tensor &tokenTypes, const Tensor &lengths,
                    std::source_location loc = std::source_location::current()) const;
  void declareEntries(ModelBuilder &m,
                      std::source_location loc = std::source_location::current()) const;

private:
  Module module_;
  BertConfig config_;
  Parameter words_, positions_, tokenTypes_;
  LayerNorm embeddingNorm_;
  std::vector<BertLayer> layers_;
  Linear pooler_, classifier_;
};

} // namespace kiln::dsl::nn

#endif // KILN_FRONTEND_NN_BERT_H
