//===- LowerLayersTest.cpp - Kernels of the layer ops vs the interpreter --===//
//
// The ops around the attention core: linear, gelu, log_softmax, argmax, slice, concat,
// embedding, range, sinusoid and the masks. As in LowerTest.cpp, each kernel is
// compiled once with its dynamic extents symbolic and run on fresh random inputs of
// several shapes (sizes off the 16-wide vectors, size 1, batches), against the
// reference interpreter (LowerTestSupport.h); the numerically delicate ops also get
// their edge cases (masked rows, NaN, ties, out-of-range ids, large positions) and
// gelu and sinusoid a measured accuracy bound tighter than the 1e-5 of the rest.
//
//===----------------------------------------------------------------------===//

#include "CpuTuning.h"
#include "EmitObject.h"
#include "LowerTestSupport.h"
#include "SchedulesCpuMatmul.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, LinearPanelSchedule) {
  // Dynamic rows and K = 96 take the panel schedule; 80 outputs leave a partial panel.
  load({"tensor<?x?x96xf32>", "tensor<80x96xf32>", "tensor<80xf32>"},
       "tensor<?x?x80xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x?x96xf32>, tensor<80x96xf32>, "
       "tensor<80xf32>) -> tensor<?x?x80xf32>");
  for (auto [b, s] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 3}, {3, 50}, {1, 24}, {2, 0}})
    checkRandom({{b, s, 96}, {80, 96}, {80}});
}

TEST_F(HalideLower, LinearManyRowsPanelSchedule) {
  // Dynamic rows at K = 512 take the panel schedule (the weight transposed 16 rows at a
  // time into 64-column panels): 70 columns leave a partial panel; 128 rows are five
  // 24-row tiles and one of 8, 61 rows two and one of 13.
  load({"tensor<?x?x512xf32>", "tensor<70x512xf32>", "tensor<70xf32>"},
       "tensor<?x?x70xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x?x512xf32>, tensor<70x512xf32>, "
       "tensor<70xf32>) -> tensor<?x?x70xf32>");
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 128}, {2, 61}, {1, 5}})
    checkRandom({{b, s, 512}, {70, 512}, {70}});
}

TEST_F(HalideLower, LinearRowCountChosenAtRunTime) {
  // Rows known only at run time over 262 columns (4 x 64 + 6 in the panel form,
  // 43 x 6 + 4 in the dot-product form): up to the target's limit (64 rows for
  // avx512_sapphirerapids, 32 for other targets), batch times length, take the
  // dot-product form (its register tile from 4 rows of a sequence, its matrix-vector
  // order below), more rows the panel. 1 x 32 and 2 x 32 are each limit's last count.
  load({"tensor<?x?x160xf32>", "tensor<262x160xf32>", "tensor<262xf32>"},
       "tensor<?x?x262xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x?x160xf32>, tensor<262x160xf32>, "
       "tensor<262xf32>) -> tensor<?x?x262xf32>");
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {8, 3}, {1, 9}, {1, 32}, {1, 33}, {2, 32}, {1, 65}, {3, 50}, {2, 0}})
    checkRandom({{b, s, 160}, {262, 160}, {262}});
}

TEST_F(HalideLower, FewRowsFormOnlyWhereTheRowCountIsChosenAtRunTime) {
  // The few-rows form is compiled beside the panel for an encoder's linear only: not
  // for a decode step's batch rows (always the dot-product form), static rows, or
  // fewer columns than 4 panels.
  // rows: the input's shape before its K = 64; n: the weight's rows, the columns.
  auto hasFewRowsForm = [&](const std::string &rows, int64_t n) {
    std::string in = "tensor<" + rows + "x64xf32>",
                out = "tensor<" + rows + "x" + std::to_string(n) + "xf32>",
                w = "tensor<" + std::to_string(n) + "x64xf32>",
                b = "tensor<" + std::to_string(n) + "xf32>";
    load({in, w, b}, out,
         "kiln.linear %arg0, %arg1, %arg2 : (" + in + ", " + w + ", " + b + ") -> " +
             out);
    std::string text = loweredStmt(harness);
    EXPECT_NE(text.find("produce product"), std::string::npos) << in;
    return text.find("product_few_rows") != std::string::npos;
  };
  // A panel is 64 columns with AVX-512 and 16 with AVX2 (HL_JIT_TARGET picks which).
  const int64_t fourPanels =
      4 * cpu::matmul::panelColumns(
              Halide::get_jit_target_from_environment().natural_vector_size(
                  Halide::Float(32)));
  EXPECT_TRUE(hasFewRowsForm("?x?", 300));
  EXPECT_TRUE(hasFewRowsForm("4x?", 300));
  EXPECT_TRUE(hasFewRowsForm("?x?", fourPanels));
  EXPECT_FALSE(hasFewRowsForm("?x1", 300));
  EXPECT_FALSE(hasFewRowsForm("100", 300));
  EXPECT_FALSE(hasFewRowsForm("?x?", fourPanels - 8));
  EXPECT_FALSE(hasFewRowsForm("?x65", 300));
}

/// A k loop (`.k$x.ko`) of a lowered statement: how many different elements of a buffer
/// its body reads (the text of each index, once however often it is repeated: one
/// weight vector a step, or one per column of a tile), and how far ahead of the step's
/// own elements its prefetches of the buffer reach.
struct KLoop {
  size_t reads = 0;
  std::set<int64_t> prefetchOffsets;
};

