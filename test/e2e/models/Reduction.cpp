//===- Reduction.cpp - E2E model: rms_norm and reductions over axes -------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildReductionModel() {
  ModelBuilder m("e2e_reduction");
  Parameter gamma = m.parameter("norm.weight", {40});
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), dyn("S"), dyn("D")});
  Tensor r = f.input("r", DType::F32, {dyn("B"), dyn("S"), dyn("D")});
  Tensor g = f.input("g", DType::F32, {dyn("D")});
  Tensor z = f.input("z", DType::F32, {dyn("N"), 40});
  // The residual add joins the RMSNorm's kernel as its prologue.
  f.output("residual_norm", rmsNorm(add(x, r), g));
  f.output("weights_norm", rmsNorm(z, gamma, 1e-5f));
  f.output("row_sum", reduceSum(x, {-1}));
  f.output("middle_mean", reduceMean(x, {1}, /*keepDim=*/true));
  f.output("outer_max", reduceMax(x, {0, 2}));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildReductionModel);
