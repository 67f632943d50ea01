//===- LowerTest.cpp - Lowered kernels against the reference interpreter --===//
//
// The ops of the attention core: matmul, elementwise, softmax, layer_norm, transpose,
// and the lowering's interface. Each test lowers one op, JIT-compiles its kernel once
// with the op's dynamic extents symbolic, and realizes it for several shapes: sizes off
// the vector width, size 1, batches, transposes, broadcasts. The oracle is the reference
// interpreter on the same one-op module, to max|a - b| / max|b| <= 1e-5
// (LowerTestSupport.h); LowerLayersTest.cpp tests the other ops.
//
//===----------------------------------------------------------------------===//

#include "LowerTestSupport.h"
#include "Plan.h"

#include <set>

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, MatmulBatchedDynamic) {
  load({"tensor<?x?x?xf32>", "tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.matmul %arg0, %arg1 : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> "
       "tensor<?x?x?xf32>");
  // (batch, m, k, n): sizes 1, off the 16-wide vectors, the 64 x 24 tiles, odd k.
  for (auto [b, m, k, n] : std::vector<std::array<int64_t, 4>>{{1, 1, 1, 1},
                                                               {2, 7, 5, 19},
                                                               {3, 30, 70, 100},
                                                               {1, 24, 64, 64},
                                                               {2, 25, 3, 65}})
    checkRandom({{b, m, k}, {b, k, n}});
}

TEST_F(HalideLower, MatmulLinearTransposedWeight) {
  // x . W^T with W [out, in]: a rank-2 weight shared by every batch row; 80 columns
  // leave a partial 64-column panel.
  load({"tensor<?x?x96xf32>", "tensor<80x96xf32>"}, "tensor<?x?x80xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x?x96xf32>, "
       "tensor<80x96xf32>) -> tensor<?x?x80xf32>");
  for (auto [b, s] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 3}, {3, 50}, {1, 24}})
    checkRandom({{b, s, 96}, {80, 96}});
}

TEST_F(HalideLower, MatmulDecodeStepRowsFromBatch) {
  // A static m of 1: the batch dimension supplies the tile rows.
  load({"tensor<?x1x64xf32>", "tensor<130x64xf32>"}, "tensor<?x1x130xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x1x64xf32>, "
       "tensor<130x64xf32>) -> tensor<?x1x130xf32>");
  for (int64_t b : {1, 5, 24, 31})
    checkRandom({{b, 1, 64}, {130, 64}});
}

TEST_F(HalideLower, MatmulDotFormStaticFewRows) {
  // Few static rows and a transposed rhs take the dot-product schedule; K = 20 leaves
  // a partial vector of k.
  load({"tensor<5x20xf32>", "tensor<33x20xf32>"}, "tensor<5x33xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<5x20xf32>, "
       "tensor<33x20xf32>) -> tensor<5x33xf32>");
  checkRandom({{5, 20}, {33, 20}});
}

TEST_F(HalideLower, MatmulTransposedRhsDynamicRows) {
  // Dynamic rows and a transposed rhs take the panel schedule, whose packing transposes
  // the rhs; 70 columns leave a partial panel, 61 rows a partial row tile.
  load({"tensor<?x?x256xf32>", "tensor<70x256xf32>"}, "tensor<?x?x70xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x?x256xf32>, "
       "tensor<70x256xf32>) -> tensor<?x?x70xf32>");
  for (auto [b, s] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 13}, {1, 30}, {2, 61}})
    checkRandom({{b, s, 256}, {70, 256}});
}

TEST_F(HalideLower, MatmulDecodeDynamicContraction) {
  // The decode-step dot-product schedule with a dynamic K: partial vectors of k.
  load({"tensor<?x1x?xf32>", "tensor<?x?xf32>"}, "tensor<?x1x?xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x1x?xf32>, "
       "tensor<?x?xf32>) -> tensor<?x1x?xf32>");
  for (auto [b, k, n] :
       std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {6, 35, 13}, {3, 0, 5}, {0, 4, 5}})
    checkRandom({{b, 1, k}, {n, k}});
}