std::vector<KLoop> kLoops(const std::string &stmt, const std::string &buffer) {
  std::vector<KLoop> loops;
  const std::string prefetch = "prefetch(" + buffer + ", ";
  for (size_t at = stmt.find(".k$x.ko, "); at != std::string::npos;
       at = stmt.find(".k$x.ko, ", at + 1)) {
    size_t open = stmt.find('{', at), end = open;
    for (int depth = 0; end < stmt.size(); ++end) {
      depth += stmt[end] == '{' ? 1 : stmt[end] == '}' ? -1 : 0;
      if (depth == 0)
        break;
    }
    std::string body = stmt.substr(open, end - open);
    std::set<std::string> reads;
    for (size_t r = body.find(buffer + "["); r != std::string::npos;
         r = body.find(buffer + "[", r + 1))
      reads.insert(body.substr(r, body.find(']', r) - r));
    KLoop loop;
    loop.reads = reads.size();
    // "prefetch(weight, (index of this step) + OFFSET, 1, 16)": OFFSET is the distance
    // ahead where the step's index has no constant of its own.
    for (size_t p = body.find(prefetch); p != std::string::npos;
         p = body.find(prefetch, p + 1)) {
      std::string call = body.substr(p, body.find('\n', p) - p);
      size_t plus = call.rfind(" + "), comma = call.find(',', plus);
      if (plus != std::string::npos && comma != std::string::npos)
        loop.prefetchOffsets.insert(std::stoll(call.substr(plus + 3, comma - plus - 3)));
    }
    loops.push_back(loop);
  }
  return loops;
}

TEST_F(HalideLower, DotFormPrefetchesTheNextPanelWhereBothFitTheLevelItFills) {
  // A decode step's register tile prefetches the weight rows of the panels ahead (6
  // rows a panel) while both fit the level that the prefetch fills: L1, tuned for
  // generic cores, takes K = 512 (12 KB a panel, 3072 elements, one panel ahead) but not
  // K = 2048 (48 KB); L2, tuned for Zen 4, takes two panels ahead at K = 512 (6144
  // elements) and one at K = 2048 (12288), but not K = 8192 (192 KB).
  // Where the weight is read in turn (Zen 4, below 4 rows), each k step also
  // prefetches 4 KB ahead (DotFormMatrixVectorOrderFollowsTheCore); here only the
  // register tile's k loops, which read a vector of every column, count.
  auto registerTileOffsets = [&](int64_t k) {
    std::string in = "tensor<?x1x" + std::to_string(k) + "xf32>",
                w = "tensor<64x" + std::to_string(k) + "xf32>";
    load({in, w, "tensor<64xf32>"}, "tensor<?x1x64xf32>",
         "kiln.linear %arg0, %arg1, %arg2 : (" + in + ", " + w +
             ", tensor<64xf32>) -> tensor<?x1x64xf32>");
    std::set<int64_t> offsets;
    for (const KLoop &loop : kLoops(loweredStmt(harness), "weight"))
      if (loop.reads > 1)
        offsets.insert(loop.prefetchOffsets.begin(), loop.prefetchOffsets.end());
    return offsets;
  };
  const bool avx512 = Halide::get_jit_target_from_environment().natural_vector_size(
                          Halide::Float(32)) >= 16;
  struct Expected {
    const char *core;
    int64_t k;
    int64_t offset; // 0: no prefetch
  };
  for (Expected e : {Expected{"generic", 512, 3072}, Expected{"generic", 2048, 0},
                     Expected{"zen4", 512, 6144}, Expected{"zen4", 2048, 12288},
                     Expected{"zen4", 8192, 0}, Expected{"generic", 8192, 0}}) {
    ScopedCpuTune tune(e.core);
    std::set<int64_t> offsets = registerTileOffsets(e.k);
    const bool zen4 = std::string(e.core) == "zen4";
    if (!e.offset)
      EXPECT_TRUE(offsets.empty()) << e.core << " K = " << e.k;
    else if (avx512)
      EXPECT_EQ(offsets.count(e.offset), 1u) << e.core << " K = " << e.k;
    else
      EXPECT_FALSE(offsets.empty()) << e.core << " K = " << e.k;
    // Zen 4's in-turn prefetch asks for L2 at every K.
    if (e.offset || zen4)
      EXPECT_EQ(harness.kernel.codegen.prefetchLevel(),
                zen4 ? PrefetchLevel::L2 : PrefetchLevel::L1)
          << e.core << " K = " << e.k;
    // The prefetch changes no value (past the weight's end on the last panels it does
    // not fault): the step agrees at every batch.
    for (int64_t b : {1, 4, 9})
      checkRandom({{b, 1, e.k}, {64, e.k}, {64}});
  }
}

TEST(CpuTuning, Zen4IsFamily25WithAvx512) {
  // Zen 3 is AMD family 25 too, without AVX-512: the Zen 4 choices were measured on
  // AVX-512 kernels only. Zen 5 (family 26) and Intel keep the generic schedules.
  using cpu::CoreTuning;
  EXPECT_EQ(cpu::coreFromCpuid("AuthenticAMD", 25, true), CoreTuning::Zen4);
  EXPECT_EQ(cpu::coreFromCpuid("AuthenticAMD", 25, false), CoreTuning::Generic);
  EXPECT_EQ(cpu::coreFromCpuid("AuthenticAMD", 26, true), CoreTuning::Generic);
  EXPECT_EQ(cpu::coreFromCpuid("GenuineIntel", 25, true), CoreTuning::Generic);
}

