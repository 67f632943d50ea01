//===- LowerStateTest.cpp - Kernels over strided views of a cache ---------===//
//
// The kernels of a decoding step, JIT-compiled and realized on Halide buffers laid out
// as the runtime lays out the plan's views (docs/manifest.md): kv_append's copy writes
// position P of a [B, H, capacity, D] cache through a strided view; the attention reads
// the first P + 1 positions of the k and v caches through strided views and must agree
// with the reference on dense copies of them; a kernel compiled for dense operands
// refuses a strided one.
//
//===----------------------------------------------------------------------===//

#include "LowerTestSupport.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace kiln;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

constexpr int64_t kHeads = 2, kDim = 64, kCapacity = 80;

/// A decoding step over caches of kCapacity positions: q, k and v [B, 2, 1, 64]; k and v
/// appended at position P; attention over the first P + 1; the k prefix returned too.
const char *kStep = R"mlir(
func @main(%q: tensor<?x2x1x64xf32> {kiln.name = "q", kiln.dims = ["B", "", "", ""]},
           %kn: tensor<?x2x1x64xf32> {kiln.name = "k", kiln.dims = ["B", "", "", ""]},
           %vn: tensor<?x2x1x64xf32> {kiln.name = "v", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"})
    -> (tensor<?x2x1x64xf32> {kiln.name = "y"}) {
  %k = kiln.kv_append "k", %kn {axis = 2 : i64, capacity = 80 : i64, position = "P"}
      : (tensor<?x2x1x64xf32>) -> tensor<?x2x?x64xf32>
  %v = kiln.kv_append "v", %vn {axis = 2 : i64, capacity = 80 : i64, position = "P"}
      : (tensor<?x2x1x64xf32>) -> tensor<?x2x?x64xf32>
  %a = kiln.attention %q, %k, %v {scale = 0.125 : f32}
      : (tensor<?x2x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>)
        -> tensor<?x2x1x64xf32>
  kiln.state_write "copy", %k : tensor<?x2x?x64xf32>
  kiln.return %a : tensor<?x2x1x64xf32>
}
)mlir";

/// The same attention over dense operands.
const std::string kDenseAttention =
    oneOpModule({"tensor<?x2x1x64xf32>", "tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>"},
                "tensor<?x2x1x64xf32>",
                "kiln.attention %arg0, %arg1, %arg2 {scale = 0.125 : f32} : "
                "(tensor<?x2x1x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32>) -> "
                "tensor<?x2x1x64xf32>");

/// A [B, kHeads, kCapacity, kDim] cache and Halide views of parts of it.
struct Cache {
  int64_t batch;
  HostTensor data;

  Cache(int64_t batch, unsigned seed)
      : batch(batch), data(randomTensor({batch, kHeads, kCapacity, kDim}, seed)) {}

  /// Positions [first, first + count) of every (batch, head), with the cache's strides:
  /// what the runtime passes for a view with "offset": "first*64", "strides": [...].
  Halide::Buffer<float> view(int64_t first, int64_t count) {
    std::vector<halide_dimension_t> dims = {
        {0, static_cast<int32_t>(kDim), 1},
        {0, static_cast<int32_t>(count), static_cast<int32_t>(kDim)},
        {0, static_cast<int32_t>(kHeads), static_cast<int32_t>(kCapacity * kDim)},
        {0, static_cast<int32_t>(batch),
         static_cast<int32_t>(kHeads * kCapacity * kDim)}};
    return Halide::Buffer<float>(data.f32.data() + first * kDim, 4, dims.data());
  }

  /// A dense copy of positions [0, count).
  HostTensor prefix(int64_t count) const {
    HostTensor out = HostTensor::floats({batch, kHeads, count, kDim});
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < kHeads; ++h)
        for (int64_t p = 0; p < count; ++p)
          for (int64_t d = 0; d < kDim; ++d)
            out.f32[((b * kHeads + h) * count + p) * kDim + d] =
                data.f32[((b * kHeads + h) * kCapacity + p) * kDim + d];
    return out;
  }
};

