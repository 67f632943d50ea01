//===- KernelHarness.h - Runs one lowered op with Halide's JIT ---*- C++ -*-===//
//
// Shared by the lowering tests and the schedule benchmark: parses a one-op kiln module,
// lowers the op with lowerOp (or, with `collapsedRows`, lowerCollapsedRows over [rows, D]
// views), JIT-compiles the pipeline once (its dynamic extents stay symbolic) and
// realizes it on host tensors of any shape the type admits.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_HALIDE_KERNELHARNESS_H
#define KILN_TEST_UNIT_HALIDE_KERNELHARNESS_H

#include "CollapseRows.h"
#include "Lower.h"

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/KilnOps.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace kiln::halide_backend::test {

using reference::HostTensor;
using Shape = std::vector<int64_t>;

/// A module whose entry @main applies `op` (text using %arg0, %arg1, ...) to arguments
/// of `argTypes` and returns its `resultType` result.
inline std::string oneOpModule(const std::vector<std::string> &argTypes,
                               const std::string &resultType, const std::string &op,
                               const std::string &prologue = "") {
  std::string args;
  for (size_t i = 0; i < argTypes.size(); ++i)
    args += (i ? ", " : "") + llvm::formatv("%arg{0}: {1}", i, argTypes[i]).str();
  return llvm::formatv(
             "func @main({0}) -> {1} {{\n{3}  %0 = {2}\n  kiln.return %0 : {1}\n}\n",
             args, resultType, op, prologue)
      .str();
}

/// `count` draws of `distribution`, reproducible from `seed`.
template <typename T, typename Distribution>
std::vector<T> randomValues(size_t count, unsigned seed, Distribution distribution) {
  std::vector<T> values(count);
  std::mt19937 rng(seed);
  for (T &v : values)
    v = distribution(rng);
  return values;
}

/// Uniform floats in [lo, hi), reproducible from `seed`.
inline HostTensor randomTensor(Shape shape, unsigned seed, float lo = -1.0f,
                               float hi = 1.0f) {
  HostTensor t = HostTensor::floats(std::move(shape));
  t.f32 = randomValues<float>(t.numElements(), seed,
                              std::uniform_real_distribution<float>(lo, hi));
  return t;
}

/// The bits of the bf16 nearest to `value` (ties to even; `value` finite), as a
/// checkpoint converted to bf16 holds them.
inline uint16_t bf16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/// `t` (f32) with every value rounded to the nearest bf16: the f32 values that a bf16
/// weight holds, as the interpreter takes them.
inline HostTensor roundedToBf16(HostTensor t) {
  for (float &v : t.f32) {
    uint32_t bits = static_cast<uint32_t>(bf16Bits(v)) << 16;
    std::memcpy(&v, &bits, sizeof v);
  }
  return t;
}

/// A parsed one-op module and its op's JIT-compiled kernel.
class KernelHarness {
public:
  KernelHarness() { context.loadDialect<KilnDialect>(); }

  /// Parses `moduleText`, lowers its op and JIT-compiles the kernel; returns an error
  /// message, empty on success.
  std::string
  load(const std::string &moduleText,
       const Halide::Target &target = Halide::get_jit_target_from_environment()) {
    module = mlir::parseSourceString<mlir::ModuleOp>(moduleText, &context);
    if (!module)
      return "cannot parse:\n" + moduleText;
    auto func = module->lookupSymbol<mlir::FuncOp>("main");
    // The first op with a kernel: a prologue's views (kiln.unpack_panels) have none.
    op = &func.front().front();
    for (mlir::Operation &candidate : func.front())
      if (needsKernel(&candidate)) {
        op = &candidate;
        break;
      }
    std::string diagnostics;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
    mlir::FailureOr<LoweredKernel> lowered =
        collapsedRows ? lowerCollapsedRows(op, target) : lowerOp(op, target);
    if (mlir::failed(lowered))
      return "lowering failed: " + diagnostics;
    kernel = *lowered;
    pipeline = kiln::halide_backend::pipelineOf(kernel);
    pipeline.compile_jit(target);
    return "";
  }

  /// Realizes the kernel on `inputs` (operand order) into a tensor of `outShape`.
  HostTensor run(const std::vector<HostTensor> &inputs, const Shape &outShape) {
    std::vector<Halide::Buffer<>> buffers;
    for (size_t i = 0; i < inputs.size(); ++i) {
      buffers.push_back(collapsedRows && isRowTensor(op, op->getOperand(i))
                            ? viewAs(inputs[i], collapsed(inputs[i].shape))
                            : toBuffer(inputs[i], kernel.inputs[i].type()));
      kernel.inputs[i].set(buffers.back());
    }
    bool isInt =
        !op->getResult(0).getType().cast<mlir::ShapedType>().getElementType().isF32();
    HostTensor out = isInt ? HostTensor::ints(outShape) : HostTensor::floats(outShape);
    out.f32.resize(isInt ? 0 : out.numElements());
    out.i32.resize(isInt ? out.numElements() : 0);
    Halide::Buffer<> result =
        collapsedRows ? viewAs(out, collapsed(out.shape)) : toBuffer(out);
    pipeline.realize(result);
    return out;
  }

  /// [d0, ..., dn-1] as [d0 * ... * dn-2, dn-1]: a row tensor as a kernel lowered with
  /// `collapsedRows` reads it.
  static Shape collapsed(const Shape &shape) {
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d)
      rows *= shape[d];
    return {rows, shape.back()};
  }

  /// Realizes into a preallocated buffer, for timing (inputs set by a previous run).
  void realize(Halide::Buffer<> &result) { pipeline.realize(result); }

  /// The interpreter's result for `inputs`, or an error message in `error`.
  HostTensor reference(const std::vector<HostTensor> &inputs, std::string &error) {
    reference::TensorMap named;
    for (size_t i = 0; i < inputs.size(); ++i)
      named["arg" + std::to_string(i)] = inputs[i];
    llvm::Expected<reference::TensorMap> outputs =
        reference::run(*module, "main", named, {});
    if (!outputs) {
      error = llvm::toString(outputs.takeError());
      return {};
    }
    return (*outputs)["result0"];
  }

  /// A Halide view of `t`'s data: dimension 0 is the last tensor dimension. An empty
  /// tensor gets a dummy host pointer, as the runtime gives it: Halide takes a buffer
  /// with a null host for a bounds query, and the kernel would silently do nothing.
  static Halide::Buffer<> toBuffer(const HostTensor &t) { return viewAs(t, t.shape); }

  /// toBuffer's view of `t`'s data with `shape`, of as many elements.
  static Halide::Buffer<> viewAs(const HostTensor &t, const Shape &shape) {
    std::vector<int> sizes(shape.rbegin(), shape.rend());
    static int32_t emptyStorage[1];
    void *data = t.isInt ? (void *)t.i32.data() : (void *)t.f32.data();
    if (!data)
      data = emptyStorage;
    Halide::Type type = t.isInt ? Halide::Int(32) : Halide::Float(32);
    return Halide::Buffer<>(type, data, static_cast<int>(sizes.size()),
                            sizesToDims(sizes).data());
  }

  /// `t` as a kernel input of `type`: toBuffer's view for f32 and i32; for a weight at
  /// a reduced precision, a copy converted as the interpreter reads it (bf16 from f32
  /// values rounded to bf16, i8 from i32 values in [-128, 127]).
  static Halide::Buffer<> toBuffer(const HostTensor &t, Halide::Type type) {
    if (type != Halide::BFloat(16) && type != Halide::Int(8))
      return toBuffer(t);
    std::vector<int> sizes(t.shape.rbegin(), t.shape.rend());
    Halide::Buffer<> buffer(type, sizes);
    if (type == Halide::BFloat(16)) {
      auto *bits = static_cast<uint16_t *>(buffer.data());
      for (size_t i = 0; i < t.f32.size(); ++i)
        bits[i] = bf16Bits(t.f32[i]);
    } else {
      auto *bytes = static_cast<int8_t *>(buffer.data());
      for (size_t i = 0; i < t.i32.size(); ++i)
        bytes[i] = static_cast<int8_t>(t.i32[i]);
    }
    return buffer;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Operation *op = nullptr;
  /// Set before load: the op is lowered with lowerCollapsedRows, and run passes its row
  /// tensors as [rows, D] views, as a model's steps do.
  bool collapsedRows = false;
  LoweredKernel kernel;
  Halide::Pipeline pipeline;

private:
  static std::vector<halide_dimension_t> sizesToDims(const std::vector<int> &sizes) {
    std::vector<halide_dimension_t> dims;
    int stride = 1;
    for (int size : sizes) {
      dims.push_back(halide_dimension_t(0, size, stride));
      stride *= size;
    }
    return dims;
  }
};

/// q, k and v [B, H, T, D] copied into one packed projection [B, T, 3 H D], and Halide
/// views of it that split the heads; the result's view merges them into [B, T, H D].
/// These are the views a model's attention gets (it reads its projection in place).
struct PackedHeads {
  int32_t batch, heads, length, dim;
  std::vector<float> packed, merged;

  explicit PackedHeads(const std::vector<HostTensor> &qkv)
      : batch(static_cast<int32_t>(qkv[0].shape[0])),
        heads(static_cast<int32_t>(qkv[0].shape[1])),
        length(static_cast<int32_t>(qkv[0].shape[2])),
        dim(static_cast<int32_t>(qkv[0].shape[3])), packed(qkv[0].numElements() * 3),
        merged(qkv[0].numElements()) {
    for (int32_t w = 0; w < 3; ++w)
      for (int64_t i = 0; i < qkv[0].numElements(); ++i)
        packed[at(i, w, 3)] = qkv[w].f32[i];
  }

  /// Where element i of a dense [B, H, T, D] tensor lies among `parts` [B, T, H D]
  /// blocks interleaved along the last dimension, in part `part`.
  size_t at(int64_t i, int32_t part, int32_t parts) const {
    int64_t d = i % dim, t = i / dim % length, h = i / dim / length % heads,
            b = i / dim / length / heads;
    return static_cast<size_t>(((b * length + t) * parts + part) * heads * dim + h * dim +
                               d);
  }

  /// q (0), k (1) or v (2) as the kernel reads it: a view of `packed`.
  Halide::Buffer<> split(int32_t part) {
    return view(packed.data() + part * heads * dim, 3);
  }

  /// The result's view of `merged`.
  Halide::Buffer<> mergedView() { return view(merged.data(), 1); }

  Halide::Buffer<> view(float *base, int32_t parts) const {
    int32_t row = parts * heads * dim;
    halide_dimension_t dims[4] = {
        {0, dim, 1}, {0, length, row}, {0, heads, dim}, {0, batch, row * length}};
    return Halide::Buffer<>(Halide::Float(32), base, 4, dims);
  }

  HostTensor mergedAsDense() const {
    HostTensor out = HostTensor::floats({batch, heads, length, dim});
    for (int64_t i = 0; i < out.numElements(); ++i)
      out.f32[i] = merged[at(i, 0, 1)];
    return out;
  }
};

} // namespace kiln::halide_backend::test

#endif // KILN_TEST_UNIT_HALIDE_KERNELHARNESS_H
