//===- LowerState.cpp - Copies into and out of session states -------------===//
//
// state_write copies a tensor into a state; kv_append copies N positions into a
// key/value cache through a strided view of it (docs/manifest.md: the plan hands the
// kernel positions [P, P + N) of the cache as its output buffer); and an entry that
// returns a kv_append result gets it copied out into a dense buffer. The three are one
// copy kernel that differs in which side is strided.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

KernelAlgorithm
kiln::halide_backend::lowerCopy(Value source, llvm::Optional<int64_t> stridedOutputAxis) {
  // The source may be a head split read in place (Plan.cpp): dense rows only.
  ImageParam input = makeInnerDenseInput(source, "input");
  Extents extents = extentsOf(tensorType(source));
  int rank = static_cast<int>(extents.size());
  std::vector<Var> vars = makeVars(rank);
  Func output("result");
  output(vars) = input(asExprs(vars));
  OutputImageParam out = output.output_buffer();
  if (stridedOutputAxis)
    constrainStridedLayout(out, extents, halideDim(rank, *stridedOutputAxis));
  else
    constrainLayout(out, extents);
  std::vector<Expr> sizes;
  for (int d = 0; d < rank; ++d)
    sizes.push_back(input.dim(d).extent());
  tieOutputExtents(output, extents, sizes);
  return {{input}, {PointwiseKernel{output, vars, extents}}};
}

void kiln::halide_backend::populateStateLowerings(LoweringTable &table) {
  // A copy into a state: the state's name, capacity and position are the plan's
  // business (they choose the buffer), not the kernel's.
  table.add<StateWriteOp>(
      [](StateWriteOp op) { return lowerCopy(op.value(), llvm::None); });
  // The output is positions [P, P + N) of the cache: the value's shape, with
  // the cache's strides, which only the runtime knows outside the axis (they count the
  // capacity of the cache, and it may have dynamic dimensions).
  table.add<KvAppendOp>(
      [](KvAppendOp op) {
        return lowerCopy(op.value(), static_cast<int64_t>(op.axis()));
      },
      printAxis);
}
