//===- PlanLifetimes.cpp - When each temporary's memory is in use ---------===//
//
// The liveness half of memory planning: a temporary is live from the first step that
// touches its memory to the last, whether the step names the temporary itself or a view
// of it (a reshape, a slice), so the views' uses extend their base's range. An output is
// read after the run, so it stays live to the last step. The runtime places the
// temporaries of an entry in one arena, sharing bytes between those whose ranges do not
// overlap; the sizes depend on the bound dimensions, so the offsets are its to choose.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

namespace kiln::halide_backend {

int rootOf(const EntryPlan &entry, int buffer) {
  while (entry.buffers[buffer].kind == BufferPlan::Kind::View)
    buffer = entry.buffers[buffer].index;
  return buffer;
}

void planLifetimes(EntryPlan &entry) {
  auto touch = [&](int buffer, int step) {
    BufferPlan &root = entry.buffers[rootOf(entry, buffer)];
    if (root.kind != BufferPlan::Kind::Temp)
      return;
    if (root.firstStep < 0)
      root.firstStep = step;
    root.lastStep = std::max(root.lastStep, step);
  };
  for (auto it : llvm::enumerate(entry.steps))
    for (int arg : it.value().args)
      touch(arg, static_cast<int>(it.index()));
  int last = static_cast<int>(entry.steps.size()) - 1;
  for (const TensorPlan &output : entry.outputs)
    if (output.buffer >= 0)
      touch(output.buffer, last);
}

} // namespace kiln::halide_backend
