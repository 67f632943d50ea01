//===- LowerQuantizedLinearTest.cpp - kiln.quantized_linear as a kernel ---===//
//
// The int8 linear lowered and JIT-compiled, against the reference interpreter on fresh
// random inputs: row counts that take each path of the CPU schedule (matrix-vector,
// partial and full register tiles, a dynamic count with both), K of 512 and 2048 and one
// that is not a multiple of the 64-byte dot-product step, with and without a bias,
// rows of zeros and of a wide dynamic range, and the fusion groups it anchors or
// starts. The int32 sums are exact, so the results agree to f32 rounding (1e-5). Also:
// the CPU kernel is built from vpdpbusd, and a CUDA target is refused by name.
//
//===----------------------------------------------------------------------===//

#include "LowerTestSupport.h"

#include <cmath>
#include <fstream>
#include <sstream>

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

class QuantizedLinear : public HalideLower {
protected:
  /// Loads quantized_linear of an input `inputDims` x K (e.g. "?x") with an [n, K] i8
  /// weight, with or without a bias.
  void loadLinear(const std::string &inputDims, int64_t k, int64_t n, bool withBias) {
    std::string ks = std::to_string(k), ns = std::to_string(n);
    std::string x = tensor(inputDims + ks), w = tensor(ns + "x" + ks, "i8"),
                s = tensor(ns), y = tensor(inputDims + ns);
    std::vector<std::string> args = {x, w, s};
    if (withBias)
      args.push_back(s);
    load(args, y,
         "kiln.quantized_linear %arg0, %arg1, %arg2" +
             std::string(withBias ? ", %arg3" : "") + " : (" + x + ", " + w + ", " + s +
             (withBias ? ", " + s : "") + ") -> " + y);
  }

  /// The weight [n, k] (i8 values), its scales and a bias, fresh.
  std::vector<HostTensor> weights(int64_t n, int64_t k, bool withBias) {
    std::vector<HostTensor> w = {randomInts({n, k}, seed++, -127, 127),
                                 randomTensor({n}, seed++, 0.001f, 0.02f)};
    if (withBias)
      w.push_back(randomTensor({n}, seed++));
    return w;
  }

  /// check() on a fresh random input of `shape` and fresh weights.
  void checkShape(Shape shape, int64_t n, bool withBias) {
    int64_t k = shape.back();
    std::vector<HostTensor> inputs = {randomTensor(shape, seed++)};
    for (HostTensor &t : weights(n, k, withBias))
      inputs.push_back(std::move(t));
    check(inputs);
  }
};

TEST_F(QuantizedLinear, DynamicRowsK512WithBias) {
  // 70 outputs leave a partial column tile; 1, 3 and 8 rows take the matrix-vector
  // path, 24 and 31 register tiles (31: a last tile shifted inwards), 0 rows nothing.
  loadLinear("?x", 512, 70, /*withBias=*/true);
  for (int64_t rows : {1, 3, 8, 24, 31, 0})
    checkShape({rows, 512}, 70, true);
}

TEST_F(QuantizedLinear, DynamicRowsK2048WithoutBias) {
  loadLinear("?x", 2048, 40, /*withBias=*/false);
  for (int64_t rows : {1, 3, 8, 24, 31})
    checkShape({rows, 2048}, 40, false);
}

TEST_F(QuantizedLinear, StaticRows) {
  // A static count picks one path: matrix-vector for 1 and 3 rows, register tiles for
  // 24 and 70 (70: a block of 64 rows, then a partial one).
  for (int64_t rows : {1, 3, 24, 70}) {
    loadLinear(std::to_string(rows) + "x", 512, 30, /*withBias=*/true);
    checkShape({rows, 512}, 30, true);
  }
}

TEST_F(QuantizedLinear, DecodeStepAndBatchedRows) {
  // [B, 1, K] tiles the batch; [B, S, K] tiles S with B outside.
  loadLinear("?x1x", 512, 64, /*withBias=*/true);
  for (int64_t batch : {1, 3, 8})
    checkShape({batch, 1, 512}, 64, true);
  loadLinear("?x?x", 512, 64, /*withBias=*/false);
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{2, 9}, {3, 33}})
    checkShape({b, s, 512}, 64, false);
}

