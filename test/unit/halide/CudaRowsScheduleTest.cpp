//===- CudaRowsScheduleTest.cpp - The reductions and attention on CUDA ----===//
//
// Each kind of kernel that SchedulesCudaRows.cpp and SchedulesCudaAttention.cpp
// schedule, lowered for host-cuda and compiled to a module (PTX inside; no GPU
// needed). A custom lowering pass, which runs after Halide has placed every loop and
// before it splits off the device code, records where the stores are: every store
// must sit inside a loop over GPU blocks (a stage left on the host stores outside
// one), and the kernel count, the shared memory per block and the thread count must
// be what the schedule's comments say. Nothing here runs a kernel.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace kiln::halide_backend::test {
namespace {

using namespace Halide;
using namespace Halide::Internal;

/// What the lowered statement does, seen by a pass that changes nothing.
struct DeviceCensus : IRMutator {
  int kernels = 0;
  int hostStores = 0;
  int deviceStores = 0;
  /// Per kernel, the bytes of its shared-memory allocations with a constant size, and
  /// whether one had a size that is not constant.
  std::vector<int64_t> sharedBytes;
  bool dynamicShared = false;
  int maxThreadLoopExtent = 0;

  using IRMutator::visit;

  Stmt visit(const For *loop) override {
    bool block = loop->for_type == ForType::GPUBlock;
    if (loop->for_type == ForType::GPUThread || loop->for_type == ForType::GPULane)
      if (const IntImm *extent = loop->extent.as<IntImm>())
        maxThreadLoopExtent =
            std::max(maxThreadLoopExtent, static_cast<int>(extent->value));
    if (block && blockDepth == 0) {
      ++kernels;
      sharedBytes.push_back(0);
    }
    blockDepth += block;
    Stmt result = IRMutator::visit(loop);
    blockDepth -= block;
    return result;
  }

  Stmt visit(const Store *store) override {
    // X.shared_size: the host computing a dynamic shared allocation's size.
    if (!ends_with(store->name, ".shared_size"))
      ++(blockDepth > 0 ? deviceStores : hostStores);
    return IRMutator::visit(store);
  }

  Stmt visit(const LetStmt *let) override {
    lets[let->name] = let->value;
    return IRMutator::visit(let);
  }

  /// `e` with the values of the lets seen so far substituted, simplified (the sizes
  /// of shared allocations are often let-bound).
  Expr withLets(Expr e) const {
    for (int i = 0; i < 8; ++i)
      e = substitute(lets, e);
    return simplify(e);
  }

  Stmt visit(const Allocate *alloc) override {
    if (alloc->memory_type == MemoryType::GPUShared && !sharedBytes.empty()) {
      int64_t bytes = alloc->type.bytes();
      for (const Expr &extent : alloc->extents) {
        if (const IntImm *size = withLets(extent).as<IntImm>())
          bytes *= size->value;
        else
          dynamicShared = true;
      }
      sharedBytes.back() += bytes;
    }
    return IRMutator::visit(alloc);
  }

private:
  int blockDepth = 0;
  std::map<std::string, Expr> lets;
};

class CudaRowsSchedule : public ::testing::Test {
protected:
  /// Lowers the one op of a module with `argTypes` -> `resultType` for `target`,
  /// compiles it to a module, and returns what the lowered statement does.
  DeviceCensus compile(const std::vector<std::string> &argTypes,
                       const std::string &resultType, const std::string &opText,
                       const Target &target = Target("host-cuda-cuda_capability_70")) {
    DeviceCensus census;
    module = mlir::parseSourceString<mlir::ModuleOp>(
        oneOpModule(argTypes, resultType, opText), &context);
    EXPECT_TRUE(module) << opText;
    if (!module)
      return census;
    mlir::Operation *op = &module->lookupSymbol<mlir::FuncOp>("main").front().front();
    std::string diagnostics;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
    mlir::FailureOr<LoweredKernel> lowered = lowerOp(op, target);
    EXPECT_TRUE(mlir::succeeded(lowered)) << opText << "\n" << diagnostics;
    if (mlir::failed(lowered))
      return census;
    Pipeline pipeline(lowered->output);
    // The pass belongs to the test; the pipeline only borrows it.
    pipeline.add_custom_lowering_pass(&census, [] {});
    std::vector<Argument> args(lowered->inputs.begin(), lowered->inputs.end());
    try {
      pipeline.compile_to_module(args, "kernel", target);
    } catch (const Halide::Error &e) {
      ADD_FAILURE() << opText << "\n" << e.what();
    }
    return census;
  }

