// WeightsTest.cpp - safetensors files: the writer, the structural checks, and matching a
// file to the model's parameters with every mismatch reported by name.
#include "TestUtil.h"

#include <cstring>

using namespace kiln::test;

namespace {

// A safetensors file from a header and a data section, laid out by hand.
std::string safetensorsBytes(const std::string &header, const std::string &data) {
  std::string out(8, '\0');
  uint64_t len = header.size();
  for (int i = 0; i < 8; ++i)
    out[i] = char(len >> (8 * i));
  return out + header + data;
}

std::string floatBytes(size_t n, float start = 0.5f) {
  std::string out(n * 4, '\0');
  for (size_t i = 0; i < n; ++i) {
    float v = start + float(i);
    std::memcpy(&out[i * 4], &v, 4);
  }
  return out;
}

// Header entries for the two parameters of fake_model, valid by default.
std::string weightEntry(const std::string &dtype = "F32",
                        const std::string &shape = "[4]",
                        const std::string &offsets = "[0, 16]") {
  return "\"proj.weight\": {\"dtype\": \"" + dtype + "\", \"shape\": " + shape +
         ", \"data_offsets\": " + offsets + "}";
}
std::string biasEntry(const std::string &offsets = "[16, 32]") {
  return "\"proj.bias\": {\"dtype\": \"F32\", \"shape\": [2, 2], \"data_offsets\": " +
         offsets + "}";
}

struct WeightsFixture : ::testing::Test {
  kiln_model *model = nullptr;
  std::string path = tempPath("w.safetensors");
  void SetUp() override { ASSERT_OK(kiln_model_open(FAKE_MODEL, &model)); }
  void TearDown() override {
    kiln_model_release(model);
    std::remove(path.c_str());
  }
  Result open() {
    kiln_weights *weights = nullptr;
    Result r = take(kiln_weights_open(model, path.c_str(), &weights));
    if (!r.ok()) {
      EXPECT_EQ(weights, nullptr);
    }
    kiln_weights_release(weights);
    return r;
  }
  Result openBytes(const std::string &bytes) {
    writeFile(path, bytes);
    return open();
  }
  // Expects `bytes` to be refused as INVALID_WEIGHTS, with `message` in the text.
  void expectInvalid(const std::string &bytes, const std::string &message) {
    Result r = openBytes(bytes);
    EXPECT_EQ(r.code, KILN_STATUS_INVALID_WEIGHTS) << r;
    EXPECT_NE(r.message.find(message), std::string::npos) << r;
  }
};

#define EXPECT_MESSAGE_HAS(result, text)                                                 \
  EXPECT_NE((result).message.find(text), std::string::npos) << (result)

} // namespace

TEST_F(WeightsFixture, WrittenFileOpens) {
  std::mt19937 rng(1);
  FakeWeights w(rng);
  path = w.path;
  Result r = open();
  EXPECT_TRUE(r.ok()) << r;
}

TEST_F(WeightsFixture, HandWrittenFileWithMetadataOpens) {
  Result r = openBytes(safetensorsBytes("{\"__metadata__\": {\"format\": \"pt\"}, " +
                                            weightEntry() + ", " + biasEntry() + "}  ",
                                        floatBytes(8)));
  EXPECT_TRUE(r.ok()) << r;
}

TEST_F(WeightsFixture, MissingFile) {
  path = "/nonexistent/weights.safetensors";
  Result r = open();
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_MESSAGE_HAS(r, "weights file '/nonexistent/weights.safetensors'");
}

TEST_F(WeightsFixture, EmptyFile) {
  Result r = openBytes("");
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_WEIGHTS) << r;
  EXPECT_MESSAGE_HAS(r, path);
  EXPECT_MESSAGE_HAS(r, "the file is 0 bytes");
}

TEST_F(WeightsFixture, NotSafetensors) {
  Result r = openBytes("PK\x03\x04 this is a zip file, or something else entirely");
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_WEIGHTS) << r;
  EXPECT_MESSAGE_HAS(r, "weights file '" + path + "' is not a valid safetensors file");
  EXPECT_MESSAGE_HAS(r, "header length");
}

TEST_F(WeightsFixture, HeaderLengthBeyondFile) {
  std::string bytes = safetensorsBytes("{}", "");
  bytes[1] = 0x10; // length 4096 + 2
  expectInvalid(bytes, "header length 4098 exceeds the 2 bytes after the length field");
}

TEST_F(WeightsFixture, HeaderNotJson) {
  expectInvalid(safetensorsBytes("{\"proj.weight\": [1, 2", ""),
                "the header is not valid JSON");
}