TEST_F(HalideLower, MatmulDecodeAttentionScores) {
  // One query row per head against every key: static m = 1, rhs varying per batch.
  load({"tensor<?x2x1x16xf32>", "tensor<?x2x?x16xf32>"}, "tensor<?x2x1x?xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x2x1x16xf32>, "
       "tensor<?x2x?x16xf32>) -> tensor<?x2x1x?xf32>");
  checkRandom({{3, 2, 1, 16}, {3, 2, 1, 16}});
  checkRandom({{2, 2, 1, 16}, {2, 2, 37, 16}});
}

TEST_F(HalideLower, MatmulTransposeFlags) {
  // lhs [B, K, M] transposed, rhs [B, N, K] transposed.
  load({"tensor<?x?x?xf32>", "tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_lhs = true, transpose_rhs = true} : "
       "(tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>");
  for (auto [b, m, k, n] :
       std::vector<std::array<int64_t, 4>>{{1, 1, 1, 1}, {2, 9, 17, 33}, {1, 40, 8, 70}})
    checkRandom({{b, k, m}, {b, n, k}});
}

TEST_F(HalideLower, MatmulTransposeLhsOnly) {
  load({"tensor<?x?xf32>", "tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_lhs = true} : (tensor<?x?xf32>, "
       "tensor<?x?xf32>) -> tensor<?x?xf32>");
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {13, 29, 47}})
    checkRandom({{k, m}, {k, n}});
}

TEST_F(HalideLower, MatmulBroadcastBatch) {
  // Batch dims broadcast both ways: lhs [2, 1, M, K] and rhs [3, K, N] give [2, 3, M, N].
  load({"tensor<2x1x?x?xf32>", "tensor<3x?x?xf32>"}, "tensor<2x3x?x?xf32>",
       "kiln.matmul %arg0, %arg1 : (tensor<2x1x?x?xf32>, tensor<3x?x?xf32>) -> "
       "tensor<2x3x?x?xf32>");
  checkRandom({{2, 1, 5, 7}, {3, 7, 18}});
  checkRandom({{2, 1, 26, 3}, {3, 3, 1}});
}

TEST_F(HalideLower, MatmulRank2LhsRank3Rhs) {
  load({"tensor<?x?xf32>", "tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.matmul %arg0, %arg1 : (tensor<?x?xf32>, tensor<?x?x?xf32>) -> "
       "tensor<?x?x?xf32>");
  checkRandom({{6, 11}, {4, 11, 20}});
}

TEST_F(HalideLower, MatmulStaticSmall) {
  load(
      {"tensor<5x3xf32>", "tensor<3x7xf32>"}, "tensor<5x7xf32>",
      "kiln.matmul %arg0, %arg1 : (tensor<5x3xf32>, tensor<3x7xf32>) -> tensor<5x7xf32>");
  checkRandom({{5, 3}, {3, 7}});
}

TEST_F(HalideLower, MatmulAttentionScores) {
  // q . k^T per head: the rhs varies along both batch dims.
  load({"tensor<?x2x?x16xf32>", "tensor<?x2x?x16xf32>"}, "tensor<?x2x?x?xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x2x?x16xf32>, "
       "tensor<?x2x?x16xf32>) -> tensor<?x2x?x?xf32>");
  checkRandom({{2, 2, 9, 16}, {2, 2, 13, 16}});
  checkRandom({{1, 2, 1, 16}, {1, 2, 70, 16}});
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, AddBiasBroadcast) {
  load({"tensor<?x?x?xf32>", "tensor<?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.add %arg0, %arg1 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 17}, Shape{4, 5, 33}, Shape{1, 2, 64}})
    checkRandom({s, {s[2]}});
}

TEST_F(HalideLower, AddStaticOnesBroadcast) {
  // [?, 1, D] + [S, D]: the static 1 broadcasts, the missing leading dim too.
  load({"tensor<?x1x?xf32>", "tensor<?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.add %arg0, %arg1 : (tensor<?x1x?xf32>, tensor<?x?xf32>) -> "
       "tensor<?x?x?xf32>");
  checkRandom({{3, 1, 20}, {7, 20}});
  checkRandom({{1, 1, 1}, {1, 1}});
}

TEST_F(HalideLower, MulStaticBroadcastBothWays) {
  load({"tensor<4x1x8xf32>", "tensor<3x1xf32>"}, "tensor<4x3x8xf32>",
       "kiln.mul %arg0, %arg1 : (tensor<4x1x8xf32>, tensor<3x1xf32>) -> "
       "tensor<4x3x8xf32>");
  checkRandom({{4, 1, 8}, {3, 1}});
}

TEST_F(HalideLower, MulSameShape) {
  load({"tensor<?x?xf32>", "tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.mul %arg0, %arg1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>");
  for (Shape s : {Shape{1, 1}, Shape{3, 17}, Shape{300, 70}})
    checkRandom({s, s});
}

TEST_F(HalideLower, Scale) {
  load({"tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.scale %arg0 {factor = 0.125 : f32} : tensor<?x?xf32>");
  for (Shape s : {Shape{1, 1}, Shape{5, 31}, Shape{2, 2048}})
    checkRandom({s});
}

TEST_F(HalideLower, Relu) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>", "kiln.relu %arg0 : tensor<?x?x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 15}, Shape{1, 40, 130}})
    checkRandom({s});
}

TEST_F(HalideLower, ReluRank1Static) {
  load({"tensor<40000xf32>"}, "tensor<40000xf32>", "kiln.relu %arg0 : tensor<40000xf32>");
  checkRandom({{40000}});
}

//===----------------------------------------------------------------------===//
// softmax
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, SoftmaxLastAxis) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.softmax %arg0 {axis = 2 : i64} : tensor<?x?x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 17}, Shape{1, 5, 64}, Shape{2, 9, 100},
                  Shape{2, 0, 5}, Shape{2, 3, 0}})
    checkRandom({s});
}

