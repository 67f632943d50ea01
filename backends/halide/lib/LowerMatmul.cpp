//===- LowerMatmul.cpp - matmul and linear as Halide algorithms -----------===//
//
// Both ops are one product, out(n, m, batch...) = sum_k lhs'(k, m, ...) rhs'(n, k, ...),
// a matmul kernel; linear is x . W^T with its bias added by the output stage, i.e. in
// the output tile that the product's accumulators have just filled, never in a second
// pass over the result.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "Scheduler.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

/// The operands of a product and what the output's extents come from.
struct ProductOperands {
  /// The lhs's kernel input, or, for an lhs computed by an earlier stage of a fusion
  /// group, the group input whose extents it has past K (`lhsExt` is the lhs's own).
  ImageParam lhs;
  ImageParam rhs;
  Extents lhsExt, rhsExt;
  bool transposeLhs = false, transposeRhs = false;
  /// The sizes of the output's n and m.
  Expr N, M;
};

/// The condition under which `kernel`'s product takes `target`'s few-rows form (see
/// chooseFewRowsLimit): for a 2-D `transpose_rhs` weight [N, K] whose rows, m and the
/// batch dimensions, are counted only at run time and may be few (an encode's linear,
/// not a decode step's, whose batch rows always take the few-rows form); undefined
/// otherwise.
Expr fewRowsCondition(const MatmulKernel &kernel, const Extents &rhsExt,
                      const Halide::Target &target) {
  if (!kernel.transposeRhs || rhsExt.size() != 2 || matmulRowDimension(kernel) != 1 ||
      kernel.panelWidth)
    return Expr();
  // Halide dimension 1 of the weight is the output's columns.
  int64_t limit = chooseFewRowsLimit(target, rhsExt[1]);
  if (limit <= 0)
    return Expr();
  Expr rows = kernel.sizes[1];
  int64_t staticRows = isStatic(kernel.extents[1]) ? kernel.extents[1] : 1;
  bool dynamic = !isStatic(kernel.extents[1]);
  for (size_t d = 2; d < kernel.extents.size(); ++d) {
    rows *= kernel.sizes[d];
    dynamic |= !isStatic(kernel.extents[d]);
    staticRows *= isStatic(kernel.extents[d]) ? kernel.extents[d] : 1;
  }
  if (!dynamic || staticRows > limit)
    return Expr();
  return rows <= static_cast<int>(limit);
}

