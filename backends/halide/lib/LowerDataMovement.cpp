//===- LowerDataMovement.cpp - transpose, slice and concat as Halide ------===//
//
// Copies: each output element is one input element, for either element type. They
// compute nothing, so their schedules are about streaming: vectors along the
// contiguous dimension, tiles when the contiguous dimension moves.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

/// `permutation` in Halide order: output Halide dim j reads input Halide dim
/// source[j].
std::vector<int> halideSources(TransposeOp op) {
  int rank = tensorType(op.result()).getRank();
  std::vector<int> source(rank);
  for (auto it : llvm::enumerate(op.permutation())) {
    int tensorDim = static_cast<int>(it.index());
    int from = static_cast<int>(it.value().cast<IntegerAttr>().getInt());
    source[halideDim(rank, tensorDim)] = halideDim(rank, from);
  }
  return source;
}

/// A transpose that keeps the innermost dimension copies rows (a pointwise kernel);
/// one that moves it transposes tiles.
KernelAlgorithm lowerTranspose(TransposeOp op) {
  ImageParam input = makeInput(op.input(), "input");
  Extents extents = extentsOf(tensorType(op.result()));
  int rank = static_cast<int>(extents.size());
  std::vector<Var> vars = makeVars(rank);
  std::vector<int> source = halideSources(op);
  std::vector<Expr> index(rank);
  for (int j = 0; j < rank; ++j)
    index[source[j]] = vars[j];
  Func output("result");
  output(vars) = input(index);
  OutputImageParam out = output.output_buffer();
  constrainLayout(out, extents);
  for (int j = 0; j < rank; ++j)
    if (!isStatic(extents[j]))
      out.dim(j).set_extent(input.dim(source[j]).extent());

  if (rank == 0 || source[0] == 0)
    return {{input}, {PointwiseKernel{output, vars, extents}}};
  TransposeKernel kernel{output, input, vars, extents};
  kernel.inputOfOutputInner = source[0];
  for (int j = 0; j < rank; ++j)
    if (source[j] == 0)
      kernel.readsInputInner = j;
  return {{input}, {kernel}};
}

/// A copy of [start, end) along the axis. Where the input's axis is dynamic, the
/// kernel reads up to index end - 1 of it, and Halide's bounds check of the input
/// buffer (which the kernel runs before anything else) fails the call with "Input
/// buffer input is accessed at END-1, which is beyond the max (SIZE-1) in dimension
/// AXIS" when the input is too short; nothing is read out of bounds.
KernelAlgorithm lowerSlice(SliceOp op) {
  ImageParam input = makeInput(op.input(), "input");
  Extents extents = extentsOf(tensorType(op.result()));
  int rank = static_cast<int>(extents.size());
  int axis = halideDim(rank, op.axis());
  std::vector<Var> vars = makeVars(rank);
  Expr start = static_cast<int>(op.start());
  Func output("result");
  output(vars) = input(withAxis(vars, axis, vars[axis] + start));
  constrainLayout(output.output_buffer(), extents);
  std::vector<Expr> source;
  for (int d = 0; d < rank; ++d)
    source.push_back(input.dim(d).extent());
  tieOutputExtents(output, extents, source);
  return {{input}, {PointwiseKernel{output, vars, extents}}};
}

/// One update per operand, each copying the operand into its range of the axis: a
/// pure definition choosing among operands by index would load every operand for
/// every element (or clamp and select per vector), where the updates read each
/// operand once, with dense vectors.
KernelAlgorithm lowerConcat(ConcatOp op) {
  ConcatKernel kernel;
  RankedTensorType resultType = tensorType(op.result());
  kernel.extents = extentsOf(resultType);
  int rank = resultType.getRank();
  kernel.axis = halideDim(rank, op.axis());
  kernel.vars = makeVars(rank);
  kernel.output = Func("result");
  kernel.output(kernel.vars) = Halide::undef(halideType(resultType));

  // The operands' other dimensions all equal the result's: its static size, or else
  // the first operand's.
  std::vector<ImageParam> inputs;
  for (auto it : llvm::enumerate(op.inputs()))
    inputs.push_back(makeInput(it.value(), "input" + std::to_string(it.index())));
  std::vector<Expr> source(rank);
  for (int d = 0; d < rank; ++d)
    if (d != kernel.axis)
      source[d] = isStatic(kernel.extents[d])
                      ? Expr(static_cast<int>(kernel.extents[d]))
                      : extentOf(inputs[0], extentsOf(tensorType(op.inputs()[0])), d);
  Expr offset = 0;
  for (auto it : llvm::enumerate(op.inputs())) {
    ImageParam input = inputs[it.index()];
    Extents extents = extentsOf(tensorType(it.value()));
    for (int d = 0; d < rank; ++d) {
      bool isSource = it.index() == 0 && !isStatic(kernel.extents[d]);
      if (d != kernel.axis && !isStatic(extents[d]) && !isSource)
        input.dim(d).set_extent(source[d]);
    }
    Expr size = extentOf(input, extents, kernel.axis);
    RDom part(0, size, "part" + std::to_string(it.index()));
    kernel.output(withAxis(kernel.vars, kernel.axis, offset + part.x)) =
        input(withAxis(kernel.vars, kernel.axis, part.x));
    kernel.parts.push_back(part);
    offset = Halide::Internal::simplify(offset + size);
  }
  source[kernel.axis] = offset;
  constrainLayout(kernel.output.output_buffer(), kernel.extents);
  tieOutputExtents(kernel.output, kernel.extents, source);
  return {inputs, {kernel}};
}

} // namespace

void kiln::halide_backend::populateDataMovementLowerings(LoweringTable &table) {
  table.add<TransposeOp>(lowerTranspose, [](TransposeOp op, llvm::raw_ostream &os) {
    os << "{permutation=" << op.permutation() << "}";
  });
  table.add<SliceOp>(lowerSlice, [](SliceOp op, llvm::raw_ostream &os) {
    os << "{axis=" << op.axis() << ",start=" << op.start() << ",end=" << op.end() << "}";
  });
  table.add<ConcatOp>(lowerConcat, printAxis);
}
