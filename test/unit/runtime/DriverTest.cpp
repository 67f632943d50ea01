// DriverTest.cpp - kiln-run as a user runs it: .npy and inline inputs, saved outputs
// checked against a reference computed here, --init-weights, and clean failures of a run
// (exit 1, a message, never a crash). Usage errors are DriverOptionsTest.cpp.
#include "KilnRunTool.h"
#include "TestUtil.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <sys/stat.h>

using namespace kiln::test;

namespace {

template <typename T>
void writeNpy(const std::string &path, const char *descr,
              const std::vector<int64_t> &shape, const std::vector<T> &data) {
  std::string dims;
  for (int64_t d : shape)
    dims += std::to_string(d) + ",";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += char(header.size() & 0xFF);
  bytes += char(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(data.data()), data.size() * sizeof(T));
  writeFile(path, bytes);
}

// The data of an .npy file kiln-run saved (version 1, little-endian).
template <typename T> std::vector<T> readNpyData(const std::string &path) {
  std::string bytes = readFile(path);
  EXPECT_GE(bytes.size(), 10u) << path;
  if (bytes.size() < 10)
    return {};
  size_t headerLen = uint8_t(bytes[8]) | size_t(uint8_t(bytes[9])) << 8;
  EXPECT_EQ((10 + headerLen) % 64, 0u);
  std::vector<T> data((bytes.size() - 10 - headerLen) / sizeof(T));
  std::memcpy(data.data(), bytes.data() + 10 + headerLen, data.size() * sizeof(T));
  return data;
}

void expectCleanFailure(const ToolRun &run, const std::string &text) {
  EXPECT_FALSE(run.crashed) << run.err;
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_EQ(run.err.rfind("kiln-run: error: ", 0), 0u) << run.err;
  EXPECT_NE(run.err.find(text), std::string::npos) << run.err;
}

struct DriverFixture : ::testing::Test {
  std::mt19937 rng{2024};
  FakeWeights weights{rng};
};

} // namespace

TEST_F(DriverFixture, NpyInputsAndSavedOutputsMatchReference) {
  std::vector<float> x = randomFloats(2 * 3 * 4, rng), y = randomFloats(2 * 3 * 4, rng);
  std::string xPath = tempPath("x.npy"), yPath = tempPath("y.npy"), dir = tempPath("out");
  writeNpy(xPath, "<f4", {2, 3, 4}, x);
  std::vector<double> y64(y.begin(), y.end()); // float64 files are narrowed
  writeNpy(yPath, "<f8", {2, 3, 4}, y64);
  ToolRun run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "forward",
                         "--input", "x=" + xPath, "--input", "y=" + yPath,
                         "--save-outputs", dir, "--print", "full"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("output z: f32 [6, 4]\n  [0, :] "), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("output s: f32 [2, 3, 4]\n  [0, 0, :] "), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("time: median "), std::string::npos) << run.out;

  std::vector<float> z = readNpyData<float>(dir + "/z.npy");
  std::vector<float> want =
      referenceForward(x, std::vector<float>(y64.begin(), y64.end()), weights);
  ASSERT_EQ(z.size(), want.size());
  for (size_t i = 0; i < z.size(); ++i)
    EXPECT_FLOAT_EQ(z[i], want[i]) << i;
}

TEST_F(DriverFixture, Int64NpyFeedsAnInt32Input) {
  std::vector<int64_t> pos{3, -7, 11, 250, -1, 9};
  std::string posPath = tempPath("pos.npy"), dir = tempPath("out");
  writeNpy(posPath, "<i8", {2, 3}, pos);
  ToolRun run =
      kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "widen", "--input",
               "pos=" + posPath, "--input", "tok=2x2:5,6,7,8", "--save-outputs", dir});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  std::vector<int64_t> out = readNpyData<int64_t>(dir + "/out.npy");
  ASSERT_EQ(out.size(), pos.size());
  for (size_t i = 0; i < pos.size(); ++i)
    EXPECT_EQ(out[i], 2 * pos[i]);
}

TEST_F(DriverFixture, FloatNpyForAnIntegerInputIsRejected) {
  std::string posPath = tempPath("pos.npy");
  writeNpy(posPath, "<f4", {1, 2}, std::vector<float>{1.5f, 2.5f});
  ToolRun run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "widen",
                         "--input", "pos=" + posPath, "--input", "tok=1x1:1"});
  expectCleanFailure(run, "holds floating-point f4 values but the input is i32");
}

