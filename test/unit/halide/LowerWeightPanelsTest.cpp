//===- LowerWeightPanelsTest.cpp - products over weights in column panels -===//
//
// A weight stored in column panels (kiln.unpack_panels of [P, K, W], as
// packWeightPanels leaves a CPU model's) is read in place by the panel schedule at
// every row count, alone or anchoring a kernel group; the kernel must equal the
// interpreter, which unpacks the panels, on fresh random inputs. The panels' padding
// past the last column is random here too, so that a kernel that let it into a stored
// column would fail. Also: which weights packWeightPanels packs, that a packed
// module computes what the module it came from does, and which products prefetch the
// next panel (PanelPrefetch.h).
//
//===----------------------------------------------------------------------===//

#include "LowerTestSupport.h"

#include "kiln/ir/KilnOps.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <regex>
#include <set>

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

std::string panelsType(int64_t n, int64_t k, int64_t width) {
  return "tensor<" + std::to_string((n + width - 1) / width) + "x" + std::to_string(k) +
         "x" + std::to_string(width) + "xf32>";
}

class HalideLowerPanels : public HalideLower {
protected:
  /// A linear of K = `k` into 1024 columns (16 panels, two a task), as each core tunes
  /// it: the register tiles prefetch the next panel, and the next tile's rows of x only
  /// where they are staged (tuned for Zen 4 they are read in place:
  /// chooseLhsRowsInPlace); then run on each [b, s] of `rows`.
  void checkPrefetchesByCore(int64_t k,
                             const std::vector<std::pair<int64_t, int64_t>> &rows);

  /// Loads linear(x [rows..., k], unpack_panels(P [n/width, k, width]), b [n]) alone, or
  /// followed by `epilogue` (ops over the linear's `%l` and the group's further operands
  /// `extraTypes`, as %r, %g, %be; the last result `%e`) in a kiln.fusion group.
  void loadLinear(const std::string &rows, int64_t k, int64_t n, int64_t width,
                  const std::string &epilogue = "",
                  const std::vector<std::string> &extraTypes = {}) {
    std::string x = tensor(rows + std::to_string(k));
    std::string panels = panelsType(n, k, width);
    std::string w = tensor(std::to_string(n) + "x" + std::to_string(k));
    std::string b = tensor(std::to_string(n)), y = tensor(rows + std::to_string(n));
    std::string prologue =
        "  %w = kiln.unpack_panels %arg1 : (" + panels + ") -> " + w + "\n";
    std::string types = "(" + x + ", " + w + ", " + b + ") -> " + y;
    std::vector<std::string> args = {x, panels, b};
    args.insert(args.end(), extraTypes.begin(), extraTypes.end());
    std::string op;
    if (epilogue.empty()) {
      op = "kiln.linear %arg0, %w, %arg2 : " + types;
    } else {
      std::string operands = "%arg0, %w", argTypes = x + ", " + w,
                  block = "%x: " + x + ", %wb: " + w;
      const char *names[] = {"%b", "%r", "%g", "%be"};
      for (size_t i = 2; i < args.size(); ++i) {
        operands += ", %arg" + std::to_string(i);
        argTypes += ", " + args[i];
        block += ", " + std::string(names[i - 2]) + ": " + args[i];
      }
      op = "kiln.fusion " + operands + " : (" + argTypes + ") -> " + y + " {\n^bb0(" +
           block + "):\n  %l = kiln.linear %x, %wb, %b : " + types + "\n" + epilogue +
           "\n  kiln.yield %e : " + y + "\n}";
    }
    std::string error = harness.load(oneOpModule(args, y, op, prologue));
    ASSERT_TRUE(error.empty()) << error;
  }
};

TEST_F(HalideLowerPanels, SignatureNamesThePanels) {
  // A kernel over panels must not be shared with one over the weight as stored.
  loadLinear("?x?x", 64, 100, 64);
  std::string signature = kernelSignature(harness.op);
  EXPECT_NE(signature.find("panels(tensor<2x64x64xf32>)"), std::string::npos)
      << signature;
}

