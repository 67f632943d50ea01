//===- LowerFusionTest.cpp - kiln.fusion groups as one kernel -------------===//
//
// Each kind of group kiln-fuse-kernels forms (an epilogue after linear or matmul, a
// layer_norm's prologue, with a linear as its first stage or without, a normalisation
// as the first stage of the product that reads it, an elementwise
// chain, with the gathers and position encodings it computes), lowered as one kernel and
// compared with the interpreter, which evaluates the body op by op, on fresh random
// inputs at several dynamic sizes; and the kernel signatures that decide which groups
// share a kernel.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "LowerTestSupport.h"

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

/// linear(x, W, b) then `epilogue` (ops over %l, the last one named %e) on [?, K] rows.
std::string linearGroup(int64_t k, int64_t n, const std::string &epilogue,
                        const std::string &rows = "?") {
  std::string x = "tensor<" + rows + "x" + std::to_string(k) + "xf32>";
  std::string w = "tensor<" + std::to_string(n) + "x" + std::to_string(k) + "xf32>";
  std::string b = "tensor<" + std::to_string(n) + "xf32>";
  std::string y = "tensor<" + rows + "x" + std::to_string(n) + "xf32>";
  return "kiln.fusion %arg0, %arg1, %arg2 : (" + x + ", " + w + ", " + b + ") -> " + y +
         " {\n^bb0(%x: " + x + ", %w: " + w + ", %b: " + b +
         "):\n  %l = kiln.linear %x, %w, %b : (" + x + ", " + w + ", " + b + ") -> " + y +
         "\n" + epilogue + "\n  kiln.yield %e : " + y + "\n}";
}

TEST_F(HalideLower, FusedLinearReluPanelAndDotSchedules) {
  // Dynamic rows take the panel schedule, a few static rows the dot-product one; 80
  // and 70 outputs leave partial tiles, whose clamped columns the epilogue must not
  // store.
  load({"tensor<?x96xf32>", "tensor<80x96xf32>", "tensor<80xf32>"}, "tensor<?x80xf32>",
       linearGroup(96, 80, "  %e = kiln.relu %l : tensor<?x80xf32>"));
  for (int64_t rows : {1, 7, 50, 0})
    checkRandom({{rows, 96}, {80, 96}, {80}});
  load({"tensor<7x256xf32>", "tensor<70x256xf32>", "tensor<70xf32>"}, "tensor<7x70xf32>",
       linearGroup(256, 70, "  %e = kiln.relu %l : tensor<7x70xf32>", "7"));
  checkRandom({{7, 256}, {70, 256}, {70}});
}

TEST_F(HalideLower, FusedLinearGeluScale) {
  load({"tensor<?x64xf32>", "tensor<130x64xf32>", "tensor<130xf32>"}, "tensor<?x130xf32>",
       linearGroup(64, 130,
                   "  %g = kiln.gelu %l : tensor<?x130xf32>\n"
                   "  %e = kiln.scale %g {factor = 0.5 : f32} : tensor<?x130xf32>"));
  for (int64_t rows : {1, 5, 31})
    checkRandom({{rows, 64}, {130, 64}, {130}});
}

TEST_F(HalideLower, FusedRank1LinearRelu) {
  // The matrix-vector form: the epilogue runs in the 1-row product's output stage.
  load({"tensor<64xf32>", "tensor<19x64xf32>", "tensor<19xf32>"}, "tensor<19xf32>",
       "kiln.fusion %arg0, %arg1, %arg2 : (tensor<64xf32>, tensor<19x64xf32>, "
       "tensor<19xf32>) -> tensor<19xf32> {\n"
       "^bb0(%x: tensor<64xf32>, %w: tensor<19x64xf32>, %b: tensor<19xf32>):\n"
       "  %l = kiln.linear %x, %w, %b : (tensor<64xf32>, tensor<19x64xf32>, "
       "tensor<19xf32>) -> tensor<19xf32>\n"
       "  %e = kiln.relu %l : tensor<19xf32>\n"
       "  kiln.yield %e : tensor<19xf32>\n}");
  checkRandom({{64}, {19, 64}, {19}});
}