/// Defines kernel.product and kernel.packedRhs over kernel.vars (which, with
/// kernel.extents, the caller has set: n, m, batch...), and, where `target` picks a
/// form by a run-time row count (fewRowsCondition), kernel.fewRowsForm and
/// kernel.fewRows. A rank-1 lhs is a single row: m is then a static 1 that the lhs does
/// not index.
ProductOperands defineProduct(MatmulKernel &kernel, KernelBoundary &boundary,
                              const Halide::Target &target, Value lhsValue,
                              Value rhsValue, bool transposeLhs, bool transposeRhs,
                              const std::string &lhsName = "lhs",
                              const std::string &rhsName = "rhs") {
  ProductOperands p;
  p.lhsExt = extentsOf(tensorType(lhsValue));
  p.rhsExt = extentsOf(tensorType(rhsValue));
  Operand lhsOperand = boundary.operand(lhsValue, lhsName);
  p.lhs = lhsOperand.shape;
  p.rhs = boundary.input(rhsValue, rhsName);
  int64_t paddedColumns = 0;
  if (UnpackPanelsOp unpack = panelsOf(rhsValue)) {
    assert(transposeRhs && p.rhsExt.size() == 2 && "panels hold a weight [N, K]");
    RankedTensorType panels = tensorType(unpack.panels());
    kernel.panelWidth = panels.getDimSize(2);
    paddedColumns = panels.getDimSize(0) * kernel.panelWidth;
  }
  p.transposeLhs = transposeLhs;
  p.transposeRhs = transposeRhs;
  const Extents &lhsExt = p.lhsExt, &rhsExt = p.rhsExt;
  ImageParam lhs = p.lhs, rhs = p.rhs;
  kernel.lhs = lhsOperand.values;
  int rank = static_cast<int>(kernel.extents.size());
  kernel.transposeRhs = transposeRhs;
  kernel.rhs = rhs;
  kernel.lhsVaries.assign(rank, false);
  kernel.rhsVaries.assign(rank, false);
  for (int d = 2; d < rank; ++d) {
    kernel.lhsVaries[d] = d < static_cast<int>(lhsExt.size()) && lhsExt[d] != 1;
    kernel.rhsVaries[d] = d < static_cast<int>(rhsExt.size()) && rhsExt[d] != 1;
  }
  Var n = kernel.vars[0], m = kernel.vars[1];

  // Halide dims of the matrix dimensions: [..., M, K] is (k, m), transposed (m, k).
  bool lhsIsRow = lhsExt.size() == 1;
  int lhsK = transposeLhs ? 1 : 0, lhsM = lhsIsRow ? -1 : 1 - lhsK;
  int rhsK = transposeRhs ? 0 : 1, rhsN = 1 - rhsK;
  p.M = lhsIsRow ? Expr(1) : extentOf(lhs, lhsExt, lhsM);
  p.N = extentOf(rhs, rhsExt, rhsN);
  kernel.contraction = isStatic(lhsExt[lhsK]) ? lhsExt[lhsK] : rhsExt[rhsK];
  kernel.lhsRowsInPlace = chooseLhsRowsInPlace(target);
  Expr K = isStatic(kernel.contraction) ? Expr(static_cast<int>(kernel.contraction))
                                        : lhs.dim(lhsK).extent();
  if (!isStatic(lhsExt[lhsK]) && isStatic(kernel.contraction))
    lhs.dim(lhsK).set_extent(K);
  if (!isStatic(rhsExt[rhsK]))
    rhs.dim(rhsK).set_extent(K);
  kernel.k = Halide::RDom(0, K, "k");
  Expr k = kernel.k.x;
  kernel.sizes = {p.N, p.M};
  for (int d = 2; d < rank; ++d) {
    bool fromLhs = d < static_cast<int>(lhsExt.size()) && !isStatic(lhsExt[d]);
    kernel.sizes.push_back(isStatic(kernel.extents[d])
                               ? Expr(static_cast<int>(kernel.extents[d]))
                               : (fromLhs ? lhs : rhs).dim(d).extent());
  }
  // The dynamic sizes that can make the product empty (see MatmulKernel::emptyProduct).
  std::vector<Expr> empty;
  if (!isStatic(kernel.contraction))
    empty.push_back(K == 0);
  if (!isStatic(kernel.extents[0]))
    empty.push_back(p.N == 0);
  if (!isStatic(kernel.extents[1]))
    empty.push_back(p.M == 0);
  for (int d = 2; d < rank; ++d) {
    if (kernel.lhsVaries[d] && !isStatic(lhsExt[d]))
      empty.push_back(lhs.dim(d).extent() == 0);
    if (kernel.rhsVaries[d] && !isStatic(rhsExt[d]))
      empty.push_back(rhs.dim(d).extent() == 0);
  }
  for (const Expr &condition : empty)
    kernel.emptyProduct =
        kernel.emptyProduct.defined() ? kernel.emptyProduct || condition : condition;

  // A schedule computes whole register tiles and drops what lies past the end, so the
  // rows it reads are clamped: in lhsRows, which the product reads at unclamped
  // coordinates, so that a schedule that stages it reads each row at a constant offset.
  std::vector<Expr> lhsIndex = broadcastIndex(lhsExt, kernel.vars);
  lhsIndex[lhsK] = k;
  std::vector<Var> lhsVars = makeVars(static_cast<int>(lhsExt.size()));
  std::vector<Expr> lhsRowIndex(lhsVars.begin(), lhsVars.end());
  if (!lhsIsRow) {
    lhsIndex[lhsM] = m;
    // Read in place, a register tile's rows are addressed through the clamp; `likely`
    // has Halide peel it off every register tile but the last, as for the columns.
    Expr row = lhsVars[lhsM];
    lhsRowIndex[lhsM] =
        Halide::clamp(kernel.lhsRowsInPlace ? Halide::likely(row) : row, 0, p.M - 1);
  }
  for (size_t d = 2; d < lhsIndex.size(); ++d)
    if (kernel.lhsVaries[d])
      lhsRowIndex[d] = Halide::clamp(lhsVars[d], 0, lhs.dim(d).extent() - 1);

  // The same holds for columns; `likely` lets Halide peel the clamp off every panel
  // but the last.
  kernel.packN = Var("pn");
  kernel.packK = Var("pk");
  std::vector<Var> packVars = {kernel.packN, kernel.packK};
  for (size_t d = 2; d < rhsExt.size(); ++d)
    packVars.emplace_back("pb" + std::to_string(d));
  std::vector<Expr> rhsIndex = asExprs(packVars);
  rhsIndex[rhsN] = Halide::clamp(Halide::likely(kernel.packN), 0, p.N - 1);
  rhsIndex[rhsK] = kernel.packK;
  std::vector<Expr> packIndex = broadcastIndex(rhsExt, kernel.vars);
  packIndex[0] = n;
  packIndex[1] = k;
  // Each form has Funcs of its own, since each has its own schedule.
  auto defineForm = [&](const std::string &suffix, Func &product, Func &lhsRows,
                        Func &packed, Func &widened) {
    lhsRows = Func("lhs_rows" + suffix);
    lhsRows(lhsVars) = kernel.lhs(lhsRowIndex);
    // A bf16 weight is read as the f32 it equals (exact: its bits shifted up by 16),
    // so the products and sums stay f32 as the interpreter's.
    packed = Func("packed_rhs" + suffix);
    if (rhs.type() == Halide::BFloat(16)) {
      std::vector<Var> widenVars = makeVars(static_cast<int>(rhsExt.size()));
      widened = Func("widened_rhs" + suffix);
      widened(widenVars) = widenToF32(rhs(widenVars));
      packed(packVars) = widened(rhsIndex);
    } else if (kernel.panelWidth) {
      // Past the last column lie the last panel's zeros, which a whole tile may read.
      Expr width = static_cast<int>(kernel.panelWidth);
      Expr column = Halide::clamp(Halide::likely(kernel.packN), 0,
                                  static_cast<int>(paddedColumns - 1));
      packed(packVars) = rhs(column % width, kernel.packK, column / width);
    } else {
      packed(packVars) = rhs(rhsIndex);
    }
    product = Func("product" + suffix);
    product(kernel.vars) = 0.0f;
    product(kernel.vars) += lhsRows(lhsIndex) * packed(packIndex);
  };
  defineForm("", kernel.product, kernel.lhsRows, kernel.packedRhs, kernel.widenedRhs);
  kernel.fewRows = fewRowsCondition(kernel, rhsExt, target);
  if (kernel.fewRows.defined())
    defineForm("_few_rows", kernel.fewRowsForm.product, kernel.fewRowsForm.lhsRows,
               kernel.fewRowsForm.packedRhs, kernel.fewRowsForm.widenedRhs);
  return p;
}

