//===- translator.cpp - The shipped digits->English-words translator -------===//
//
// The architecture of models/translator/config.json: d_model 128, 4 heads, 3 + 3 layers,
// d_ff 256, one shared 45-token vocabulary tied to the output, post-norm, and a final
// LayerNorm on each stack (torch.nn.Transformer's). Weights load by PyTorch's names from
// models/translator/translator.safetensors.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"
#include "kiln/frontend/nn/Transformer.h"

using namespace kiln::dsl;

Model buildTranslator() {
  nn::TransformerConfig config;
  config.dModel = 128;
  config.heads = 4;
  config.encoderLayers = 3;
  config.decoderLayers = 3;
  config.dFF = 256;
  config.srcVocab = 45;
  config.tgtVocab = 45;
  config.sharedEmbeddings = true;
  config.normFirst = false;
  config.finalNorm = true;
  config.layerNormEps = 1e-5f;
  config.activation = nn::Activation::ReLU;
  // Key/value caches for 64 target positions: config.json's max_target_len is 13, so a
  // driver may also decode longer outputs than the model was trained on.
  config.maxDecodeLength = 64;

  ModelBuilder m("translator");
  nn::Transformer transformer(m, "transformer", config);
  transformer.declareEntries(m);
  return m.finish();
}

KILN_MODEL(buildTranslator);