/// matmul with batch dimensions, a broadcast bias, GELU and a residual add.
const char *kMatmulEpilogue =
    "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (tensor<?x?x24xf32>, tensor<40x24xf32>, "
    "tensor<40xf32>, tensor<?x?x40xf32>) -> tensor<?x?x40xf32> {\n"
    "^bb0(%x: tensor<?x?x24xf32>, %w: tensor<40x24xf32>, %b: tensor<40xf32>, "
    "%r: tensor<?x?x40xf32>):\n"
    "  %m = kiln.matmul %x, %w {transpose_rhs = true} : (tensor<?x?x24xf32>, "
    "tensor<40x24xf32>) -> tensor<?x?x40xf32>\n"
    "  %a = kiln.add %m, %b : (tensor<?x?x40xf32>, tensor<40xf32>) -> "
    "tensor<?x?x40xf32>\n"
    "  %g = kiln.gelu %a : tensor<?x?x40xf32>\n"
    "  %e = kiln.add %r, %g : (tensor<?x?x40xf32>, tensor<?x?x40xf32>) -> "
    "tensor<?x?x40xf32>\n"
    "  kiln.yield %e : tensor<?x?x40xf32>\n}";

TEST_F(HalideLower, FusedMatmulBiasGeluResidual) {
  load(
      {"tensor<?x?x24xf32>", "tensor<40x24xf32>", "tensor<40xf32>", "tensor<?x?x40xf32>"},
      "tensor<?x?x40xf32>", kMatmulEpilogue);
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 9}, {3, 33}})
    checkRandom({{b, s, 24}, {40, 24}, {40}, {b, s, 40}});
}

TEST_F(HalideLower, FusedEpilogueOperandOfOtherRowsIsARuntimeError) {
  // The residual's dynamic extents are tied to the output's: a residual with fewer rows
  // fails instead of being read out of bounds.
  load(
      {"tensor<?x?x24xf32>", "tensor<40x24xf32>", "tensor<40xf32>", "tensor<?x?x40xf32>"},
      "tensor<?x?x40xf32>", kMatmulEpilogue);
  EXPECT_NE(runError({randomTensor({2, 9, 24}, 1), randomTensor({40, 24}, 2),
                      randomTensor({40}, 3), randomTensor({2, 4, 40}, 4)},
                     {2, 9, 40}),
            "");
}

TEST_F(HalideLower, FusedResidualAddLayerNorm) {
  // The prologue is recomputed in each pass over the row; rows of ~100 with unit spread
  // check that the two-pass statistics still see the sum, not either operand.
  load({"tensor<?x?x48xf32>", "tensor<?x?x48xf32>", "tensor<48xf32>", "tensor<48xf32>"},
       "tensor<?x?x48xf32>",
       "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (tensor<?x?x48xf32>, "
       "tensor<?x?x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<?x?x48xf32> {\n"
       "^bb0(%x: tensor<?x?x48xf32>, %y: tensor<?x?x48xf32>, %g: tensor<48xf32>, "
       "%b: tensor<48xf32>):\n"
       "  %s = kiln.add %x, %y : (tensor<?x?x48xf32>, tensor<?x?x48xf32>) -> "
       "tensor<?x?x48xf32>\n"
       "  %n = kiln.layer_norm %s, %g, %b {epsilon = 1.0e-5 : f32} : "
       "(tensor<?x?x48xf32>, tensor<48xf32>, tensor<48xf32>) -> tensor<?x?x48xf32>\n"
       "  kiln.yield %n : tensor<?x?x48xf32>\n}");
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 7}, {4, 20}}) {
    check({randomTensor({b, s, 48}, seed++, 99.0f, 101.0f),
           randomTensor({b, s, 48}, seed++), randomTensor({48}, seed++),
           randomTensor({48}, seed++)});
  }
  EXPECT_NE(runError({randomTensor({2, 7, 48}, 1), randomTensor({2, 6, 48}, 2),
                      randomTensor({48}, 3), randomTensor({48}, 4)},
                     {2, 7, 48}),
            "");
}

