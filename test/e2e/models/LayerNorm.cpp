//===- LayerNorm.cpp - E2E model: kiln.layer_norm --------------------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildLayerNormModel() {
  ModelBuilder m("e2e_layer_norm");
  Parameter gamma = m.parameter("norm.weight", {40});
  Parameter beta = m.parameter("norm.bias", {40});
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), dyn("S"), dyn("D")});
  Tensor g = f.input("g", DType::F32, {dyn("D")});
  Tensor b = f.input("b", DType::F32, {dyn("D")});
  Tensor z = f.input("z", DType::F32, {dyn("N"), 40});
  f.output("dynamic", layerNorm(x, g, b));
  f.output("weights", layerNorm(z, gamma, beta, 1e-3f));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildLayerNormModel);