/// The product's value at the output's point: the few-rows form's while it applies,
/// and 0 without reading either when the product is empty (see
/// MatmulKernel::emptyProduct).
Expr productValue(const MatmulKernel &kernel) {
  Expr value = kernel.product(kernel.vars);
  if (kernel.fewRows.defined())
    value =
        Halide::select(kernel.fewRows, kernel.fewRowsForm.product(kernel.vars), value);
  if (kernel.emptyProduct.defined())
    value = Halide::select(kernel.emptyProduct, 0.0f, value);
  return value;
}

/// Pins the output of `kernel` (`out`, which may be an intermediate Func's buffer
/// when the kernel's output wraps it) to the operands' extents.
void constrainProductOutput(const MatmulKernel &kernel, const ProductOperands &p,
                            OutputImageParam out) {
  constrainLayout(out, kernel.extents);
  if (!isStatic(kernel.extents[0]))
    out.dim(0).set_extent(p.N);
  if (!isStatic(kernel.extents[1]))
    out.dim(1).set_extent(p.M);
  ExtentSource sources;
  sources.operands = {{p.lhs, p.lhsExt}, {p.rhs, p.rhsExt}};
  int rank = static_cast<int>(kernel.extents.size());
  for (int d = 2; d < rank; ++d)
    sources.tie(out, d, kernel.extents[d],
                {d < static_cast<int>(p.lhsExt.size()) ? d : -1,
                 d < static_cast<int>(p.rhsExt.size()) ? d : -1});
}