TEST_F(QuantizedLinear, PanelProductForManyRows) {
  // N a multiple of the 32-column panel: 16 rows or more take the packed-weight panel
  // (23: a last row tile shifted inwards), fewer the matrix-vector path beside it.
  loadLinear("?x", 512, 96, /*withBias=*/true);
  for (int64_t rows : {1, 8, 15, 16, 23, 40})
    checkShape({rows, 512}, 96, true);
  loadLinear("24x", 2048, 64, /*withBias=*/false);
  checkShape({24, 2048}, 64, false);
}

TEST_F(QuantizedLinear, ContractionNotAMultipleOfTheDotStepAndRank1) {
  // K = 100: the dot products' last 64-byte step is partial.
  loadLinear("?x", 100, 13, /*withBias=*/true);
  for (int64_t rows : {1, 5})
    checkShape({rows, 100}, 13, true);
  loadLinear("", 512, 19, /*withBias=*/true);
  checkShape({512}, 19, true);
}

TEST_F(QuantizedLinear, ZeroRowAndWideDynamicRange) {
  // A row of zeros quantizes to zeros (its result is the bias); the other rows span
  // six orders of magnitude, so most of their values quantize to 0 or +-1 and the
  // rounding of each is what decides the result.
  loadLinear("?x", 512, 48, /*withBias=*/true);
  HostTensor x = randomTensor({6, 512}, seed++);
  HostTensor exponents = randomTensor({6, 512}, seed++, -3.0f, 3.0f);
  for (size_t i = 0; i < x.f32.size(); ++i)
    x.f32[i] = std::copysign(std::pow(10.0f, exponents.f32[i]), x.f32[i]);
  std::fill(x.f32.begin() + 2 * 512, x.f32.begin() + 3 * 512, 0.0f);
  std::vector<HostTensor> inputs = {x};
  for (HostTensor &t : weights(48, 512, true))
    inputs.push_back(std::move(t));
  check(inputs);
}

/// quantized_linear with bias over [?, 512] -> [?, 64], then `epilogue` (ops over %l
/// and the group's fifth argument %r, a [?, 64] residual; the last one named %e).
std::string quantizedGroup(const std::string &epilogue) {
  std::string x = tensor("?x512"), w = tensor("64x512", "i8"), s = tensor("64"),
              y = tensor("?x64");
  return "kiln.fusion %arg0, %arg1, %arg2, %arg3, %arg4 : (" + x + ", " + w + ", " + s +
         ", " + s + ", " + y + ") -> " + y + " {\n^bb0(%x: " + x + ", %w: " + w +
         ", %s: " + s + ", %b: " + s + ", %r: " + y +
         "):\n  %l = kiln.quantized_linear %x, %w, %s, %b : (" + x + ", " + w + ", " + s +
         ", " + s + ") -> " + y + "\n" + epilogue + "\n  kiln.yield %e : " + y + "\n}";
}

const std::vector<std::string> kGroupArgs = {tensor("?x512"), tensor("64x512", "i8"),
                                             tensor("64"), tensor("64"), tensor("?x64")};

TEST_F(QuantizedLinear, FusedReluAndResidualEpilogue) {
  load(kGroupArgs, tensor("?x64"),
       quantizedGroup("  %a = kiln.relu %l : tensor<?x64xf32>\n"
                      "  %e = kiln.add %a, %r : (tensor<?x64xf32>, tensor<?x64xf32>) -> "
                      "tensor<?x64xf32>"));
  for (int64_t rows : {1, 3, 8, 31}) {
    std::vector<HostTensor> inputs = {randomTensor({rows, 512}, seed++)};
    for (HostTensor &t : weights(64, 512, true))
      inputs.push_back(std::move(t));
    inputs.push_back(randomTensor({rows, 64}, seed++));
    check(inputs);
  }
}

