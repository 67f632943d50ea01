//===- broken.cpp - A model with a C++ error, for kiln-compile's test -----===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

namespace {

Model buildBroken() {
  ModelBuilder m("broken");
  Entry forward = m.entry("forward");
  Tensor x = forward.input("x", DType::F32, {dyn("B"), 8});
  forward.output("y", notAnOp(x));
  return m.finish();
}

} // namespace

KILN_MODEL(buildBroken);
