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
  // The rest as torch.nn.Transformer's defaults, which train.py kept: post-norm, ReLU,
  // final LayerNorms, eps 1e-5, one embedding table shared with the output projection.
  // Key/value caches for 64 target positions: config.json's max_target_len is 13, so a
  // driver may also decode longer outputs than the model was trained on.
  nn::TransformerConfig config{.dModel = 128,
                               .heads = 4,
                               .encoderLayers = 3,
                               .decoderLayers = 3,
                               .dFF = 256,
                               .srcVocab = 45,
                               .tgtVocab = 45,
                               .maxDecodeLength = 64};

  ModelBuilder m("translator");
  nn::Transformer transformer(m, "transformer", config);
  transformer.declareEntries(m);
  return m.finish();
}

KILN_MODEL(buildTranslator);
