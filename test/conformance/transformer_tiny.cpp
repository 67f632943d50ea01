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

using namespace kiln::dsl;

namespace {
nn::TransformerConfig tinyConfig() {
  return {.dModel = 32,
          .heads = 4,
          .encoderLayers = 2,
          .decoderLayers = 2,
          .dFF = 64,
          .srcVocab = 50,
          .tgtVocab = 50};
}

Model build(const std::string &name, const nn::TransformerConfig &config) {
  ModelBuilder m(name);
  nn::Transformer transformer(m, "transformer", config);
  transformer.declareEntries(m);
  return m.finish();
}
} // namespace

Model buildTransformerTiny() { return build("transformer_tiny", tinyConfig()); }

/// make_reference.py's "tiny_prenorm_gelu": the same sizes, pre-norm and GELU.
Model buildTransformerTinyPrenormGelu() {
  nn::TransformerConfig config = tinyConfig();
  config.normFirst = true;
  config.activation = nn::Activation::GELU;
  return build("transformer_tiny_prenorm_gelu", config);
}

#ifndef KILN_NO_MODEL_REGISTRATION
#ifdef KILN_PRENORM_GELU
KILN_MODEL(buildTransformerTinyPrenormGelu);
#else
KILN_MODEL(buildTransformerTiny);
#endif
#endif