/// linear(x, W, b) of [?, ?, K] rows to N = 40 as the first stage, then the residual
/// add and layer_norm: a sublayer's output projection and its post-norm in one kernel.
std::string linearResidualNorm(int64_t k) {
  std::string x = "tensor<?x?x" + std::to_string(k) + "xf32>";
  std::string w = "tensor<40x" + std::to_string(k) + "xf32>";
  const std::string y = "tensor<?x?x40xf32>", v = "tensor<40xf32>";
  return "kiln.fusion %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 : (" + x + ", " + w +
         ", " + v + ", " + y + ", " + v + ", " + v + ") -> " + y + " {\n^bb0(%x: " + x +
         ", %w: " + w + ", %b: " + v + ", %r: " + y + ", %g: " + v + ", %be: " + v +
         "):\n  %l = kiln.linear %x, %w, %b : (" + x + ", " + w + ", " + v + ") -> " + y +
         "\n  %s = kiln.add %r, %l : (" + y + ", " + y + ") -> " + y +
         "\n  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (" + y + ", " +
         v + ", " + v + ") -> " + y + "\n  kiln.yield %n : " + y + "\n}";
}

TEST_F(HalideLower, FusedLinearResidualLayerNorm) {
  // K = 24 takes the panel schedule, K = 512 the dot-product one (the model's output
  // projections); the linear is a stage of its own inside the kernel, computed whole
  // before the rows are normalised.
  for (int64_t k : {24, 512}) {
    std::string x = "tensor<?x?x" + std::to_string(k) + "xf32>";
    load({x, "tensor<40x" + std::to_string(k) + "xf32>", "tensor<40xf32>",
          "tensor<?x?x40xf32>", "tensor<40xf32>", "tensor<40xf32>"},
         "tensor<?x?x40xf32>", linearResidualNorm(k));
    for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 7}, {8, 1}})
      checkRandom({{b, s, k}, {40, k}, {40}, {b, s, 40}, {40}, {40}});
  }
  // The linear's input rows are tied to the output's: an input of other rows fails.
  EXPECT_NE(runError({randomTensor({2, 6, 512}, 1), randomTensor({40, 512}, 2),
                      randomTensor({40}, 3), randomTensor({2, 7, 40}, 4),
                      randomTensor({40}, 5), randomTensor({40}, 6)},
                     {2, 7, 40}),
            "");
}

TEST_F(HalideLower, FusedFeedForwardResidualLayerNorm) {
  // Both linears are stages computed whole, the second reading the first's ReLU'd
  // value: K = 96 takes the panel schedule at any row count; the model's 512 -> 2048 ->
  // 512 chooses by the rows at run time, the dot-product form for 1, 8 and 26 rows and
  // the panel for 80.
  for (auto [d, hidden] :
       std::vector<std::pair<int64_t, int64_t>>{{24, 96}, {512, 2048}}) {
    std::string x = "tensor<?x?x" + std::to_string(d) + "xf32>";
    std::string v = "tensor<" + std::to_string(d) + "xf32>";
    load({x, "tensor<" + std::to_string(hidden) + "x" + std::to_string(d) + "xf32>",
          "tensor<" + std::to_string(hidden) + "xf32>",
          "tensor<" + std::to_string(d) + "x" + std::to_string(hidden) + "xf32>", v, v,
          v},
         x, feedForwardNorm(d, hidden));
    for (auto [b, s] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {8, 1}, {2, 13}, {2, 40}})
      checkRandom({{b, s, d}, {hidden, d}, {hidden}, {d, hidden}, {d}, {d}, {d}});
  }
}

