//===- LowerBf16WeightsTest.cpp - linear and matmul over bf16 weights -----===//
//
// A bf16 weight (kiln-weight-precision's) is read as the f32 values it holds, so a
// kernel over one must equal the interpreter to f32 rounding, as over an f32 weight:
// in every schedule that a row count picks (matrix-vector for a decode step's 1 to 3
// rows, the register tile from 4, the panel for many rows and a long contraction),
// with K = 512 and 2048 as in the base model, inside kernel groups, and for the tied
// output projection (a matmul with transpose_rhs). Weights are fresh random values
// rounded to bf16, as a converted checkpoint holds them; the kernel receives them as a
// bf16 buffer (KernelHarness::toBuffer).
//
//===----------------------------------------------------------------------===//

#include "LowerTestSupport.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

class HalideLowerBf16 : public HalideLower {
protected:
  /// check() on fresh random inputs of `shapes`, the one at `weight` rounded to bf16.
  void checkBf16Weight(const std::vector<Shape> &shapes, size_t weight) {
    std::vector<HostTensor> inputs;
    for (const Shape &shape : shapes)
      inputs.push_back(randomTensor(shape, seed++));
    inputs[weight] = roundedToBf16(std::move(inputs[weight]));
    check(inputs);
  }

  /// Loads linear(x [rows..., k], W bf16 [n, k], b [n]) alone, or followed by
  /// `epilogue` (ops over the linear's `%l` and the group's further operands
  /// `extraTypes`, as %r, %g, %be; the last result `%e`) in a kiln.fusion group.
  void loadLinear(const std::string &rows, int64_t k, int64_t n,
                  const std::string &epilogue = "",
                  const std::vector<std::string> &extraTypes = {}) {
    std::string x = tensor(rows + std::to_string(k));
    std::string w = tensor(std::to_string(n) + "x" + std::to_string(k), "bf16");
    std::string b = tensor(std::to_string(n)), y = tensor(rows + std::to_string(n));
    std::string types = "(" + x + ", " + w + ", " + b + ") -> " + y;
    if (epilogue.empty()) {
      load({x, w, b}, y, "kiln.linear %arg0, %arg1, %arg2 : " + types);
      return;
    }
    std::string linear = "kiln.linear %x, %w, %b : " + types;
    std::vector<std::string> args = {x, w, b};
    args.insert(args.end(), extraTypes.begin(), extraTypes.end());
    std::string operands, argTypes, block;
    const char *names[] = {"%x", "%w", "%b", "%r", "%g", "%be"};
    for (size_t i = 0; i < args.size(); ++i) {
      operands += (i ? ", %arg" : "%arg") + std::to_string(i);
      argTypes += (i ? ", " : "") + args[i];
      block += (i ? ", " : "") + std::string(names[i]) + ": " + args[i];
    }
    load(args, y,
         "kiln.fusion " + operands + " : (" + argTypes + ") -> " + y + " {\n^bb0(" +
             block + "):\n  %l = " + linear + "\n" + epilogue +
             "\n  kiln.yield %e : " + y + "\n}");
  }
};

TEST_F(HalideLowerBf16, LinearDecodeStepRows) {
  // [B, 1, K] x W^T: B rows from the batch, matrix-vector below 4, register tile above.
  for (int64_t k : {512, 2048}) {
    loadLinear("?x1x", k, 70);
    for (int64_t b : {1, 3, 8})
      checkBf16Weight({{b, 1, k}, {70, k}, {70}}, 1);
  }
}

TEST_F(HalideLowerBf16, LinearStaticRows) {
  // 1 row (matrix-vector), 3 (a 3-row tile), 8 (two register tiles).
  for (int64_t k : {512, 2048})
    for (int64_t rows : {1, 3, 8}) {
      loadLinear(std::to_string(rows) + "x", k, 70);
      checkBf16Weight({{rows, k}, {70, k}, {70}}, 1);
    }
}

TEST_F(HalideLowerBf16, LinearManyRows) {
  // Dynamic rows over 70 columns (too few to choose a form at run time): the panel
  // schedule, which converts the weight as it packs each panel. Over 262 columns the
  // row count picks the form at run time: the dot-product form up to 64 rows (2 x 7),
  // which converts the weight where it reads it, the panel past them (3 x 50).
  for (int64_t n : {70, 262})
    for (int64_t k : {512, 2048}) {
      loadLinear("?x?x", k, n);
      for (auto [b, s] :
           std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 7}, {3, 50}})
        checkBf16Weight({{b, s, k}, {n, k}, {n}}, 1);
    }
}

TEST_F(HalideLowerBf16, LinearSizesOffTheTiles) {
  // K = 20 leaves a partial vector of k, 19 outputs partial tiles; K = 40 with many rows
  // takes the panel schedule, which widens the weight in blocks of 16 x 16.
  for (int64_t k : {20, 40}) {
    loadLinear("?x", k, 19);
    for (int64_t rows : {1, 5, 31, 60})
      checkBf16Weight({{rows, k}, {19, k}, {19}}, 1);
  }
}