class HalideLowerState : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<KilnDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(kStep, &context);
    ASSERT_TRUE(module);
    auto func = module->lookupSymbol<mlir::FuncOp>("main");
    for (mlir::Operation &op : func.front())
      ops.push_back(&op);
  }

  /// The kernel of `op` (or, with `denseCopy`, of copying its result out), JIT-compiled.
  LoweredKernel compile(mlir::Operation *op, bool denseCopy = false) {
    std::string diagnostics;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
    Halide::Target target = Halide::get_jit_target_from_environment();
    mlir::FailureOr<LoweredKernel> lowered =
        denseCopy ? lowerDenseCopy(op->getResult(0), target) : lowerOp(op, target);
    EXPECT_TRUE(mlir::succeeded(lowered)) << diagnostics;
    if (mlir::failed(lowered))
      return {};
    lowered->output.compile_jit(target);
    return *lowered;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// kv_append k, kv_append v, attention, state_write, return.
  std::vector<mlir::Operation *> ops;
};

TEST_F(HalideLowerState, SignaturesMarkStridedOperands) {
  EXPECT_NE(kernelSignature(ops[2]).find("tensor<?x2x?x64xf32> strided(axis=2)"),
            std::string::npos)
      << kernelSignature(ops[2]);
  // Both appends copy the same type: one kernel, whatever the cache's name.
  EXPECT_EQ(kernelSignature(ops[0]), kernelSignature(ops[1]));
}

/// The elements of `cache` that differ from what writing `value` (one position) at
/// `position` into `before` gives; `changed` counts those that differ from `before`.
size_t wrongAfterAppend(const Cache &cache, const HostTensor &before,
                        const HostTensor &value, int64_t position, size_t &changed) {
  size_t wrong = 0;
  changed = 0;
  for (int64_t b = 0; b < cache.batch; ++b)
    for (int64_t h = 0; h < kHeads; ++h)
      for (int64_t p = 0; p < kCapacity; ++p)
        for (int64_t d = 0; d < kDim; ++d) {
          int64_t at = ((b * kHeads + h) * kCapacity + p) * kDim + d;
          float expected =
              p == position ? value.f32[(b * kHeads + h) * kDim + d] : before.f32[at];
          changed += cache.data.f32[at] != before.f32[at];
          wrong += cache.data.f32[at] != expected;
        }
  return wrong;
}

TEST_F(HalideLowerState, KvAppendWritesOnlyPositionP) {
  LoweredKernel kernel = compile(ops[0]);
  ASSERT_TRUE(kernel.output.defined());
  for (int64_t position : {0, 41, 79}) {
    Cache cache(3, 10 + position);
    HostTensor before = cache.data;
    HostTensor value = randomTensor({3, kHeads, 1, kDim}, 20 + position);
    Halide::Buffer<> input = KernelHarness::toBuffer(value);
    kernel.inputs[0].set(input);
    Halide::Buffer<float> target = cache.view(position, 1);
    kernel.output.realize(target);
    size_t changed = 0;
    EXPECT_EQ(wrongAfterAppend(cache, before, value, position, changed), 0u)
        << "position " << position;
    EXPECT_GT(changed, 0u);
  }
}

TEST_F(HalideLowerState, OneKernelAppendsToTwoCaches) {
  // The plan's kernel for a step's k and v appends (KernelPlan::appends): inputs k, v,
  // then outputs k's positions, v's positions.
  Halide::Target target = Halide::get_jit_target_from_environment();
  mlir::FailureOr<LoweredKernel> kernel =
      lowerKvAppends(mlir::cast<KvAppendOp>(ops[0]), 2, target);
  ASSERT_TRUE(mlir::succeeded(kernel));
  ASSERT_EQ(kernel->inputs.size(), 2u);
  kernel->output.compile_jit(target);
  for (int64_t position : {0, 17, 79}) {
    Cache keys(2, 30 + position), values(2, 40 + position);
    HostTensor keysBefore = keys.data, valuesBefore = values.data;
    HostTensor k = randomTensor({2, kHeads, 1, kDim}, 50 + position);
    HostTensor v = randomTensor({2, kHeads, 1, kDim}, 60 + position);
    Halide::Buffer<> kIn = KernelHarness::toBuffer(k), vIn = KernelHarness::toBuffer(v);
    kernel->inputs[0].set(kIn);
    kernel->inputs[1].set(vIn);
    Halide::Buffer<float> kOut = keys.view(position, 1), vOut = values.view(position, 1);
    Halide::Realization outputs(kOut, vOut);
    kernel->output.realize(outputs);
    size_t changed = 0;
    EXPECT_EQ(wrongAfterAppend(keys, keysBefore, k, position, changed), 0u)
        << "keys, position " << position;
    EXPECT_GT(changed, 0u);
    EXPECT_EQ(wrongAfterAppend(values, valuesBefore, v, position, changed), 0u)
        << "values, position " << position;
    EXPECT_GT(changed, 0u);
  }
}

