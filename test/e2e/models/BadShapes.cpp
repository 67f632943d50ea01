//===- BadShapes.cpp - A model with a shape error, for the compiler's errors ===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

static Model buildBadShapes() {
  ModelBuilder m("e2e_bad_shapes");
  Parameter w = m.parameter("w", {7, 3});
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), 8});
  f.output("y", matmul(x, w)); // [B, 8] x [7, 3]: the inner dims differ
  return m.finish();
}

KILN_MODEL(buildBadShapes);