/// layer_norm of [?, ?, K] rows as the first stage of the product that reads it: a
/// matmul against a [N, K] table, transposed (a model's final norm and its logits).
std::string normLogits(int64_t k, int64_t n) {
  std::string x = "tensor<?x?x" + std::to_string(k) + "xf32>";
  std::string v = "tensor<" + std::to_string(k) + "xf32>";
  std::string e = "tensor<" + std::to_string(n) + "x" + std::to_string(k) + "xf32>";
  std::string y = "tensor<?x?x" + std::to_string(n) + "xf32>";
  return "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (" + x + ", " + v + ", " + v + ", " +
         e + ") -> " + y + " {\n^bb0(%x: " + x + ", %g: " + v + ", %be: " + v +
         ", %e: " + e +
         "):\n  %n = kiln.layer_norm %x, %g, %be {epsilon = 1.0e-5 : f32} : (" + x +
         ", " + v + ", " + v + ") -> " + x + "\n  %l = kiln.matmul %n, %e " +
         "{transpose_rhs = true} : (" + x + ", " + e + ") -> " + y +
         "\n  kiln.yield %l : " + y + "\n}";
}

TEST_F(HalideLower, FusedLayerNormLogits) {
  // The norm is computed whole before the product reads it as its lhs: K = 24 takes the
  // panel schedule, the model's K = 512 the dot-product one, at a decode step's rows (1
  // and 8) and an encoder's; 70 columns leave a partial tile. Rows of ~100 with unit
  // spread check that the product reads the normalised rows, not the input.
  for (auto [k, n] : std::vector<std::pair<int64_t, int64_t>>{{24, 70}, {512, 70}}) {
    std::string x = "tensor<?x?x" + std::to_string(k) + "xf32>";
    std::string v = "tensor<" + std::to_string(k) + "xf32>";
    load({x, v, v, "tensor<" + std::to_string(n) + "x" + std::to_string(k) + "xf32>"},
         "tensor<?x?x" + std::to_string(n) + "xf32>", normLogits(k, n));
    for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {8, 1}, {2, 13}})
      check({randomTensor({b, s, k}, seed++, 99.0f, 101.0f), randomTensor({k}, seed++),
             randomTensor({k}, seed++), randomTensor({n, k}, seed++)});
  }
}

TEST_F(HalideLower, FusedRmsNormLinearRelu) {
  // An RMSNorm before a linear with its epilogue (a pre-norm layer's projection).
  const std::string x = "tensor<?x40xf32>", g = "tensor<40xf32>", w = "tensor<24x40xf32>",
                    b = "tensor<24xf32>", y = "tensor<?x24xf32>";
  load({x, g, w, b}, y,
       "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (" + x + ", " + g + ", " + w + ", " + b +
           ") -> " + y + " {\n^bb0(%x: " + x + ", %g: " + g + ", %w: " + w +
           ", %b: " + b + "):\n  %n = kiln.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (" +
           x + ", " + g + ") -> " + x + "\n  %l = kiln.linear %n, %w, %b : (" + x + ", " +
           w + ", " + b + ") -> " + y + "\n  %e = kiln.relu %l : " + y +
           "\n  kiln.yield %e : " + y + "\n}");
  for (int64_t rows : {1, 7, 50})
    checkRandom({{rows, 40}, {40}, {24, 40}, {24}});
}

TEST_F(HalideLower, NormStageReadOnlyByTheAnchor) {
  // A normalisation computed first must be read by the group's anchor alone: a linear
  // between it and the anchor (another linear) is an error, not a second stage.
  const std::string x = "tensor<4x8xf32>", v = "tensor<8xf32>", w = "tensor<8x8xf32>";
  std::string error = harness.load(oneOpModule(
      {x, v, v, w, v, w}, x,
      "kiln.fusion %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 : (" + x + ", " + v + ", " +
          v + ", " + w + ", " + v + ", " + w + ") -> " + x + " {\n^bb0(%x: " + x +
          ", %g: " + v + ", %be: " + v + ", %w: " + w + ", %b: " + v + ", %e: " + w +
          "):\n  %n = kiln.layer_norm %x, %g, %be {epsilon = 1.0e-5 : f32} : (" + x +
          ", " + v + ", " + v + ") -> " + x + "\n  %l = kiln.linear %n, %w, %b : (" + x +
          ", " + w + ", " + v + ") -> " + x + "\n  %m = kiln.linear %l, %e, %b : (" + x +
          ", " + w + ", " + v + ") -> " + x + "\n  kiln.yield %m : " + x + "\n}"));
  EXPECT_NE(
      error.find("a layer_norm or rms_norm computed first in a kiln.fusion must be "
                 "read by the group's anchor, and 'kiln.linear' comes between them"),
      std::string::npos)
      << error;
}

