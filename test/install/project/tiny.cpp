//===- tiny.cpp - A model small enough to check by hand: softmax(x Wᵀ + b) ---===//
//
// The installed-Kiln tests compile it (kiln_add_model, kiln-compile); check_tiny.c
// computes the same function independently.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

namespace {

Model buildTiny() {
  ModelBuilder m("tiny");
  Parameter weight = m.parameter("proj.weight", {5, 8});
  Parameter bias = m.parameter("proj.bias", {5});
  Entry forward = m.entry("forward");
  Tensor x = forward.input("x", DType::F32, {dyn("B"), 8});
  forward.output("y", softmax(matmul(x, weight, false, /*transposeRhs=*/true) + bias));
  return m.finish();
}

} // namespace

KILN_MODEL(buildTiny);
