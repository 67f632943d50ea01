//===- LowerCollapsedRowsTest.cpp - Row-wise kernels over [B*S, D] views --===//
//
// A row-wise kernel lowered over its rows collapsed (CollapseRows.h) and run on
// [B*S, D] views of [B, S, D] tensors, as a model's steps run it, against the
// interpreter on the uncollapsed module, on fresh random inputs: row counts that leave
// partial register tiles, a few rows (the dot-product form) and many (the panel), a
// weight in panels. And which ops collapse: not those that mix rows or positions.
//
//===----------------------------------------------------------------------===//

#include "CollapseRows.h"
#include "LowerTestSupport.h"

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

std::string tensor(const std::string &dims) { return "tensor<" + dims + "xf32>"; }

class CollapsedRows : public HalideLower {
protected:
  void loadCollapsed(const std::string &moduleText) {
    harness.collapsedRows = true;
    std::string error = harness.load(moduleText);
    ASSERT_TRUE(error.empty()) << error;
    EXPECT_TRUE(rowsCollapsible(harness.op));
  }

  /// Whether the first op with a kernel in `moduleText` collapses its rows.
  bool collapsible(const std::string &moduleText) {
    KernelHarness parsed;
    parsed.module = mlir::parseSourceString<mlir::ModuleOp>(moduleText, &parsed.context);
    EXPECT_TRUE(parsed.module) << moduleText;
    if (!parsed.module)
      return false;
    auto func = parsed.module->lookupSymbol<mlir::FuncOp>("main");
    for (mlir::Operation &op : func.front())
      if (needsKernel(&op))
        return rowsCollapsible(&op);
    return false;
  }
};

TEST_F(CollapsedRows, FeedForwardGroupMatchesTheInterpreter) {
  // 5 x 13 = 65 rows: ten 6-row register tiles and a partial one across the sequences'
  // boundaries; 2 x 3 rows take the dot-product form.
  std::string x = tensor("?x?x24");
  loadCollapsed(oneOpModule({x, tensor("96x24"), tensor("96"), tensor("24x96"),
                             tensor("24"), tensor("24"), tensor("24")},
                            x, feedForwardNorm(24, 96)));
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{5, 13}, {2, 3}, {3, 40}})
    checkRandom({{b, s, 24}, {96, 24}, {96}, {24, 96}, {24}, {24}, {24}});
}

TEST_F(CollapsedRows, LinearOverAWeightInPanelsMatchesTheInterpreter) {
  // 200 columns in panels of 64 (the last one padded), the model's layout.
  std::string x = tensor("?x?x64"), y = tensor("?x?x200"), w = tensor("200x64"),
              panels = tensor("4x64x64"), bias = tensor("200");
  loadCollapsed(oneOpModule(
      {x, panels, bias}, y,
      "kiln.linear %arg0, %w, %arg2 : (" + x + ", " + w + ", " + bias + ") -> " + y,
      "  %w = kiln.unpack_panels %arg1 : (" + panels + ") -> " + w + "\n"));
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{4, 29}, {2, 100}, {7, 1}})
    checkRandom({{b, s, 64}, {4, 64, 64}, {200}});
}

TEST_F(CollapsedRows, OnlyOpsThatKeepRowsApartCollapse) {
  std::string x = tensor("?x?x8"), w = tensor("16x8"), b = tensor("16"),
              y = tensor("?x?x16");
  EXPECT_TRUE(collapsible(oneOpModule({x, w, b}, y,
                                      "kiln.linear %arg0, %arg1, %arg2 : (" + x + ", " +
                                          w + ", " + b + ") -> " + y)));
  // Row-wise, but without a product to gain.
  EXPECT_FALSE(collapsible(
      oneOpModule({x, tensor("8")}, x,
                  "kiln.add %arg0, %arg1 : (" + x + ", tensor<8xf32>) -> " + x)));
  // A linear and positions added to every sequence: a row's operand depends on its
  // position.
  std::string positions = tensor("?x16");
  EXPECT_FALSE(collapsible(oneOpModule(
      {x, w, b, positions}, y,
      "kiln.fusion %arg0, %arg1, %arg2, %arg3 : (" + x + ", " + w + ", " + b + ", " +
          positions + ") -> " + y + " {\n^bb0(%x: " + x + ", %w: " + w + ", %b: " + b +
          ", %p: " + positions + "):\n  %l = kiln.linear %x, %w, %b : (" + x + ", " + w +
          ", " + b + ") -> " + y + "\n  %e = kiln.add %l, %p : (" + y + ", " + positions +
          ") -> " + y + "\n  kiln.yield %e : " + y + "\n}")));
  // A decoding step's [B, 1, D] has its rows in one dimension already.
  std::string step = tensor("?x1x8"), stepOut = tensor("?x1x16");
  EXPECT_FALSE(collapsible(oneOpModule({step, w, b}, stepOut,
                                       "kiln.linear %arg0, %arg1, %arg2 : (" + step +
                                           ", " + w + ", " + b + ") -> " + stepOut)));
  // A softmax reads along a dimension, a batched matmul mixes the rows of a sequence.
  EXPECT_FALSE(
      collapsible(oneOpModule({x}, x, "kiln.softmax %arg0 {axis = 2 : i64} : " + x)));
  std::string keys = tensor("?x?x8"), scores = tensor("?x?x?");
  EXPECT_FALSE(
      collapsible(oneOpModule({x, keys}, scores,
                              "kiln.matmul %arg0, %arg1 {transpose_rhs = true} : (" + x +
                                  ", " + keys + ") -> " + scores)));
}

} // namespace