KernelAlgorithm lowerMatmul(MatmulOp op, const Halide::Target &target,
                            KernelBoundary &boundary) {
  MatmulKernel kernel;
  RankedTensorType resultType = tensorType(op.result());
  kernel.extents = extentsOf(resultType);
  kernel.vars = makeVars(resultType.getRank());
  ProductOperands p = defineProduct(kernel, boundary, target, op.lhs(), op.rhs(),
                                    op.transpose_lhs(), op.transpose_rhs());
  kernel.output = Func("result");
  kernel.output(kernel.vars) = boundary.store(productValue(kernel), kernel.vars);
  constrainProductOutput(kernel, p, kernel.output.output_buffer());
  return {boundary.inputs(), {kernel}};
}

/// x . W^T + b, W stored [out, in]: the product with transpose_rhs, which a CPU target
/// schedules as dot products for few rows and in panels for many, choosing at run
/// time where the row count is known only then (see useDotProduct and
/// chooseFewRowsLimit), and the bias added to each output tile as it is stored. For a
/// rank-1 input the product is a 1-row matrix, computed whole and then copied into the
/// 1-D result (an extra N floats, next to the N x K weight the product streams).
KernelAlgorithm lowerLinear(LinearOp op, const Halide::Target &target,
                            KernelBoundary &boundary) {
  MatmulKernel kernel;
  RankedTensorType resultType = tensorType(op.result());
  int rank = resultType.getRank();
  bool vector = rank == 1;
  kernel.extents = extentsOf(resultType);
  if (vector)
    kernel.extents.push_back(1);
  kernel.vars = makeVars(static_cast<int>(kernel.extents.size()));
  ProductOperands p =
      defineProduct(kernel, boundary, target, op.input(), op.weight(),
                    /*transposeLhs=*/false, /*transposeRhs=*/true, "input", "weight");
  ImageParam bias = boundary.input(op.bias(), "bias");
  if (!isStatic(extentsOf(tensorType(op.bias()))[0]))
    bias.dim(0).set_extent(p.N);

  Func result("result");
  kernel.output = vector ? Func("linear_row") : result;
  kernel.output(kernel.vars) =
      boundary.store(productValue(kernel) + bias(kernel.vars[0]), kernel.vars);
  if (!vector) {
    constrainProductOutput(kernel, p, result.output_buffer());
    return {boundary.inputs(), {kernel}};
  }
  Var n = kernel.vars[0];
  result(n) = kernel.output(n, 0);
  Extents resultExtents = extentsOf(resultType);
  constrainLayout(result.output_buffer(), resultExtents);
  tieOutputExtents(result, resultExtents, {p.N});
  return {boundary.inputs(), {kernel, PointwiseKernel{result, {n}, resultExtents}}};
}

} // namespace

void kiln::halide_backend::populateMatmulLowerings(LoweringTable &table) {
  table.addAnchor<MatmulOp>(lowerMatmul, [](MatmulOp op, llvm::raw_ostream &os) {
    os << "{transpose_lhs=" << op.transpose_lhs()
       << ",transpose_rhs=" << op.transpose_rhs() << "}";
  });
  table.addAnchor<LinearOp>(lowerLinear);
}
