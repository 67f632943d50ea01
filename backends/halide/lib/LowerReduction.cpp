//===- LowerReduction.cpp - Sums, means and maxima over axes as Halide ----===//
//
// reduce_sum, reduce_mean and reduce_max over any set of axes: an RDom over the
// reduced input dimensions (innermost first), one accumulator per output element, then
// the result. The mean divides by the product of the reduced sizes as read at run time.
// Halide compiles with no-NaNs fast-math flags, whose max may drop a NaN, so an f32 max
// carries a NaN flag beside it (one pass, a Tuple, as softmax's max does), found from
// the element's bits, and its NaN result is written as bits (floatBits).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include <limits>

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

enum class Reduction { Sum, Mean, Max };

template <typename Op> KernelAlgorithm lowerReduction(Op op, Reduction reduction) {
  ReduceKernel kernel;
  RankedTensorType inputType = tensorType(op.input());
  int rank = inputType.getRank();
  ImageParam input = makeInput(op.input(), "input");
  Extents inputExtents = extentsOf(inputType);
  std::vector<bool> reduced(rank, false);
  for (int64_t axis : op.reducedAxes())
    reduced[halideDim(rank, axis)] = true;

  Halide::Region ranges;
  Expr count = 1;
  kernel.count = 1;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d])
      continue;
    Expr extent = extentOf(input, inputExtents, d);
    ranges.emplace_back(0, extent);
    count *= extent;
    kernel.count = isStatic(inputExtents[d]) && isStatic(kernel.count)
                       ? kernel.count * inputExtents[d]
                       : kDynamicExtent;
  }
  kernel.r = RDom(ranges, "r");
  kernel.reducesInner = reduced[0];
  RankedTensorType resultType = tensorType(op.getResult());
  kernel.extents = extentsOf(resultType);
  kernel.vars = makeVars(resultType.getRank());

  // The input at the reduction's position, and where each output extent comes from.
  std::vector<Expr> at, source;
  int nextR = 0, nextVar = 0;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) {
      at.push_back(kernel.vars[nextVar++]);
      source.push_back(input.dim(d).extent());
      continue;
    }
    at.push_back(kernel.r[nextR++]);
    if (op.keep_dim()) {
      ++nextVar;
      source.push_back(1);
    }
  }
  Expr x = input(at);

  const std::vector<Var> &vars = kernel.vars;
  Func total("total");
  bool floats = input.type().is_float();
  if (reduction == Reduction::Max && floats) {
    const float inf = std::numeric_limits<float>::infinity();
    // Tested on the bits: fast-math may fold is_nan and float compares away (measured:
    // NaNs missed along an outer axis and in one-element rows).
    Expr isNaN = (Halide::reinterpret(Halide::Int(32), x) & 0x7fffffff) > 0x7f800000;
    total(vars) = Halide::Tuple(-inf, Halide::cast<uint8_t>(0));
    total(vars) =
        Halide::Tuple(Halide::max(total(vars)[0], x),
                      Halide::max(total(vars)[1], Halide::cast<uint8_t>(isNaN)));
  } else if (reduction == Reduction::Max) {
    total(vars) = input.type().min();
    total(vars) = Halide::max(total(vars), x);
  } else {
    total(vars) = Halide::cast(input.type(), 0);
    total(vars) += x;
  }
  kernel.total = total;

  Expr value;
  switch (reduction) {
  case Reduction::Sum:
    value = total(vars);
    break;
  case Reduction::Mean:
    // The mean of no elements is NaN, as in the interpreter (0 / 0).
    value = floatBits(Halide::select(
        count == 0, kNaNBits,
        Halide::reinterpret(Halide::Int(32), total(vars) / Halide::cast<float>(count))));
    break;
  case Reduction::Max:
    value = floats ? floatBits(Halide::select(
                         total(vars)[1] != 0, kNaNBits,
                         Halide::reinterpret(Halide::Int(32), total(vars)[0])))
                   : Expr(total(vars));
    // No element to take the maximum of is the interpreter's error: a run-time error,
    // raised only when the result has elements.
    if (!isStatic(kernel.count))
      value = Halide::require(count > 0, value, "reduce_max over axes of size 0");
    break;
  }
  kernel.output = Func("result");
  kernel.output(vars) = value;

  constrainLayout(kernel.output.output_buffer(), kernel.extents);
  tieOutputExtents(kernel.output, kernel.extents, source);
  return {{input}, {kernel}};
}

/// Reductions over other axes, or keeping them, are other kernels.
template <typename Op> void printAxes(Op op, llvm::raw_ostream &os) {
  os << "{axes=[";
  llvm::interleaveComma(op.reducedAxes(), os);
  os << "], keep_dim=" << op.keep_dim() << "}";
}

} // namespace

void kiln::halide_backend::populateReductionLowerings(LoweringTable &table) {
  table.add<ReduceSumOp>(
      [](ReduceSumOp op) { return lowerReduction(op, Reduction::Sum); },
      printAxes<ReduceSumOp>);
  table.add<ReduceMeanOp>(
      [](ReduceMeanOp op) { return lowerReduction(op, Reduction::Mean); },
      printAxes<ReduceMeanOp>);
  table.add<ReduceMaxOp>(
      [](ReduceMaxOp op) { return lowerReduction(op, Reduction::Max); },
      printAxes<ReduceMaxOp>);
}
