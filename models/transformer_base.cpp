//===- transformer_base.cpp - The paper's base Transformer ----------------===//
//
// d_model 512, 8 heads, 6 + 6 layers, d_ff 2048, post-norm, a shared 8000-token
// vocabulary with a tied output projection, and torch.nn.Transformer's final LayerNorm
// after each stack. Weights load by PyTorch's names: `embed.weight` and `transformer.*`.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"
#include "kiln/frontend/nn/Transformer.h"

using namespace kiln::dsl;

Model buildTransformerBase() {
  ModelBuilder m("transformer_base");
  nn::Transformer transformer(m, "transformer", nn::TransformerConfig::base());
  transformer.declareEntries(m);
  return m.finish();
}

KILN_MODEL(buildTransformerBase);