TEST_F(DriverFixture, RandomInputsUseDims) {
  ToolRun run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "widen",
                         "--random", "--dim", "B=3", "--dim", "T=4", "--seed", "5"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("output out: i64 [3, 5]\n  values: "), std::string::npos)
      << run.out;

  // Given inputs bind dims for the random ones.
  run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "widen", "--random",
                 "--input", "tok=2x6:1,2,3,4,5,6,7,8,9,10,11,12"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("output out: i64 [2, 7]"), std::string::npos) << run.out;
}

TEST_F(DriverFixture, RandomWithoutDimsSaysWhichAreNeeded) {
  ToolRun run =
      kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "forward", "--random"});
  expectCleanFailure(
      run, "--random: input 'x' has shape [B, S, 4]; give --dim B=N, --dim S=N");
}

TEST_F(DriverFixture, InitWeightsWritesLoadableReproducibleWeights) {
  std::string a = tempPath("a.safetensors"), b = tempPath("b.safetensors");
  ToolRun run = kilnRun({"--init-weights", a, FAKE_MODEL, "--seed", "3"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("wrote 2 parameters (8 values)"), std::string::npos) << run.out;
  run = kilnRun({"--init-weights", b, FAKE_MODEL, "--seed", "3"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(readFile(a), readFile(b));

  kiln_model *model = nullptr;
  kiln_weights *w = nullptr;
  ASSERT_OK(kiln_model_open(FAKE_MODEL, &model));
  ASSERT_OK(kiln_weights_open(model, a.c_str(), &w));
  kiln_weights_release(w);
  kiln_model_release(model);

  run = kilnRun({FAKE_MODEL, "--weights", a, "--entry", "forward", "--random", "--dim",
                 "B=2", "--dim", "S=2"});
  EXPECT_EQ(run.exitCode, 0) << run.err;

  run = kilnRun({"--init-weights", b, FAKE_MODEL, "--scale", "0.01"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  std::string bytes = readFile(b);
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i)
    len = len << 8 | uint8_t(bytes[i]);
  size_t count = (bytes.size() - 8 - len) / 4;
  ASSERT_EQ(count, 8u);
  for (size_t i = 0; i < count; ++i) {
    float v;
    std::memcpy(&v, bytes.data() + 8 + len + 4 * i, 4);
    EXPECT_LE(std::fabs(v), 0.01f);
    EXPECT_NE(v, 0.0f);
  }
}

// A BF16 checkpoint of the f32 fake model, converted once: the file kiln-run writes
// holds the f32 values the runtime widened, and maps with nothing left to convert.
TEST_F(DriverFixture, ConvertWeightsWritesTheParametersAsTheModelReadsThem) {
  std::vector<uint16_t> weight(4), bias(4);
  for (uint16_t *v : {weight.data(), bias.data()})
    for (int i = 0; i < 4; ++i)
      v[i] = uint16_t(0x3F00 + 0x1234 * (v == bias.data()) + 37 * i); // any finite bf16
  std::string in = tempPath("bf16.safetensors"), out = tempPath("f32.safetensors");
  std::vector<int64_t> ws{4}, bs{2, 2};
  kiln_tensor t[2] = {tensor("proj.weight", KILN_DTYPE_BF16, ws, weight.data()),
                      tensor("proj.bias", KILN_DTYPE_BF16, bs, bias.data())};
  ASSERT_OK(kiln_safetensors_write(in.c_str(), t, 2));
  ToolRun run = kilnRun({"--convert-weights", out, FAKE_MODEL, "--weights", in});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(
      run.out.find("wrote 2 parameters (0.0 MB, f32 weights) of model 'fake' to " + out),
      std::string::npos)
      << run.out;

  kiln_model *model = nullptr;
  kiln_weights *converted = nullptr, *original = nullptr;
  ASSERT_OK(kiln_model_open(FAKE_MODEL, &model));
  ASSERT_OK(kiln_weights_open(model, in.c_str(), &original));
  ASSERT_OK(kiln_weights_open(model, out.c_str(), &converted));
  kiln_weights_stats stats;
  kiln_weights_get_stats(converted, &stats);
  EXPECT_EQ(stats.mapped_bytes, 32u);
  EXPECT_EQ(stats.converted_bytes + stats.copied_bytes, 0u);
  kiln_weights_get_stats(original, &stats);
  EXPECT_EQ(stats.converted_bytes, 32u);
  ASSERT_EQ(kiln_weights_parameter_count(converted), 2u);
  for (size_t i = 0; i < 2; ++i) {
    kiln_tensor a, b;
    ASSERT_OK(kiln_weights_parameter(original, i, &a));
    ASSERT_OK(kiln_weights_parameter(converted, i, &b));
    EXPECT_EQ(b.dtype, KILN_DTYPE_F32);
    const uint16_t *bits = i == 0 ? weight.data() : bias.data();
    for (int k = 0; k < 4; ++k) {
      uint32_t widened = uint32_t(bits[k]) << 16, got, before;
      std::memcpy(&got, static_cast<const float *>(b.data) + k, 4);
      std::memcpy(&before, static_cast<const float *>(a.data) + k, 4);
      EXPECT_EQ(got, widened) << i << " " << k;
      EXPECT_EQ(before, widened) << i << " " << k;
    }
  }
  kiln_weights_release(converted);
  kiln_weights_release(original);
  kiln_model_release(model);

  run = kilnRun({"--convert-weights", out, FAKE_MODEL});
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.err.find("--convert-weights needs the weights to convert: pass --weights "
                         "FILE"),
            std::string::npos)
      << run.err;
  std::remove(in.c_str());
  std::remove(out.c_str());
}

TEST_F(DriverFixture, ListShowsEntriesAndParameters) {
  ToolRun run = kilnRun({FAKE_MODEL, "--list"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("model fake (target x86-64-linux): 4 entries, 2 parameters, "
                         "f32 weights"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("entry widen (dynamic dims: B, T)\n  input  tok: i32 [B, T]\n"
                         "  input  pos: i32 [B, T+1]\n  output out: i64 [B, T + 1]"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("  proj.bias: f32 [2, 2]"), std::string::npos) << run.out;
}

TEST_F(DriverFixture, FailuresAreMessagesNotCrashes) {
  const std::string &w = weights.path;
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"/no/such/model.so", "--list"}, "/no/such/model.so"},
      {{NOT_KILN_SO, "--list"}, "is not a Kiln model"},
      {{FAKE_MODEL, "--entry", "forward", "--random"}, "pass --weights FILE"},
      {{FAKE_MODEL, "--weights", w, "--random"},
       "has 4 entries (forward, widen, broken, encode); choose one with --entry"},
      {{FAKE_MODEL, "--weights", w, "--entry", "forward", "--input",
        "x=1x2x4:1,2,3,4,5,6,7", "--input", "y=1x2x4:1"},
       "--input x: shape [1, 2, 4] needs 8 values, got 7"},
      {{FAKE_MODEL, "--weights", w, "--entry", "forward", "--input", "q=1:1"},
       "entry 'forward' has no input 'q'; its inputs are 'x', 'y'"},
      {{FAKE_MODEL, "--weights", w, "--entry", "forward", "--random", "--dim", "Q=3"},
       "--dim Q: entry 'forward' has no dimension 'Q' (it has B, S)"},
      {{FAKE_MODEL, "--weights", w, "--entry", "forward", "--input", "x=1x1x4:1,2,3,4",
        "--input", "y=2x1x4:1,2,3,4,5,6,7,8"},
       "dimension 'B' is 1 in input 'x'"},
      {{FAKE_MODEL, "--weights", w, "--entry", "broken", "--input", "x=3:0.5,1.5,2.5"},
       "fake_fail: refusing to process x of 3 elements"},
      {{FAKE_MODEL, "--weights", "/no/weights.safetensors"},
       "weights file '/no/weights.safetensors'"},
      {{FAKE_MODEL, "--weights", w, "--entry", "widen", "--input", "pos=1x2:1.5,2",
        "--input", "tok=1x1:1"},
       "value 0 '1.5' is not an integer (the input is i32)"},
      {{FAKE_MODEL, "--weights", w, "--entry", "widen", "--input", "pos=/no/pos.npy",
        "--input", "tok=1x1:1"},
       "'/no/pos.npy': cannot open"},
  };
  for (const auto &[args, text] : cases)
    expectCleanFailure(kilnRun(args), text);
}

// A shape whose byte count wraps modulo 2^64 to the 4 data bytes the file holds: the
// reader once allocated 4 bytes and wrote 4611686018427387905 elements into them.
TEST_F(DriverFixture, NpyShapeWhoseByteCountWrapsIsRejected) {
  std::string posPath = tempPath("pos.npy");
  writeNpy(posPath, "<i4", {4611686018427387905, 1}, std::vector<int32_t>{7});
  ASSERT_EQ(readFile(posPath).size(), 132u);
  ToolRun run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "widen",
                         "--input", "pos=" + posPath, "--input", "tok=1x1:1"});
  expectCleanFailure(run, "--input pos: '" + posPath +
                              "': shape [4611686018427387905, 1] of i4 has more bytes "
                              "than 2^64; the header is corrupt");
}

// Same wrap through --random: 4611686018427387905 x 1 x 4 f32 elements.
TEST_F(DriverFixture, RandomShapeOverTheBufferLimitIsRejected) {
  ToolRun run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "forward",
                         "--random", "--dim", "B=4611686018427387905", "--dim", "S=1"});
  expectCleanFailure(run, "--random: input 'x' [B, S, 4] has shape "
                          "[4611686018427387905, 1, 4], more than the 2^31 - 1 elements "
                          "a Halide buffer holds");
  // Just over the limit without any wrap: refused before allocating 8 GiB.
  run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "forward", "--random",
                 "--dim", "B=536870912", "--dim", "S=1"});
  expectCleanFailure(run, "[536870912, 1, 4], more than the 2^31 - 1 elements");
}

