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
kiln::halide_backend::lowerCopy(llvm::ArrayRef<Value> sources,
                                llvm::Optional<int64_t> stridedOutputAxis) {
  // Several sources (of one shape) are one Func of a Tuple: one loop nest writes every
  // output, and a Tuple's outputs share their extents.
  std::vector<ImageParam> inputs;
  std::vector<Expr> values;
  Extents extents = extentsOf(tensorType(sources.front()));
  int rank = static_cast<int>(extents.size());
  std::vector<Var> vars = makeVars(rank);
  for (auto it : llvm::enumerate(sources)) {
    // A source may be a head split read in place (Plan.cpp): dense rows only.
    std::string name =
        sources.size() == 1 ? "input" : "input" + std::to_string(it.index());
    inputs.push_back(makeInnerDenseInput(it.value(), name));
    values.push_back(inputs.back()(asExprs(vars)));
  }
  Func output("result");
  if (values.size() == 1)
    output(vars) = values.front();
  else
    output(vars) = Halide::Tuple(values);
  int lastDenseDim = stridedOutputAxis ? halideDim(rank, *stridedOutputAxis) : rank - 1;
  std::vector<OutputImageParam> outputs = output.output_buffers();
  constrainStridedLayout(outputs.front(), extents, lastDenseDim);
  for (OutputImageParam &out : llvm::drop_begin(outputs))
    constrainStrides(out, extents, lastDenseDim);
  std::vector<Expr> sizes;
  for (int d = 0; d < rank; ++d)
    sizes.push_back(inputs.front().dim(d).extent());
  tieOutputExtents(output, extents, sizes);
  return {{inputs.begin(), inputs.end()}, {PointwiseKernel{output, vars, extents}}};
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
