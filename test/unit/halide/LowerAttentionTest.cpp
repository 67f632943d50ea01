//===- LowerAttentionTest.cpp - The fused attention kernel vs the interpreter ===//
//
// kiln.attention lowered to the flash-style kernel (LowerAttention.cpp), JIT-compiled
// once per op with its dynamic extents symbolic, against the reference interpreter's
// kiln.attention on fresh random inputs, to max|a - b| / max|b| <= 1e-5: sequence
// lengths 1, 7, 64, 513 and 2048 (one head), causal, padding masks, no mask, fully
// masked rows (masked_row_value, 0 by default), cross attention, a decode step, large
// scores, NaN, and q, k, v as head splits of one packed projection. Then the smaller ops
// that attention graphs are built from: div, constant, masked_fill and the boolean (i1)
// masks.
//
//===----------------------------------------------------------------------===//

#include "LowerTestSupport.h"

#include <iterator>
#include <map>
#include <memory>
#include <regex>

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

/// kiln.attention of a `qType` query and `kvType` keys and values, with `attrs` and,
/// if `maskType` is not empty, a mask of that type.
std::string attentionOp(const std::string &qType, const std::string &kvType,
                        const std::string &resultType, const std::string &attrs,
                        const std::string &maskType = "") {
  std::string operands =
      "%arg0, %arg1, %arg2" + std::string(maskType.empty() ? "" : ", %arg3");
  std::string types =
      qType + ", " + kvType + ", " + kvType + (maskType.empty() ? "" : ", " + maskType);
  return "kiln.attention " + operands + " {" + attrs + "} : (" + types + ") -> " +
         resultType;
}

/// An additive padding mask [B, 1, 1, Tk]: keys at or past lengths[b] are -inf.
HostTensor paddingMask(const std::vector<int64_t> &lengths, int64_t keys) {
  int64_t batch = static_cast<int64_t>(lengths.size());
  HostTensor mask = HostTensor::floats({batch, 1, 1, keys});
  mask.f32.assign(batch * keys, 0.0f);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = lengths[b]; j < keys; ++j)
      mask.f32[b * keys + j] = -kInf;
  return mask;
}

/// Whether every element of rows [rowBegin, rowEnd) of head `matrix` (a [.., T, D]
/// result, matrices counted over the leading dims) equals `value`.
bool rowsEqual(const HostTensor &t, int64_t matrix, int64_t rowBegin, int64_t rowEnd,
               float value) {
  int64_t rows = t.shape[t.shape.size() - 2], cols = t.shape.back();
  for (int64_t r = rowBegin; r < rowEnd; ++r)
    for (int64_t c = 0; c < cols; ++c)
      if (t.f32[(matrix * rows + r) * cols + c] != value)
        return false;
  return true;
}

/// The attention tests: kernels are JIT-compiled once per op text for the whole
/// program (a compile takes ~0.6 s, most of this file's time), so that the tests that
/// share an op share its kernel.
class HalideLowerAttention : public ::testing::Test {
protected:
  /// Selects the kernel of `op` applied to `argTypes`, compiling it on first use.
  void load(const std::vector<std::string> &argTypes, const std::string &resultType,
            const std::string &op) {
    std::string text = oneOpModule(argTypes, resultType, op);
    static std::map<std::string, std::unique_ptr<KernelHarness>> kernels;
    std::unique_ptr<KernelHarness> &cached = kernels[text];
    if (!cached) {
      cached = std::make_unique<KernelHarness>();
      std::string error = cached->load(text);
      if (!error.empty())
        cached.reset();
      ASSERT_TRUE(error.empty()) << error;
    }
    harness = cached.get();
  }

  /// The kernel and the interpreter on `inputs`, compared (LowerTestSupport.h's
  /// tolerance); returns the kernel's result.
  HostTensor check(const std::vector<HostTensor> &inputs) {
    std::string error;
    HostTensor expected = harness->reference(inputs, error);
    EXPECT_TRUE(error.empty()) << error;
    if (!error.empty())
      return {};
    HostTensor actual = harness->run(inputs, expected.shape);
    std::string shapes;
    for (const HostTensor &t : inputs)
      shapes += shapeString(t.shape) + " ";
    EXPECT_LE(relativeError(actual, expected), kTolerance) << "inputs " << shapes;
    return actual;
  }

