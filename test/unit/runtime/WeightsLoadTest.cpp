// WeightsLoadTest.cpp - loading checkpoints into reduced-precision parameters: which
// tensor feeds each parameter, the converted values (against WeightConversion's
// functions, themselves checked by hand in WeightConversionTest), row ranges, panels,
// the zero-copy round trip of a converted file, and every error message.
#include "DType.h"
#include "Error.h"
#include "Manifest.h"
#include "TestUtil.h"
#include "WeightConversion.h"
#include "Weights.h"

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace kiln::rt;
using namespace kiln::test;

namespace {

// emb [4, 3] stays f32 (a gather reads it) and is also quantized as a whole (a tied
// projection); w [3, 3] is split: rows [1, 3) in bf16, row 0 in int8.
const std::string kParameters = R"([
  {"name": "emb", "dtype": "f32", "shape": [4, 3]},
  {"name": "emb.int8", "dtype": "i8", "shape": [4, 3], "source": "emb",
   "conversion": "int8"},
  {"name": "emb.int8.scale", "dtype": "f32", "shape": [4], "source": "emb",
   "conversion": "int8_scale"},
  {"name": "w[1:3]", "dtype": "bf16", "shape": [2, 3], "source": "w",
   "conversion": "bf16", "rows": [1, 3]},
  {"name": "w[0:1].scale", "dtype": "f32", "shape": [1], "source": "w",
   "conversion": "int8_scale", "rows": [0, 1]},
  {"name": "w[0:1]", "dtype": "i8", "shape": [1, 3], "source": "w",
   "conversion": "int8", "rows": [0, 1]}])";

// w [3, 3] in panels of 2 (the second half padding), emb's rows [1, 4) in panels of 4
// (fewer rows than one panel), and emb quantized too: one source feeds both kinds.
const std::string kPanels = R"([
  {"name": "w.panels", "dtype": "f32", "shape": [2, 3, 2], "source": "w",
   "conversion": "panels"},
  {"name": "emb[1:4].panels", "dtype": "f32", "shape": [1, 3, 4], "source": "emb",
   "conversion": "panels", "rows": [1, 4]},
  {"name": "emb.int8", "dtype": "i8", "shape": [4, 3], "source": "emb",
   "conversion": "int8"},
  {"name": "emb.int8.scale", "dtype": "f32", "shape": [4], "source": "emb",
   "conversion": "int8_scale"}])";

std::unique_ptr<Manifest> manifest(const std::string &parameters = kParameters) {
  return parseManifest(R"({"abi_version": 5, "model": "m", "weights": "int8",
    "parameters": )" + parameters +
                       R"(, "kernels": ["k"],
    "entries": [{"name": "f",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [2], "buffer": 0}],
      "outputs": [{"name": "y", "dtype": "f32", "shape": [2], "buffer": 1}],
      "buffers": [{"dtype": "f32", "shape": [2], "kind": "input", "input": 0},
                  {"dtype": "f32", "shape": [2], "kind": "temp", "live": [0, 0]}],
      "steps": [{"kernel": 0, "args": [0, 1]}]}]})");
}

/// A checkpoint tensor: its values, and their bytes in a dtype.
struct Checkpoint {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> values;
  kiln_dtype dtype = KILN_DTYPE_F32;
  std::vector<uint8_t> bytes;
};

/// Values that f16 and bf16 hold exactly (k / 64, k in [-127, 127], never 0), so that
/// every checkpoint dtype describes the same weights.
std::vector<float> exactValues(size_t n, std::mt19937 &rng) {
  std::uniform_int_distribution<int> k(1, 127);
  std::vector<float> v(n);
  for (float &x : v)
    x = float(k(rng) * (rng() % 2 ? 1 : -1)) / 64.0f;
  return v;
}

uint16_t toF16(float exact) { // for the values above: normal, 8 significant bits
  int exponent;
  float mantissa = std::frexp(std::fabs(exact), &exponent); // [0.5, 1)
  uint16_t bits = uint16_t((exponent + 14) << 10 | int(mantissa * 2048 - 1024));
  return uint16_t(bits | (exact < 0 ? 0x8000 : 0));
}

