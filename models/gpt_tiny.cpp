//===- gpt_tiny.cpp - A tiny GPT-2 style language model ------------------===//
//
// GPT2LMHeadModel's architecture at toy size: 2 layers, width 64, 4 heads, 256 tokens,
// 64 positions; learned positions, pre-norm LayerNorm, gelu_new MLP, LM head tied to
// transformer.wte. Weights load under Hugging Face's GPT-2 names (docs/hugging-face.md);
// the conformance fixture writes random ones (make_family_reference.py --model gpt2).
// Entries: forward, prefill and step (the decoder-only contract).
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"
#include "kiln/frontend/nn/DecoderOnly.h"

using namespace kiln::dsl;

Model buildGptTiny() {
  ModelBuilder m("gpt_tiny");
  nn::DecoderOnlyLM lm(m, nn::DecoderOnlyConfig::gpt2(/*vocab=*/256, /*dModel=*/64,
                                                      /*heads=*/4, /*layers=*/2,
                                                      /*maxPositions=*/64));
  lm.declareEntries(m);
  return m.finish();
}

#ifndef KILN_NO_MODEL_REGISTRATION
KILN_MODEL(buildGptTiny);
#endif