TEST_F(HalideLowerPanels, LinearAtEveryRowCount) {
  // One row (a short sentence's), a partial register tile, a tile and a half, an
  // encode's 112; columns that fill their panels, and 70 and 300 that leave the last
  // one partly padding; K off the vector width (40) and the base model's.
  for (int64_t k : {40, 512})
    for (int64_t n : {64, 70, 300}) {
      loadLinear("?x?x", k, n, 64);
      for (auto [b, s] :
           std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {1, 5}, {2, 17}, {1, 112}})
        checkRandom({{b, s, k}, {(n + 63) / 64, k, 64}, {n}});
    }
}

TEST_F(HalideLowerPanels, NarrowPanels) {
  // An AVX2 target's panels are 16 columns; the schedule's 64-column tiles then span
  // several, and the last tile reads past the last panel's columns only into padding.
  for (int64_t n : {16, 50}) {
    loadLinear("?x?x", 96, n, 16);
    for (int64_t s : {1, 30})
      checkRandom({{1, s, 96}, {(n + 15) / 16, 96, 16}, {n}});
  }
}

TEST_F(HalideLowerPanels, DecodeAndStaticRows) {
  // Rows from a batch ([B, 1, K]) and a static count below the register tile.
  loadLinear("?x1x", 512, 70, 64);
  for (int64_t b : {1, 3, 8})
    checkRandom({{b, 1, 512}, {2, 512, 64}, {70}});
  loadLinear("5x", 512, 70, 64);
  checkRandom({{5, 512}, {2, 512, 64}, {70}});
}

TEST_F(HalideLowerPanels, FusedLinearRelu) {
  loadLinear("?x?x", 512, 130, 64, "  %e = kiln.relu %l : tensor<?x?x130xf32>");
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 3}, {2, 40}})
    checkRandom({{b, s, 512}, {3, 512, 64}, {130}});
}

TEST_F(HalideLowerPanels, FusedLinearResidualLayerNorm) {
  std::string y = "tensor<?x?x40xf32>", v = "tensor<40xf32>";
  loadLinear("?x?x", 2048, 40, 64,
             "  %s = kiln.add %r, %l : (" + y + ", " + y + ") -> " + y +
                 "\n  %e = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-05 : f32} : (" +
                 y + ", " + v + ", " + v + ") -> " + y,
             {y, v, v});
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {2, 33}})
    checkRandom({{b, s, 2048}, {1, 2048, 64}, {40}, {b, s, 40}, {40}, {40}});
}

/// The lowered statement of the harness's kernel, as text.
std::string loweredStatement(KernelHarness &harness) {
  llvm::SmallString<64> path;
  if (llvm::sys::fs::createTemporaryFile("kiln-panels", "stmt", path))
    return "";
  std::vector<Halide::Argument> args(harness.kernel.inputs.begin(),
                                     harness.kernel.inputs.end());
  pipelineOf(harness.kernel)
      .compile_to_lowered_stmt(std::string(path), args, Halide::StmtOutputFormat::Text,
                               Halide::get_jit_target_from_environment());
  auto text = llvm::MemoryBuffer::getFile(path);
  llvm::sys::fs::remove(path);
  return text ? (*text)->getBuffer().str() : "";
}

/// Whether the harness's kernel prefetches its operand `input` (0: x, 1: the panels).
bool prefetches(KernelHarness &harness, size_t input) {
  return loweredStatement(harness).find("prefetch(" +
                                        harness.kernel.inputs[input].name() + ",") !=
         std::string::npos;
}

void HalideLowerPanels::checkPrefetchesByCore(
    int64_t k, const std::vector<std::pair<int64_t, int64_t>> &rows) {
  for (const char *core : {"generic", "zen4"}) {
    ScopedCpuTune tune(core);
    const bool staged = std::string(core) == "generic";
    loadLinear("?x?x", k, 1024, 64);
    EXPECT_EQ(harness.kernel.codegen.passes.size(), staged ? 2u : 1u) << core;
    // The panel schedule prefetches what the next k steps read: into L1 on every
    // core.
    EXPECT_TRUE(harness.kernel.codegen.prefetchIntoL1) << core;
    EXPECT_EQ(harness.kernel.codegen.prefetchLevel(), PrefetchLevel::L1) << core;
    EXPECT_EQ(prefetches(harness, 0), staged) << core;
    EXPECT_TRUE(prefetches(harness, 1)) << core;
    for (auto [b, s] : rows)
      checkRandom({{b, s, k}, {16, k, 64}, {1024}});
  }
}

