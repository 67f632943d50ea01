//===- Lower.cpp - kiln ops as Halide algorithms --------------------------===//
//
// The entry points of the lowering (which ops become kernels, their signatures, the
// dispatch to each op family's Lower*.cpp) and the pieces every family shares. The
// algorithms are written once for every target; the schedules live in Schedules*.cpp.
// Each input is an ImageParam pinned to what the op's type says (static extents,
// minimum 0, dense row-major strides): a constant extent and a unit stride are what
// let Halide emit unpredicated vector loads. A dynamic extent is tied to the input it
// comes from, so a caller whose buffers disagree gets Halide's error at run time
// instead of a read out of bounds. The exception is a strided view of a key/value
// cache (a kv_append result): its strides outside the cache's position axis are the
// caller's, so its kernels are their own (kernelSignature marks such operands).
//
//===----------------------------------------------------------------------===//

#include "LowerSupport.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;
using Halide::Expr;
using Halide::Func;
using Halide::ImageParam;
using Halide::OutputImageParam;
using Halide::Var;

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

Extents kiln::halide_backend::extentsOf(RankedTensorType type) {
  Extents extents;
  for (int64_t d : llvm::reverse(type.getShape()))
    extents.push_back(ShapedType::isDynamic(d) ? kDynamicExtent : d);
  return extents;
}

Halide::Type kiln::halide_backend::halideType(RankedTensorType type) {
  return type.getElementType().isF32() ? Halide::Float(32) : Halide::Int(32);
}

Expr kiln::halide_backend::extentOf(const OutputImageParam &buffer,
                                    const Extents &extents, int dim) {
  return isStatic(extents[dim]) ? Expr(static_cast<int>(extents[dim]))
                                : buffer.dim(dim).extent();
}

void kiln::halide_backend::constrainStridedLayout(OutputImageParam buffer,
                                                  const Extents &extents,
                                                  int lastDenseDim) {
  Expr stride = 1;
  for (int i = 0; i < static_cast<int>(extents.size()); ++i) {
    Halide::Internal::Dimension dim = buffer.dim(i);
    if (isStatic(extents[i])) {
      dim.set_bounds(0, static_cast<int>(extents[i]));
    } else {
      dim.set_min(0);
      // Only autoschedulers read estimates; a sequence of a few hundred is typical.
      dim.set_estimate(0, 128);
    }
    if (i <= lastDenseDim)
      dim.set_stride(stride);
    stride = stride * extentOf(buffer, extents, i);
  }
}

void kiln::halide_backend::constrainLayout(OutputImageParam buffer,
                                           const Extents &extents) {
  constrainStridedLayout(buffer, extents, static_cast<int>(extents.size()) - 1);
}

