//===- Softmax.cpp - E2E model: kiln.softmax on several axes ---------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildSoftmaxModel() {
  ModelBuilder m("e2e_softmax");
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), dyn("S"), dyn("T")});
  f.output("last", softmax(x, -1));
  f.output("middle", softmax(x, 1));
  f.output("first", softmax(x, 0));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildSoftmaxModel);