void encode(Checkpoint &t, kiln_dtype dtype) {
  t.dtype = dtype;
  t.bytes.assign(t.values.size() * kiln_dtype_size(dtype), 0);
  for (size_t i = 0; i < t.values.size(); ++i) {
    uint32_t bits;
    std::memcpy(&bits, &t.values[i], 4);
    if (dtype == KILN_DTYPE_F32)
      std::memcpy(&t.bytes[4 * i], &bits, 4);
    else {
      uint16_t half =
          dtype == KILN_DTYPE_BF16 ? uint16_t(bits >> 16) : toF16(t.values[i]);
      std::memcpy(&t.bytes[2 * i], &half, 2);
    }
  }
}

void write(const std::string &path, const std::vector<Checkpoint> &tensors) {
  std::vector<kiln_tensor> raw;
  for (const Checkpoint &t : tensors)
    raw.push_back(tensor(t.name.c_str(), t.dtype, t.shape, t.bytes.data()));
  ASSERT_OK(kiln_safetensors_write(path.c_str(), raw.data(), raw.size()));
}

struct WeightsLoad : ::testing::Test {
  std::mt19937 rng{7};
  Checkpoint emb{"emb", {4, 3}, exactValues(12, rng), KILN_DTYPE_F32, {}};
  Checkpoint w{"w", {3, 3}, exactValues(9, rng), KILN_DTYPE_F32, {}};
  std::string path = tempPath("w.safetensors");
  void TearDown() override { std::remove(path.c_str()); }

  std::unique_ptr<Weights> load(kiln_dtype dtype,
                                const std::string &parameters = kParameters) {
    encode(emb, dtype);
    encode(w, dtype);
    write(path, {emb, w});
    return std::make_unique<Weights>(*manifest(parameters), path);
  }

  // The message of the Error that loading `tensors` throws.
  std::string failure(const std::vector<Checkpoint> &tensors,
                      const std::string &parameters = kParameters) {
    write(path, tensors);
    try {
      Weights weights(*manifest(parameters), path);
    } catch (const Error &e) {
      EXPECT_EQ(e.code(), KILN_STATUS_INVALID_WEIGHTS) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "the weights loaded";
    return "";
  }
};

template <typename T> std::vector<T> values(const Weights &weights, size_t parameter) {
  kiln_tensor t = weights.tensor(parameter);
  size_t n = 1;
  for (int32_t d = 0; d < t.rank; ++d)
    n *= size_t(t.shape[d]);
  const T *data = static_cast<const T *>(t.data);
  return std::vector<T>(data, data + n);
}

/// What each parameter must hold, from the checkpoint's values.
void expectConverted(const Weights &weights, const Checkpoint &emb, const Checkpoint &w) {
  EXPECT_EQ(values<float>(weights, 0), emb.values);
  std::vector<int8_t> q(12);
  std::vector<float> scales(4);
  for (size_t r = 0; r < 4; ++r)
    scales[r] = quantizeRow(&emb.values[3 * r], 3, &q[3 * r]);
  EXPECT_EQ(values<int8_t>(weights, 1), q);
  EXPECT_EQ(values<float>(weights, 2), scales);
  std::vector<uint16_t> bf16;
  for (size_t k = 3; k < 9; ++k)
    bf16.push_back(f32ToBF16(w.values[k]));
  EXPECT_EQ(values<uint16_t>(weights, 3), bf16);
  std::vector<int8_t> row0(3);
  float scale0 = quantizeRow(w.values.data(), 3, row0.data());
  EXPECT_EQ(values<float>(weights, 4), std::vector<float>{scale0});
  EXPECT_EQ(values<int8_t>(weights, 5), row0);
  for (size_t i = 1; i < weights.parameterCount(); ++i) // converted: 64-byte aligned
    EXPECT_EQ(reinterpret_cast<uintptr_t>(weights.data(i)) % 64, 0u) << i;
}

/// Rows [first, first + rows) of the [*, k] `source` in panels of `width`, written out
/// from the definition: element [p][c][w] is row p * width + w's column c, or 0.
std::vector<float> panelsOf(const std::vector<float> &source, size_t first, size_t rows,
                            size_t k, size_t width) {
  size_t panels = (rows + width - 1) / width;
  std::vector<float> out;
  for (size_t p = 0; p < panels; ++p)
    for (size_t c = 0; c < k; ++c)
      for (size_t w = 0; w < width; ++w) {
        size_t r = p * width + w;
        out.push_back(r < rows ? source[(first + r) * k + c] : 0.0f);
      }
  return out;
}

void expectHas(const std::string &message, const std::string &text) {
  EXPECT_NE(message.find(text), std::string::npos) << message;
}

} // namespace