TEST_F(HalideLower, DotFormMatrixVectorOrderFollowsTheCore) {
  // Below 4 rows, tuned for Zen 4, each column's dot product runs whole before the next
  // column's, so that the weight is read as one ascending stream: its k loop reads one
  // weight vector a step. Tuned for other cores the 6 columns run side by side, 6
  // vectors a step (4 in the last, partial tile of 70 columns), as the register tile
  // always does (at K = 200 the guarded last k step reads them again, under other index
  // expressions). In turn, each step also prefetches 4 KB ahead along the stream.
  // SchedulesCpuMatmulDot.cpp, scheduleDotProduct.
  if (Halide::get_jit_target_from_environment().natural_vector_size(Halide::Float(32)) <
      16)
    GTEST_SKIP() << "6-column tiles are the AVX-512 schedule's";
  for (const char *core : {"zen4", "generic"}) {
    ScopedCpuTune tune(core);
    for (const std::string k : {"512", "200"}) {
      std::string in = "tensor<?x1x" + k + "xf32>", w = "tensor<70x" + k + "xf32>";
      load({in, w, "tensor<70xf32>"}, "tensor<?x1x70xf32>",
           "kiln.linear %arg0, %arg1, %arg2 : (" + in + ", " + w +
               ", tensor<70xf32>) -> tensor<?x1x70xf32>");
      std::vector<KLoop> loops = kLoops(loweredStmt(harness), "weight");
      ASSERT_FALSE(loops.empty()) << core << " " << k;
      auto byReads = [](const KLoop &a, const KLoop &b) { return a.reads < b.reads; };
      const KLoop &fewest = *std::min_element(loops.begin(), loops.end(), byReads);
      const bool zen4 = std::string(core) == "zen4";
      if (zen4)
        EXPECT_EQ(fewest.reads, 1u) << k;
      else
        EXPECT_GE(fewest.reads, 4u) << k;
      EXPECT_GE(std::max_element(loops.begin(), loops.end(), byReads)->reads, 6u)
          << core << " " << k;
      // In turn, each k step prefetches the line 4 KB (1024 floats) on along the stream,
      // where the k steps divide K into whole vectors. (A tail's index folds its row's
      // start into the constant, so 1024 shows in one of the loops.)
      const bool prefetches = zen4 && k == "512";
      std::set<int64_t> offsets;
      for (const KLoop &loop : loops)
        if (loop.reads == 1) {
          EXPECT_EQ(loop.prefetchOffsets.empty(), !prefetches) << core << " " << k;
          offsets.insert(loop.prefetchOffsets.begin(), loop.prefetchOffsets.end());
        }
      if (prefetches)
        EXPECT_EQ(offsets.count(1024), 1u) << core << " " << k;
      // 1 to 3 rows take the matrix-vector order, 4 and 9 the register tile.
      int64_t kValue = std::stoll(k);
      for (int64_t b : {1, 2, 3, 4, 9})
        checkRandom({{b, 1, kValue}, {70, kValue}, {70}});
    }
  }
}

/// The assembly of `harness`'s kernel for `target`, as a model's kernel is emitted.
std::string kernelAssembly(KernelHarness &harness, const Halide::Target &target) {
  std::string path = scratchPath("kernel.s");
  std::vector<Halide::Argument> args(harness.kernel.inputs.begin(),
                                     harness.kernel.inputs.end());
  emitKernelFiles(harness.pipeline.compile_to_module(args, "kernel", target),
                  {{Halide::OutputFileType::assembly, path}},
                  harness.kernel.codegen.prefetchLevel());
  return takeFile(path);
}

TEST_F(HalideLower, ModelKernelsPrefetchIntoTheLevelTheirScheduleAsksFor) {
  // Halide's prefetch is prefetchnta, which Intel's server cores keep out of L2; the
  // model's kernels get prefetcht0, or prefetcht1 where Zen 4's dot form streams a
  // weight from DRAM (EmitObject.cpp).
  for (const char *core : {"generic", "zen4"}) {
    ScopedCpuTune tune(core);
    load({"tensor<?x1x512xf32>", "tensor<64x512xf32>", "tensor<64xf32>"},
         "tensor<?x1x64xf32>",
         "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x1x512xf32>, tensor<64x512xf32>, "
         "tensor<64xf32>) -> tensor<?x1x64xf32>");
    const bool zen4 = std::string(core) == "zen4";
    EXPECT_EQ(harness.kernel.codegen.prefetchLevel(),
              zen4 ? PrefetchLevel::L2 : PrefetchLevel::L1)
        << core;
    std::string assembly = kernelAssembly(
        harness, Halide::Target("x86-64-linux-avx-avx2-avx512-avx512_skylake-"
                                "f16c-fma-sse41"));
    EXPECT_EQ(assembly.find("prefetcht0") != std::string::npos, !zen4) << core;
    EXPECT_EQ(assembly.find("prefetcht1") != std::string::npos, zen4) << core;
    EXPECT_EQ(assembly.find("prefetchnta"), std::string::npos) << core;
    // The same kernel still computes what the interpreter does.
    for (int64_t b : {1, 5})
      checkRandom({{b, 1, 512}, {64, 512}, {64}});
  }
}

TEST_F(HalideLower, PanelRegisterTileRowsStagedOrReadInPlaceByCore) {
  // Tuned for cores other than Zen 4, the panel's register tile copies its lhs rows to
  // the stack where K is static (SchedulesCpuMatmulPanel.cpp, stageRegisterTileRows);
  // tuned for Zen 4 it reads them in place, the row clamp peeled off every register tile
  // but the last (chooseLhsRowsInPlace). Either way the clamped last tiles of 1 to 13
  // rows and 6 columns past the last panel agree with the interpreter.
  auto stages = [&](const std::string &k) {
    std::string in = "tensor<?x" + k + "xf32>";
    load({in, "tensor<" + k + "x70xf32>"}, "tensor<?x70xf32>",
         "kiln.matmul %arg0, %arg1 : (" + in + ", tensor<" + k +
             "x70xf32>) -> tensor<?x70xf32>");
    return loweredStmt(harness).find("produce lhs_rows") != std::string::npos;
  };
  for (const char *core : {"generic", "zen4"}) {
    ScopedCpuTune tune(core);
    EXPECT_FALSE(stages("?")) << core;
    EXPECT_EQ(stages("96"), std::string(core) == "generic") << core;
    for (int64_t rows : {1, 5, 6, 7, 13, 24, 31, 50})
      checkRandom({{rows, 96}, {96, 70}});
  }
}

