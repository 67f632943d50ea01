//===- Unary.cpp - E2E model: kiln.scale and kiln.relu ---------------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildUnaryModel() {
  ModelBuilder m("e2e_unary");
  Entry f = m.entry("forward");
  // A name that needs escaping in the manifest's JSON, and must survive the trip.
  Tensor x =
      f.input("x \"quoted\" \\ \t\x01 é", DType::F32, {dyn("B"), dyn("S"), dyn("D")});
  f.output("scaled", scale(x, 0.37f));
  f.output("relu", relu(x));
  f.output("relu_of_scaled", relu(x * -2.5f));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildUnaryModel);