TEST_F(HalideLowerBf16, Rank1Linear) {
  load({"tensor<512xf32>", "tensor<19x512xbf16>", "tensor<19xf32>"}, "tensor<19xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<512xf32>, tensor<19x512xbf16>, "
       "tensor<19xf32>) -> tensor<19xf32>");
  checkBf16Weight({{512}, {19, 512}, {19}}, 1);
}

TEST_F(HalideLowerBf16, FusedLinearRelu) {
  for (int64_t k : {512, 2048}) {
    loadLinear("?x?x", k, 70, "  %e = kiln.relu %l : tensor<?x?x70xf32>");
    for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {8, 1}, {2, 30}})
      checkBf16Weight({{b, s, k}, {70, k}, {70}}, 1);
  }
}

TEST_F(HalideLowerBf16, FusedLinearResidualLayerNorm) {
  // A decode step's output projection and feed-forward: linear, residual add and
  // LayerNorm in one kernel.
  std::string y = "tensor<?x1x40xf32>", v = "tensor<40xf32>";
  for (int64_t k : {512, 2048}) {
    loadLinear("?x1x", k, 40,
               "  %s = kiln.add %r, %l : (" + y + ", " + y + ") -> " + y +
                   "\n  %e = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-05 : f32} : (" +
                   y + ", " + v + ", " + v + ") -> " + y,
               {y, v, v});
    for (int64_t b : {1, 3, 8})
      checkBf16Weight({{b, 1, k}, {40, k}, {40}, {b, 1, 40}, {40}, {40}}, 1);
  }
}

TEST_F(HalideLowerBf16, TiedOutputProjection) {
  // logits = h . E^T with the embedding E in bf16 (no bias): a decode step's batch and
  // a prefill's rows.
  load({"tensor<?x1x512xf32>", "tensor<300x512xbf16>"}, "tensor<?x1x300xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x1x512xf32>, "
       "tensor<300x512xbf16>) -> tensor<?x1x300xf32>");
  for (int64_t b : {1, 3, 8})
    checkBf16Weight({{b, 1, 512}, {300, 512}}, 1);
  load({"tensor<?x?x512xf32>", "tensor<300x512xbf16>"}, "tensor<?x?x300xf32>",
       "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (tensor<?x?x512xf32>, "
       "tensor<300x512xbf16>) -> tensor<?x?x300xf32>");
  checkBf16Weight({{2, 30, 512}, {300, 512}}, 1);
}

TEST_F(HalideLowerBf16, MatmulPlainRhs) {
  // A bf16 rhs stored [K, N] takes the panel schedule's copy, converted as it packs.
  load({"tensor<?x96xf32>", "tensor<96x80xbf16>"}, "tensor<?x80xf32>",
       "kiln.matmul %arg0, %arg1 : (tensor<?x96xf32>, tensor<96x80xbf16>) -> "
       "tensor<?x80xf32>");
  for (int64_t rows : {1, 30})
    checkBf16Weight({{rows, 96}, {96, 80}}, 1);
}

/// The AVX512-FP16 instructions in x86 assembly `text` (vmovw, and the *ph / *sh
/// arithmetic; F16C's vcvtps2ph is not one), one mnemonic per line of the first few.
std::string avx512Fp16Instructions(const std::string &text) {
  std::string found;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line) && found.size() < 200;) {
    std::istringstream words(line);
    std::string m;
    words >> m;
    auto endsWith = [&](const char *tail) {
      return m.size() > 3 &&
             m.compare(m.size() - std::strlen(tail), std::string::npos, tail) == 0;
    };
    bool fp16 =
        m == "vmovw" ||
        (m[0] == 'v' && m != "vcvtps2ph" &&
         (endsWith("ph") || endsWith("sh") || endsWith("phx") || endsWith("psx")));
    if (!m.empty() && fp16)
      found += m + "\n";
  }
  return found;
}

TEST_F(HalideLowerBf16, KernelsNeedNoAvx512Fp16) {
  // Halide 14 compiles avx512_sapphirerapids for LLVM's sapphirerapids CPU, which has
  // AVX512-FP16; the Zen 4 machines this runs on do not (SIGILL). A 16-bit element
  // moved on its own (a gather of bf16 values) is where LLVM picks FP16's vmovw: the
  // panel schedule's transpose and the dot product's tails must have none.
  Halide::Target target("x86-64-linux-avx512_sapphirerapids");
  std::string path = scratchPath("bf16_kernel.s");
  for (auto [rows, k] :
       std::vector<std::pair<std::string, int64_t>>{{"?x?x", 2048}, {"?x", 20}}) {
    loadLinear(rows, k, 70);
    std::vector<Halide::Argument> args(harness.kernel.inputs.begin(),
                                       harness.kernel.inputs.end());
    harness.pipeline.compile_to_assembly(path, args, "kernel", target);
    std::ifstream file(path);
    std::string text((std::istreambuf_iterator<char>(file)),
                     std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty()) << path;
    EXPECT_EQ(avx512Fp16Instructions(text), "") << "linear " << rows << k;
  }
  std::remove(path.c_str());
}

} // namespace