TEST_F(WeightsLoad, F32CheckpointConvertsAndMapsWhatItCan) {
  auto weights = load(KILN_DTYPE_F32);
  expectConverted(*weights, emb, w);
  EXPECT_EQ(weights->stats().mapped_bytes, 48u); // emb, read in place
  EXPECT_EQ(weights->stats().converted_bytes, 12u + 16 + 12 + 4 + 3);
  EXPECT_EQ(weights->stats().copied_bytes, 0u);
}

TEST_F(WeightsLoad, F16AndBF16CheckpointsGiveTheSameParameters) {
  for (kiln_dtype dtype : {KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    auto weights = load(dtype);
    expectConverted(*weights, emb, w);
    EXPECT_EQ(weights->stats().mapped_bytes, 0u) << kiln_dtype_name(dtype);
    EXPECT_EQ(weights->stats().converted_bytes, 48u + 12 + 16 + 12 + 4 + 3);
  }
}

TEST_F(WeightsLoad, ConvertedFileMapsWithoutConversionAndIsBitIdentical) {
  auto weights = load(KILN_DTYPE_F16);
  std::vector<kiln_tensor> stored;
  for (size_t i = 0; i < weights->parameterCount(); ++i)
    stored.push_back(weights->tensor(i));
  std::string converted = tempPath("converted.safetensors");
  ASSERT_OK(kiln_safetensors_write(converted.c_str(), stored.data(), stored.size()));
  Weights again(*manifest(), converted);
  EXPECT_EQ(again.stats().converted_bytes, 0u);
  EXPECT_EQ(again.stats().copied_bytes, 0u);
  EXPECT_EQ(again.stats().mapped_bytes, 48u + 12 + 16 + 12 + 4 + 3);
  for (size_t i = 0; i < stored.size(); ++i) {
    kiln_tensor a = weights->tensor(i), b = again.tensor(i);
    size_t bytes = kiln_dtype_size(a.dtype);
    for (int32_t d = 0; d < a.rank; ++d)
      bytes *= size_t(a.shape[d]);
    EXPECT_EQ(std::memcmp(a.data, b.data, bytes), 0) << a.name;
  }
  std::remove(converted.c_str());
}

TEST_F(WeightsLoad, SourceOfTheWrongDTypeNamesWhatConverts) {
  Checkpoint ints = w;
  ints.dtype = KILN_DTYPE_I32;
  ints.bytes.assign(36, 0);
  encode(emb, KILN_DTYPE_F32);
  std::string message = failure({emb, ints});
  expectHas(message, "tensor 'w' has dtype I32; parameter 'w[1:3]' (bf16 of rows "
                     "[1, 3)) converts from F32, F16 or BF16");
  expectHas(message, "tensor 'w' has dtype I32; parameter 'w[0:1]' (int8 of rows "
                     "[0, 1)) converts from F32, F16 or BF16");
  expectHas(message, "(2 problems)");
}

TEST_F(WeightsLoad, SourceWithTooFewRowsOrAnotherRowLength) {
  encode(emb, KILN_DTYPE_F32);
  Checkpoint shortW{"w", {2, 3}, exactValues(6, rng), KILN_DTYPE_F32, {}};
  encode(shortW, KILN_DTYPE_F32);
  std::string message = failure({emb, shortW});
  expectHas(message, "tensor 'w' has shape [2, 3]; parameter 'w[1:3]' (bf16 of rows "
                     "[1, 3)) needs [R, 3] with R >= 3");
  Checkpoint wideEmb{"emb", {4, 4}, exactValues(16, rng), KILN_DTYPE_F32, {}};
  encode(wideEmb, KILN_DTYPE_F16);
  encode(w, KILN_DTYPE_F32);
  message = failure({wideEmb, w});
  expectHas(message, "tensor 'emb' has shape [4, 4], expected [4, 3]");
  expectHas(message, "tensor 'emb' has shape [4, 4]; parameter 'emb.int8' (int8) "
                     "needs [4, 3]");
}

TEST_F(WeightsLoad, MissingSourceSaysWhatWouldDo) {
  encode(emb, KILN_DTYPE_F32);
  std::string message = failure({emb});
  expectHas(message, "missing tensor 'w' for parameter 'w[1:3]' (bf16 of rows [1, "
                     "3)): expected F32, F16 or BF16 [R, 3] with R >= 3 to convert "
                     "from, or tensor 'w[1:3]' stored as BF16 [2, 3]");
}

TEST_F(WeightsLoad, QuantizedWeightWithoutItsScalesNamesTheScales) {
  encode(emb, KILN_DTYPE_F32);
  encode(w, KILN_DTYPE_F32);
  Checkpoint q{"emb.int8", {4, 3}, {}, KILN_DTYPE_I8, std::vector<uint8_t>(12, 1)};
  std::string message = failure({emb, w, q});
  expectHas(message, "missing tensor 'emb.int8.scale' (expected F32 [4]): the file "
                     "holds 'emb.int8' quantized (I8), which needs its scales stored "
                     "beside it");
  expectHas(message, "(1 problem)");

  Checkpoint scales{"emb.int8.scale", {4}, {1, 2, 3, 4}, KILN_DTYPE_F32, {}};
  encode(scales, KILN_DTYPE_F32);
  message = failure({emb, w, scales});
  expectHas(message, "tensor 'emb.int8.scale' holds stored int8 scales, but "
                     "'emb.int8' is not stored quantized (expected I8 [4, 3]): store "
                     "both or neither");
}

TEST_F(WeightsLoad, StrayTensorIsNeitherParameterNorSource) {
  encode(emb, KILN_DTYPE_F32);
  encode(w, KILN_DTYPE_F32);
  Checkpoint extra{"w.bias", {3}, {1, 2, 3}, KILN_DTYPE_F32, {}};
  encode(extra, KILN_DTYPE_F32);
  std::string message = failure({emb, w, extra});
  expectHas(message, "unexpected tensor 'w.bias' (F32 [3]): the model has no such "
                     "parameter or source");
}

TEST_F(WeightsLoad, NonFiniteWeightCannotBeQuantized) {
  w.values[4] = INFINITY; // row 1: bf16 keeps it, no int8 reads it
  encode(w, KILN_DTYPE_F32);
  encode(emb, KILN_DTYPE_F32);
  write(path, {emb, w});
  Weights weights(*manifest(), path);
  EXPECT_EQ(values<uint16_t>(weights, 3)[1], 0x7F80);

  emb.values[7] = NAN; // row 2 of a quantized tensor
  encode(emb, KILN_DTYPE_F32);
  std::string message = failure({emb, w});
  expectHas(message, "tensor 'emb' row 2 holds a NaN or an infinity; parameter "
                     "'emb.int8' quantizes it to int8, which needs finite values");
}

TEST_F(WeightsLoad, PanelsConvertFromEachCheckpointDType) {
  for (kiln_dtype dtype : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    SCOPED_TRACE(kiln_dtype_name(dtype));
    auto weights = load(dtype, kPanels);
    EXPECT_EQ(values<float>(*weights, 0), panelsOf(w.values, 0, 3, 3, 2));
    EXPECT_EQ(values<float>(*weights, 1), panelsOf(emb.values, 1, 3, 3, 4));
    std::vector<int8_t> q(12);
    std::vector<float> scales(4);
    for (size_t r = 0; r < 4; ++r)
      scales[r] = quantizeRow(&emb.values[3 * r], 3, &q[3 * r]);
    EXPECT_EQ(values<int8_t>(*weights, 2), q);
    EXPECT_EQ(values<float>(*weights, 3), scales);
    EXPECT_EQ(weights->stats().converted_bytes, 48u + 48 + 12 + 16);
    EXPECT_EQ(weights->stats().mapped_bytes + weights->stats().copied_bytes, 0u);
    for (size_t i = 0; i < weights->parameterCount(); ++i)
      EXPECT_EQ(reinterpret_cast<uintptr_t>(weights->data(i)) % 64, 0u) << i;
  }
}

TEST_F(WeightsLoad, PanelsStoredConvertedMapAsTheyAre) {
  auto weights = load(KILN_DTYPE_BF16, kPanels);
  std::vector<kiln_tensor> stored;
  for (size_t i = 0; i < weights->parameterCount(); ++i)
    stored.push_back(weights->tensor(i));
  std::string converted = tempPath("panels.safetensors");
  ASSERT_OK(kiln_safetensors_write(converted.c_str(), stored.data(), stored.size()));
  Weights again(*manifest(kPanels), converted);
  EXPECT_EQ(again.stats().converted_bytes, 0u);
  EXPECT_EQ(again.stats().mapped_bytes, 48u + 48 + 12 + 16);
  EXPECT_EQ(values<float>(again, 0), values<float>(*weights, 0));
  EXPECT_EQ(values<float>(again, 1), values<float>(*weights, 1));
  std::remove(converted.c_str());
}

// A panels parameter that takes its source's name: an f32 tensor of that name is the
// source when it is [R, K], the parameter stored when it is [P, K, W].
TEST_F(WeightsLoad, PanelsUnderTheirSourcesName) {
  const std::string named = R"([
    {"name": "emb", "dtype": "f32", "shape": [4, 3]},
    {"name": "w", "dtype": "f32", "shape": [2, 3, 2], "source": "w",
     "conversion": "panels"}])";
  encode(emb, KILN_DTYPE_F32);
  // 4 rows fill 2 panels of 2 exactly, as 3 did with padding.
  Checkpoint full{"w", {4, 3}, exactValues(12, rng), KILN_DTYPE_F32, {}};
  encode(full, KILN_DTYPE_F32);
  write(path, {emb, full});
  {
    Weights weights(*manifest(named), path);
    EXPECT_EQ(values<float>(weights, 1), panelsOf(full.values, 0, 4, 3, 2));
    EXPECT_EQ(weights.stats().converted_bytes, 48u);
  }
  Checkpoint stored{"w", {2, 3, 2}, exactValues(12, rng), KILN_DTYPE_F32, {}};
  encode(stored, KILN_DTYPE_F32);
  write(path, {emb, stored});
  {
    Weights weights(*manifest(named), path);
    EXPECT_EQ(values<float>(weights, 1), stored.values);
    EXPECT_EQ(weights.stats().mapped_bytes, 48u + 48);
  }
  Checkpoint misshapen{"w", {2, 3, 3}, exactValues(18, rng), KILN_DTYPE_F32, {}};
  encode(misshapen, KILN_DTYPE_F32);
  expectHas(failure({emb, misshapen}, named),
            "tensor 'w' has shape [2, 3, 3], expected [2, 3, 2]");
}

