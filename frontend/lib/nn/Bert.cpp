//===- Bert.cpp - A BERT-style encoder classifier -------------------------===//

#include "kiln/frontend/nn/Bert.h"

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::nn;

BertLayer::BertLayer(ModelBuilder &m, const std::string &prefix, const BertConfig &c)
    : module_(m, "nn::BertLayer", prefix),
      query_(m, prefix + ".attention.self.query", c.dModel, c.dModel),
      key_(m, prefix + ".attention.self.key", c.dModel, c.dModel),
      value_(m, prefix + ".attention.self.value", c.dModel, c.dModel),
      attentionOut_(m, prefix + ".attention.output.dense", c.dModel, c.dModel),
      intermediate_(m, prefix + ".intermediate.dense", c.dModel, c.dFF),
      output_(m, prefix + ".output.dense", c.dFF, c.dModel),
      attentionNorm_(m, prefix + ".attention.output.LayerNorm", c.dModel, c.layerNormEps),
      outputNorm_(m, prefix + ".output.LayerNorm", c.dModel, c.layerNormEps),
      heads_(c.heads) {}

Tensor BertLayer::operator()(const Tensor &x, const Tensor &mask,
                             std::source_location loc) const {
  auto scope = module_.enter(loc);
  // Named in order: the IR should read q, k, v.
  Tensor q = splitHeads(query_(x), heads_);
  Tensor k = splitHeads(key_(x), heads_);
  Tensor v = splitHeads(value_(x), heads_);
  Tensor h = attentionNorm_(x + attentionOut_(scaledDotProductAttention(q, k, v, mask)));
  return outputNorm_(h + output_(gelu(intermediate_(h))));
}

BertClassifier::BertClassifier(ModelBuilder &m, const BertConfig &c)
    : module_(m, "nn::BertClassifier", "bert"), config_(c),
      words_(m.parameter("bert.embeddings.word_embeddings.weight", {c.vocab, c.dModel})),
      positions_(m.parameter("bert.embeddings.position_embeddings.weight",
                             {c.maxPositions, c.dModel})),
      tokenTypes_(m.parameter("bert.embeddings.token_type_embeddings.weight",
                              {c.tokenTypes, c.dModel})),
      embeddingNorm_(m, "bert.embeddings.LayerNorm", c.dModel, c.layerNormEps),
      pooler_(m, "bert.pooler.dense", c.dModel, c.dModel),
      classifier_(m, "classifier", c.dModel, c.numLabels) {
  for (int64_t i = 0; i < c.layers; ++i)
    layers_.emplace_back(m, "bert.encoder.layer." + std::to_string(i), c);
}

Tensor BertClassifier::operator()(const Tensor &ids, const Tensor &tokenTypes,
                                  const Tensor &lengths, std::source_location loc) const {
  auto scope = module_.enter(loc);
  Tensor x = embedding(words_, ids) + embedding(tokenTypes_, tokenTypes) +
             embedding(positions_, positions(ids, /*axis=*/1));
  x = embeddingNorm_(x);
  // [B, S] -> [B, 1, 1, S]: every head and query of a sequence masks its padding keys.
  Tensor mask = reshape(paddingMask(lengths, ids, /*axis=*/1), {0, 1, 1, -1});
  for (const BertLayer &layer : layers_)
    x = layer(x, mask);
  // The pooler reads the first token ([CLS]) only.
  Tensor first = reshape(slice(x, /*axis=*/1, 0, 1), {0, config_.dModel});
  return classifier_(tanh(pooler_(first)));
}

void BertClassifier::declareEntries(ModelBuilder &m, std::source_location loc) const {
  auto scope = module_.enter(loc);
  Dim batch = dyn("B"), length = dyn("S", config_.maxPositions);
  Entry classify = m.entry("classify");
  Tensor ids = classify.input("ids", DType::I32, {batch, length}, {0, config_.vocab - 1});
  Tensor types = classify.input("token_type_ids", DType::I32, {batch, length},
                                {0, config_.tokenTypes - 1});
  Tensor lengths = classify.input("lengths", DType::I32, {batch}, {1, "S"});
  classify.output("logits", (*this)(ids, types, lengths));
}
