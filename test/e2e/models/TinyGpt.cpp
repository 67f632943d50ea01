//===- TinyGpt.cpp - E2E model: a tiny GPT-style decoder-only model -------===//
//
// The decoder-only entry contract (README, "Generating text with a decoder-only
// model") at the smallest size that still has two layers and two heads: nn's GPT-2
// layout with a 23-token vocabulary, so that the generate tests can search every
// continuation exhaustively. Its sequence dims are bounded by the 16 positions.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"
#include "kiln/frontend/nn/DecoderOnly.h"

using namespace kiln::dsl;

Model kiln::e2e::buildTinyGptModel() {
  ModelBuilder m("e2e_tiny_gpt");
  nn::DecoderOnlyConfig config = nn::DecoderOnlyConfig::gpt2(
      /*vocab=*/23, /*dModel=*/16, /*heads=*/2, /*layers=*/2, kTinyGptPositions);
  config.dFF = 32;
  nn::DecoderOnlyLM lm(m, config);
  lm.declareEntries(m);
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildTinyGptModel);