  /// Every store in device code, in 1 to `maxKernels` kernels (a specialization's
  /// branches are kernels of their own), each within the 48 KiB of shared memory a
  /// block has by default; with `staticShared`, every shared allocation of a constant
  /// size.
  void expectOnDevice(const DeviceCensus &census, int maxKernels, const std::string &what,
                      bool staticShared = true) {
    EXPECT_EQ(census.hostStores, 0) << what << ": a stage was left on the host";
    EXPECT_GT(census.deviceStores, 0) << what;
    EXPECT_GE(census.kernels, 1) << what;
    EXPECT_LE(census.kernels, maxKernels) << what;
    if (staticShared)
      EXPECT_FALSE(census.dynamicShared) << what;
    for (int64_t bytes : census.sharedBytes)
      EXPECT_LE(bytes, 48 * 1024) << what;
    EXPECT_LE(census.maxThreadLoopExtent, 1024) << what;
  }

  CudaRowsSchedule() { context.loadDialect<KilnDialect>(); }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(CudaRowsSchedule, CensusSeesAStageOnTheHost) {
  // The CPU schedule of the same op: no GPU loop at all. Without this the checks
  // below could pass on a census that sees nothing.
  DeviceCensus census = compile({"tensor<?x512xf32>"}, "tensor<?x512xf32>",
                                "kiln.softmax %arg0 {axis = 1 : i64} : tensor<?x512xf32>",
                                Target("x86-64-linux-sse41"));
  EXPECT_GT(census.hostStores, 0);
  EXPECT_EQ(census.kernels, 0);
}

TEST_F(CudaRowsSchedule, SoftmaxAndLogSoftmax) {
  // The last axis: one kernel, a block per row reducing the max and the sum.
  for (const char *op : {"softmax", "log_softmax"}) {
    std::string what = std::string(op) + " last axis";
    DeviceCensus rows = compile({"tensor<?x?x512xf32>"}, "tensor<?x?x512xf32>",
                                std::string("kiln.") + op +
                                    " %arg0 {axis = 2 : i64} : tensor<?x?x512xf32>");
    expectOnDevice(rows, 1, what);
    EXPECT_EQ(rows.maxThreadLoopExtent, 128) << what << ": 4 elements a thread";
    DeviceCensus vocabulary = compile(
        {"tensor<?x32000xf32>"}, "tensor<?x32000xf32>",
        std::string("kiln.") + op + " %arg0 {axis = 1 : i64} : tensor<?x32000xf32>");
    expectOnDevice(vocabulary, 1, what + " [?, 32000]");
    EXPECT_EQ(vocabulary.maxThreadLoopExtent, 256) << what;
    // Another axis: a thread per column walks it.
    expectOnDevice(compile({"tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
                           std::string("kiln.") + op +
                               " %arg0 {axis = 1 : i64} : tensor<?x?x?xf32>"),
                   1, std::string(op) + " axis 1");
  }
  // A single row: the statistics are kernels of their own (the pure and update
  // definitions of each, and a kernel per branch of the guarded tails).
  expectOnDevice(compile({"tensor<?xf32>"}, "tensor<?xf32>",
                         "kiln.softmax %arg0 {axis = 0 : i64} : tensor<?xf32>"),
                 12, "softmax of one row");
}

/// A kernel of a reduction kind: its op on arguments of `args`, and how many kernels
/// it may become.
struct RowCase {
  const char *what;
  std::vector<std::string> args;
  const char *result, *op;
  int maxKernels = 1;
};

TEST_F(CudaRowsSchedule, NormalizationsArgmaxAndReductions) {
  const RowCase cases[] = {
      {"layer_norm",
       {"tensor<?x?x512xf32>", "tensor<512xf32>", "tensor<512xf32>"},
       "tensor<?x?x512xf32>",
       "kiln.layer_norm %arg0, %arg1, %arg2 {epsilon = 1.0e-05 : f32} : "
       "(tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> "
       "tensor<?x?x512xf32>"},
      {"rms_norm",
       {"tensor<?x?xf32>", "tensor<?xf32>"},
       "tensor<?x?xf32>",
       "kiln.rms_norm %arg0, %arg1 {epsilon = 1.0e-06 : f32} : "
       "(tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>"},
      {"argmax last axis",
       {"tensor<?x32000xf32>"},
       "tensor<?xi32>",
       "kiln.argmax %arg0 {axis = 1 : i64} : (tensor<?x32000xf32>) -> tensor<?xi32>"},
      // A dynamic axis: its size-0 check is hoisted out of the device code.
      {"argmax axis 1",
       {"tensor<?x?x?xf32>"},
       "tensor<?x?xi32>",
       "kiln.argmax %arg0 {axis = 1 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?xi32>"},
      {"reduce_sum inner",
       {"tensor<?x?x512xf32>"},
       "tensor<?x?xf32>",
       "kiln.reduce_sum %arg0 {axes = [2]} : (tensor<?x?x512xf32>) -> tensor<?x?xf32>"},
      {"reduce_max outer",
       {"tensor<?x?xf32>"},
       "tensor<?xf32>",
       "kiln.reduce_max %arg0 {axes = [0]} : (tensor<?x?xf32>) -> tensor<?xf32>"},
      {"reduce_sum inner and outer",
       {"tensor<?x?x?xf32>"},
       "tensor<?xf32>",
       "kiln.reduce_sum %arg0 {axes = [0, 2]} : (tensor<?x?x?xf32>) -> tensor<?xf32>"},
      // Everything to one value: the strided partial results, then the fold, each
      // definition a kernel of its own.
      {"reduce_mean to a scalar",
       {"tensor<?x8xf32>"},
       "tensor<f32>",
       "kiln.reduce_mean %arg0 {axes = [0, 1]} : (tensor<?x8xf32>) -> tensor<f32>",
       5},
  };
  for (const RowCase &c : cases)
    expectOnDevice(compile(c.args, c.result, c.op), c.maxKernels, c.what);
}

/// kiln.attention of a `q` query and `kv` keys and values.
std::string attention(const std::string &q, const std::string &kv,
                      const std::string &attrs) {
  return "kiln.attention %arg0, %arg1, %arg2 {" + attrs + "} : (" + q + ", " + kv + ", " +
         kv + ") -> " + q;
}

TEST_F(CudaRowsSchedule, Attention) {
  // Dynamic lengths specialize on an empty input: a kernel per branch; their shared
  // allocations are sized at launch (bounded by the static case's tiles).
  struct Case {
    const char *what, *q, *kv, *attrs;
    int maxKernels = 2;
    bool staticShared = false;
  } cases[] = {
      {"causal, dynamic lengths", "tensor<?x8x?x64xf32>", "tensor<?x8x?x64xf32>",
       "scale = 0.125 : f32, causal = true"},
      {"not causal, static", "tensor<2x4x128x64xf32>", "tensor<2x4x128x64xf32>",
       "scale = 0.125 : f32", 1, true},
      {"head dim 128", "tensor<1x2x?x128xf32>", "tensor<1x2x?x128xf32>",
       "scale = 0.088 : f32, causal = true"},
      {"a decode step", "tensor<?x8x1x64xf32>", "tensor<?x8x?x64xf32>",
       "scale = 0.125 : f32, causal = true"},
  };
  for (const Case &c : cases) {
    DeviceCensus census = compile({c.q, c.kv, c.kv}, c.q, attention(c.q, c.kv, c.attrs));
    expectOnDevice(census, c.maxKernels, c.what, c.staticShared);
    // The K and V tiles, scores, weights, P.v and the state stage through shared
    // memory.
    ASSERT_FALSE(census.sharedBytes.empty()) << c.what;
    int64_t shared =
        *std::max_element(census.sharedBytes.begin(), census.sharedBytes.end());
    EXPECT_GT(shared, 0) << c.what;
    // 32 x 32 tiles, d = dv = 64, floats: K 64 x 33, V 64 x 32, scores and weights
    // 2 x 32 x 32, P.v 32 x 64, the state 32 x 66 (SchedulesCudaAttention.cpp).
    if (c.staticShared)
      EXPECT_EQ(shared, 4 * (64 * 33 + 64 * 32 + 2 * 32 * 32 + 32 * 64 + 32 * 66))
          << c.what;
  }
}

} // namespace
} // namespace kiln::halide_backend::test
