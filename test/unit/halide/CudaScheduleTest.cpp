//===- CudaScheduleTest.cpp - The CUDA schedules compile, all on the GPU --===//
//
// No GPU is needed: each test lowers one op (or one kiln.fusion group) for host-cuda
// and compiles its pipeline to a Halide module, which compiles the kernels to PTX (so
// an invalid schedule fails here) and leaves the host code as a statement. The test
// counts its kernel launches and checks that the host code stores to no buffer and
// copies none back: a stage that a schedule left unmapped would be a host loop
// between copies of its buffers. Whether the kernels compute the right values needs a
// device (tools/run-gpu-tests.sh).
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include <gtest/gtest.h>

#include <set>

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;
using namespace Halide::Internal;

namespace {

/// The GPU launches of a compiled pipeline, the buffers its host code stores to and
/// whether it copies a buffer back to the host.
class LaunchCounter : public IRVisitor {
public:
  int launches = 0;
  bool copiesToHost = false;
  std::set<std::string> hostStores;

private:
  using IRVisitor::visit;

  void visit(const Call *call) override {
    launches += call->name == "halide_cuda_run";
    copiesToHost |= call->name == "halide_copy_to_host";
    IRVisitor::visit(call);
  }

  void visit(const Store *store) override {
    // Halide's own bookkeeping of the dynamic shared memory size is host code.
    if (!ends_with(store->name, ".shared_size"))
      hostStores.insert(store->name);
    IRVisitor::visit(store);
  }
};

class CudaSchedule : public ::testing::Test {
protected:
  /// Lowers the op of a one-op module for host-cuda and compiles it (the kernels to
  /// PTX); fails the test if the lowering fails.
  LaunchCounter compile(const std::vector<std::string> &argTypes,
                        const std::string &resultType, const std::string &op) {
    std::string text = oneOpModule(argTypes, resultType, op);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text, &harness.context);
    if (!module) {
      ADD_FAILURE() << "cannot parse:\n" << text;
      return {};
    }
    std::string diagnostics;
    mlir::ScopedDiagnosticHandler handler(&harness.context, [&](mlir::Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
    auto func = module->lookupSymbol<mlir::FuncOp>("main");
    mlir::FailureOr<LoweredKernel> kernel = lowerOp(&func.front().front(), target);
    if (mlir::failed(kernel)) {
      ADD_FAILURE() << "lowering for " << target.to_string()
                    << " failed: " << diagnostics;
      return {};
    }
    std::vector<Halide::Argument> args(kernel->inputs.begin(), kernel->inputs.end());
    Halide::Module compiled =
        Halide::Pipeline(kernel->output).compile_to_module(args, "kernel", target);
    LaunchCounter counter;
    for (const LoweredFunc &f : compiled.functions())
      f.body.accept(&counter);
    return counter;
  }

  /// compile()'s launches; fails the test if a stage is computed on the host.
  int launches(const std::vector<std::string> &argTypes, const std::string &resultType,
               const std::string &op) {
    LaunchCounter counter = compile(argTypes, resultType, op);
    for (const std::string &name : counter.hostStores)
      ADD_FAILURE() << "'" << name << "' is computed on the host in\n" << op;
    EXPECT_FALSE(counter.copiesToHost) << "a buffer is copied back to the host in\n"
                                       << op;
    return counter.launches;
  }

  KernelHarness harness;
  Halide::Target target{"host-cuda-cuda_capability_70"};
};

TEST_F(CudaSchedule, PointwiseIsOneLaunch) {
  EXPECT_EQ(launches({"tensor<?x?x512xf32>", "tensor<512xf32>"}, "tensor<?x?x512xf32>",
                     "kiln.add %arg0, %arg1 : (tensor<?x?x512xf32>, tensor<512xf32>) -> "
                     "tensor<?x?x512xf32>"),
            1);
  // A row-preserving transpose (a head split) and a gather of proven ids (a range)
  // are pointwise too.
  EXPECT_EQ(launches({"tensor<?x?x8x64xf32>"}, "tensor<?x8x?x64xf32>",
                     "kiln.transpose %arg0 {permutation = [0, 2, 1, 3]} : "
                     "(tensor<?x?x8x64xf32>) -> tensor<?x8x?x64xf32>"),
            1);
}

TEST_F(CudaSchedule, CheckedEmbeddingChecksItsIdsOnTheHost) {
  // Device code cannot raise the out-of-range message: the check is the one host
  // stage, and the gather is one launch.
  LaunchCounter counter =
      compile({"tensor<1000x64xf32>", "tensor<?x?xi32>"}, "tensor<?x?x64xf32>",
              "kiln.embedding %arg0, %arg1 : (tensor<1000x64xf32>, tensor<?x?xi32>) -> "
              "tensor<?x?x64xf32>");
  EXPECT_EQ(counter.launches, 1);
  EXPECT_EQ(counter.hostStores, std::set<std::string>{"checked_ids"});
}

TEST_F(CudaSchedule, TransposeOfTheInnermostDimensionIsOneLaunch) {
  EXPECT_EQ(launches({"tensor<?x?xf32>"}, "tensor<?x?xf32>",
                     "kiln.transpose %arg0 {permutation = [1, 0]} : (tensor<?x?xf32>) -> "
                     "tensor<?x?xf32>"),
            1);
  EXPECT_EQ(launches({"tensor<?x8x?x64xf32>"}, "tensor<?x8x64x?xf32>",
                     "kiln.transpose %arg0 {permutation = [0, 1, 3, 2]} : "
                     "(tensor<?x8x?x64xf32>) -> tensor<?x8x64x?xf32>"),
            1);
}

TEST_F(CudaSchedule, ConcatIsOneLaunchPerOperand) {
  EXPECT_EQ(launches({"tensor<?x?x512xf32>", "tensor<?x?x512xf32>"},
                     "tensor<?x?x1024xf32>",
                     "kiln.concat %arg0, %arg1 {axis = 2 : i64} : (tensor<?x?x512xf32>, "
                     "tensor<?x?x512xf32>) -> tensor<?x?x1024xf32>"),
            2);
  EXPECT_EQ(launches({"tensor<?x?xi32>", "tensor<?x1xi32>", "tensor<?x2xi32>"},
                     "tensor<?x?xi32>",
                     "kiln.concat %arg0, %arg1, %arg2 {axis = 1 : i64} : "
                     "(tensor<?x?xi32>, tensor<?x1xi32>, tensor<?x2xi32>) -> "
                     "tensor<?x?xi32>"),
            3);
}

TEST_F(CudaSchedule, MatmulStaticAndDynamic) {
  // Static: one launch. Dynamic: the empty-product specialization is a second one.
  EXPECT_EQ(launches({"tensor<128x256xf32>", "tensor<256x512xf32>"},
                     "tensor<128x512xf32>",
                     "kiln.matmul %arg0, %arg1 : (tensor<128x256xf32>, "
                     "tensor<256x512xf32>) -> tensor<128x512xf32>"),
            1);
  EXPECT_EQ(launches({"tensor<?x?x?xf32>", "tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
                     "kiln.matmul %arg0, %arg1 : (tensor<?x?x?xf32>, "
                     "tensor<?x?x?xf32>) -> tensor<?x?x?xf32>"),
            2);
  // Both operands transposed, and a tile shrunk to 5 static rows of a plain rhs.
  EXPECT_EQ(launches({"tensor<?x?x?xf32>", "tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
                     "kiln.matmul %arg0, %arg1 {transpose_lhs = true, transpose_rhs = "
                     "true} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> "
                     "tensor<?x?x?xf32>"),
            2);
  EXPECT_EQ(
      launches({"tensor<5x20xf32>", "tensor<20x33xf32>"}, "tensor<5x33xf32>",
               "kiln.matmul %arg0, %arg1 : (tensor<5x20xf32>, tensor<20x33xf32>) -> "
               "tensor<5x33xf32>"),
      1);
}

TEST_F(CudaSchedule, LinearWithTransposedWeight) {
  EXPECT_EQ(launches({"tensor<?x?x512xf32>", "tensor<2048x512xf32>", "tensor<2048xf32>"},
                     "tensor<?x?x2048xf32>",
                     "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x?x512xf32>, "
                     "tensor<2048x512xf32>, tensor<2048xf32>) -> tensor<?x?x2048xf32>"),
            2);
}

TEST_F(CudaSchedule, Bf16WeightUnderBothSchedules) {
  // A bf16 weight is read as f32 where each schedule reads it: staged in shared memory
  // by the tiled product (many rows, and the empty-product launch), loaded by each
  // lane of the matrix-vector one (a decode step).
  EXPECT_EQ(launches({"tensor<?x?x512xf32>", "tensor<2048x512xbf16>", "tensor<2048xf32>"},
                     "tensor<?x?x2048xf32>",
                     "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x?x512xf32>, "
                     "tensor<2048x512xbf16>, tensor<2048xf32>) -> tensor<?x?x2048xf32>"),
            2);
  EXPECT_EQ(launches({"tensor<?x1x512xf32>", "tensor<8000x512xbf16>"},
                     "tensor<?x1x8000xf32>",
                     "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : "
                     "(tensor<?x1x512xf32>, tensor<8000x512xbf16>) -> "
                     "tensor<?x1x8000xf32>"),
            1);
}

TEST_F(CudaSchedule, FusedLinearBiasReluIsOneKernel) {
  std::string x = "tensor<?x?x512xf32>", w = "tensor<512x512xf32>", b = "tensor<512xf32>";
  EXPECT_EQ(launches({x, w, b}, x,
                     "kiln.fusion %arg0, %arg1, %arg2 : (" + x + ", " + w + ", " + b +
                         ") -> " + x + " {\n^bb0(%x: " + x + ", %w: " + w + ", %b: " + b +
                         "):\n  %l = kiln.linear %x, %w, %b : (" + x + ", " + w + ", " +
                         b + ") -> " + x + "\n  %e = kiln.relu %l : " + x +
                         "\n  kiln.yield %e : " + x + "\n}"),
            2);
}

TEST_F(CudaSchedule, FusedLayerNormLogitsIsALaunchPerStage) {
  // The final LayerNorm as the logits product's first stage: the norm's rows, computed
  // whole on the device, then the decode step's matrix-vector product reads them.
  std::string x = "tensor<?x1x512xf32>", v = "tensor<512xf32>",
              e = "tensor<8000x512xf32>", y = "tensor<?x1x8000xf32>";
  EXPECT_EQ(launches({x, v, v, e}, y,
                     "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (" + x + ", " + v + ", " +
                         v + ", " + e + ") -> " + y + " {\n^bb0(%x: " + x + ", %g: " + v +
                         ", %b: " + v + ", %e: " + e +
                         "):\n  %n = kiln.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f32} "
                         ": (" +
                         x + ", " + v + ", " + v + ") -> " + x +
                         "\n  %l = kiln.matmul %n, %e {transpose_rhs = true} : (" + x +
                         ", " + e + ") -> " + y + "\n  kiln.yield %l : " + y + "\n}"),
            2);
}

TEST_F(CudaSchedule, MatrixVectorForFewRows) {
  // One row (a rank-1 linear: the product, then its copy into the 1-D result), a
  // static 3 rows, and a decode step whose rows come from the batch (only the batch
  // is dynamic: an empty one leaves nothing to launch, so there is no second kernel).
  EXPECT_EQ(launches({"tensor<512xf32>", "tensor<512x512xf32>", "tensor<512xf32>"},
                     "tensor<512xf32>",
                     "kiln.linear %arg0, %arg1, %arg2 : (tensor<512xf32>, "
                     "tensor<512x512xf32>, tensor<512xf32>) -> tensor<512xf32>"),
            2);
  EXPECT_EQ(launches({"tensor<3x512xf32>", "tensor<2048x512xf32>"}, "tensor<3x2048xf32>",
                     "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : "
                     "(tensor<3x512xf32>, tensor<2048x512xf32>) -> tensor<3x2048xf32>"),
            1);
  EXPECT_EQ(launches({"tensor<?x1x512xf32>", "tensor<32000x512xf32>"},
                     "tensor<?x1x32000xf32>",
                     "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : "
                     "(tensor<?x1x512xf32>, tensor<32000x512xf32>) -> "
                     "tensor<?x1x32000xf32>"),
            1);
}

} // namespace