TEST_F(HalideLower, StageReadByAQuantizedLinearIsAnError) {
  // A quantized_linear reads its input from memory: no stage can feed it.
  const std::string x = "tensor<4x8xf32>", w = "tensor<8x8xf32>", v = "tensor<8xf32>",
                    q = "tensor<8x8xi8>";
  std::string error = harness.load(oneOpModule(
      {x, w, v, q, v, v, v}, x,
      "kiln.fusion %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6 : (" + x + ", " + w +
          ", " + v + ", " + q + ", " + v + ", " + v + ", " + v + ") -> " + x +
          " {\n^bb0(%x: " + x + ", %w: " + w + ", %b: " + v + ", %q: " + q +
          ", %qs: " + v + ", %g: " + v + ", %be: " + v +
          "):\n  %l = kiln.linear %x, %w, %b : (" + x + ", " + w + ", " + v + ") -> " +
          x + "\n  %m = kiln.quantized_linear %l, %q, %qs, %b : (" + x + ", " + q + ", " +
          v + ", " + v + ") -> " + x + "\n  %s = kiln.add %x, %m : (" + x + ", " + x +
          ") -> " + x +
          "\n  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (" + x + ", " +
          v + ", " + v + ") -> " + x + "\n  kiln.yield %n : " + x + "\n}"));
  EXPECT_NE(error.find("a kiln.fusion has one anchor, and 'kiln.linear' is already this "
                       "group's"),
            std::string::npos)
      << error;
}

TEST_F(HalideLower, FusedElementwiseChain) {
  // No anchor: scale, a broadcast add, sub and ReLU as one pointwise kernel. (A boolean
  // mask cannot be a one-op module's input, so masked_fill is left to the models.)
  load({"tensor<?x?x16xf32>", "tensor<?x16xf32>", "tensor<?x?x16xf32>"},
       "tensor<?x?x16xf32>",
       "kiln.fusion %arg0, %arg1, %arg2 : (tensor<?x?x16xf32>, tensor<?x16xf32>, "
       "tensor<?x?x16xf32>) -> tensor<?x?x16xf32> {\n"
       "^bb0(%e: tensor<?x?x16xf32>, %p: tensor<?x16xf32>, %q: tensor<?x?x16xf32>):\n"
       "  %s = kiln.scale %e {factor = 4.0 : f32} : tensor<?x?x16xf32>\n"
       "  %a = kiln.add %s, %p : (tensor<?x?x16xf32>, tensor<?x16xf32>) -> "
       "tensor<?x?x16xf32>\n"
       "  %d = kiln.sub %a, %q : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> "
       "tensor<?x?x16xf32>\n"
       "  %r = kiln.relu %d : tensor<?x?x16xf32>\n"
       "  kiln.yield %r : tensor<?x?x16xf32>\n}");
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 9}, {3, 40}})
    checkRandom({{b, s, 16}, {s, 16}, {b, s, 16}});
  // The chain's inputs are tied together: a position table of other rows fails.
  EXPECT_NE(runError({randomTensor({2, 9, 16}, 1), randomTensor({8, 16}, 2),
                      randomTensor({2, 9, 16}, 3)},
                     {2, 9, 16}),
            "");
}