TEST_F(HalideLower, PanelRunsALargeContractionInBlocks) {
  // A static K past 512 that 512 divides runs in blocks of 512, each over the output
  // tile's register tiles, whose rows then fit L1 beside the next tile's, which the k
  // loop prefetches (SchedulesCpuMatmulPanel.cpp, contractionBlock); other K run in one
  // pass, their rows (24 KB at K = 1000) too large to prefetch. The sums run along k in
  // order either way, so the blocks agree with the interpreter as the single pass does.
  auto lower = [&](int64_t k) {
    std::string ks = std::to_string(k), in = "tensor<?x" + ks + "xf32>";
    load({in, "tensor<" + ks + "x70xf32>"}, "tensor<?x70xf32>",
         "kiln.matmul %arg0, %arg1 : (" + in + ", tensor<" + ks +
             "x70xf32>) -> tensor<?x70xf32>");
    return loweredStmt(harness);
  };
  // Tuned for Zen 4 the rows are read in place: blocks, and nothing staged to prefetch.
  for (const char *core : {"generic", "zen4"}) {
    ScopedCpuTune tune(core);
    const bool staged = std::string(core) == "generic";
    std::string blocked = lower(1024);
    EXPECT_NE(blocked.find(".k$x.ko"), std::string::npos) << core;
    EXPECT_EQ(blocked.find("prefetch(") != std::string::npos, staged) << core;
    for (int64_t rows : {1, 7, 13, 24, 50})
      checkRandom({{rows, 1024}, {1024, 70}});
    std::string onePass = lower(1000);
    EXPECT_EQ(onePass.find(".k$x.ko"), std::string::npos) << core;
    EXPECT_EQ(onePass.find("prefetch("), std::string::npos) << core;
    checkRandom({{13, 1000}, {1000, 70}});
  }
}

TEST_F(HalideLower, PanelTilesOfTwoPanelsPastTheL2) {
  // Past 1 MB of lhs rows (512 at K = 512) the panel schedule's output tiles span two
  // 64-column panels (SchedulesCpuMatmulPanel.cpp, wideOutputTiles), packed per tile from
  // a rhs as it lies: a matmul's and a linear's transposed weight, on both sides of the
  // row count that picks them.
  load({"tensor<?x512xf32>", "tensor<512x512xf32>"}, "tensor<?x512xf32>",
       "kiln.matmul %arg0, %arg1 : (tensor<?x512xf32>, tensor<512x512xf32>) -> "
       "tensor<?x512xf32>");
  for (int64_t rows : {512, 530})
    checkRandom({{rows, 512}, {512, 512}});
  load({"tensor<?x512xf32>", "tensor<512x512xf32>", "tensor<512xf32>"},
       "tensor<?x512xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x512xf32>, tensor<512x512xf32>, "
       "tensor<512xf32>) -> tensor<?x512xf32>");
  for (int64_t rows : {512, 601})
    checkRandom({{rows, 512}, {512, 512}, {512}});
}

TEST_F(HalideLower, LinearDotScheduleRowBlocks) {
  // A decode step's rows (the batch) take the dot-product schedule; past 256 rows (256
  // KB of lhs at K = 256) they go in blocks: 261 is a block and 5 rows, 515 two and 3.
  // 70 = 11 x 6 + 4 columns.
  load({"tensor<?x1x256xf32>", "tensor<70x256xf32>", "tensor<70xf32>"},
       "tensor<?x1x70xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x1x256xf32>, tensor<70x256xf32>, "
       "tensor<70xf32>) -> tensor<?x1x70xf32>");
  for (int64_t b : {1, 13, 261, 515})
    checkRandom({{b, 1, 256}, {70, 256}, {70}});
}

TEST_F(HalideLower, LinearDotScheduleStaticRowBlocks) {
  // 40 static rows at K = 2048: the dot-product schedule, in a block of 32 rows (256 KB
  // of lhs) and one of 8.
  load({"tensor<40x2048xf32>", "tensor<70x2048xf32>", "tensor<70xf32>"},
       "tensor<40x70xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<40x2048xf32>, tensor<70x2048xf32>, "
       "tensor<70xf32>) -> tensor<40x70xf32>");
  checkRandom({{40, 2048}, {70, 2048}, {70}});
}

TEST_F(HalideLower, LinearDecodeStep) {
  // A static m of 1: the batch dimension supplies the tile rows.
  load({"tensor<?x1x64xf32>", "tensor<130x64xf32>", "tensor<130xf32>"},
       "tensor<?x1x130xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x1x64xf32>, tensor<130x64xf32>, "
       "tensor<130xf32>) -> tensor<?x1x130xf32>");
  for (int64_t b : {1, 5, 31, 0})
    checkRandom({{b, 1, 64}, {130, 64}, {130}});
}

TEST_F(HalideLower, LinearStaticRows) {
  // A matrix-vector product (one static row) and a few static rows, K off the vectors.
  load({"tensor<1x512xf32>", "tensor<100x512xf32>", "tensor<100xf32>"},
       "tensor<1x100xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<1x512xf32>, tensor<100x512xf32>, "
       "tensor<100xf32>) -> tensor<1x100xf32>");
  checkRandom({{1, 512}, {100, 512}, {100}});
  load({"tensor<5x20xf32>", "tensor<33x20xf32>", "tensor<33xf32>"}, "tensor<5x33xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<5x20xf32>, tensor<33x20xf32>, "
       "tensor<33xf32>) -> tensor<5x33xf32>");
  checkRandom({{5, 20}, {33, 20}, {33}});
}

