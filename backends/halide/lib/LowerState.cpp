//===- LowerState.cpp - Copies into and out of session states -------------===//
//
// state_write copies a tensor into a state; kv_append copies one position into a
// key/value cache through a strided view of it (docs/manifest.md: the plan hands the
// kernel position P of the cache as its output buffer); and an entry that returns a
// kv_append result gets it copied out into a dense buffer. The three are one copy
// kernel that differs in which side is strided.
//
//===----------------------------------------------------------------------===//

#include "LowerSupport.h"

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;
using Halide::Expr;
using Halide::Func;
using Halide::ImageParam;
using Halide::OutputImageParam;
using Halide::Var;

namespace {

/// result = `source`. With `stridedOutputAxis`, the output is a strided view across
/// that tensor axis (kv_append's target); otherwise dense.
LoweredKernel lowerCopy(Value source, llvm::Optional<int64_t> stridedOutputAxis,
                        const Halide::Target &target) {
  ImageParam input = makeInput(source, "input");
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
  schedulePointwiseCpu({output, vars, extents}, target);
  return {{input}, output};
}

} // namespace

LoweredKernel kiln::halide_backend::lowerStateWrite(StateWriteOp op,
                                                    const Halide::Target &target) {
  return lowerCopy(op.value(), llvm::None, target);
}

/// The output is position P of the cache: the value's shape (1 along the axis), with the
/// cache's strides, which only the runtime knows outside the axis (they count the
/// capacity of the cache, and it may have dynamic dimensions).
LoweredKernel kiln::halide_backend::lowerKvAppend(KvAppendOp op,
                                                  const Halide::Target &target) {
  return lowerCopy(op.value(), static_cast<int64_t>(op.axis()), target);
}

FailureOr<LoweredKernel>
kiln::halide_backend::lowerDenseCopy(Value value, const Halide::Target &target) {
  if (target.has_gpu_feature()) {
    emitError(value.getLoc()) << "the Halide backend has no GPU schedule for a copy yet "
                                 "(target "
                              << target.to_string() << ")";
    return failure();
  }
  return lowerCopy(value, llvm::None, target);
}