TEST_F(HalideLowerPanels, PrefetchesTheNextPanelAndRows) {
  // 16 panels of 512 x 64 (128 KB), two a task: the register tiles prefetch the next
  // panel, and the next tile's 6 rows of x (12 KB). Rows enough for all 16 chunks of
  // a panel (and the prefetches past the ends of x and of the weight, which x86 does
  // not fault on), a batch whose rows run on into the next entry's, and too few rows
  // for all chunks.
  if (Halide::get_jit_target_from_environment().natural_vector_size(Halide::Float(32)) <
      16)
    GTEST_SKIP() << "64-column panels are the AVX-512 schedule's";
  checkPrefetchesByCore(512, {{1, 112}, {2, 100}, {1, 30}});
}

TEST_F(HalideLowerPanels, PrefetchesTheNextBlockPastTheCaches) {
  // K = 2048: two 512 KB panels beside the rows would fill L2, so the contraction runs
  // in blocks of 512. The first output tile of a panel prefetches the next block
  // (128 KB), and each register tile the next 12 KB of rows (48 KB, the whole of K,
  // would evict this tile's from L1). Rows for one output tile, several, and a batch.
  if (Halide::get_jit_target_from_environment().natural_vector_size(Halide::Float(32)) <
      16)
    GTEST_SKIP() << "64-column panels are the AVX-512 schedule's";
  checkPrefetchesByCore(2048, {{1, 20}, {1, 112}, {2, 70}});
  // 8 panels, a task each: the next panel is another core's, so the last block
  // prefetches nothing: the blocks' prefetch is conditional on the block loop.
  loadLinear("?x?x", 2048, 512, 64);
  std::string stmt = loweredStatement(harness);
  const std::string panels = harness.kernel.inputs[1].name();
  size_t fetch = stmt.find("prefetch(" + panels + ",");
  ASSERT_NE(fetch, std::string::npos);
  size_t guard = stmt.rfind("if (", fetch);
  ASSERT_NE(guard, std::string::npos);
  EXPECT_NE(stmt.substr(guard, fetch - guard).find(".ko"), std::string::npos);
  checkRandom({{1, 112, 2048}, {8, 2048, 64}, {512}});
  // K = 512 in one pass and 8 panels, a task each: no panel prefetch; the rows fit L1
  // (prefetched where they are staged).
  ScopedCpuTune tune("generic");
  loadLinear("?x?x", 512, 512, 64);
  EXPECT_FALSE(prefetches(harness, 1));
  EXPECT_TRUE(prefetches(harness, 0));
}

