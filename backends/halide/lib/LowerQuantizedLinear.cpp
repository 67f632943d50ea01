//===- LowerQuantizedLinear.cpp - kiln.quantized_linear as a Halide algorithm -===//
//
// The int8 linear of CTranslate2 and PyTorch's dynamic quantization, exactly as
// KilnOps.td states it: each input row quantized with its own max, exact int32 dot
// products with the i8 weight, and the f32 epilogue in the op's order (the int32 sums
// are exact, so only the order of the final f32 operations could make a kernel differ
// from the interpreter; it is kept). u8 x s8 dot-product instructions (x86's vpdpbusd)
// want one unsigned operand: the weight is read as u8, w + 128 (its sign bit flipped),
// and the row's sum of quantized values times 128 is subtracted again:
//   sum_k q[k] * w[k] = sum_k q[k] * (w[k] + 128) - 128 * sum_k q[k].
// Shifting the activations instead would need each weight row's sum, a second pass
// over the weight, which is what a decode step is bound by.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

/// The output dimension whose entries are the rows of a tile (Schedules.h).
int rowDimension(const Extents &ext) {
  for (size_t d = 1; d < ext.size(); ++d)
    if (ext[d] != 1)
      return static_cast<int>(d);
  return ext.size() > 1 ? 1 : -1;
}

/// An extent as an Expr: its static value, or `dynamic`.
Expr sizeOf(int64_t extent, Expr dynamic) {
  return isStatic(extent) ? Expr(static_cast<int>(extent)) : dynamic;
}