TEST_F(HalideLower, LinearRank1Input) {
  load({"tensor<64xf32>", "tensor<19x64xf32>", "tensor<19xf32>"}, "tensor<19xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<64xf32>, tensor<19x64xf32>, "
       "tensor<19xf32>) -> tensor<19xf32>");
  checkRandom({{64}, {19, 64}, {19}});
}

TEST_F(HalideLower, LinearDynamicFeatures) {
  // Dynamic in and out features; K = 0 gives the bias alone.
  load({"tensor<?x?xf32>", "tensor<?x?xf32>", "tensor<?xf32>"}, "tensor<?x?xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x?xf32>, tensor<?x?xf32>, "
       "tensor<?xf32>) -> tensor<?x?xf32>");
  for (auto [m, k, n] : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {7, 33, 20}, {30, 300, 17}, {3, 0, 5}})
    checkRandom({{m, k}, {n, k}, {n}});
}

TEST_F(HalideLower, LinearMismatchedBiasIsARuntimeError) {
  load({"tensor<?x?xf32>", "tensor<?x?xf32>", "tensor<?xf32>"}, "tensor<?x?xf32>",
       "kiln.linear %arg0, %arg1, %arg2 : (tensor<?x?xf32>, tensor<?x?xf32>, "
       "tensor<?xf32>) -> tensor<?x?xf32>");
  EXPECT_ANY_THROW(harness.run(
      {randomTensor({4, 8}, 1), randomTensor({5, 8}, 2), randomTensor({6}, 3)}, {4, 5}));
}

//===----------------------------------------------------------------------===//
// gelu
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, GeluShapes) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>", "kiln.gelu %arg0 : tensor<?x?x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 17}, Shape{2, 40, 130}}) {
    check({randomTensor(s, seed++, -4.0f, 4.0f)});
  }
}

TEST_F(HalideLower, GeluSweepRelativeError) {
  // Every element to a few f32 ulps, over [-10, 10] (where the result spans 1e-23 to
  // 10) and on activations ~ N(0, 1); Halide's erf() in 1 + erf() is 1.3e-5 off at
  // x = -3 and loses every digit by x = -5.5. The 1e-5 check is against the
  // interpreter as everywhere; the pointwise one is against 0.5 x erfc(-x / sqrt(2))
  // in double, because the interpreter's 1 + erf(x / sqrt(2)) cancels in double too:
  // below x = -6 its own relative error passes 1e-7, at x = -8.4 it is 100%.
  load({"tensor<?xf32>"}, "tensor<?xf32>", "kiln.gelu %arg0 : tensor<?xf32>");
  HostTensor sweep = HostTensor::floats({200001});
  for (int64_t i = 0; i < 200001; ++i)
    sweep.f32[i] = -10.0f + 20.0f * static_cast<float>(i) / 200000;
  HostTensor normal = HostTensor::floats({100000});
  std::mt19937 rng(seed++);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float &v : normal.f32)
    v = dist(rng);
  for (const HostTensor &x : {sweep, normal}) {
    HostTensor actual = check({x});
    double worst = 0, at = 0;
    for (size_t i = 0; i < x.f32.size(); ++i) {
      double v = x.f32[i], exact = 0.5 * v * std::erfc(-v / std::sqrt(2.0));
      if (exact == 0)
        continue;
      double rel = std::abs(actual.f32[i] - exact) / std::abs(exact);
      if (rel > worst) {
        worst = rel;
        at = v;
      }
    }
    EXPECT_LE(worst, 6e-7) << "at x = " << at;
    std::printf("gelu: max pointwise relative error %.3g at x = %g (%zu elements)\n",
                worst, at, x.f32.size());
  }
  // Out in the tails: 0 below, x itself above, no NaN.
  HostTensor tails = HostTensor::floats({4}, {-30.0f, -1e30f, 30.0f, 1e30f});
  HostTensor actual = harness.run({tails}, {4});
  EXPECT_EQ(actual.f32[0], 0.0f);
  EXPECT_EQ(actual.f32[1], 0.0f);
  EXPECT_EQ(actual.f32[2], 30.0f);
  EXPECT_EQ(actual.f32[3], 1e30f);
}

//===----------------------------------------------------------------------===//
// log_softmax
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, LogSoftmaxLastAxis) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.log_softmax %arg0 {axis = 2 : i64} : tensor<?x?x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 17}, Shape{1, 5, 64}, Shape{2, 9, 100},
                  Shape{1, 2, 3000}, Shape{2, 0, 5}, Shape{2, 3, 0}})
    check({randomTensor(s, seed++, -20.0f, 20.0f)});
}

TEST_F(HalideLower, LogSoftmaxMaskedAndInvalidRows) {
  // Row 0 fully masked: -inf everywhere, never NaN. Row 1: logits near float's exp
  // limit, some masked. Row 2 holds a NaN and row 3 a +inf: NaN rows, as the
  // interpreter gives (and PyTorch).
  load({"tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.log_softmax %arg0 {axis = 1 : i64} : tensor<?x?xf32>");
  for (int64_t n : {1, 5, 37}) {
    HostTensor x = randomTensor({5, n}, seed++, -50.0f, 80.0f);
    for (int64_t j = 0; j < n; ++j) {
      x.f32[j] = -kInf;
      if (j % 2)
        x.f32[n + j] = -kInf;
    }
    x.f32[n] = 88.0f;
    x.f32[2 * n + n / 2] = kNaN;
    x.f32[3 * n + n - 1] = kInf;
    HostTensor actual = check({x});
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_EQ(actual.f32[j], -kInf) << "masked row, column " << j;
      EXPECT_TRUE(std::isnan(actual.f32[2 * n + j])) << "NaN row, column " << j;
      EXPECT_TRUE(std::isnan(actual.f32[3 * n + j])) << "+inf row, column " << j;
      if (j % 2 && n > 1)
        EXPECT_EQ(actual.f32[n + j], -kInf) << "partly masked row, column " << j;
    }
  }
}

