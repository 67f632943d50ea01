//===- transformer_tiny.cpp - A tiny Transformer for conformance tests ----===//
//
// The "tiny" configuration of make_reference.py: small enough to compile and check in
// seconds, with every structural feature of the base model (several layers each side,
// several heads, padding and causal masks, tied embeddings, final norms).
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"
#include "kiln/frontend/nn/Transformer.h"

using namespace kiln;

Model buildTransformerTiny() {
  nn::TransformerConfig config;
  config.dModel = 32;
  config.heads = 4;
  config.encoderLayers = 2;
  config.decoderLayers = 2;
  config.dFF = 64;
  config.srcVocab = config.tgtVocab = 50;
  ModelBuilder m("transformer_tiny");
  nn::Transformer transformer(m, "transformer", config);
  transformer.declareEntries(m);
  return m.finish();
}

KILN_MODEL(buildTransformerTiny);