TEST_F(QuantizedLinear, FirstStageOfResidualAddLayerNorm) {
  // The group kiln-fuse-kernels forms after an attention's output projection:
  // layer_norm(r + quantized_linear(x)), the linear computed whole first.
  std::string x = tensor("?x512"), w = tensor("64x512", "i8"), s = tensor("64"),
              y = tensor("?x64");
  std::vector<std::string> args = kGroupArgs;
  args.insert(args.end(), {s, s});
  load(args, y,
       "kiln.fusion %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 : (" + x + ", " + w +
           ", " + s + ", " + s + ", " + y + ", " + s + ", " + s + ") -> " + y +
           " {\n^bb0(%x: " + x + ", %w: " + w + ", %s: " + s + ", %b: " + s +
           ", %r: " + y + ", %g: " + s + ", %beta: " + s +
           "):\n  %l = kiln.quantized_linear %x, %w, %s, %b : (" + x + ", " + w + ", " +
           s + ", " + s + ") -> " + y + "\n  %a = kiln.add %r, %l : (" + y + ", " + y +
           ") -> " + y +
           "\n  %n = kiln.layer_norm %a, %g, %beta {epsilon = 1.0e-5 : f32} : (" + y +
           ", " + s + ", " + s + ") -> " + y + "\n  kiln.yield %n : " + y + "\n}");
  for (int64_t rows : {1, 8, 24}) {
    std::vector<HostTensor> inputs = {randomTensor({rows, 512}, seed++)};
    for (HostTensor &t : weights(64, 512, true))
      inputs.push_back(std::move(t));
    inputs.push_back(randomTensor({rows, 64}, seed++));
    inputs.push_back(randomTensor({64}, seed++));
    inputs.push_back(randomTensor({64}, seed++));
    check(inputs);
  }
}

TEST(QuantizedLinearCodegen, CpuKernelUsesVnniDotProducts) {
  Halide::Target host = Halide::get_host_target();
  if (!host.has_feature(Halide::Target::AVX512_SapphireRapids))
    GTEST_SKIP() << "host target " << host.to_string()
                 << " lacks avx512_sapphirerapids (AVX512-VNNI): no vpdpbusd to emit";
  KernelHarness harness;
  std::string x = tensor("?x512"), w = tensor("512x512", "i8"), s = tensor("512");
  ASSERT_EQ(
      harness.load(oneOpModule({x, w, s, s}, x,
                               "kiln.quantized_linear %arg0, %arg1, %arg2, %arg3 : (" +
                                   x + ", " + w + ", " + s + ", " + s + ") -> " + x),
                   host),
      "");
  std::string path = scratchPath("quantized_linear.s");
  harness.pipeline.compile_to_assembly(path, harness.pipeline.infer_arguments(),
                                       "quantized_linear", host);
  std::ifstream file(path);
  std::stringstream assembly;
  assembly << file.rdbuf();
  EXPECT_NE(assembly.str().find("vpdpbusd"), std::string::npos)
      << "no vpdpbusd in the kernel's assembly (" << path << ")";
  // Only the EVEX zmm form: narrower ones may be VEX encoded (AVX-VNNI), which Zen 4
  // lacks.
  std::string line;
  while (std::getline(assembly, line))
    if (line.find("vpdpbusd") != std::string::npos)
      EXPECT_NE(line.find("%zmm"), std::string::npos) << "narrow dot product: " << line;
}

TEST(QuantizedLinearCodegen, CudaTargetIsRefusedByName) {
  KernelHarness harness;
  std::string x = tensor("?x64"), w = tensor("32x64", "i8"), s = tensor("32"),
              y = tensor("?x32");
  std::string error =
      harness.load(oneOpModule({x, w, s}, y,
                               "kiln.quantized_linear %arg0, %arg1, %arg2 : (" + x +
                                   ", " + w + ", " + s + ") -> " + y),
                   Halide::get_host_target().with_feature(Halide::Target::CUDA));
  EXPECT_NE(error.find("no CUDA schedule for quantized_linear"), std::string::npos)
      << error;
}

} // namespace