TEST_F(HalideLowerState, AttentionReadsStridedPrefixes) {
  LoweredKernel strided = compile(ops[2]);
  ASSERT_TRUE(strided.output.defined());
  KernelHarness dense;
  ASSERT_EQ(dense.load(kDenseAttention), "");
  unsigned seed = 100;
  // 1 key; a partial key tile; exactly one tile; one past it; the whole cache (whose
  // strides are then dense).
  for (int64_t keys : {int64_t(1), int64_t(5), int64_t(64), int64_t(65), kCapacity}) {
    for (int64_t batch : {1, 3}) {
      Cache k(batch, seed++), v(batch, seed++);
      HostTensor q = randomTensor({batch, kHeads, 1, kDim}, seed++);
      std::string error;
      HostTensor expected = dense.reference({q, k.prefix(keys), v.prefix(keys)}, error);
      ASSERT_EQ(error, "");
      HostTensor actual = HostTensor::floats({batch, kHeads, 1, kDim});
      Halide::Buffer<> qBuffer = KernelHarness::toBuffer(q),
                       out = KernelHarness::toBuffer(actual);
      Halide::Buffer<float> kView = k.view(0, keys), vView = v.view(0, keys);
      strided.inputs[0].set(qBuffer);
      strided.inputs[1].set(kView);
      strided.inputs[2].set(vView);
      strided.output.realize(out);
      EXPECT_LE(relativeError(actual, expected), kTolerance)
          << "B = " << batch << ", P + 1 = " << keys;
    }
  }
}

TEST_F(HalideLowerState, DenseOperandsKernelReadsAStridedViewToo) {
  // Attention pins only its innermost strides (q, k and v may be head splits of a packed
  // projection read in place), so its kernel for dense operands serves a prefix too.
  KernelHarness dense;
  ASSERT_EQ(dense.load(kDenseAttention), "");
  Cache k(2, 1), v(2, 2);
  HostTensor q = randomTensor({2, kHeads, 1, kDim}, 3);
  std::string error;
  HostTensor expected = dense.reference({q, k.prefix(7), v.prefix(7)}, error);
  ASSERT_EQ(error, "");
  HostTensor out = HostTensor::floats({2, kHeads, 1, kDim});
  Halide::Buffer<> qBuffer = KernelHarness::toBuffer(q),
                   result = KernelHarness::toBuffer(out);
  Halide::Buffer<float> kView = k.view(0, 7), vView = v.view(0, 7);
  dense.kernel.inputs[0].set(qBuffer);
  dense.kernel.inputs[1].set(kView);
  dense.kernel.inputs[2].set(vView);
  dense.realize(result);
  EXPECT_LE(relativeError(out, expected), kTolerance);
}

TEST_F(HalideLowerState, StridedPrefixCopiesOutDense) {
  // The copy of a returned prefix, and state_write of a prefix: dense copies of a
  // strided view.
  for (auto [op, denseCopy] : {std::pair{ops[0], true}, std::pair{ops[3], false}}) {
    LoweredKernel kernel = compile(op, denseCopy);
    ASSERT_TRUE(kernel.output.defined());
    Cache cache(2, 7);
    HostTensor actual = HostTensor::floats({2, kHeads, 9, kDim});
    Halide::Buffer<float> view = cache.view(0, 9);
    Halide::Buffer<> out = KernelHarness::toBuffer(actual);
    kernel.inputs[0].set(view);
    kernel.output.realize(out);
    EXPECT_EQ(actual.f32, cache.prefix(9).f32);
  }
}

} // namespace
