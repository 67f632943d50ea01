//===- matmul_model.cpp - The base Transformer's matrix products, one each ===//
//
// One entry per (K, N) of the base Transformer's products (d_model 512, d_ff 2048,
// vocabulary 8000; q/k/v packed as kiln-pack-projections packs them): a linear layer,
// x [M, K] times a weight stored [N, K] as PyTorch's Linear stores it plus a bias, the
// kiln.linear kernel the model's projections run, M (the rows: batch x positions)
// chosen at run time. bench/gpu_bench.py times each shape through kiln-run against
// PyTorch's linear (one cuBLAS product with its bias) on a GPU.
//
// x is gathered from a table by i32 row ids and the product summed per row, as in
// attention_model.cpp: kiln-run times a run with its uploads and downloads, and an
// [M, K] input and [M, N] output crossing the PCIe bus every run would cost more than
// the product; M ids in and M sums out leave the product as the run's cost, beside a
// gather and a row reduction.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/Registry.h"

#include <map>
#include <string>
#include <utility>

using namespace kiln::dsl;

namespace {
constexpr int64_t kTableRows = 4096;

/// (K, N) per layer: self-attention's packed q/k/v and output projections,
/// cross-attention's query and packed key/value projections, the feed-forward pair; and
/// the logits (the tied embedding [8000, 512]; the model's has no bias).
const std::pair<int64_t, int64_t> kShapes[] = {{512, 1536}, {512, 512},  {512, 1024},
                                               {512, 2048}, {2048, 512}, {512, 8000}};
} // namespace

Model buildMatmulShapes() {
  ModelBuilder m("matmul_shapes");
  std::map<int64_t, Parameter> tables; // one [kTableRows, K] table per K
  for (auto [k, n] : kShapes) {
    std::string name = "k" + std::to_string(k) + "_n" + std::to_string(n);
    Parameter &table = tables[k];
    if (table.name().empty())
      table = m.parameter("table_k" + std::to_string(k), {kTableRows, k});
    Parameter weight = m.parameter(name + ".weight", {n, k});
    Parameter bias = m.parameter(name + ".bias", {n});
    Entry entry = m.entry(name);
    Tensor ids = entry.input("ids", DType::I32, {dyn("M")}, Bounds{0, kTableRows - 1});
    entry.output("row_sums", reduceSum(linear(embedding(table, ids), weight, bias), {1}));
  }
  return m.finish();
}

KILN_MODEL(buildMatmulShapes);