TEST_F(HalideLower, LogSoftmaxOuterAxes) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.log_softmax %arg0 {axis = 1 : i64} : tensor<?x?x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 7, 19}, Shape{3, 33, 1}})
    checkRandom({s});
  load({"tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.log_softmax %arg0 {axis = 0 : i64} : tensor<?x?xf32>");
  HostTensor x = randomTensor({9, 40}, seed++);
  for (int64_t i = 0; i < 9; ++i)
    x.f32[i * 40 + 3] = -kInf; // column 3 fully masked
  check({x});
}

//===----------------------------------------------------------------------===//
// argmax
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, ArgmaxLastAxis) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?xi32>",
       "kiln.argmax %arg0 {axis = 2 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?xi32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 17}, Shape{2, 5, 100}, Shape{3, 2, 32000}})
    checkRandom({s});
}

TEST_F(HalideLower, ArgmaxTiesNaNAndMaskedRows) {
  // Rows: equal maxima in different vector lanes (the first wins), a NaN after the max
  // and two NaNs (the first NaN wins), all -inf (index 0), the max at the last element.
  load({"tensor<?x?xf32>"}, "tensor<?xi32>",
       "kiln.argmax %arg0 {axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?xi32>");
  for (int64_t n : {1, 2, 17, 100}) {
    HostTensor x = randomTensor({5, n}, seed++);
    auto at = [&](int64_t row, int64_t j) -> float & { return x.f32[row * n + j]; };
    at(0, n - 1) = 5.0f;
    at(0, n / 3) = 5.0f;
    at(0, n / 2) = 5.0f;
    at(1, 0) = 9.0f;
    at(1, n - 1) = kNaN;
    at(1, (n - 1) / 2) = kNaN;
    for (int64_t j = 0; j < n; ++j)
      at(2, j) = -kInf;
    at(3, n - 1) = 2.0f;
    HostTensor actual = check({x});
    EXPECT_EQ(actual.i32[0], n / 3);
    EXPECT_EQ(actual.i32[1], (n - 1) / 2);
    EXPECT_EQ(actual.i32[2], 0);
    EXPECT_EQ(actual.i32[3], n - 1);
  }
}

TEST_F(HalideLower, ArgmaxOuterAxes) {
  load({"tensor<?x?x?xf32>"}, "tensor<?x?xi32>",
       "kiln.argmax %arg0 {axis = 1 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?xi32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 7, 19}, Shape{3, 33, 1}})
    checkRandom({s});
  load({"tensor<?x?xf32>"}, "tensor<?xi32>",
       "kiln.argmax %arg0 {axis = 0 : i64} : (tensor<?x?xf32>) -> tensor<?xi32>");
  HostTensor x = randomTensor({9, 40}, seed++);
  x.f32[5 * 40 + 3] = x.f32[2 * 40 + 3] = 7.0f; // a tie down column 3
  x.f32[6 * 40 + 4] = kNaN;
  HostTensor actual = check({x});
  EXPECT_EQ(actual.i32[3], 2);
  EXPECT_EQ(actual.i32[4], 6);
}

TEST_F(HalideLower, ArgmaxEmptyAxisIsARuntimeError) {
  load({"tensor<?x?xf32>"}, "tensor<?xi32>",
       "kiln.argmax %arg0 {axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?xi32>");
  std::string error = runError({HostTensor::floats({3, 0})}, {3});
  EXPECT_NE(error.find("argmax along an axis of size 0"), std::string::npos) << error;
  // No rows: nothing to pick, no error.
  EXPECT_EQ(runError({HostTensor::floats({0, 0})}, {0}), "");
}

//===----------------------------------------------------------------------===//
// slice and concat
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, SliceInnermostAxis) {
  load({"tensor<?x?x72xf32>"}, "tensor<?x?x35xf32>",
       "kiln.slice %arg0 {axis = 2 : i64, start = 13 : i64, end = 48 : i64} : "
       "(tensor<?x?x72xf32>) -> tensor<?x?x35xf32>");
  for (Shape s : {Shape{1, 1, 72}, Shape{2, 9, 72}})
    checkRandom({s});
}

TEST_F(HalideLower, SliceOuterAxisDynamic) {
  load({"tensor<?x?x8xf32>"}, "tensor<?x3x8xf32>",
       "kiln.slice %arg0 {axis = 1 : i64, start = 2 : i64, end = 5 : i64} : "
       "(tensor<?x?x8xf32>) -> tensor<?x3x8xf32>");
  for (Shape s : {Shape{1, 5, 8}, Shape{4, 30, 8}})
    checkRandom({s});
  // The dynamic axis is shorter than `end`: the kernel fails instead of reading past it.
  std::string error = runError({randomTensor({2, 4, 8}, seed++)}, {2, 3, 8});
  EXPECT_NE(
      error.find("Input buffer input is accessed at 4, which is beyond the max (3)"),
      std::string::npos)
      << error;
}

TEST_F(HalideLower, SliceInt32) {
  load({"tensor<?x?xi32>"}, "tensor<?x1xi32>",
       "kiln.slice %arg0 {axis = 1 : i64, start = 0 : i64, end = 1 : i64} : "
       "(tensor<?x?xi32>) -> tensor<?x1xi32>");
  check({randomInts({3, 7}, seed++, -100, 100)});
  check({randomInts({1, 1}, seed++, -100, 100)});
}