/// The bytes of `path`'s mappings resident in this process (/proc/self/smaps "Rss").
size_t residentBytesOf(const std::string &path) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inFile = false;
  size_t kilobytes = 0;
  while (std::getline(smaps, line)) {
    // A mapping's first line, "start-end perms offset dev inode path", has no ':' in
    // its first field; each of its fields' lines, "Rss:  8 kB", has.
    std::string first = line.substr(0, line.find(' '));
    if (first.find(':') == std::string::npos) {
      inFile = line.size() > path.size() &&
               line.compare(line.size() - path.size(), path.size(), path) == 0;
      continue;
    }
    if (inFile && first == "Rss:")
      kilobytes += std::stoul(line.substr(first.size()));
  }
  return kilobytes << 10;
}

// A source read only to be converted leaves the process's resident memory once the
// conversion is made (its pages stay in the page cache); one that a parameter also
// maps stays, which shows that the measurement sees the file.
TEST_F(WeightsLoad, SourcesOnlyConvertedAreNotKeptResident) {
  Checkpoint big{"big", {256, 1024}, exactValues(256 * 1024, rng), KILN_DTYPE_F32, {}};
  encode(big, KILN_DTYPE_F32);
  write(path, {big});
  const std::string file = std::filesystem::canonical(path).string();
  const std::string panels = R"({"name": "big.panels", "dtype": "f32",
                                 "shape": [4, 1024, 64], "source": "big",
                                 "conversion": "panels"})";
  {
    Weights weights(*manifest("[" + panels + "]"), path);
    EXPECT_LT(residentBytesOf(file), 64u << 10);
    EXPECT_EQ(values<float>(weights, 0), panelsOf(big.values, 0, 256, 1024, 64));
  }
  Weights weights(
      *manifest(R"([{"name": "big", "dtype": "f32", "shape": [256, 1024]}, )" + panels +
                "]"),
      path);
  EXPECT_GE(residentBytesOf(file), 1u << 20);
}

