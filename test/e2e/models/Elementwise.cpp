//===- Elementwise.cpp - E2E model: kiln.add and kiln.mul ------------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildElementwiseModel() {
  ModelBuilder m("e2e_elementwise");
  Parameter bias = m.parameter("bias", {24});
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), dyn("S"), dyn("D")});
  Tensor y = f.input("y", DType::F32, {dyn("B"), dyn("S"), dyn("D")});
  Tensor col = f.input("col", DType::F32, {dyn("B"), dyn("S"), 1});
  Tensor row = f.input("row", DType::F32, {dyn("S"), dyn("D")});
  Tensor one = f.input("one", DType::F32, {1});
  Tensor z = f.input("z", DType::F32, {dyn("B"), 1, 24});
  f.output("sum", x + y);
  f.output("prod", x * y);
  f.output("difference", x - y);
  f.output("sub_row", sub(row, x));
  f.output("add_col", add(x, col));
  f.output("mul_row", mul(row, x));
  f.output("mul_one", mul(x, one));
  f.output("add_bias", z + bias);
  f.output("add_outer", add(col, z));
  f.output("sub_bias", bias - z);
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildElementwiseModel);