ImageParam kiln::halide_backend::makeInput(Value operand, const std::string &name) {
  RankedTensorType type = tensorType(operand);
  ImageParam param(halideType(type), type.getRank(), name);
  if (llvm::Optional<int64_t> axis = stridedViewAxis(operand))
    constrainStridedLayout(param, extentsOf(type), halideDim(type.getRank(), *axis));
  else
    constrainLayout(param, extentsOf(type));
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
  OutputImageParam buffer = out.output_buffer();
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

Expr kiln::halide_backend::floatBits(Expr bits) {
  return Halide::reinterpret(Halide::Float(32), std::move(bits));
}

//===----------------------------------------------------------------------===//
// Kernels and signatures
//===----------------------------------------------------------------------===//

namespace {

/// The attributes that decide what a kernel computes, read through the accessors so
/// that a defaulted attribute and an explicit default give the same signature, and so
/// that discardable attributes (locations, annotations) do not split kernels.
void printKernelAttributes(Operation *op, llvm::raw_ostream &os) {
  llvm::TypeSwitch<Operation *>(op)
      .Case<MatmulOp>([&](MatmulOp m) {
        os << "{transpose_lhs=" << m.transpose_lhs()
           << ",transpose_rhs=" << m.transpose_rhs() << "}";
      })
      .Case<ScaleOp>([&](ScaleOp s) { os << "{factor=" << s.factorAttr() << "}"; })
      .Case<SoftmaxOp, LogSoftmaxOp, ArgmaxOp, RangeOp, PaddingMaskOp, CausalMaskOp,
            ConcatOp>([&](auto a) { os << "{axis=" << a.axis() << "}"; })
      .Case<LayerNormOp>(
          [&](LayerNormOp l) { os << "{epsilon=" << l.epsilonAttr() << "}"; })
      .Case<TransposeOp>(
          [&](TransposeOp t) { os << "{permutation=" << t.permutation() << "}"; })
      .Case<SliceOp>([&](SliceOp s) {
        os << "{axis=" << s.axis() << ",start=" << s.start() << ",end=" << s.end() << "}";
      })
      .Case<AttentionOp>([&](AttentionOp a) {
        os << "{scale=" << a.scaleAttr() << ",causal=" << a.causal()
           << ",masked_row_value=" << a.masked_row_valueAttr() << "}";
      })
      .Case<MaskedFillOp>(
          [&](MaskedFillOp m) { os << "{value=" << m.valueAttr() << "}"; })
      // A copy into a state: the state's name, capacity and position are the plan's
      // business (they choose the buffer), not the kernel's.
      .Case<KvAppendOp>([&](KvAppendOp k) { os << "{axis=" << k.axis() << "}"; })
      .Case<StateWriteOp>([](StateWriteOp) {})
      .Case<ConstantOp>([&](ConstantOp c) { os << "{value=" << c.value() << "}"; })
      // Everything these compute is in their operand and result types.
      .Case<AddOp, MulOp, DivOp, ReluOp, GeluOp, LinearOp, EmbeddingOp, SinusoidOp>(
          [](Operation *) {})
      .Default([&](Operation *other) { os << other->getAttrDictionary(); });
}

} // namespace

bool kiln::halide_backend::needsKernel(Operation *op) {
  return isa<MatmulOp, LinearOp, AddOp, MulOp, ScaleOp, ReluOp, GeluOp, SoftmaxOp,
             LogSoftmaxOp, LayerNormOp, ArgmaxOp, TransposeOp, SliceOp, ConcatOp,
             EmbeddingOp, RangeOp, SinusoidOp, PaddingMaskOp, CausalMaskOp, DivOp,
             ConstantOp, MaskedFillOp, AttentionOp, StateWriteOp, KvAppendOp>(op);
}

llvm::Optional<int64_t> kiln::halide_backend::stridedViewAxis(Value value) {
  if (auto append = value.getDefiningOp<KvAppendOp>())
    return static_cast<int64_t>(append.axis());
  return llvm::None;
}

/// `value`'s type, marked when it is a strided view: a kernel that pins an operand's
/// strides dense cannot serve one that is not.
static void printOperandType(Value value, llvm::raw_ostream &os) {
  os << value.getType();
  if (llvm::Optional<int64_t> axis = stridedViewAxis(value))
    os << " strided(axis=" << *axis << ")";
}

std::string kiln::halide_backend::kernelSignature(Operation *op) {
  std::string signature;
  llvm::raw_string_ostream os(signature);
  os << op->getName().getStringRef();
  printKernelAttributes(op, os);
  os << "(";
  llvm::interleaveComma(op->getOperands(), os,
                        [&](Value operand) { printOperandType(operand, os); });
  os << ")->(";
  llvm::interleaveComma(op->getResultTypes(), os);
  os << ")";
  return os.str();
}

std::string kiln::halide_backend::denseCopySignature(Value value) {
  std::string signature;
  llvm::raw_string_ostream os(signature);
  os << "copy(";
  printOperandType(value, os);
  os << ")";
  return os.str();
}

FailureOr<LoweredKernel> kiln::halide_backend::lowerOp(Operation *op,
                                                       const Halide::Target &target) {
  if (!needsKernel(op)) {
    op->emitError() << "'" << op->getName() << "' is not lowered to a kernel";
    return failure();
  }
  // i1 tensors (boolean masks, for masked_fill) live only inside an entry point; their
  // buffers hold one i32 per element, 0 or 1, as the interpreter's (halideType here,
  // dtype "i32" in Plan.cpp): a byte would save memory, but i32 needs no new buffer type
  // in the runtime, and a mask is small next to the scores it masks.
  // Every lower* applies the CPU schedules; SchedulesCuda.cpp (a later issue) adds the
  // GPU family, to be chosen here.
  if (target.has_gpu_feature()) {
    op->emitError() << "the Halide backend has no GPU schedule for '" << op->getName()
                    << "' yet (target " << target.to_string() << ")";
    return failure();
  }
  using Values = std::vector<Expr>;
  LoweredKernel kernel =
      llvm::TypeSwitch<Operation *, LoweredKernel>(op)
          .Case<AddOp>([&](AddOp) {
            return lowerPointwise(
                op, {"lhs", "rhs"}, [](const Values &v) { return v[0] + v[1]; }, target);
          })
          .Case<MulOp>([&](MulOp) {
            return lowerPointwise(
                op, {"lhs", "rhs"}, [](const Values &v) { return v[0] * v[1]; }, target);
          })
          .Case<DivOp>([&](DivOp) {
            return lowerPointwise(
                op, {"lhs", "rhs"}, [](const Values &v) { return v[0] / v[1]; }, target);
          })
          .Case<MaskedFillOp>([&](MaskedFillOp m) {
            // The fill value may be -inf: written as its bits (see floatBits).
            Expr fill = floatBits(
                static_cast<int32_t>(m.value().bitcastToAPInt().getZExtValue()));
            return lowerPointwise(
                op, {"input", "mask"},
                [&](const Values &v) { return Halide::select(v[1] != 0, fill, v[0]); },
                target);
          })
          .Case<ConstantOp>([&](ConstantOp c) { return lowerConstant(c, target); })
          .Case<AttentionOp>([&](AttentionOp a) { return lowerAttention(a, target); })
          .Case<ScaleOp>([&](ScaleOp s) {
            Expr factor = s.factor().convertToFloat();
            return lowerPointwise(
                op, {"input"}, [&](const Values &v) { return v[0] * factor; }, target);
          })
          .Case<ReluOp>([&](ReluOp) {
            return lowerPointwise(
                op, {"input"}, [](const Values &v) { return Halide::max(v[0], 0.0f); },
                target);
          })
          .Case<GeluOp>([&](GeluOp) {
            return lowerPointwise(
                op, {"input"}, [](const Values &v) { return geluExact(v[0]); }, target);
          })
          .Case<MatmulOp>([&](MatmulOp m) { return lowerMatmul(m, target); })
          .Case<LinearOp>([&](LinearOp l) { return lowerLinear(l, target); })
          .Case<SoftmaxOp>([&](SoftmaxOp s) { return lowerSoftmax(s, target); })
          .Case<LogSoftmaxOp>([&](LogSoftmaxOp l) { return lowerLogSoftmax(l, target); })
          .Case<LayerNormOp>([&](LayerNormOp l) { return lowerLayerNorm(l, target); })
          .Case<ArgmaxOp>([&](ArgmaxOp a) { return lowerArgmax(a, target); })
          .Case<TransposeOp>([&](TransposeOp t) { return lowerTranspose(t, target); })
          .Case<SliceOp>([&](SliceOp s) { return lowerSlice(s, target); })
          .Case<ConcatOp>([&](ConcatOp c) { return lowerConcat(c, target); })
          .Case<EmbeddingOp>([&](EmbeddingOp e) { return lowerEmbedding(e, target); })
          .Case<RangeOp>([&](RangeOp r) { return lowerRange(r, target); })
          .Case<SinusoidOp>([&](SinusoidOp s) { return lowerSinusoid(s, target); })
          .Case<PaddingMaskOp>(
              [&](PaddingMaskOp p) { return lowerPaddingMask(p, target); })
          .Case<CausalMaskOp>([&](CausalMaskOp c) { return lowerCausalMask(c, target); })
          .Case<StateWriteOp>([&](StateWriteOp w) { return lowerStateWrite(w, target); })
          .Case<KvAppendOp>([&](KvAppendOp k) { return lowerKvAppend(k, target); });
  return kernel;
}