TEST_F(WeightsLoad, PanelsSourceOfAnotherShapeSaysWhatFits) {
  encode(emb, KILN_DTYPE_F32);
  const std::string needs = "; parameter 'w.panels' (panels) needs [R, 3] with "
                            "ceil(R / 2) = 2";
  const std::vector<Checkpoint> wrong = {
      {"w", {3, 4}, exactValues(12, rng), KILN_DTYPE_F32, {}}, // another K
      {"w", {5, 3}, exactValues(15, rng), KILN_DTYPE_F32, {}}, // 3 panels' rows
      {"w", {2, 3}, exactValues(6, rng), KILN_DTYPE_F32, {}},  // 1 panel's
      {"w", {3, 3, 1}, exactValues(9, rng), KILN_DTYPE_F32, {}}};
  for (Checkpoint bad : wrong) {
    encode(bad, KILN_DTYPE_BF16);
    std::string message = failure({emb, bad}, kPanels);
    expectHas(message, "tensor 'w' has shape " + formatShape(bad.shape) + needs);
    expectHas(message, "(1 problem)");
  }
  Checkpoint shortEmb{"emb", {3, 3}, exactValues(9, rng), KILN_DTYPE_F32, {}};
  encode(shortEmb, KILN_DTYPE_F32);
  encode(w, KILN_DTYPE_F32);
  expectHas(failure({shortEmb, w}, kPanels),
            "tensor 'emb' has shape [3, 3]; parameter 'emb[1:4].panels' (panels of rows "
            "[1, 4)) needs [R, 3] with R >= 4");
  expectHas(failure({emb}, kPanels),
            "missing tensor 'w' for parameter 'w.panels' (panels): expected F32, F16 or "
            "BF16 [R, 3] with ceil(R / 2) = 2 to convert from, or tensor 'w.panels' "
            "stored as F32 [2, 3, 2]");
}