TEST_F(HalideLowerPanels, TwoPanelTilesPastTheL2) {
  // Where the rows' lhs is past 1 MB (512 rows at K = 512, 128 at K = 2048), an output
  // tile spans two panels, and each register tile runs the k loop once for each of
  // them over the rows it staged; the panel prefetch is for the one-panel tiles only.
  // Too few columns for 4 two-panel tiles (256) keep one panel at any row count.
  if (Halide::get_jit_target_from_environment().natural_vector_size(Halide::Float(32)) <
      16)
    GTEST_SKIP() << "64-column panels are the AVX-512 schedule's";
  const std::string panelLoop = ".np, 0, 2)";
  loadLinear("?x?x", 512, 512, 64);
  std::string stmt = loweredStatement(harness);
  EXPECT_NE(stmt.find(panelLoop), std::string::npos);
  const std::string x = harness.kernel.inputs[0].name();
  EXPECT_NE(stmt.find("512 < (" + x + ".extent.1*" + x + ".extent.2)"),
            std::string::npos);
  for (auto [b, s] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 512}, {1, 513}, {2, 300}, {3, 250}})
    checkRandom({{b, s, 512}, {8, 512, 64}, {512}});
  loadLinear("?x?x", 2048, 512, 64);
  EXPECT_NE(loweredStatement(harness).find(panelLoop), std::string::npos);
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 128}, {2, 70}})
    checkRandom({{b, s, 2048}, {8, 2048, 64}, {512}});
  loadLinear("?x?x", 512, 256, 64);
  EXPECT_EQ(loweredStatement(harness).find(panelLoop), std::string::npos);
  // Static rows decide at compile time: 600 rows take two-panel tiles, with no
  // specialization on the row count.
  loadLinear("600x", 512, 512, 64);
  stmt = loweredStatement(harness);
  EXPECT_NE(stmt.find(panelLoop), std::string::npos);
  EXPECT_EQ(stmt.find("512 < "), std::string::npos);
  checkRandom({{600, 512}, {8, 512, 64}, {512}});
}

/// The sizes in floats of the product's accumulator buffers in the lowered statement.
std::set<int> accumulatorSizes(KernelHarness &harness) {
  const std::string stmt = loweredStatement(harness);
  const std::regex allocation(R"(allocate product(\$\d+)?\[float32 \* (\d+)\])");
  std::set<int> sizes;
  for (auto it = std::sregex_iterator(stmt.begin(), stmt.end(), allocation);
       it != std::sregex_iterator(); ++it)
    sizes.insert(std::stoi((*it)[2]));
  return sizes;
}

TEST_F(HalideLowerPanels, AccumulatorsOfOnePassOverKStayInARegisterTile) {
  // Where K runs in one pass, each register tile of 6 rows x 64 columns accumulates
  // on its own (384 floats, in registers) and stores its outputs after its k loop, in
  // one-panel tiles and two-panel ones (past 512 rows) alike; where K runs in blocks
  // (2048), the register tiles of a 24-row output tile wait between blocks in its
  // stack buffer. Rows that end mid register tile, mid output tile and mid batch.
  if (Halide::get_jit_target_from_environment().natural_vector_size(Halide::Float(32)) <
      16)
    GTEST_SKIP() << "64-column panels are the AVX-512 schedule's";
  loadLinear("?x?x", 512, 1024, 64);
  EXPECT_EQ(accumulatorSizes(harness), std::set<int>{6 * 64});
  for (auto [b, s] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 20}, {1, 127}, {2, 300}})
    checkRandom({{b, s, 512}, {16, 512, 64}, {1024}});
  loadLinear("?x?x", 2048, 512, 64);
  std::set<int> blocked = accumulatorSizes(harness);
  ASSERT_FALSE(blocked.empty());
  EXPECT_GE(*blocked.begin(), 24 * 64);
  // Few panels make the register tiles' loop the parallel one (fused with the
  // batch's), where a generic core stages each register tile's rows.
  ScopedCpuTune tune("generic");
  loadLinear("?x?x", 512, 130, 64);
  EXPECT_EQ(accumulatorSizes(harness), std::set<int>{6 * 64});
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 13}, {3, 40}})
    checkRandom({{b, s, 512}, {3, 512, 64}, {130}});
}

TEST_F(HalideLowerPanels, MatmulTransposedRhs) {
  std::string panels = panelsType(90, 32, 64);
  std::string error = harness.load(oneOpModule(
      {"tensor<?x?x32xf32>", panels}, "tensor<?x?x90xf32>",
      "kiln.matmul %arg0, %w {transpose_rhs = true} : (tensor<?x?x32xf32>, "
      "tensor<90x32xf32>) -> tensor<?x?x90xf32>",
      "  %w = kiln.unpack_panels %arg1 : (" + panels + ") -> tensor<90x32xf32>\n"));
  ASSERT_TRUE(error.empty()) << error;
  for (int64_t s : {1, 50})
    checkRandom({{2, s, 32}, {2, 32, 64}});
}

} // namespace
