//===- Positions.cpp - E2E model: learned positions of a bounded length -----===//
//
// The case: a 32-row learned position table indexed by the positions of the
// sequence. `unbounded` declares T without a bound, so its position gather is checked in
// the kernel; `bounded` declares T <= 32, so the runtime refuses longer inputs and the
// gather is proven in range (no check). Token ids are bounded inputs: proven too.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildPositionsModel() {
  ModelBuilder m("e2e_positions");
  Parameter wte = m.parameter("wte.weight", {16, 8});
  Parameter wpe = m.parameter("wpe.weight", {32, 8});
  for (int64_t max : {0, 32}) {
    Entry entry = m.entry(max ? "bounded" : "unbounded");
    Tensor ids = entry.input("ids", DType::I32, {dyn("B"), dyn("T", max)}, Bounds{0, 15});
    entry.output("h", embedding(wte, ids) + embedding(wpe, positions(ids, 1)));
  }
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildPositionsModel);