// fake_model (f32) from an F16 and a BF16 checkpoint of values both hold exactly: the
// same outputs, bit for bit, as from the F32 file.
TEST(WeightsLoadRun, HalfCheckpointsRunAsTheF32One) {
  std::mt19937 rng(3);
  Checkpoint weight{"proj.weight", {4}, exactValues(4, rng), KILN_DTYPE_F32, {}};
  Checkpoint bias{"proj.bias", {2, 2}, exactValues(4, rng), KILN_DTYPE_F32, {}};
  std::vector<float> x = randomFloats(8, rng), y = randomFloats(8, rng);
  std::vector<int64_t> shape{1, 2, 4};
  kiln_model *model = nullptr;
  ASSERT_OK(kiln_model_open(FAKE_MODEL, &model));
  std::vector<std::vector<float>> outputs;
  for (kiln_dtype dtype : {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_BF16}) {
    encode(weight, dtype);
    encode(bias, dtype);
    std::string path = tempPath("half.safetensors");
    write(path, {weight, bias});
    kiln_weights *weights = nullptr;
    kiln_session *session = nullptr;
    ASSERT_OK(kiln_weights_open(model, path.c_str(), &weights));
    ASSERT_OK(kiln_session_create(model, weights, nullptr, &session));
    kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, x.data()),
                             tensor("y", KILN_DTYPE_F32, shape, y.data())};
    ASSERT_OK(kiln_session_run(session, "forward", inputs, 2));
    kiln_tensor z;
    ASSERT_OK(kiln_session_get_output(session, "z", &z));
    const float *data = static_cast<const float *>(z.data);
    outputs.emplace_back(data, data + 8);
    kiln_session_release(session);
    kiln_weights_release(weights);
    std::remove(path.c_str());
  }
  kiln_model_release(model);
  EXPECT_EQ(outputs[1], outputs[0]);
  EXPECT_EQ(outputs[2], outputs[0]);
}
