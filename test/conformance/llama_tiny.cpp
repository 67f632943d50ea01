//===- llama_tiny.cpp - A tiny LLaMA-style model for conformance tests ---===//
//
// LlamaForCausalLM's architecture at toy size (make_family_reference.py's "llama"): 2
// layers, width 64, 4 heads, intermediate 160, 256 tokens, 64 positions; rotary
// positions, RMSNorm, SwiGLU, separate lm_head, no biases.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"
#include "kiln/frontend/nn/DecoderOnly.h"

using namespace kiln::dsl;

Model buildLlamaTiny() {
  ModelBuilder m("llama_tiny");
  nn::DecoderOnlyLM lm(m, nn::DecoderOnlyConfig::llama(/*vocab=*/256, /*dModel=*/64,
                                                       /*heads=*/4, /*layers=*/2,
                                                       /*dFF=*/160, /*maxPositions=*/64));
  lm.declareEntries(m);
  return m.finish();
}

#ifndef KILN_NO_MODEL_REGISTRATION
KILN_MODEL(buildLlamaTiny);
#endif