TEST_F(HalideLower, SoftmaxMaskedRows) {
  // A fully masked row gives zeros, a partly masked one ignores its -inf entries, and
  // large logits do not overflow.
  load({"tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.softmax %arg0 {axis = 1 : i64} : tensor<?x?xf32>");
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 5, 37}) {
    HostTensor x = randomTensor({3, n}, seed++, -50.0f, 80.0f);
    for (int64_t j = 0; j < n; ++j) {
      x.f32[j] = -inf;
      if (j % 2)
        x.f32[2 * n + j] = -inf;
    }
    x.f32[n] = 88.0f; // exp(88) is near float's limit; unshifted it would overflow
    check({x});
    HostTensor actual = harness.run({x}, {3, n});
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(actual.f32[j], 0.0f) << "masked row, column " << j;
  }
}

TEST_F(HalideLower, SoftmaxRowsWithNaNOrInfinity) {
  // A NaN or +inf makes the whole row NaN, as in the interpreter and PyTorch; the other
  // rows are untouched.
  load({"tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.softmax %arg0 {axis = 1 : i64} : tensor<?x?xf32>");
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t n : {1, 5, 37}) {
    HostTensor x = randomTensor({3, n}, seed++, -5.0f, 5.0f);
    x.f32[n / 2] = std::numeric_limits<float>::quiet_NaN();
    x.f32[n + n - 1] = inf;
    HostTensor actual = harness.run({x}, {3, n});
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_TRUE(std::isnan(actual.f32[j])) << "NaN row, column " << j;
      EXPECT_TRUE(std::isnan(actual.f32[n + j])) << "+inf row, column " << j;
      EXPECT_TRUE(std::isfinite(actual.f32[2 * n + j])) << "clean row, column " << j;
    }
  }
}

TEST_F(HalideLower, SoftmaxInnerAxis) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.softmax %arg0 {axis = 1 : i64} : tensor<?x?x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 7, 19}, Shape{3, 33, 1}})
    checkRandom({s});
}