/// An input layer as kiln-fuse-kernels groups it: rows of a [50, 24] table gathered by
/// `ids`, scaled by sqrt(24), plus the sinusoids of `positions` (a range of the ids'
/// sequence when empty, else a group input of that type).
std::string inputLayerGroup(const std::string &ids, const std::string &rows,
                            const std::string &positions) {
  std::string table = "tensor<50x24xf32>", pe = "tensor<" + rows + "x24xf32>";
  std::string out = "tensor<?x" + rows + "x24xf32>";
  bool range = positions.empty();
  return "kiln.fusion %arg0, %arg1" + std::string(range ? "" : ", %arg2") + " : (" +
         table + ", " + ids + (range ? "" : ", " + positions) + ") -> " + out +
         " {\n^bb0(%t: " + table + ", %i: " + ids + (range ? "" : ", %p: " + positions) +
         "):\n  %e = kiln.embedding %t, %i : (" + table + ", " + ids + ") -> " + out +
         "\n" +
         (range
              ? "  %p = kiln.range %i {axis = 1 : i64} : (" + ids +
                    ") -> tensor<?xi32>\n  %s = kiln.sinusoid %p : (tensor<?xi32>) -> " +
                    pe + "\n"
              : "  %s = kiln.sinusoid %p : (" + positions + ") -> " + pe + "\n") +
         "  %x = kiln.scale %e {factor = 4.89897966 : f32} : " + out +
         "\n  %y = kiln.add %x, %s : (" + out + ", " + pe + ") -> " + out +
         "\n  kiln.yield %y : " + out + "\n}";
}

TEST_F(HalideLower, FusedEmbeddingRangeSinusoid) {
  // An encoder's input layer, gather, range and sinusoid computed where the chain
  // reads them; the sinusoids broadcast over the batch.
  load({"tensor<50x24xf32>", "tensor<?x?xi32>"}, "tensor<?x?x24xf32>",
       inputLayerGroup("tensor<?x?xi32>", "?", ""));
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 7}, {3, 33}})
    check({randomTensor({50, 24}, seed++), randomInts({b, s}, seed++, 0, 49)});
  // The gather still checks ids that nothing proves rows of the table.
  std::string error = runError(
      {randomTensor({50, 24}, seed++), HostTensor::ints({1, 2}, {3, 50})}, {1, 2, 24});
  EXPECT_NE(error.find("embedding of 'table' (50 rows): index 50 out of range"),
            std::string::npos)
      << error;
}

TEST_F(HalideLower, FusedDecodeStepInputLayer) {
  // A decode step's: one token per sequence, its position a group input.
  load({"tensor<50x24xf32>", "tensor<?x1xi32>", "tensor<1xi32>"}, "tensor<?x1x24xf32>",
       inputLayerGroup("tensor<?x1xi32>", "1", "tensor<1xi32>"));
  for (int64_t b : {1, 5})
    for (int32_t position : {0, 17, 127})
      check({randomTensor({50, 24}, seed++), randomInts({b, 1}, seed++, 0, 49),
             HostTensor::ints({1}, {position})});
}

TEST_F(HalideLower, FusedTokenAndPositionGathers) {
  // Learned positions: a second gather whose rows broadcast over the batch.
  load({"tensor<50x24xf32>", "tensor<?x?xi32>", "tensor<40x24xf32>", "tensor<?xi32>"},
       "tensor<?x?x24xf32>",
       "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (tensor<50x24xf32>, tensor<?x?xi32>, "
       "tensor<40x24xf32>, tensor<?xi32>) -> tensor<?x?x24xf32> {\n"
       "^bb0(%t: tensor<50x24xf32>, %i: tensor<?x?xi32>, %q: tensor<40x24xf32>, "
       "%p: tensor<?xi32>):\n"
       "  %e = kiln.embedding %t, %i : (tensor<50x24xf32>, tensor<?x?xi32>) -> "
       "tensor<?x?x24xf32>\n"
       "  %f = kiln.embedding %q, %p : (tensor<40x24xf32>, tensor<?xi32>) -> "
       "tensor<?x24xf32>\n"
       "  %y = kiln.add %e, %f : (tensor<?x?x24xf32>, tensor<?x24xf32>) -> "
       "tensor<?x?x24xf32>\n"
       "  kiln.yield %y : tensor<?x?x24xf32>\n}");
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {4, 9}})
    check({randomTensor({50, 24}, seed++), randomInts({b, s}, seed++, 0, 49),
           randomTensor({40, 24}, seed++), randomInts({s}, seed++, 0, 39)});
}

