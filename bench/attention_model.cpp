//===- attention_model.cpp - Causal attention alone, for the GPU benchmark ===//
//
// Causal self-attention, B = 1, 8 heads, head dim 64, any length L: the graph a model
// writes (the one bench/attention_bench.cpp times on the CPU), which the default
// pipeline fuses into one kiln.attention {causal} kernel. bench/gpu_bench.py times it
// through kiln-run against PyTorch's scaled_dot_product_attention on a GPU, where
// attention_bench (it JIT-compiles through Halide) cannot run.
//
// Why q, k and v are gathered from tables and the output summed per row: kiln-run times
// a run as a user sees it, uploads and downloads included. Three [1, 8, L, 64] inputs and
// an output of that size would cross the PCIe bus on every run (64 MiB at L = 8192, more
// time than the attention itself); an i32 id per row and a sum per row (8 L values each
// way) leave the attention kernel as the run's cost, beside three gathers and a row
// reduction that read and write each [1, 8, L, 64] tensor once.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

using namespace kiln::dsl;

namespace {
constexpr int64_t kHeads = 8, kHeadDim = 64, kTableRows = 4096;
} // namespace

Model buildAttentionCausal() {
  ModelBuilder m("attention_causal");
  Parameter qTable = m.parameter("q_table", {kTableRows, kHeadDim});
  Parameter kTable = m.parameter("k_table", {kTableRows, kHeadDim});
  Parameter vTable = m.parameter("v_table", {kTableRows, kHeadDim});

  Entry forward = m.entry("forward");
  Tensor ids =
      forward.input("ids", DType::I32, {1, kHeads, dyn("L")}, Bounds{0, kTableRows - 1});
  Tensor q = embedding(qTable, ids), k = embedding(kTable, ids),
         v = embedding(vTable, ids);
  Tensor scores = matmul(q, k, /*transposeLhs=*/false, /*transposeRhs=*/true) *
                  (1.0f / 8.0f); // 1 / sqrt(kHeadDim)
  Tensor weights = softmax(scores + causalMask(q, /*axis=*/2), /*axis=*/-1);
  forward.output("row_sums", reduceSum(matmul(weights, v), {3}));
  return m.finish();
}

KILN_MODEL(buildAttentionCausal);