KernelAlgorithm lowerQuantizedLinear(QuantizedLinearOp op, KernelBoundary &boundary) {
  QuantizedLinearKernel kernel;
  RankedTensorType resultType = tensorType(op.result());
  int rank = resultType.getRank();
  kernel.extents = extentsOf(resultType);
  kernel.vars = makeVars(rank);
  Extents inputExt = extentsOf(tensorType(op.input()));
  Extents weightExt = extentsOf(tensorType(op.weight()));
  ImageParam input = boundary.input(op.input(), "input");
  ImageParam weight = boundary.input(op.weight(), "weight");
  ImageParam scale = boundary.input(op.weight_scale(), "weight_scale");
  llvm::Optional<ImageParam> bias;
  if (op.bias())
    bias = boundary.input(op.bias(), "bias");

  // K from whichever operand states it (the input's when neither does), N from the
  // weight; the other operands are pinned to them.
  kernel.contraction = isStatic(weightExt[0]) ? weightExt[0] : inputExt[0];
  Expr K = sizeOf(kernel.contraction, input.dim(0).extent());
  Expr N = sizeOf(weightExt[1], weight.dim(1).extent());
  if (!isStatic(inputExt[0]) && isStatic(kernel.contraction))
    input.dim(0).set_extent(K);
  if (!isStatic(weightExt[0]))
    weight.dim(0).set_extent(K);
  scale.dim(0).set_extent(N);
  if (bias)
    bias->dim(0).set_extent(N);
  kernel.sizes = {N};
  for (int d = 1; d < rank; ++d)
    kernel.sizes.push_back(sizeOf(kernel.extents[d], input.dim(d).extent()));

  // The row statistics and the quantized rows, over the rows' Vars.
  std::vector<Var> rows(kernel.vars.begin() + 1, kernel.vars.end());
  std::vector<Expr> rowIndex = asExprs(rows);
  auto inRow = [&](Expr k) {
    std::vector<Expr> index = {std::move(k)};
    index.insert(index.end(), rowIndex.begin(), rowIndex.end());
    return index;
  };
  kernel.rowK = RDom(0, K, "rk");
  kernel.rowMax = Func("row_max");
  kernel.rowMax(rows) = 0.0f;
  kernel.rowMax(rows) =
      Halide::max(kernel.rowMax(rows), Halide::abs(input(inRow(kernel.rowK.x))));
  Expr rowMax = kernel.rowMax(rows);
  Expr factor =
      Halide::strict_float(Halide::select(rowMax == 0.0f, 0.0f, 127.0f / rowMax));
  kernel.quantizedK = Var("qk");
  kernel.quantized = Func("quantized");
  kernel.quantized(inRow(kernel.quantizedK)) = Halide::cast<int8_t>(Halide::clamp(
      Halide::round(input(inRow(kernel.quantizedK)) * factor), -127.0f, 127.0f));
  kernel.rowSum = Func("row_sum");
  kernel.rowSum(rows) = 0;
  kernel.rowSum(rows) += Halide::cast<int32_t>(kernel.quantized(inRow(kernel.rowK.x)));

  // The dot products with the weight as u8. A schedule computes whole tiles of
  // columns, so the weight's column is clamped (`likely`: only the last tile needs it).
  // Many rows with a K of whole 64-byte steps read it packed (Schedules.h), few rows
  // as it lies; a dynamic row count gets both, each predicated on the count.
  Var n = kernel.vars[0];
  auto shifted = [&](Expr k, Expr column) {
    return Halide::reinterpret(Halide::UInt(8), weight(k, column)) ^
           Halide::cast<uint8_t>(128);
  };
  kernel.product = Func("product");
  kernel.product(kernel.vars) = 0;
  kernel.rowDim = rowDimension(kernel.extents);
  int64_t rowCount = kernel.rowDim < 0 ? 1 : kernel.extents[kernel.rowDim];
  bool panelK = isStatic(kernel.contraction) && kernel.contraction % 64 == 0 &&
                isStatic(weightExt[1]) &&
                weightExt[1] % QuantizedLinearKernel::kPanelColumns == 0;
  bool panel = panelK &&
               (!isStatic(rowCount) || rowCount >= QuantizedLinearKernel::kPanelRowsFrom);
  bool dot = !panel || !isStatic(rowCount);
  if (panel && dot)
    kernel.manyRows =
        kernel.sizes[kernel.rowDim] >= QuantizedLinearKernel::kPanelRowsFrom;
  int updates = 0;
  if (panel) {
    const int lanes = QuantizedLinearKernel::kPanelLanes,
              group = QuantizedLinearKernel::kPanelGroup;
    Var kr("kr"), nl("nl"), ko("ko"), np("np");
    kernel.packedWeight = Func("packed_weight");
    kernel.packedWeight(kr, nl, ko, np) =
        shifted(ko * group + kr, Halide::clamp(np * lanes + nl, 0, N - 1));
    kernel.panelK = RDom(0, K, "pk");
    if (dot)
      kernel.panelK.where(kernel.manyRows);
    Expr k = kernel.panelK.x;
    kernel.product(kernel.vars) += Halide::cast<int32_t>(kernel.quantized(inRow(k))) *
                                   Halide::cast<int32_t>(kernel.packedWeight(
                                       k % group, n % lanes, k / group, n / lanes));
    kernel.panelUpdate = updates++;
  }
  if (dot) {
    kernel.k = RDom(0, K, "k");
    if (panel)
      kernel.k.where(!kernel.manyRows);
    Expr column = Halide::clamp(Halide::likely(n), 0, N - 1);
    kernel.product(kernel.vars) +=
        Halide::cast<int32_t>(kernel.quantized(inRow(kernel.k.x))) *
        Halide::cast<int32_t>(shifted(kernel.k.x, column));
    kernel.dotUpdate = updates++;
  }

  // strict_float: Halide's simplifier would otherwise fold the division into a
  // reciprocal multiply and reassociate the product (the lowered statement read
  // ((scale * max) * acc) * 0.007874), which rounds differently from the op's order.
  Expr acc = kernel.product(kernel.vars) - 128 * kernel.rowSum(rows);
  Expr value = Halide::cast<float>(acc) * ((rowMax / 127.0f) * scale(n));
  if (bias)
    value = value + (*bias)(n);
  value = Halide::strict_float(value);
  kernel.output = Func("result");
  kernel.output(kernel.vars) = boundary.store(value, kernel.vars);
  constrainLayout(kernel.output.output_buffer(), kernel.extents);
  tieOutputExtents(kernel.output, kernel.extents, kernel.sizes);
  return {boundary.inputs(), {kernel}};
}

} // namespace

void kiln::halide_backend::populateQuantizedLinearLowerings(LoweringTable &table) {
  table.addAnchor<QuantizedLinearOp>(lowerQuantizedLinear);
}