TEST_F(HalideLower, ConcatOuterAxisThreeOperands) {
  load({"tensor<?x?x7xf32>", "tensor<?x3x7xf32>", "tensor<?x?x7xf32>"},
       "tensor<?x?x7xf32>",
       "kiln.concat %arg0, %arg1, %arg2 {axis = 1 : i64} : (tensor<?x?x7xf32>, "
       "tensor<?x3x7xf32>, tensor<?x?x7xf32>) -> tensor<?x?x7xf32>");
  checkRandom({{2, 4, 7}, {2, 3, 7}, {2, 9, 7}});
  checkRandom({{1, 1, 7}, {1, 3, 7}, {1, 0, 7}});
  checkRandom({{40, 300, 7}, {40, 3, 7}, {40, 100, 7}}); // parallel tasks
}

TEST_F(HalideLower, ConcatInnermostAxisTokenIds) {
  // A decode step appends the next token to each sequence.
  load({"tensor<?x?xi32>", "tensor<?x1xi32>"}, "tensor<?x?xi32>",
       "kiln.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<?x?xi32>, tensor<?x1xi32>) "
       "-> tensor<?x?xi32>");
  for (auto [b, t] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 17}, {64, 700}})
    check({randomInts({b, t}, seed++, 0, 31999), randomInts({b, 1}, seed++, 0, 31999)});
}

TEST_F(HalideLower, ConcatOutermostAxis) {
  load({"tensor<?x20xf32>", "tensor<?x20xf32>"}, "tensor<?x20xf32>",
       "kiln.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<?x20xf32>, tensor<?x20xf32>) "
       "-> tensor<?x20xf32>");
  checkRandom({{1, 20}, {1, 20}});
  checkRandom({{5, 20}, {2000, 20}});
}

TEST_F(HalideLower, ConcatSingleStaticOperand) {
  load({"tensor<3x5xf32>"}, "tensor<3x5xf32>",
       "kiln.concat %arg0 {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>");
  checkRandom({{3, 5}});
}

TEST_F(HalideLower, ConcatMismatchedOperandsIsARuntimeError) {
  load({"tensor<?x?xf32>", "tensor<?x?xf32>"}, "tensor<?x?xf32>",
       "kiln.concat %arg0, %arg1 {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?x?xf32>) "
       "-> tensor<?x?xf32>");
  EXPECT_ANY_THROW(
      harness.run({randomTensor({2, 3}, 1), randomTensor({4, 3}, 2)}, {2, 6}));
}

//===----------------------------------------------------------------------===//
// embedding, range, sinusoid, masks
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, Embedding) {
  load({"tensor<50x24xf32>", "tensor<?x?xi32>"}, "tensor<?x?x24xf32>",
       "kiln.embedding %arg0, %arg1 : (tensor<50x24xf32>, tensor<?x?xi32>) -> "
       "tensor<?x?x24xf32>");
  for (auto [b, s] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {2, 7}, {3, 33}})
    check({randomTensor({50, 24}, seed++), randomInts({b, s}, seed++, 0, 49)});
  load({"tensor<1000x512xf32>", "tensor<?x?xi32>"}, "tensor<?x?x512xf32>",
       "kiln.embedding %arg0, %arg1 : (tensor<1000x512xf32>, tensor<?x?xi32>) -> "
       "tensor<?x?x512xf32>");
  check({randomTensor({1000, 512}, seed++), randomInts({8, 100}, seed++, 0, 999)});
}

TEST_F(HalideLower, EmbeddingScalarIdAndDynamicTable) {
  load({"tensor<?x?xf32>", "tensor<i32>"}, "tensor<?xf32>",
       "kiln.embedding %arg0, %arg1 : (tensor<?x?xf32>, tensor<i32>) -> tensor<?xf32>");
  check({randomTensor({7, 40}, seed++), HostTensor::ints({}, {6})});
  check({randomTensor({1, 1}, seed++), HostTensor::ints({}, {0})});
}

TEST_F(HalideLower, EmbeddingChecksIdsOutsideTheTable) {
  // Nothing proves these ids rows of the table: the kernel checks each and fails on the
  // first outside, as the interpreter does, rather than read a clamped row.
  load({"tensor<10x16xf32>", "tensor<?xi32>"}, "tensor<?x16xf32>",
       "kiln.embedding %arg0, %arg1 : (tensor<10x16xf32>, tensor<?xi32>) -> "
       "tensor<?x16xf32>");
  HostTensor table = randomTensor({10, 16}, seed++);
  for (int32_t id : {-5, 10, 1 << 30}) {
    std::string message;
    try {
      harness.run({table, HostTensor::ints({2}, {9, id})}, {2, 16});
    } catch (const std::exception &e) {
      message = e.what();
    }
    std::string want =
        "embedding of 'table' (10 rows): index " + std::to_string(id) + " out of range";
    EXPECT_NE(message.find(want), std::string::npos) << message;
    std::string error;
    harness.reference({table, HostTensor::ints({2}, {9, id})}, error);
    EXPECT_NE(error.find(want), std::string::npos) << error;
  }
}

TEST_F(HalideLower, Range) {
  load({"tensor<?x?xi32>"}, "tensor<?xi32>",
       "kiln.range %arg0 {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>");
  for (auto [b, s] :
       std::vector<std::pair<int64_t, int64_t>>{{2, 1}, {3, 37}, {1, 20000}})
    check({randomInts({b, s}, seed++, 0, 9)});
  load({"tensor<4x?x8xf32>"}, "tensor<?xi32>",
       "kiln.range %arg0 {axis = 1 : i64} : (tensor<4x?x8xf32>) -> tensor<?xi32>");
  checkRandom({{4, 19, 8}});
  load({"tensor<4x?x8xf32>"}, "tensor<4xi32>",
       "kiln.range %arg0 {axis = 0 : i64} : (tensor<4x?x8xf32>) -> tensor<4xi32>");
  checkRandom({{4, 3, 8}});
}