TEST_F(HalideLower, GatherInAGroupWithAnAnchorIsAnError) {
  // Only a group of elementwise ops computes gathers where it reads them.
  std::string error = harness.load(oneOpModule(
      {"tensor<50x8xf32>", "tensor<4xi32>", "tensor<8xf32>", "tensor<8xf32>"},
      "tensor<4x8xf32>",
      "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (tensor<50x8xf32>, tensor<4xi32>, "
      "tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {\n"
      "^bb0(%t: tensor<50x8xf32>, %i: tensor<4xi32>, %g: tensor<8xf32>, "
      "%b: tensor<8xf32>):\n"
      "  %e = kiln.embedding %t, %i : (tensor<50x8xf32>, tensor<4xi32>) -> "
      "tensor<4x8xf32>\n"
      "  %n = kiln.layer_norm %e, %g, %b {epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, "
      "tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>\n"
      "  kiln.yield %n : tensor<4x8xf32>\n}"));
  EXPECT_NE(error.find("'kiln.embedding' joins only a kiln.fusion without an anchor, "
                       "and this group's anchor is 'kiln.layer_norm'"),
            std::string::npos)
      << error;
}

TEST_F(HalideLower, FusionThatDoesNotComposeIsAnError) {
  // A softmax can neither anchor a group nor join one.
  std::string error = harness.load(
      oneOpModule({"tensor<4x8xf32>"}, "tensor<4x8xf32>",
                  "kiln.fusion %arg0 : (tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
                  "^bb0(%x: tensor<4x8xf32>):\n"
                  "  %s = kiln.softmax %x {axis = 1 : i64} : tensor<4x8xf32>\n"
                  "  %r = kiln.relu %s : tensor<4x8xf32>\n"
                  "  kiln.yield %r : tensor<4x8xf32>\n}"));
  EXPECT_NE(error.find("'kiln.softmax' can neither anchor a kiln.fusion nor join one"),
            std::string::npos)
      << error;
}

TEST_F(HalideLower, FirstStageBeforeAnAnchorOtherThanANormIsAnError) {
  // A linear is computed first only for a normalisation, whose rows need all of it.
  std::string error = harness.load(oneOpModule(
      {"tensor<4x8xf32>", "tensor<8x8xf32>", "tensor<8xf32>"}, "tensor<4x8xf32>",
      "kiln.fusion %arg0, %arg1, %arg2 : (tensor<4x8xf32>, tensor<8x8xf32>, "
      "tensor<8xf32>) -> tensor<4x8xf32> {\n"
      "^bb0(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>):\n"
      "  %l = kiln.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x8xf32>, "
      "tensor<8xf32>) -> tensor<4x8xf32>\n"
      "  %m = kiln.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> "
      "tensor<4x8xf32>\n"
      "  %s = kiln.add %l, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>\n"
      "  kiln.yield %s : tensor<4x8xf32>\n}"));
  EXPECT_NE(error.find("a linear computed first in a kiln.fusion must be read by a "
                       "layer_norm's or rms_norm's prologue, and this group's anchor is "
                       "'kiln.matmul'"),
            std::string::npos)
      << error;
}

TEST_F(HalideLower, FusionSignaturesFollowTheBody) {
  // Two layers' identical groups share one kernel; another epilogue does not.
  auto signatureOf = [&](const std::string &epilogue) {
    std::string error = harness.load(
        oneOpModule({"tensor<?x64xf32>", "tensor<32x64xf32>", "tensor<32xf32>"},
                    "tensor<?x32xf32>", linearGroup(64, 32, epilogue)));
    EXPECT_TRUE(error.empty()) << error;
    return kernelSignature(harness.op);
  };
  std::string relu = signatureOf("  %e = kiln.relu %l : tensor<?x32xf32>");
  EXPECT_EQ(relu, signatureOf("  %e = kiln.relu %l : tensor<?x32xf32>"));
  EXPECT_NE(relu, signatureOf("  %e = kiln.gelu %l : tensor<?x32xf32>"));
  EXPECT_NE(signatureOf("  %e = kiln.scale %l {factor = 2.0 : f32} : tensor<?x32xf32>"),
            signatureOf("  %e = kiln.scale %l {factor = 3.0 : f32} : tensor<?x32xf32>"));
  EXPECT_NE(relu.find("kiln.linear"), std::string::npos) << relu;
}

} // namespace
