//===- LowerSupport.cpp - Shared pieces of the op lowerings ---------------===//
//
// Types read as extents, inputs pinned to their types, and output extents tied to
// their sources (see LowerSupport.h).
//
//===----------------------------------------------------------------------===//

#include "LowerSupport.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

llvm::Optional<int64_t> kiln::halide_backend::stridedViewAxis(Value value) {
  if (auto append = value.getDefiningOp<KvAppendOp>())
    return static_cast<int64_t>(append.axis());
  return llvm::None;
}

Extents kiln::halide_backend::extentsOf(RankedTensorType type) {
  Extents extents;
  for (int64_t d : llvm::reverse(type.getShape()))
    extents.push_back(ShapedType::isDynamic(d) ? kDynamicExtent : d);
  return extents;
}

Halide::Type kiln::halide_backend::halideType(RankedTensorType type) {
  Type element = type.getElementType();
  if (element.isF32())
    return Halide::Float(32);
  if (element.isBF16())
    return Halide::BFloat(16);
  if (element.isInteger(8))
    return Halide::Int(8);
  return element.isInteger(64) ? Halide::Int(64) : Halide::Int(32);
}

Expr kiln::halide_backend::extentOf(const OutputImageParam &buffer,
                                    const Extents &extents, int dim) {
  return isStatic(extents[dim]) ? Expr(static_cast<int>(extents[dim]))
                                : buffer.dim(dim).extent();
}

namespace {
/// The extent of dimension `dim` of `buffer` for a constraint on `buffer` itself: a
/// Variable that names it without holding the buffer's Parameter. One that held it would
/// make the Parameter own an Expr owning the Parameter, a reference cycle that Halide 14
/// never frees (halide/Halide#2784); lowering binds the extent by its name either way.
Expr ownExtent(const OutputImageParam &buffer, const Extents &extents, int dim) {
  if (isStatic(extents[dim]))
    return static_cast<int>(extents[dim]);
  return Halide::Internal::Variable::make(Halide::Int(32), buffer.name() + ".extent." +
                                                               std::to_string(dim));
}
} // namespace

void kiln::halide_backend::constrainStridedLayout(OutputImageParam buffer,
                                                  const Extents &extents,
                                                  int lastDenseDim) {
  for (int i = 0; i < static_cast<int>(extents.size()); ++i) {
    Halide::Internal::Dimension dim = buffer.dim(i);
    if (isStatic(extents[i])) {
      dim.set_bounds(0, static_cast<int>(extents[i]));
    } else {
      dim.set_min(0);
      // Only autoschedulers read estimates; a sequence of a few hundred is typical.
      dim.set_estimate(0, 128);
    }
  }
  constrainStrides(buffer, extents, lastDenseDim);
}

void kiln::halide_backend::constrainStrides(OutputImageParam buffer,
                                            const Extents &extents, int lastDenseDim) {
  Expr stride = 1;
  for (int i = 0; i <= lastDenseDim && i < static_cast<int>(extents.size()); ++i) {
    buffer.dim(i).set_stride(stride);
    stride = stride * ownExtent(buffer, extents, i);
  }
}

void kiln::halide_backend::constrainLayout(OutputImageParam buffer,
                                           const Extents &extents) {
  constrainStridedLayout(buffer, extents, static_cast<int>(extents.size()) - 1);
}

UnpackPanelsOp kiln::halide_backend::panelsOf(Value value) {
  if (auto arg = value.dyn_cast<BlockArgument>())
    if (auto fusion = dyn_cast_or_null<FusionOp>(arg.getOwner()->getParentOp()))
      value = fusion.getOperand(arg.getArgNumber());
  return value.getDefiningOp<UnpackPanelsOp>();
}

ImageParam kiln::halide_backend::makeInput(Value operand, const std::string &name) {
  if (UnpackPanelsOp unpack = panelsOf(operand))
    operand = unpack.panels();
  RankedTensorType type = tensorType(operand);
  ImageParam param(halideType(type), type.getRank(), name);
  if (llvm::Optional<int64_t> axis = stridedViewAxis(operand))
    constrainStridedLayout(param, extentsOf(type), halideDim(type.getRank(), *axis));
  else
    constrainLayout(param, extentsOf(type));
  return param;
}

ImageParam kiln::halide_backend::makeInnerDenseInput(Value operand,
                                                     const std::string &name) {
  RankedTensorType type = tensorType(operand);
  ImageParam param(halideType(type), type.getRank(), name);
  constrainStridedLayout(param, extentsOf(type), /*lastDenseDim=*/0);
  return param;
}

std::vector<Var> kiln::halide_backend::makeVars(int rank) {
  std::vector<Var> vars;
  for (int i = 0; i < rank; ++i)
    vars.emplace_back("d" + std::to_string(i));
  return vars;
}

std::vector<Expr> kiln::halide_backend::asExprs(const std::vector<Var> &vars) {
  return std::vector<Expr>(vars.begin(), vars.end());
}

std::vector<Expr> kiln::halide_backend::broadcastIndex(const Extents &operand,
                                                       const std::vector<Var> &vars) {
  std::vector<Expr> index;
  for (size_t i = 0; i < operand.size(); ++i)
    index.push_back(operand[i] == 1 ? Expr(0) : Expr(vars[i]));
  return index;
}

std::vector<Expr> kiln::halide_backend::withAxis(const std::vector<Var> &vars, int axis,
                                                 Expr value) {
  std::vector<Expr> index = asExprs(vars);
  index[axis] = std::move(value);
  return index;
}

std::vector<Var> kiln::halide_backend::withoutAxis(const std::vector<Var> &vars,
                                                   int axis) {
  std::vector<Var> rest = vars;
  rest.erase(rest.begin() + axis);
  return rest;
}

void kiln::halide_backend::tieOutputExtents(Func out, const Extents &extents,
                                            const std::vector<Expr> &source) {
  // A Tuple's other outputs have the first one's extents (Halide's rule).
  OutputImageParam buffer = out.output_buffers().front();
  for (size_t d = 0; d < extents.size(); ++d)
    if (!isStatic(extents[d]))
      buffer.dim(static_cast<int>(d)).set_extent(source[d]);
}

void ExtentSource::tie(OutputImageParam output, int dim, int64_t extent,
                       llvm::ArrayRef<int> operandDims) {
  if (isStatic(extent))
    return; // constrainLayout pinned every side already
  llvm::Optional<Expr> source;
  for (size_t i = 0; i < operands.size(); ++i) {
    int d = operandDims[i];
    if (d < 0 || operands[i].second[d] == 1)
      continue;
    Expr e = operands[i].first.dim(d).extent();
    if (!source)
      source = e;
    else
      operands[i].first.dim(d).set_extent(*source);
  }
  if (source)
    output.dim(dim).set_extent(*source);
}

Expr kiln::halide_backend::widenToF32(Expr value) {
  if (value.type().element_of() != Halide::BFloat(16))
    return value;
  Expr bits = Halide::reinterpret(value.type().with_code(halide_type_uint), value);
  return floatBits(Halide::cast(bits.type().with_bits(32), bits) << 16);
}

Expr kiln::halide_backend::floatBits(Expr bits) {
  return Halide::reinterpret(Halide::Float(32), std::move(bits));
}