TEST_F(WeightsFixture, TruncatedData) {
  std::string bytes =
      safetensorsBytes("{" + weightEntry() + ", " + biasEntry() + "}", floatBytes(8));
  expectInvalid(bytes.substr(0, bytes.size() - 6),
                "tensor 'proj.bias': data_offsets [16, 32] exceed the data section "
                "(26 bytes) - is the file truncated?");
}

TEST_F(WeightsFixture, OffsetsNotMatchingShape) {
  expectInvalid(safetensorsBytes("{" + weightEntry("F32", "[4]", "[0, 12]") + ", " +
                                     biasEntry("[12, 28]") + "}",
                                 floatBytes(8)),
                "tensor 'proj.weight': data_offsets [0, 12] hold 12 bytes but F32 [4] "
                "needs 4 x 4 bytes");
}

TEST_F(WeightsFixture, DecreasingOffsets) {
  expectInvalid(safetensorsBytes("{" + weightEntry("F32", "[4]", "[16, 0]") + ", " +
                                     biasEntry() + "}",
                                 floatBytes(8)),
                "tensor 'proj.weight': data_offsets [16, 0] are not an increasing range");
}

// Hugging Face's loader rejects each of the next four layouts; so does Kiln.
TEST_F(WeightsFixture, OverlappingTensors) {
  expectInvalid(safetensorsBytes("{" + weightEntry() + ", " + biasEntry("[8, 24]") + "}",
                                 floatBytes(6)),
                "tensor 'proj.bias' (data_offsets [8, 24]) overlaps tensor "
                "'proj.weight' (data_offsets [0, 16])");
}

TEST_F(WeightsFixture, HoleBetweenTensors) {
  expectInvalid(safetensorsBytes("{" + weightEntry() + ", " + biasEntry("[20, 36]") + "}",
                                 floatBytes(9)),
                "bytes [16, 20) of the data section belong to no tensor (a hole "
                "between 'proj.weight' (data_offsets [0, 16]) and 'proj.bias' "
                "(data_offsets [20, 36]))");
}

TEST_F(WeightsFixture, HoleBeforeFirstTensor) {
  expectInvalid(safetensorsBytes("{" + weightEntry("F32", "[4]", "[4, 20]") + ", " +
                                     biasEntry("[20, 36]") + "}",
                                 floatBytes(9)),
                "bytes [0, 4) of the data section belong to no tensor (a hole "
                "before 'proj.weight' (data_offsets [4, 20]))");
}

TEST_F(WeightsFixture, TrailingBytes) {
  expectInvalid(
      safetensorsBytes("{" + weightEntry() + ", " + biasEntry() + "}", floatBytes(9)),
      "4 trailing bytes after the last tensor 'proj.bias' "
      "(data_offsets [16, 32]): the data section has 36 bytes, the "
      "tensors cover 32");
}

TEST_F(WeightsFixture, NonUtf8TensorName) {
  expectInvalid(safetensorsBytes("{" + weightEntry() + ", " + biasEntry() +
                                     ", \"bad\xC0\xAFname\": {\"dtype\": \"F32\", "
                                     "\"shape\": [1], \"data_offsets\": [32, 36]}}",
                                 floatBytes(9)),
                "tensor name \"bad\\xc0\\xafname\" is not valid UTF-8 (byte 3 of "
                "the name)");
}

TEST_F(WeightsFixture, NonUtf8Metadata) {
  expectInvalid(safetensorsBytes("{\"__metadata__\": {\"format\": \"\xED\xA0\x80\"}, " +
                                     weightEntry() + ", " + biasEntry() + "}",
                                 floatBytes(8)),
                "the header is not valid UTF-8 (byte 37 of the file)");
}

TEST_F(WeightsFixture, Utf8NamesAreNotCorruption) {
  expectInvalid(safetensorsBytes("{" + weightEntry() + ", " + biasEntry() +
                                     ", \"d\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\": "
                                     "{\"dtype\": \"F32\", \"shape\": [1], "
                                     "\"data_offsets\": [32, 36]}}",
                                 floatBytes(9)),
                "unexpected tensor 'd\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80' (F32 [1])");
}

TEST_F(WeightsFixture, MissingTensor) {
  Result r = openBytes(safetensorsBytes("{" + weightEntry() + "}", floatBytes(4)));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_WEIGHTS) << r;
  EXPECT_MESSAGE_HAS(r, "does not match model 'fake' (1 problem)");
  EXPECT_MESSAGE_HAS(r, "missing tensor 'proj.bias' (expected F32 [2, 2])");
}

