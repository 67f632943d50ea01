//===- Dedup.cpp - E2E model: identical ops share one kernel ---------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildDedupModel() {
  ModelBuilder m("e2e_dedup");
  Parameter bias = m.parameter("bias", {16});
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), dyn("S"), 16});
  Tensor y = f.input("y", DType::F32, {dyn("B"), dyn("S"), 16});
  Tensor z = f.input("z", DType::F32, {dyn("B"), dyn("S"), 16});
  // Unfused: one add kernel for two steps, another for the bias add (its rhs type
  // differs), one relu kernel for two steps; kiln-fuse-kernels makes the chain one group.
  Tensor sum = (x + y) + z;
  Tensor biased = sum + bias;
  f.output("y", relu(relu(biased)));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildDedupModel);