TEST_F(HalideLower, SoftmaxOutermostAxis) {
  load({"tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.softmax %arg0 {axis = 0 : i64} : tensor<?x?xf32>");
  for (Shape s : {Shape{1, 1}, Shape{9, 40}})
    checkRandom({s});
}

TEST_F(HalideLower, SoftmaxRank1) {
  load({"tensor<?xf32>"}, "tensor<?xf32>",
       "kiln.softmax %arg0 {axis = 0 : i64} : tensor<?xf32>");
  for (Shape s : {Shape{1}, Shape{50}})
    checkRandom({s});
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, LayerNormStaticFeatures) {
  load({"tensor<?x?x512xf32>", "tensor<512xf32>", "tensor<512xf32>"},
       "tensor<?x?x512xf32>",
       "kiln.layer_norm %arg0, %arg1, %arg2 {epsilon = 1.0e-05 : f32} : "
       "(tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>");
  for (Shape s : {Shape{1, 1, 512}, Shape{2, 7, 512}})
    checkRandom({s, {512}, {512}});
}

TEST_F(HalideLower, LayerNormDynamicFeatures) {
  load({"tensor<?x?xf32>", "tensor<?xf32>", "tensor<?xf32>"}, "tensor<?x?xf32>",
       "kiln.layer_norm %arg0, %arg1, %arg2 {epsilon = 1.0e-05 : f32} : "
       "(tensor<?x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?x?xf32>");
  for (int64_t d : {1, 17, 100})
    checkRandom({{5, d}, {d}, {d}});
}

TEST_F(HalideLower, LayerNormLargeMean) {
  // Values near 1000 with unit spread: a one-pass E[x^2] - E[x]^2 would lose the
  // variance to cancellation.
  load({"tensor<?x64xf32>", "tensor<64xf32>", "tensor<64xf32>"}, "tensor<?x64xf32>",
       "kiln.layer_norm %arg0, %arg1, %arg2 {epsilon = 1.0e-05 : f32} : "
       "(tensor<?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64xf32>");
  HostTensor x = randomTensor({4, 64}, seed++, 999.0f, 1001.0f);
  check({x, randomTensor({64}, seed++), randomTensor({64}, seed++)});
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, TransposeHeadsKeepsRows) {
  load({"tensor<?x?x4x?xf32>"}, "tensor<?x4x?x?xf32>",
       "kiln.transpose %arg0 {permutation = [0, 2, 1, 3]} : (tensor<?x?x4x?xf32>) -> "
       "tensor<?x4x?x?xf32>");
  for (Shape s : {Shape{1, 1, 4, 1}, Shape{2, 5, 4, 16}, Shape{3, 7, 4, 33}})
    checkRandom({s});
}

TEST_F(HalideLower, Transpose2D) {
  load({"tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.transpose %arg0 {permutation = [1, 0]} : (tensor<?x?xf32>) -> "
       "tensor<?x?xf32>");
  for (Shape s : {Shape{1, 1}, Shape{17, 33}, Shape{64, 48}, Shape{1, 70}})
    checkRandom({s});
}

TEST_F(HalideLower, TransposeRotate3D) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.transpose %arg0 {permutation = [2, 0, 1]} : (tensor<?x?x?xf32>) -> "
       "tensor<?x?x?xf32>");
  for (Shape s : {Shape{2, 3, 4}, Shape{5, 17, 20}})
    checkRandom({s});
}

TEST_F(HalideLower, TransposeInt32) {
  load({"tensor<?x3xi32>"}, "tensor<3x?xi32>",
       "kiln.transpose %arg0 {permutation = [1, 0]} : (tensor<?x3xi32>) -> "
       "tensor<3x?xi32>");
  for (int64_t n : {1, 20}) {
    HostTensor x = HostTensor::ints({n, 3});
    x.i32.resize(n * 3);
    for (int64_t i = 0; i < n * 3; ++i)
      x.i32[i] = static_cast<int32_t>(i * 7 - 11);
    check({x});
  }
}

//===----------------------------------------------------------------------===//
// Signatures, kernels and targets
//===----------------------------------------------------------------------===//

class HalideLowerInterface : public ::testing::Test {
protected:
  HalideLowerInterface() { context.loadDialect<kiln::KilnDialect>(); }

