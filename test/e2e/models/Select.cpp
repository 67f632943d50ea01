//===- Select.cpp - E2E model: where, cast, i64 and integer arithmetic ----===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildSelectModel() {
  ModelBuilder m("e2e_select");
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), dyn("S"), dyn("S")});
  Tensor y = f.input("y", DType::F32, {dyn("S")});
  Tensor ids = f.input("ids", DType::I64, {dyn("B"), dyn("S")});
  Tensor p = f.input("p", DType::I32, {1});
  Tensor causal = causalMask(x, 1, MaskForm::Boolean);
  Tensor pos = positions(x, 1);
  f.output("where_causal", where(causal, y, x));
  // mul and where in one kernel group.
  f.output("where_of_product", where(causal, x * y, x));
  f.output("where_ints", where(causal, pos + p, pos));
  f.output("ids_i32", cast(ids, DType::I32));
  f.output("ids_f32", cast(ids, DType::F32) * y);
  f.output("ids_arithmetic", ids - ids * cast(p, DType::I64));
  f.output("truncated_i32", cast(x * 1000.0f, DType::I32));
  f.output("truncated_i64", cast(x * 1000.0f, DType::I64));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildSelectModel);