TEST_F(WeightsFixture, UnexpectedTensor) {
  expectInvalid(safetensorsBytes("{" + weightEntry() + ", " + biasEntry() +
                                     ", \"decoder.extra\": {\"dtype\": \"F32\", "
                                     "\"shape\": [1], \"data_offsets\": [32, 36]}}",
                                 floatBytes(9)),
                "unexpected tensor 'decoder.extra' (F32 [1])");
}

TEST_F(WeightsFixture, WrongShape) {
  expectInvalid(
      safetensorsBytes("{" + weightEntry("F32", "[2, 2]") + ", " + biasEntry() + "}",
                       floatBytes(8)),
      "tensor 'proj.weight' has shape [2, 2], expected [4]");
}

TEST_F(WeightsFixture, WrongDType) {
  expectInvalid(safetensorsBytes("{" + weightEntry("I32") + ", " + biasEntry() + "}",
                                 floatBytes(8)),
                "tensor 'proj.weight' has dtype I32, expected F32");
}

TEST_F(WeightsFixture, UnconvertibleDTypeIsAMismatchNotCorruption) {
  expectInvalid(safetensorsBytes("{" + weightEntry("I8", "[4]", "[0, 4]") + ", " +
                                     biasEntry("[4, 20]") + "}",
                                 floatBytes(5)),
                "tensor 'proj.weight' has dtype I8, expected F32 (or F16 or BF16, "
                "converted at load)");
}

TEST_F(WeightsFixture, EveryProblemIsReportedAtOnce) {
  Result r =
      openBytes(safetensorsBytes("{" + weightEntry("I64", "[2]") +
                                     ", \"proj.bais\": {\"dtype\": \"F32\", \"shape\": "
                                     "[2, 2], \"data_offsets\": [16, 32]}}",
                                 floatBytes(8)));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_WEIGHTS) << r;
  EXPECT_MESSAGE_HAS(r, "(3 problems)");
  EXPECT_MESSAGE_HAS(r, "tensor 'proj.weight' is I64 [2], expected F32 [4]");
  EXPECT_MESSAGE_HAS(r, "missing tensor 'proj.bias' (expected F32 [2, 2])");
  EXPECT_MESSAGE_HAS(r, "unexpected tensor 'proj.bais' (F32 [2, 2])");
}

TEST(SafetensorsWrite, RejectsBadTensors) {
  std::vector<int64_t> shape{2};
  float data[2] = {1.5f, -2.5f};
  kiln_tensor twice[2] = {tensor("a", KILN_DTYPE_F32, shape, data),
                          tensor("a", KILN_DTYPE_F32, shape, data)};
  std::string path = tempPath("bad.safetensors");
  Result r = take(kiln_safetensors_write(path.c_str(), twice, 2));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_NE(r.message.find("duplicate tensor name 'a'"), std::string::npos) << r;

  kiln_tensor noData = tensor("b", KILN_DTYPE_F32, shape, nullptr);
  r = take(kiln_safetensors_write(path.c_str(), &noData, 1));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;

  kiln_tensor ok = tensor("c", KILN_DTYPE_F32, shape, data);
  r = take(kiln_safetensors_write("/nonexistent/dir/out.safetensors", &ok, 1));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_NE(r.message.find("/nonexistent/dir/out.safetensors"), std::string::npos) << r;
}

TEST(SafetensorsWrite, LayoutIsStandard) {
  // Mixed dtypes: widest first, no holes, data 8-byte aligned, header padded with spaces.
  std::vector<int64_t> s3{3}, s2{2};
  int32_t ints[3] = {7, -8, 9};
  int64_t longs[2] = {-1, 1LL << 40};
  kiln_tensor t[2] = {tensor("ints", KILN_DTYPE_I32, s3, ints),
                      tensor("longs", KILN_DTYPE_I64, s2, longs)};
  std::string path = tempPath("layout.safetensors");
  ASSERT_OK(kiln_safetensors_write(path.c_str(), t, 2));
  std::string bytes = readFile(path);
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i)
    len = len << 8 | uint8_t(bytes[i]);
  EXPECT_EQ(len % 8, 0u);
  std::string header = bytes.substr(8, len);
  EXPECT_NE(
      header.find("\"longs\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]}"),
      std::string::npos)
      << header;
  EXPECT_NE(
      header.find("\"ints\":{\"dtype\":\"I32\",\"shape\":[3],\"data_offsets\":[16,28]}"),
      std::string::npos)
      << header;
  ASSERT_EQ(bytes.size(), 8 + len + 28);
  EXPECT_EQ(std::memcmp(bytes.data() + 8 + len, longs, 16), 0);
  EXPECT_EQ(std::memcmp(bytes.data() + 8 + len + 16, ints, 12), 0);
  std::remove(path.c_str());
}