/// Positions 0, 1, ..., n-1.
HostTensor iota(int64_t n) {
  HostTensor t = HostTensor::ints({n});
  for (int64_t i = 0; i < n; ++i)
    t.i32[i] = static_cast<int32_t>(i);
  return t;
}

/// max |a - b| over all elements.
double maxAbsDiff(const HostTensor &a, const HostTensor &b) {
  double diff = 0;
  for (size_t i = 0; i < b.f32.size(); ++i)
    diff = std::max<double>(diff, std::abs(a.f32[i] - b.f32[i]));
  return diff;
}

TEST_F(HalideLower, SinusoidPositionsToLargeValues) {
  // Positions up to 2048 and beyond: each value is within an f32 rounding of the
  // interpreter's double (~6e-8; an f32 angle would be off by 1e-4 at p = 2000).
  load({"tensor<?xi32>"}, "tensor<?x512xf32>",
       "kiln.sinusoid %arg0 : (tensor<?xi32>) -> tensor<?x512xf32>");
  std::vector<HostTensor> cases = {iota(1), iota(17), iota(2049),
                                   randomInts({300}, seed++, -100000, 100000)};
  for (const HostTensor &positions : cases) {
    std::string error;
    HostTensor expected = harness.reference({positions}, error);
    ASSERT_TRUE(error.empty()) << error;
    HostTensor actual = check({positions});
    EXPECT_LE(maxAbsDiff(actual, expected), 1.2e-7) << shapeString(positions.shape);
  }
  // Any i32 position, to the usual tolerance: above |p| ~ 1e8 the angle's own double
  // rounding (p w(d) here, p / 10000^(2i/D) there) differs by ~1e-7.
  check({randomInts({50}, seed++, -2000000000, 2000000000)});
}

TEST_F(HalideLower, SinusoidBatchedPositions) {
  load({"tensor<2x?xi32>"}, "tensor<2x?x6xf32>",
       "kiln.sinusoid %arg0 : (tensor<2x?xi32>) -> tensor<2x?x6xf32>");
  check({randomInts({2, 5}, seed++, 0, 3000)});
  check({randomInts({2, 1}, seed++, 0, 3000)});
}

TEST_F(HalideLower, PaddingMask) {
  load({"tensor<?xi32>", "tensor<?x?xi32>"}, "tensor<?x?xf32>",
       "kiln.padding_mask %arg0, %arg1 {axis = 1 : i64} : (tensor<?xi32>, "
       "tensor<?x?xi32>) -> tensor<?x?xf32>");
  for (int64_t n : {1, 17, 100}) {
    // Lengths 0 (all masked), n (none), beyond n, negative, in between.
    HostTensor lengths =
        HostTensor::ints({6}, {0, static_cast<int32_t>(n), static_cast<int32_t>(n + 5),
                               -3, static_cast<int32_t>(n / 2), 1});
    HostTensor actual = check({lengths, randomInts({6, n}, seed++, 0, 9)});
    EXPECT_EQ(actual.f32[0], -kInf);
    EXPECT_EQ(actual.f32[n], 0.0f);
  }
}

TEST_F(HalideLower, CausalMask) {
  load({"tensor<?x?xi32>"}, "tensor<?x?xf32>",
       "kiln.causal_mask %arg0 {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xf32>");
  for (int64_t n : {1, 5, 37, 300}) {
    HostTensor actual = check({randomInts({2, n}, seed++, 0, 9)});
    if (n > 1) {
      EXPECT_EQ(actual.f32[1], -kInf);
      EXPECT_EQ(actual.f32[n], 0.0f);
    }
  }
  load({"tensor<3x12xf32>"}, "tensor<3x3xf32>",
       "kiln.causal_mask %arg0 {axis = 0 : i64} : (tensor<3x12xf32>) -> tensor<3x3xf32>");
  checkRandom({{3, 12}});
}

//===----------------------------------------------------------------------===//
// Kernels and signatures of the layer ops
//===----------------------------------------------------------------------===//

TEST(HalideLowerLayers, SignaturesSeeAttributesNotAnnotations) {
  mlir::MLIRContext context;
  context.loadDialect<kiln::KilnDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
    func @main(%x: tensor<?x?x512xf32>, %ids: tensor<?x?xi32>) -> tensor<?x?x64xf32> {
      %0 = kiln.slice %x {axis = 2 : i64, start = 0 : i64, end = 64 : i64}
          : (tensor<?x?x512xf32>) -> tensor<?x?x64xf32>
      %1 = kiln.slice %x {axis = 2 : i64, start = 64 : i64, end = 128 : i64}
          : (tensor<?x?x512xf32>) -> tensor<?x?x64xf32>
      %2 = kiln.slice %x {axis = 2 : i64, start = 64 : i64, end = 128 : i64, note = "q"}
          : (tensor<?x?x512xf32>) -> tensor<?x?x64xf32>
      %3 = kiln.gelu %x : tensor<?x?x512xf32>
      %4 = kiln.gelu %x {note = "ffn"} : tensor<?x?x512xf32>
      %5 = kiln.range %ids {axis = 0 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
      %6 = kiln.range %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
      kiln.return %0 : tensor<?x?x64xf32>
    })mlir",
                                                        &context);
  ASSERT_TRUE(module);
  std::vector<mlir::Operation *> m;
  for (mlir::Operation &op : module->lookupSymbol<mlir::FuncOp>("main").front())
    m.push_back(&op);
  for (int i = 0; i < 7; ++i)
    EXPECT_TRUE(needsKernel(m[i])) << i;
  EXPECT_NE(kernelSignature(m[0]), kernelSignature(m[1]));
  EXPECT_EQ(kernelSignature(m[1]), kernelSignature(m[2]));
  EXPECT_EQ(kernelSignature(m[3]), kernelSignature(m[4]));
  EXPECT_NE(kernelSignature(m[5]), kernelSignature(m[6]));
}

} // namespace
