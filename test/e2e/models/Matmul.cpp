//===- Matmul.cpp - E2E model: kiln.matmul ---------------------------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildMatmulModel() {
  ModelBuilder m("e2e_matmul");
  Parameter weight = m.parameter("proj.weight", {13, 20});
  Parameter bias = m.parameter("proj.bias", {13});
  Parameter reluBias = m.parameter("relu_proj.bias", {13});
  Entry f = m.entry("forward");
  Tensor a = f.input("a", DType::F32, {dyn("B"), dyn("M"), dyn("K")});
  Tensor b = f.input("b", DType::F32, {dyn("B"), dyn("K"), dyn("N")});
  Tensor at = f.input("at", DType::F32, {dyn("B"), dyn("K"), dyn("M")});
  Tensor bt = f.input("bt", DType::F32, {dyn("B"), dyn("N"), dyn("K")});
  Tensor w = f.input("w", DType::F32, {dyn("K"), dyn("N")});
  Tensor x4 = f.input("x4", DType::F32, {dyn("B"), 1, dyn("M"), dyn("K")});
  Tensor y3 = f.input("y3", DType::F32, {dyn("H"), dyn("K"), dyn("N")});
  Tensor z = f.input("z", DType::F32, {dyn("B"), dyn("M"), 20});
  f.output("ab", matmul(a, b));
  f.output("atb", matmul(at, b, /*transposeLhs=*/true, /*transposeRhs=*/false));
  f.output("abt", matmul(a, bt, /*transposeLhs=*/false, /*transposeRhs=*/true));
  f.output("atbt", matmul(at, bt, /*transposeLhs=*/true, /*transposeRhs=*/true));
  f.output("aw", matmul(a, w));
  f.output("bcast", matmul(x4, y3));
  f.output("linear", matmul(z, weight, /*transposeLhs=*/false, /*transposeRhs=*/true));
  // A linear, and a kernel group with one, over rows of an input: on CPU their kernels
  // run over [B*M, ...] views of the input and of their results.
  f.output("linear_bias", linear(z, weight, bias));
  f.output("linear_relu", relu(linear(z, weight, reluBias)));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildMatmulModel);