  void checkRandom(const std::vector<Shape> &shapes) {
    std::vector<HostTensor> inputs;
    for (const Shape &shape : shapes)
      inputs.push_back(randomTensor(shape, seed++));
    check(inputs);
  }

  /// q [B, H, Tq, D], k and v [B, H, Tk, D(v)], random in [-1, 1), then checked (with
  /// `mask` appended when given).
  HostTensor checkShapes(int64_t batch, int64_t heads, int64_t queries, int64_t keys,
                         int64_t dim = 64, int64_t valueDim = 64,
                         const HostTensor *mask = nullptr) {
    std::vector<HostTensor> inputs = {
        randomTensor({batch, heads, queries, dim}, seed++),
        randomTensor({batch, heads, keys, dim}, seed++),
        randomTensor({batch, heads, keys, valueDim}, seed++)};
    if (mask)
      inputs.push_back(*mask);
    return check(inputs);
  }

  KernelHarness *harness = nullptr;
  unsigned seed = 1;
};

//===----------------------------------------------------------------------===//
// Sequence lengths, causal and not
//===----------------------------------------------------------------------===//

/// Shared by the causal tests (and, for its types, the one without a mask): [B, H, T,
/// 64] with H dynamic.
const std::vector<std::string> kCausalArgs(3, "tensor<?x?x?x64xf32>");
const std::string kCausalOp =
    attentionOp("tensor<?x?x?x64xf32>", "tensor<?x?x?x64xf32>", "tensor<?x?x?x64xf32>",
                "scale = 0.125 : f32, causal = true");

TEST_F(HalideLowerAttention, CausalSelfAttentionLengths) {
  load(kCausalArgs, "tensor<?x?x?x64xf32>", kCausalOp);
  // 1 and 7: one partial tile; 64: exactly one; 513: 8 full key tiles and one key
  // past them, 9 query tiles; 2048 (one head, to keep the interpreter quick): 32 x 32
  // tiles, half of them skipped.
  for (int64_t s : {1, 7, 64, 513})
    checkShapes(2, 2, s, s);
  checkShapes(1, 1, 2048, 2048);
}

