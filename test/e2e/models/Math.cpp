//===- Math.cpp - E2E model: the elementwise math ops and rotary ----------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildMathModel() {
  ModelBuilder m("e2e_math");
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), dyn("S"), dyn("D")});
  // The inputs are in [-1, 1]: scaled so that each function shows its range, and
  // positive (e^x) where the function needs it.
  Tensor positive = exp(x);
  f.output("neg", -x);
  f.output("exp", exp(x * 8.0f));
  f.output("log", log(positive * 0.01f));
  f.output("sqrt", sqrt(positive));
  f.output("rsqrt", rsqrt(positive));
  f.output("pow", pow(positive, 1.7f));
  f.output("cube", pow(x, 3.0f));
  f.output("swiglu", silu(x * 6.0f) * x);
  // Functions that saturate, which the "saturating" entry also checks far out.
  Entry g = m.entry("saturating");
  Tensor y = g.input("y", DType::F32, {dyn("B"), dyn("S"), dyn("D")});
  g.output("tanh", tanh(y * 4.0f));
  g.output("sigmoid", sigmoid(y * 8.0f));
  g.output("silu", silu(y * 6.0f));
  g.output("gelu_tanh", geluTanh(y * 4.0f));
  // Rotary embeddings of heads [B, H, T, 16] at arbitrary positions, both pairings.
  Entry r = m.entry("rotary");
  Tensor q = r.input("q", DType::F32, {dyn("B"), dyn("H"), dyn("T"), 16});
  Tensor pos = r.input("pos", DType::I32, {dyn("T")}, {0, 2047});
  r.output("half", rotary(q, pos));
  r.output("interleaved", rotary(q, pos, 500.0f, RotaryStyle::Interleaved));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildMathModel);