  /// The ops of @main in `text`, terminator excluded.
  std::vector<mlir::Operation *> ops(const std::string &text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    std::vector<mlir::Operation *> result;
    if (!module) {
      ADD_FAILURE() << "cannot parse:\n" << text;
      return result;
    }
    for (mlir::Operation &op : module->lookupSymbol<mlir::FuncOp>("main").front())
      result.push_back(&op);
    result.pop_back();
    return result;
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(HalideLowerInterface, SignatureIgnoresSpelledDefaults) {
  std::vector<mlir::Operation *> m = ops(R"mlir(
    func @main(%x: tensor<?x512xf32>, %w: tensor<512x512xf32>) -> tensor<?x512xf32> {
      %0 = kiln.matmul %x, %w : (tensor<?x512xf32>, tensor<512x512xf32>) -> tensor<?x512xf32>
      %1 = kiln.matmul %0, %w {transpose_lhs = false}
          : (tensor<?x512xf32>, tensor<512x512xf32>) -> tensor<?x512xf32>
      %2 = kiln.matmul %1, %w {transpose_rhs = true}
          : (tensor<?x512xf32>, tensor<512x512xf32>) -> tensor<?x512xf32>
      %3 = kiln.scale %2 {factor = 0.125 : f32} : tensor<?x512xf32>
      %4 = kiln.scale %3 {factor = 0.25 : f32} : tensor<?x512xf32>
      %5 = kiln.scale %4 {factor = 0.125 : f32} : tensor<?x512xf32>
      kiln.return %5 : tensor<?x512xf32>
    })mlir");
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(kernelSignature(m[0]), kernelSignature(m[1]));
  EXPECT_NE(kernelSignature(m[0]), kernelSignature(m[2]));
  EXPECT_NE(kernelSignature(m[3]), kernelSignature(m[4]));
  EXPECT_EQ(kernelSignature(m[3]), kernelSignature(m[5]));
}

TEST_F(HalideLowerInterface, SignatureSeesTypes) {
  std::vector<mlir::Operation *> m = ops(R"mlir(
    func @main(%x: tensor<?x512xf32>, %y: tensor<4x512xf32>) -> tensor<4x512xf32> {
      %0 = kiln.relu %x : tensor<?x512xf32>
      %1 = kiln.relu %y : tensor<4x512xf32>
      kiln.return %1 : tensor<4x512xf32>
    })mlir");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_NE(kernelSignature(m[0]), kernelSignature(m[1]));
}

TEST_F(HalideLowerInterface, ViewsAndParametersAreNotKernels) {
  std::vector<mlir::Operation *> m = ops(R"mlir(
    func @main(%x: tensor<?x512xf32>) -> tensor<?x8x64xf32> {
      %w = kiln.parameter "w" : tensor<512xf32>
      %0 = kiln.add %x, %w : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
      %1 = kiln.reshape %0 {shape = [0, 8, 64]} : (tensor<?x512xf32>) -> tensor<?x8x64xf32>
      kiln.return %1 : tensor<?x8x64xf32>
    })mlir");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_FALSE(needsKernel(m[0]));
  EXPECT_TRUE(needsKernel(m[1]));
  EXPECT_FALSE(needsKernel(m[2]));
}

TEST_F(HalideLowerInterface, GpuTargetIsAnErrorNamingTheKernelKind) {
  std::vector<mlir::Operation *> m = ops(R"mlir(
    func @main(%x: tensor<?x512xf32>, %w: tensor<512x512xf32>,
               %q: tensor<1x4x8x64xf32>) -> tensor<1x4x8x64xf32> {
      %0 = kiln.relu %x : tensor<?x512xf32>
      %1 = kiln.matmul %0, %w : (tensor<?x512xf32>, tensor<512x512xf32>) -> tensor<?x512xf32>
      %2 = kiln.attention %q, %q, %q {scale = 0.125 : f32}
          : (tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>)
          -> tensor<1x4x8x64xf32>
      kiln.return %2 : tensor<1x4x8x64xf32>
    })mlir");
  ASSERT_EQ(m.size(), 3u);
  std::vector<std::string> messages;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    messages.push_back(d.str());
    return mlir::success();
  });
  Halide::Target cuda = Halide::get_host_target().with_feature(Halide::Target::CUDA);
  // Every kind of kernel has a CUDA schedule.
  for (mlir::Operation *op : m)
    EXPECT_TRUE(mlir::succeeded(lowerOp(op, cuda))) << op->getName().getStringRef().str();
  EXPECT_TRUE(messages.empty()) << messages.front();
  // A GPU API other than CUDA has no schedule family: each kind is named.
  Halide::Target opencl = Halide::get_host_target().with_feature(Halide::Target::OpenCL);
  for (mlir::Operation *op : m)
    EXPECT_TRUE(mlir::failed(lowerOp(op, opencl))) << op->getName().getStringRef().str();
  ASSERT_EQ(messages.size(), 3u);
  const char *kinds[] = {"pointwise", "matmul", "attention"};
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(messages[i].find(std::string("no GPU schedule for ") + kinds[i] +
                               " kernels on target"),
              std::string::npos)
        << messages[i];
  // The host target (no GPU feature) lowers the same ops.
  for (mlir::Operation *op : m)
    EXPECT_TRUE(mlir::succeeded(lowerOp(op, Halide::get_host_target())))
        << op->getName().getStringRef().str();
}

