//===- DataMovement.cpp - E2E model: kiln.reshape and kiln.transpose -------===//

#include "Models.h"

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

Model kiln::e2e::buildDataMovementModel() {
  ModelBuilder m("e2e_data_movement");
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("B"), dyn("S"), 24});
  Tensor y = f.input("y", DType::F32, {dyn("M"), dyn("N")});
  // Split heads: a view of the input, then a transpose kernel.
  Tensor heads = transpose(reshape(x, {0, 0, 4, 6}), {0, 2, 1, 3});
  f.output("heads", heads);
  // An output that is only a view of an input: no kernel at all.
  f.output("flat", reshape(x, {0, -1}));
  // An output that is a view of a temporary.
  f.output("relu_rows", reshape(relu(x), {-1, 6}));
  f.output("yt", transpose(y, {1, 0}));
  f.output("rotated", transpose(x, {2, 0, 1}));
  // Merge heads: a transpose kernel, then a view of its result.
  f.output("merged", reshape(transpose(relu(heads), {0, 2, 1, 3}), {0, 0, 24}));
  // Rows 2..4 of a parameter are one contiguous run of it: a view at an offset, no
  // copy. (A weight that a product over many rows reads, as here, is stored as those
  // rows' column panels on a CPU target instead: no copy either.)
  Parameter w = m.parameter("w", {6, 24});
  f.output("projected", matmul(x, slice(w, 0, 2, 4), false, /*transposeRhs=*/true));
  Parameter v = m.parameter("v", {6, 24});
  f.output("rows_relu", relu(slice(v, 0, 2, 4)));
  // Columns are strided: that slice stays a kernel.
  f.output("columns", slice(x, 2, 4, 10));
  return m.finish();
}

KILN_MODEL(kiln::e2e::buildDataMovementModel);