TEST_F(HalideLowerAttention, NoMaskLengths) {
  load(kCausalArgs, "tensor<?x?x?x64xf32>",
       attentionOp("tensor<?x?x?x64xf32>", "tensor<?x?x?x64xf32>", "tensor<?x?x?x64xf32>",
                   "scale = 0.125 : f32"));
  for (int64_t s : {1, 7, 64, 513})
    checkShapes(2, 2, s, s);
  checkShapes(1, 1, 2048, 2048);
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

/// Shared by the padding-mask tests: [B, 2, T, 64] and a [B, 1, 1, Tk] mask.
const std::string kPadding = "tensor<?x1x1x?xf32>";
const std::vector<std::string> kPaddedArgs = {
    "tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>", kPadding};
const std::string kPaddedOp =
    attentionOp("tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>",
                "scale = 0.125 : f32", kPadding);

TEST_F(HalideLowerAttention, PaddingMaskWithFullyMaskedRows) {
  load(kPaddedArgs, "tensor<?x2x?x64xf32>", kPaddedOp);
  for (int64_t s : {1, 7, 64, 513}) {
    // Sequence 0 is empty (every key masked: its rows are 0, not NaN), sequence 1
    // full, the others cut inside a key tile and at a tile's end.
    std::vector<int64_t> lengths = {0, s, std::max<int64_t>(1, s / 3),
                                    std::min<int64_t>(s, 64)};
    HostTensor m = paddingMask(lengths, s);
    HostTensor result = checkShapes(4, 2, s, s, 64, 64, &m);
    for (int64_t h = 0; h < 2; ++h)
      EXPECT_TRUE(rowsEqual(result, h, 0, s, 0.0f)) << "s = " << s << ", head " << h;
  }
}

TEST_F(HalideLowerAttention, CrossAttentionWithPadding) {
  // Decoder queries against encoder keys: Tq != Tk both ways, the source padded.
  load(kPaddedArgs, "tensor<?x2x?x64xf32>", kPaddedOp);
  for (auto [queries, keys] :
       std::vector<std::pair<int64_t, int64_t>>{{7, 513}, {70, 5}, {1, 64}, {130, 129}}) {
    HostTensor m = paddingMask({keys, std::max<int64_t>(1, keys - 3)}, keys);
    checkShapes(2, 2, queries, keys, 64, 64, &m);
  }
}

TEST_F(HalideLowerAttention, HeadSplitsOfAPackedProjection) {
  // Rows 3 x 2 x 64 floats apart: the query tile gathers, and the value tile is copied
  // to a dense block, from them; lengths within one key tile, at its end, past it.
  load(kPaddedArgs, "tensor<?x2x?x64xf32>", kPaddedOp);
  for (int64_t s : {7, 64, 130}) {
    std::vector<HostTensor> inputs;
    for (int w = 0; w < 3; ++w)
      inputs.push_back(randomTensor({2, 2, s, 64}, seed++));
    inputs.push_back(paddingMask({s, std::max<int64_t>(1, s / 3)}, s));
    std::string error;
    HostTensor expected = harness->reference(inputs, error);
    ASSERT_TRUE(error.empty()) << error;

    PackedHeads heads(inputs);
    for (int w = 0; w < 3; ++w)
      harness->kernel.inputs[w].set(heads.split(w));
    Halide::Buffer<> mask = KernelHarness::toBuffer(inputs[3]);
    harness->kernel.inputs[3].set(mask);
    Halide::Buffer<> result = heads.mergedView();
    harness->realize(result);
    EXPECT_LE(relativeError(heads.mergedAsDense(), expected), kTolerance) << "s = " << s;
  }
}

TEST_F(HalideLowerAttention, CausalWithPaddingMask) {
  load({"tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>", kPadding},
       "tensor<?x2x?x64xf32>",
       attentionOp("tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>", "tensor<?x2x?x64xf32>",
                   "scale = 0.125 : f32, causal = true", kPadding));
  for (int64_t s : {7, 64, 513}) {
    HostTensor m = paddingMask({s, s / 2}, s);
    checkShapes(2, 2, s, s, 64, 64, &m);
  }
}

TEST_F(HalideLowerAttention, FullMaskRowsAndFiniteLargeNegatives) {
  // A per-head [B, H, Tq, Tk] mask: row 0 all -inf (masked_row_value), row 1 all
  // -1e9 (finite: the softmax of equal scores, the mean of v), row 2 -inf but for one
  // key (that key's v), the rest random and sometimes -inf.
  const std::string mask = "tensor<?x2x?x?xf32>";
  load({"tensor<?x2x?x32xf32>", "tensor<?x2x?x32xf32>", "tensor<?x2x?x32xf32>", mask},
       "tensor<?x2x?x32xf32>",
       attentionOp("tensor<?x2x?x32xf32>", "tensor<?x2x?x32xf32>", "tensor<?x2x?x32xf32>",
                   "scale = 0.25 : f32, masked_row_value = 0.5 : f32", mask));
  for (auto [queries, keys] : std::vector<std::pair<int64_t, int64_t>>{{3, 1}, {9, 70}}) {
    HostTensor m = randomTensor({1, 2, queries, keys}, seed++, -2.0f, 2.0f);
    for (float &x : m.f32)
      if (x > 1.5f)
        x = -kInf;
    for (int64_t h = 0; h < 2; ++h) {
      float *rows = &m.f32[h * queries * keys];
      std::fill(rows, rows + keys, -kInf);
      std::fill(rows + keys, rows + 2 * keys, -1e9f);
      std::fill(rows + 2 * keys, rows + 3 * keys, -kInf);
      rows[2 * keys + keys / 2] = 0.0f;
    }
    HostTensor result = checkShapes(1, 2, queries, keys, 32, 32, &m);
    EXPECT_TRUE(rowsEqual(result, 0, 0, 1, 0.5f));
    EXPECT_TRUE(rowsEqual(result, 1, 0, 1, 0.5f));
  }
}

//===----------------------------------------------------------------------===//
// Shapes: broadcasts, causal alignment, decode steps, odd head sizes, empty
//===----------------------------------------------------------------------===//

TEST_F(HalideLowerAttention, BroadcastKeysValuesAndRank2Mask) {
  // k and v shared by every head ([B, 1, Tk, D]), an additive [Tq, Tk] mask shared by
  // every batch index and head, and dv = 24 (a partial vector).
  load({"tensor<?x3x?x16xf32>", "tensor<?x1x?x16xf32>", "tensor<?x1x?x24xf32>",
        "tensor<?x?xf32>"},
       "tensor<?x3x?x24xf32>",
       "kiln.attention %arg0, %arg1, %arg2, %arg3 {scale = 0.3 : f32} : "
       "(tensor<?x3x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x24xf32>, "
       "tensor<?x?xf32>) -> tensor<?x3x?x24xf32>");
  for (auto [queries, keys] :
       std::vector<std::pair<int64_t, int64_t>>{{5, 9}, {70, 130}}) {
    HostTensor m = randomTensor({queries, keys}, seed++, -3.0f, 1.0f);
    check({randomTensor({2, 3, queries, 16}, seed++),
           randomTensor({2, 1, keys, 16}, seed++), randomTensor({2, 1, keys, 24}, seed++),
           m});
  }
}

TEST_F(HalideLowerAttention, StaticRank3OddHeadSizes) {
  // The rank-3 [B, T, D] form, every size static, d = 20 and dv = 7; 9 queries take
  // the schedule across queries, 3 the dot-product one of decode steps.
  for (int queries : {9, 3}) {
    std::string q = "tensor<2x" + std::to_string(queries) + "x20xf32>",
                out = "tensor<2x" + std::to_string(queries) + "x7xf32>";
    load({q, "tensor<2x11x20xf32>", "tensor<2x11x7xf32>"}, out,
         "kiln.attention %arg0, %arg1, %arg2 {scale = 0.2 : f32} : (" + q +
             ", tensor<2x11x20xf32>, tensor<2x11x7xf32>) -> " + out);
    checkRandom({{2, queries, 20}, {2, 11, 20}, {2, 11, 7}});
  }
}

TEST_F(HalideLowerAttention, CausalCrossShapesAlignBottomRight) {
  // Causal with Tq < Tk sees a KV-cache prefix; with Tq > Tk the first Tq - Tk rows
  // see no key at all (masked_row_value, 0).
  load(kCausalArgs, "tensor<?x?x?x64xf32>", kCausalOp);
  checkShapes(1, 2, 7, 100);
  checkShapes(1, 2, 70, 200);
  HostTensor result = checkShapes(1, 2, 100, 30);
  EXPECT_TRUE(rowsEqual(result, 0, 0, 70, 0.0f));
  EXPECT_FALSE(rowsEqual(result, 0, 70, 71, 0.0f));
}

TEST_F(HalideLowerAttention, DecodeStepCausal) {
  // One query (static: the dot-product schedule) against a growing cache: causal then
  // sees every key.
  load({"tensor<?x4x1x64xf32>", "tensor<?x4x?x64xf32>", "tensor<?x4x?x64xf32>"},
       "tensor<?x4x1x64xf32>",
       attentionOp("tensor<?x4x1x64xf32>", "tensor<?x4x?x64xf32>", "tensor<?x4x1x64xf32>",
                   "scale = 0.125 : f32, causal = true"));
  for (int64_t keys : {1, 7, 64, 513})
    checkShapes(3, 4, 1, keys);
}

TEST_F(HalideLowerAttention, DecodeStepTasksPrefetchTheNextTaskOfTheirRun) {
  // Tuned for Zen 4, a decode step's tasks (a batch entry's head each) run in 8 runs of
  // consecutive tasks, each task prefetching into L2 the keys and values of the next
  // task of its run (SchedulesCpuAttention.cpp, runsOfTasks; TaskPrefetch.h); tuned
  // for other cores they take turns over single tasks and prefetch nothing. Either way
  // the results agree with the interpreter: runs of one (4 tasks), of 2 (16), of 3
  // with a partial last run (28), of 4 (36), of 8 in 10 runs (80) and in 12 with a
  // partial last run (92), keys within one tile and past two.
  const std::string q = "tensor<?x4x1x64xf32>", kv = "tensor<?x4x?x64xf32>";
  const std::string text =
      oneOpModule({q, kv, kv}, q, attentionOp(q, kv, q, "scale = 0.125 : f32"));
  for (const char *core : {"generic", "zen4"}) {
    ScopedCpuTune tune(core);
    KernelHarness kernel;
    ASSERT_EQ(kernel.load(text), "") << core;
    harness = &kernel;
    const bool zen4 = std::string(core) == "zen4";
    std::string stmt = loweredStmt(kernel);
    EXPECT_EQ(stmt.find("prefetch(key") != std::string::npos, zen4) << core;
    EXPECT_EQ(stmt.find("prefetch(value") != std::string::npos, zen4) << core;
    EXPECT_EQ(stmt.find(".in_run") != std::string::npos, zen4) << core;
    EXPECT_EQ(kernel.kernel.codegen.prefetchLevel(),
              zen4 ? PrefetchLevel::L2 : PrefetchLevel::L1)
        << core;
    for (int64_t batch : {1, 4, 7, 9, 20, 23})
      for (int64_t keys : {1, 64, 130})
        checkShapes(batch, 4, 1, keys);
    harness = nullptr;
  }
}

TEST_F(HalideLowerAttention, DecodeStepRunsGrowInNumberPastEightTasksARun) {
  // Runs stay at most 8 tasks long, so that a big batch spreads over as many cores
  // as it has runs: 64 tasks make 8 runs of 8, 256 make 32, not 8 runs of 32.
  ScopedCpuTune tune("zen4");
  const std::regex parallelRuns(R"(task_run__\d+, 0, (\d+),)");
  for (auto [batch, runs] : {std::pair{16, "8"}, std::pair{64, "32"}}) {
    const std::string q = "tensor<" + std::to_string(batch) + "x4x1x64xf32>";
    const std::string kv = "tensor<" + std::to_string(batch) + "x4x?x64xf32>";
    KernelHarness kernel;
    ASSERT_EQ(kernel.load(oneOpModule({q, kv, kv}, q,
                                      attentionOp(q, kv, q, "scale = 0.125 : f32"))),
              "");
    std::string stmt = loweredStmt(kernel);
    std::smatch match;
    ASSERT_TRUE(std::regex_search(stmt, match, parallelRuns)) << batch;
    EXPECT_EQ(match[1].str(), std::string(runs)) << batch;
  }
}

TEST_F(HalideLowerAttention, FewQueriesFormForAShortRunTimeQueryCount) {
  // A query count known only at run time gets a second form with one vector of
  // queries a tile, which the kernel takes up to half the general tile (32 queries
  // with AVX-512, 16 with AVX2): a short sequence does not compute a whole 64-query
  // tile. A static count has the one form its tiles are chosen for.
  load(kPaddedArgs, "tensor<?x2x?x64xf32>", kPaddedOp);
  EXPECT_NE(loweredStmt(*harness).find("state_few_queries"), std::string::npos);
  for (int64_t s : {2, 15, 16, 17, 31, 32, 33, 48}) {
    HostTensor m = paddingMask({s, std::max<int64_t>(1, s / 3), 0}, s);
    checkShapes(3, 2, s, s, 64, 64, &m);
  }
  load({"tensor<1x2x9x64xf32>", "tensor<1x2x?x64xf32>", "tensor<1x2x?x64xf32>"},
       "tensor<1x2x9x64xf32>",
       attentionOp("tensor<1x2x9x64xf32>", "tensor<1x2x?x64xf32>", "tensor<1x2x9x64xf32>",
                   "scale = 0.125 : f32, causal = true"));
  EXPECT_EQ(loweredStmt(*harness).find("state_few_queries"), std::string::npos);
  checkShapes(1, 2, 9, 40);
}

TEST_F(HalideLowerAttention, LastKeyTileVisitsOnlyTheKeysThereAre) {
  // Past the last whole key tile the loops over a tile's keys run over the Tk % 64
  // keys left (SchedulesAttention.h, partialKeyTiles), not over 64 with the rest
  // masked; lengths that end inside the first tile, the second, and on a tile's end.
  load(kPaddedArgs, "tensor<?x2x?x64xf32>", kPaddedOp);
  EXPECT_NE(loweredStmt(*harness).find("key.extent.1 % 64"), std::string::npos);
  for (int64_t s : {50, 80, 112, 128}) {
    HostTensor m = paddingMask({s, std::max<int64_t>(1, s - 16)}, s);
    checkShapes(2, 2, s, s, 64, 64, &m);
  }
}

/// Shared by the rank-3 tests: [B, T, 16], masked_row_value 2.
const std::vector<std::string> kRank3Args(3, "tensor<?x?x16xf32>");
const std::string kRank3Op = "kiln.attention %arg0, %arg1, %arg2 {scale = 0.25 : f32, "
                             "masked_row_value = 2.0 : f32} "
                             ": (tensor<?x?x16xf32>, tensor<?x?x16xf32>, "
                             "tensor<?x?x16xf32>) -> tensor<?x?x16xf32>";

TEST_F(HalideLowerAttention, EmptyKeysGiveMaskedRowValue) {
  load(kRank3Args, "tensor<?x?x16xf32>", kRank3Op);
  HostTensor result =
      check({randomTensor({2, 3, 16}, seed++), HostTensor::floats({2, 0, 16}),
             HostTensor::floats({2, 0, 16})});
  EXPECT_TRUE(rowsEqual(result, 1, 0, 3, 2.0f));
  checkRandom({{0, 4, 16}, {0, 5, 16}, {0, 5, 16}});
  checkRandom({{2, 0, 16}, {2, 5, 16}, {2, 5, 16}});
}

//===----------------------------------------------------------------------===//
// Numerics: large scores, NaN
//===----------------------------------------------------------------------===//

TEST_F(HalideLowerAttention, LargeScoresDoNotOverflow) {
  // Integer-valued q and k in [-24, 24]: scores up to ~1000 (exp overflows f32 past
  // 88), computed exactly in f32 (integers below 2^24, scale 1/8), so that the only
  // differences from the interpreter are the exp and the sums, as they should be.
  // (With real-valued q, k of that size, an f32 dot product is ~1e-4 off the
  // interpreter's double, which exp turns into ~1e-4 relative in the weights: a
  // rounding difference, the unfused graph's too, that no f32 kernel avoids.) Integer
  // scores also tie, and tied maxima share the weight.
  load(kCausalArgs, "tensor<?x?x?x64xf32>", kCausalOp);
  auto integers = [&](Shape shape) {
    HostTensor t = randomTensor(std::move(shape), seed++, -24.5f, 24.5f);
    for (float &x : t.f32)
      x = std::round(x);
    return t;
  };
  for (int64_t s : {7, 200}) {
    HostTensor result = check({integers({1, 2, s, 64}), integers({1, 2, s, 64}),
                               randomTensor({1, 2, s, 64}, seed++)});
    for (float x : result.f32)
      ASSERT_TRUE(std::isfinite(x));
  }
}

TEST_F(HalideLowerAttention, NaNScoreMakesItsRowNaN) {
  load(kRank3Args, "tensor<?x?x16xf32>", kRank3Op);
  HostTensor q = randomTensor({1, 80, 16}, seed++);
  q.f32[5 * 16 + 3] = std::numeric_limits<float>::quiet_NaN();
  HostTensor result =
      check({q, randomTensor({1, 100, 16}, seed++), randomTensor({1, 100, 16}, seed++)});
  EXPECT_TRUE(std::isnan(result.f32[5 * 16]));
  EXPECT_FALSE(std::isnan(result.f32[4 * 16]));
}

//===----------------------------------------------------------------------===//
// div, constant, masked_fill and boolean masks
//===----------------------------------------------------------------------===//

TEST_F(HalideLower, DivBroadcast) {
  load({"tensor<?x?x?xf32>", "tensor<?xf32>"}, "tensor<?x?x?xf32>",
       "kiln.div %arg0, %arg1 : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>");
  for (Shape s : {Shape{1, 1, 1}, Shape{2, 3, 17}, Shape{3, 40, 64}})
    check({randomTensor(s, seed++), randomTensor({s[2]}, seed++, 0.5f, 2.0f)});
}

TEST_F(HalideLower, ConstantSplatAndTable) {
  load({}, "tensor<f32>", "kiln.constant dense<8.0> : tensor<f32>");
  check({});
  load({}, "tensor<3x17xf32>", "kiln.constant dense<0xFF800000> : tensor<3x17xf32>");
  EXPECT_EQ(check({}).f32[50], -kInf);
  load({}, "tensor<2x3xf32>",
       "kiln.constant dense<[[1.0, -2.5, 3.0], [0.125, 1.0e+30, -7.0]]> : "
       "tensor<2x3xf32>");
  check({});
}

/// Loads op #`index` of @main in `text` into `harness` (KernelHarness::load takes the
/// first op), for kernels whose operands are i1 values made inside the entry.
std::string loadOp(KernelHarness &harness, const std::string &text, int index) {
  harness.module = mlir::parseSourceString<mlir::ModuleOp>(text, &harness.context);
  if (!harness.module)
    return "cannot parse:\n" + text;
  auto &body = harness.module->lookupSymbol<mlir::FuncOp>("main").front();
  harness.op = &*std::next(body.begin(), index);
  Halide::Target target = Halide::get_jit_target_from_environment();
  mlir::FailureOr<LoweredKernel> lowered = lowerOp(harness.op, target);
  if (mlir::failed(lowered))
    return "lowering failed";
  harness.kernel = *lowered;
  harness.pipeline = Halide::Pipeline(harness.kernel.output);
  harness.pipeline.compile_jit(target);
  return "";
}

/// A boolean mask built in the entry and applied by masked_fill: each op's kernel run
/// in turn (the mask kernel's i32 0/1 result feeding masked_fill) against the
/// interpreter running the entry.
class HalideLowerBooleanMask : public HalideLower {
protected:
  /// `fillIndex`: the masked_fill's position in @main (after the mask and any reshape).
  void loadChain(const std::string &text, int fillIndex) {
    std::string error = loadOp(maskKernel, text, 0);
    ASSERT_TRUE(error.empty()) << error;
    error = loadOp(fillKernel, text, fillIndex);
    ASSERT_TRUE(error.empty()) << error;
    error = harness.load(text); // the whole entry, for the interpreter
    ASSERT_TRUE(error.empty()) << error;
  }

  /// Runs the chain on `maskInputs` (the mask op's operands) and `scores`; the mask
  /// reaches masked_fill as `fillMaskShape` (a reshape moves no data). Returns the
  /// boolean mask.
  HostTensor checkChain(const std::vector<HostTensor> &maskInputs,
                        const HostTensor &scores, const Shape &maskShape,
                        const Shape &fillMaskShape) {
    HostTensor mask = maskKernel.run(maskInputs, maskShape);
    HostTensor reshaped = mask;
    reshaped.shape = fillMaskShape;
    HostTensor actual = fillKernel.run({scores, reshaped}, scores.shape);
    std::vector<HostTensor> entryInputs = {scores};
    entryInputs.insert(entryInputs.end(), maskInputs.begin(), maskInputs.end());
    std::string error;
    HostTensor expected = harness.reference(entryInputs, error);
    EXPECT_TRUE(error.empty()) << error;
    EXPECT_EQ(relativeError(actual, expected), 0.0);
    return mask;
  }

  KernelHarness maskKernel, fillKernel;
};

TEST_F(HalideLowerBooleanMask, PaddingMaskThenMaskedFill) {
  loadChain(R"mlir(
    func @main(%s: tensor<?x4x?x?xf32>, %len: tensor<?xi32>, %ids: tensor<?x?xi32>)
        -> tensor<?x4x?x?xf32> {
      %m = kiln.padding_mask %len, %ids {axis = 1 : i64}
          : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
      %r = kiln.reshape %m {shape = [0, 1, 1, -1]} : (tensor<?x?xi1>) -> tensor<?x1x1x?xi1>
      %0 = kiln.masked_fill %s, %r {value = 0xFF800000 : f32}
          : (tensor<?x4x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x4x?x?xf32>
      kiln.return %0 : tensor<?x4x?x?xf32>
    })mlir",
            2);
  for (int64_t n : {1, 17, 100}) {
    HostTensor lengths =
        HostTensor::ints({3}, {0, static_cast<int32_t>(n), static_cast<int32_t>(n / 2)});
    HostTensor ids = randomInts({3, n}, seed++, 0, 9);
    HostTensor mask = checkChain({lengths, ids}, randomTensor({3, 4, 5, n}, seed++),
                                 {3, n}, {3, 1, 1, n});
    EXPECT_EQ(mask.i32[0], 1);
    EXPECT_EQ(mask.i32[n], 0);
  }
}

TEST_F(HalideLowerBooleanMask, CausalMaskThenFiniteFill) {
  // A finite fill (-1e9, as many PyTorch models write it): the masked scores are that
  // value, not -inf.
  loadChain(R"mlir(
    func @main(%s: tensor<?x2x?x?xf32>, %ids: tensor<?x?xi32>) -> tensor<?x2x?x?xf32> {
      %m = kiln.causal_mask %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xi1>
      %0 = kiln.masked_fill %s, %m {value = -1.0e+09 : f32}
          : (tensor<?x2x?x?xf32>, tensor<?x?xi1>) -> tensor<?x2x?x?xf32>
      kiln.return %0 : tensor<?x2x?x?xf32>
    })mlir",
            1);
  for (int64_t n : {1, 5, 37}) {
    HostTensor mask = checkChain({randomInts({2, n}, seed++, 0, 9)},
                                 randomTensor({2, 2, n, n}, seed++), {n, n}, {n, n});
    if (n > 1) {
      EXPECT_EQ(mask.i32[1], 1);
      EXPECT_EQ(mask.i32[n], 0);
    }
  }
}

} // namespace