TEST_F(DriverFixture, ListShowsInputBounds) {
  ToolRun run = kilnRun({FAKE_MODEL, "--list"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.out.find("entry encode (dynamic dims: B, S)\n"
                         "  input  src_ids: i32 [B, S], values in [0, 49]\n"
                         "  input  src_lengths: i32 [B], values in [1, S]\n"
                         "  input  start: i64 [B], values in [-1, S-1]\n"
                         "  output out: i64 [B, S]\n"),
            std::string::npos)
      << run.out;
}

TEST_F(DriverFixture, RandomInputsRespectBounds) {
  // 64 lengths in [1, 3] and starts in [-1, 2]: drawn from [0, 10) instead, the runtime
  // would reject the run. The ids come back doubled in `out`.
  std::string dir = tempPath("out");
  ToolRun run =
      kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "encode", "--random",
               "--dim", "B=64", "--dim", "S=3", "--seed", "11", "--save-outputs", dir});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  std::vector<int64_t> out = readNpyData<int64_t>(dir + "/out.npy");
  ASSERT_EQ(out.size(), 64u * 3);
  int64_t lowest = INT64_MAX, highest = INT64_MIN;
  for (int64_t v : out) {
    EXPECT_EQ(v % 2, 0);
    lowest = std::min(lowest, v / 2);
    highest = std::max(highest, v / 2);
  }
  EXPECT_GE(lowest, 0);
  EXPECT_LE(highest, 49);
  EXPECT_GE(highest, 10) << "ids look drawn from [0, 10), not from their bounds [0, 49]";

  // S = 1 leaves lengths exactly 1 and starts in [-1, 0]; seeds vary the draws.
  for (const char *seed : {"1", "2", "3", "4"}) {
    run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "encode", "--random",
                   "--dim", "B=32", "--dim", "S=1", "--seed", seed});
    EXPECT_EQ(run.exitCode, 0) << "seed " << seed << ": " << run.err;
  }

  // Dims bound by a given input size the bounds of the random ones.
  std::string ids = "src_ids=40x2:";
  for (int i = 0; i < 80; ++i) {
    if (i)
      ids += ',';
    ids += std::to_string(i % 50);
  }
  run = kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "encode", "--random",
                 "--input", ids});
  EXPECT_EQ(run.exitCode, 0) << run.err;
}

TEST_F(DriverFixture, RandomCannotSatisfyEmptyBounds) {
  expectCleanFailure(
      kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "encode", "--random",
               "--dim", "B=2", "--dim", "S=0"}),
      "--random: input 'src_lengths' has bounds [1, S] = [1, 0], which no i32 "
      "value satisfies");
}

TEST_F(DriverFixture, OutOfBoundsInputIsACleanError) {
  auto encode = [&](const std::string &ids, const std::string &lengths) {
    return kilnRun({FAKE_MODEL, "--weights", weights.path, "--entry", "encode", "--input",
                    "src_ids=2x2:" + ids, "--input", "src_lengths=2:" + lengths,
                    "--input", "start=2:0,0"});
  };
  expectCleanFailure(encode("1,2,3,99", "2,2"),
                     "entry 'encode': input 'src_ids' element [1, 1] is 99, outside its "
                     "bounds [0, 49]");
  expectCleanFailure(encode("1,2,3,4", "2,3"),
                     "entry 'encode': input 'src_lengths' element [1] is 3, outside its "
                     "bounds [1, S] = [1, 2]");
}