/// The diagnostics of one call, with the line each points at.
struct Diagnostics {
  explicit Diagnostics(mlir::MLIRContext &context)
      : handler(&context, [this](mlir::Diagnostic &d) {
          auto loc = d.getLocation().dyn_cast<mlir::FileLineColLoc>();
          entries.push_back({d.str(), loc ? static_cast<int>(loc.getLine()) : -1});
          return mlir::success();
        }) {}
  std::vector<std::pair<std::string, int>> entries;
  mlir::ScopedDiagnosticHandler handler;
};

TEST_F(HalideLowerInterface, OpWithoutLoweringIsAnErrorAtItsLine) {
  context.allowUnregisteredDialects();
  // Line 3 holds an op that no table entry lowers; line 4 a view, which has none either.
  std::vector<mlir::Operation *> m = ops(R"mlir(
    func @main(%x: tensor<4x8xf32>) -> tensor<32xf32> {
      %0 = "test.mystery"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      %1 = kiln.reshape %0 {shape = [32]} : (tensor<4x8xf32>) -> tensor<32xf32>
      kiln.return %1 : tensor<32xf32>
    })mlir");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_FALSE(needsKernel(m[0]));
  Diagnostics diagnostics(context);
  EXPECT_TRUE(mlir::failed(lowerOp(m[0], Halide::get_host_target())));
  EXPECT_TRUE(mlir::failed(lowerOp(m[1], Halide::get_host_target())));
  ASSERT_EQ(diagnostics.entries.size(), 2u);
  EXPECT_EQ(diagnostics.entries[0].first,
            "the Halide backend has no lowering for 'test.mystery'");
  EXPECT_EQ(diagnostics.entries[0].second, 3);
  EXPECT_EQ(diagnostics.entries[1].first,
            "the Halide backend has no lowering for 'kiln.reshape'");
  EXPECT_EQ(diagnostics.entries[1].second, 4);
}

TEST_F(HalideLowerInterface, PlanRejectsOpWithoutLowering) {
  context.allowUnregisteredDialects();
  ops(R"mlir(
    func @main(%x: tensor<4x8xf32> {kiln.name = "x"}) -> (tensor<4x8xf32> {kiln.name = "y"}) {
      %0 = kiln.relu %x : tensor<4x8xf32>
      %1 = "test.mystery"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf32>
      kiln.return %1 : tensor<4x8xf32>
    })mlir");
  ASSERT_TRUE(module);
  Diagnostics diagnostics(context);
  EXPECT_TRUE(mlir::failed(planModel(*module, "mystery")));
  ASSERT_EQ(diagnostics.entries.size(), 1u);
  EXPECT_NE(diagnostics.entries[0].first.find("no kernel for 'test.mystery'"),
            std::string::npos)
      << diagnostics.entries[0].first;
  EXPECT_EQ(diagnostics.entries[0].second, 4);
}

TEST_F(HalideLowerInterface, EveryKilnOpButViewsAndBookkeepingHasALowering) {
  // Derived from the dialect, so that an op added to KilnOps.td without a lowering
  // fails here rather than in the first model that uses it.
  const std::set<std::string> noKernel = {
      "kiln.parameter",  "kiln.reshape",       "kiln.return", "kiln.state_alloc",
      "kiln.state_read", "kiln.unpack_panels", "kiln.yield"};
  int kilnOps = 0;
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "kiln")
      continue;
    ++kilnOps;
    mlir::OperationState state(mlir::UnknownLoc::get(&context), name);
    mlir::Operation *op = mlir::Operation::create(state);
    std::string opName = name.getStringRef().str();
    EXPECT_EQ(needsKernel(op), noKernel.count(opName) == 0) << opName;
    op->destroy();
  }
  EXPECT_GT(kilnOps, static_cast<int>(noKernel.size()));
}

TEST_F(HalideLower, MismatchedContractionIsARuntimeError) {
  // Both K are dynamic; the kernel requires them equal instead of reading past one.
  load(
      {"tensor<?x?xf32>", "tensor<?x?xf32>"}, "tensor<?x?xf32>",
      "kiln.matmul %arg0, %arg1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>");
  EXPECT_ANY_THROW(
      harness.run({randomTensor({4, 8}, 1), randomTensor({9, 5}, 2)}, {4, 5}));
}

} // namespace
