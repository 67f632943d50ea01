//===- bert_tiny.cpp - A tiny BERT-style sequence classifier -------------===//
//
// BertForSequenceClassification's architecture at toy size: 2 layers, width 64, 4
// heads, intermediate 128, 256 tokens, 64 positions, 2 token types, 3 labels. Weights
// load under Hugging Face's BERT names (docs/hugging-face.md); the conformance fixture
// writes random ones (make_family_reference.py --model bert).
// Entry: classify(ids [B, S], token_type_ids [B, S], lengths [B]) -> logits [B, 3].
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"
#include "kiln/frontend/nn/Bert.h"

using namespace kiln::dsl;

Model buildBertTiny() {
  ModelBuilder m("bert_tiny");
  nn::BertClassifier bert(m, {.vocab = 256,
                              .dModel = 64,
                              .heads = 4,
                              .layers = 2,
                              .dFF = 128,
                              .maxPositions = 64,
                              .tokenTypes = 2,
                              .numLabels = 3});
  bert.declareEntries(m);
  return m.finish();
}

#ifndef KILN_NO_MODEL_REGISTRATION
KILN_MODEL(buildBertTiny);
#endif
