//===- TwoEntries.cpp - E2E model: entry points sharing weights and kernels ===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildTwoEntriesModel() {
  ModelBuilder m("e2e_two_entries");
  Parameter weight = m.parameter("proj.weight", {24, 24});
  Entry encode = m.entry("encode");
  Tensor x = encode.input("x", DType::F32, {dyn("B"), dyn("S"), 24});
  // Read by no kernel: it only carries its bounds to the manifest and the runtime.
  encode.input("lengths", DType::I32, {dyn("B")}, Bounds{1, "S"});
  encode.output("memory", relu(matmul(x, weight)));
  Entry step = m.entry("step");
  Tensor y = step.input("y", DType::F32, {dyn("B"), dyn("T"), 24});
  // Unfused, the same kernel as encode's matmul, which is grouped with its relu.
  step.output("out", matmul(y, weight));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildTwoEntriesModel);
