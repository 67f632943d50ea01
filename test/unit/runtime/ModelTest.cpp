// ModelTest.cpp - opening model libraries: introspection, and every way a file can fail
// to be a usable Kiln model.
#include "TestUtil.h"

#include <climits>
#include <cstdlib>
#include <unistd.h>

using namespace kiln::test;

namespace {

struct ModelFixture : ::testing::Test {
  kiln_model *model = nullptr;
  void SetUp() override { ASSERT_OK(kiln_model_open(FAKE_MODEL, &model)); }
  void TearDown() override { kiln_model_release(model); }
};

Result openFails(const std::string &path) {
  kiln_model *model = reinterpret_cast<kiln_model *>(0x1);
  Result r = take(kiln_model_open(path.c_str(), &model));
  EXPECT_EQ(model, nullptr) << "out_model must be cleared on failure";
  kiln_model_release(model);
  return r;
}

// Expects opening `path` to fail with `code` and `message` in the text.
void expectOpenFails(const std::string &path, kiln_status_code code,
                     const std::string &message) {
  Result r = openFails(path);
  EXPECT_EQ(r.code, code) << r;
  EXPECT_NE(r.message.find(message), std::string::npos) << r;
}

// Expects opening `path` to fail with exactly "model 'PATH': invalid manifest: PROBLEM".
void expectInvalidManifest(const std::string &path, const std::string &problem) {
  Result r = openFails(path);
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_MODEL) << r;
  EXPECT_EQ(r.message, "model '" + path + "': invalid manifest: " + problem);
}

std::vector<std::string> dims(const kiln_tensor_info &info) {
  return std::vector<std::string>(info.dims, info.dims + info.rank);
}

} // namespace

TEST_F(ModelFixture, DescribesItself) {
  EXPECT_STREQ(kiln_model_name(model), "fake");
  EXPECT_STREQ(kiln_model_target(model), "x86-64-linux");
  EXPECT_NE(std::string(kiln_model_manifest_json(model)).find("\"abi_version\": 4"),
            std::string::npos);
  ASSERT_EQ(kiln_model_entry_count(model), 4u);
  EXPECT_STREQ(kiln_model_entry_name(model, 0), "forward");
  EXPECT_STREQ(kiln_model_entry_name(model, 1), "widen");
  EXPECT_STREQ(kiln_model_entry_name(model, 2), "broken");
  EXPECT_STREQ(kiln_model_entry_name(model, 3), "encode");
  EXPECT_EQ(kiln_model_entry_name(model, 4), nullptr);
}

TEST_F(ModelFixture, DescribesInputsOutputsAndParameters) {
  ASSERT_EQ(kiln_model_input_count(model, 0), 2u);
  ASSERT_EQ(kiln_model_output_count(model, 0), 2u);
  kiln_tensor_info info;
  ASSERT_OK(kiln_model_input_info(model, 0, 0, &info));
  EXPECT_STREQ(info.name, "x");
  EXPECT_EQ(info.dtype, KILN_DTYPE_F32);
  EXPECT_EQ(dims(info), (std::vector<std::string>{"B", "S", "4"}));
  EXPECT_EQ(std::vector<int64_t>(info.shape, info.shape + 3),
            (std::vector<int64_t>{-1, -1, 4}));
  ASSERT_OK(kiln_model_output_info(model, 0, 0, &info));
  EXPECT_STREQ(info.name, "z");
  EXPECT_EQ(dims(info), (std::vector<std::string>{"(B*S*4)/4", "4"}));
  ASSERT_OK(kiln_model_output_info(model, 1, 0, &info));
  EXPECT_EQ(info.dtype, KILN_DTYPE_I64);

  ASSERT_EQ(kiln_model_parameter_count(model), 2u);
  ASSERT_OK(kiln_model_parameter_info(model, 1, &info));
  EXPECT_STREQ(info.name, "proj.bias");
  EXPECT_EQ(std::vector<int64_t>(info.shape, info.shape + info.rank),
            (std::vector<int64_t>{2, 2}));

  Result r = take(kiln_model_input_info(model, 0, 2, &info));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  r = take(kiln_model_parameter_info(model, 2, &info));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
}

TEST_F(ModelFixture, ListsDynamicDimsAndEvaluatesShapes) {
  ASSERT_EQ(kiln_model_dim_count(model, 1), 2u);
  EXPECT_STREQ(kiln_model_dim_name(model, 1, 0), "B");
  EXPECT_STREQ(kiln_model_dim_name(model, 1, 1), "T");
  EXPECT_EQ(kiln_model_dim_name(model, 1, 2), nullptr);

  const char *names[] = {"S", "B", "unused"};
  const int64_t values[] = {5, 3, 99};
  int64_t shape[2];
  ASSERT_OK(kiln_model_output_shape(model, 0, 0, names, values, 3, shape));
  EXPECT_EQ(shape[0], 15);
  EXPECT_EQ(shape[1], 4);

  const char *widenNames[] = {"B", "T"};
  const int64_t widenValues[] = {2, 6};
  ASSERT_OK(kiln_model_input_shape(model, 1, 1, widenNames, widenValues, 2, shape));
  EXPECT_EQ(shape[1], 7); // "T+1"

  Result r = take(kiln_model_output_shape(model, 0, 0, names + 1, values + 1, 1, shape));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_NE(r.message.find("dimension 'S'"), std::string::npos) << r;
}

TEST_F(ModelFixture, DescribesInputBounds) {
  size_t encode = 0;
  ASSERT_OK(kiln_model_find_entry(model, "encode", &encode));
  ASSERT_EQ(kiln_model_input_count(model, encode), 3u);
  const char *want[3][2] = {{"0", "49"}, {"1", "S"}, {"-1", "S-1"}};
  kiln_tensor_info info;
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_OK(kiln_model_input_info(model, encode, i, &info));
    ASSERT_NE(info.bounds_min, nullptr) << info.name;
    EXPECT_STREQ(info.bounds_min, want[i][0]) << info.name;
    EXPECT_STREQ(info.bounds_max, want[i][1]) << info.name;
  }
  // No bounds: NULL, for inputs without them, outputs and parameters.
  ASSERT_OK(kiln_model_input_info(model, 1, 0, &info));
  EXPECT_EQ(info.bounds_min, nullptr);
  EXPECT_EQ(info.bounds_max, nullptr);
  ASSERT_OK(kiln_model_output_info(model, encode, 0, &info));
  EXPECT_EQ(info.bounds_min, nullptr);
  ASSERT_OK(kiln_model_parameter_info(model, 0, &info));
  EXPECT_EQ(info.bounds_max, nullptr);
}

TEST_F(ModelFixture, EvaluatesInputBounds) {
  const size_t encode = 3;
  const char *names[] = {"B", "S"};
  const int64_t values[] = {2, 9};
  int64_t lo = 0, hi = 0;
  ASSERT_OK(kiln_model_input_bounds(model, encode, 0, names, values, 2, &lo, &hi));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 49);
  ASSERT_OK(kiln_model_input_bounds(model, encode, 0, nullptr, nullptr, 0, &lo, &hi));
  EXPECT_EQ(hi, 49); // static bounds need no dims
  ASSERT_OK(kiln_model_input_bounds(model, encode, 1, names, values, 2, &lo, &hi));
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 9);
  ASSERT_OK(
      kiln_model_input_bounds(model, encode, 2, names + 1, values + 1, 1, &lo, &hi));
  EXPECT_EQ(lo, -1);
  EXPECT_EQ(hi, 8);

  // An integer input without bounds: its dtype's range. A float one has none.
  ASSERT_OK(kiln_model_input_bounds(model, 1, 1, nullptr, nullptr, 0, &lo, &hi));
  EXPECT_EQ(lo, INT32_MIN);
  EXPECT_EQ(hi, INT32_MAX);
  Result r = take(kiln_model_input_bounds(model, 0, 0, nullptr, nullptr, 0, &lo, &hi));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message,
            "entry 'forward': input 'x' is f32; only integer inputs have value bounds");

  r = take(kiln_model_input_bounds(model, encode, 1, names, values, 1, &lo, &hi));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_EQ(r.message,
            "entry 'encode': bounds [1, S] of input 'src_lengths' needs a value for "
            "dimension 'S'");
  r = take(kiln_model_input_bounds(model, encode, 3, names, values, 2, &lo, &hi));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  r = take(kiln_model_input_bounds(model, encode, 0, names, values, 2, nullptr, &hi));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
}

TEST_F(ModelFixture, FindEntryListsTheAvailableOnes) {
  size_t index = 99;
  ASSERT_OK(kiln_model_find_entry(model, "widen", &index));
  EXPECT_EQ(index, 1u);
  Result r = take(kiln_model_find_entry(model, "decode", &index));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND);
  EXPECT_NE(r.message.find(
                "no entry 'decode'; available entries: forward, widen, broken, encode"),
            std::string::npos)
      << r;
}

TEST(ModelOpen, MissingFileIsNotFound) {
  expectOpenFails("/nonexistent/dir/model.so", KILN_STATUS_NOT_FOUND,
                  "/nonexistent/dir/model.so");
}

TEST(ModelOpen, UnrelatedLibraryIsNotAKilnModel) {
  Result r = openFails(NOT_KILN_SO);
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_MODEL) << r;
  EXPECT_NE(r.message.find("is not a Kiln model"), std::string::npos) << r;
  EXPECT_NE(r.message.find(NOT_KILN_SO), std::string::npos) << r;
}

TEST(ModelOpen, GarbageFileCannotBeLoaded) {
  std::string path = tempPath("garbage.so");
  writeFile(path, "this is not an ELF file at all");
  expectOpenFails(path, KILN_STATUS_INVALID_MODEL, "cannot load model '" + path + "'");
  std::remove(path.c_str());
}

TEST(ModelOpen, DirectoryIsRejected) {
  expectOpenFails(::testing::TempDir(), KILN_STATUS_INVALID_MODEL, "not a regular file");
}

// A model from before ABI 2 (no live ranges) is rejected by its ABI version, naming both.
TEST(ModelOpen, OlderAbiVersionIsIncompatible) {
  expectOpenFails(FAKE_MODEL_ABI1, KILN_STATUS_INCOMPATIBLE,
                  "built for Kiln model ABI 1; this runtime supports ABI 4 to 5");
}

// A model from a newer compiler than this runtime: the same error, never a guess at
// what it means.
TEST(ModelOpen, NewerAbiVersionIsIncompatible) {
  expectOpenFails(FAKE_MODEL_ABI6, KILN_STATUS_INCOMPATIBLE,
                  "built for Kiln model ABI 6; this runtime supports ABI 4 to 5");
}

TEST(ModelOpen, MissingKernelSymbolIsNamed) {
  expectOpenFails(FAKE_MODEL_MISSING_KERNEL, KILN_STATUS_INVALID_MODEL,
                  "fake_missing_argv");
}

TEST(ModelOpen, InvalidManifestPointsAtTheProblem) {
  expectOpenFails(FAKE_MODEL_BAD_MANIFEST, KILN_STATUS_INVALID_MODEL,
                  "entries[4] ('bad').outputs[0].buffer: index 7 out of range");
}

TEST(ModelOpen, KernelMetadataMustMatchTheManifest) {
  Result r = openFails(FAKE_MODEL_BAD_METADATA);
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_MODEL) << r;
  EXPECT_NE(r.message.find("kernel 'fake_add'"), std::string::npos) << r;
  EXPECT_NE(r.message.find("is a 2-D f32 buffer but buffers[5] is f32 of rank 3"),
            std::string::npos)
      << r;
}

TEST(ModelOpen, BoundsOnAFloatInputAreRejected) {
  expectInvalidManifest(FAKE_MODEL_FLOAT_BOUNDS,
                        "entries[0] ('forward').inputs[0].bounds: input 'x' is f32; "
                        "bounds are only allowed on i32 and i64 inputs");
}

TEST(ModelOpen, MalformedBoundsAreRejected) {
  expectInvalidManifest(FAKE_MODEL_BAD_BOUNDS,
                        "entries[3] ('encode').inputs[1].bounds[1]: bad dimension "
                        "expression \"S+\": unexpected end, where a number, name or "
                        "'(' was expected");
}

TEST(ModelOpen, NullArgumentsAreInvalid) {
  kiln_model *model = nullptr;
  EXPECT_EQ(take(kiln_model_open(nullptr, &model)).code, KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_model_open(FAKE_MODEL, nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_model_open("", &model)).code, KILN_STATUS_INVALID_ARGUMENT);
  // Queries on a NULL model are harmless.
  EXPECT_EQ(kiln_model_entry_count(nullptr), 0u);
  EXPECT_STREQ(kiln_model_name(nullptr), "");
  kiln_model_release(nullptr);
}

TEST(ModelOpen, BareFileNameIsOpenedFromTheCurrentDirectory) {
  // dlopen("fake_model.so") would search the library path; the runtime must not.
  std::string full = FAKE_MODEL;
  std::string dir = full.substr(0, full.rfind('/'));
  char previous[PATH_MAX];
  ASSERT_NE(getcwd(previous, sizeof previous), nullptr);
  ASSERT_EQ(chdir(dir.c_str()), 0);
  kiln_model *model = nullptr;
  Result r = take(kiln_model_open(full.substr(full.rfind('/') + 1).c_str(), &model));
  ASSERT_EQ(chdir(previous), 0);
  EXPECT_TRUE(r.ok()) << r;
  kiln_model_release(model);
}

TEST(Status, CodesHaveNamesAndNullIsOk) {
  EXPECT_EQ(kiln_status_get_code(nullptr), KILN_STATUS_OK);
  EXPECT_STREQ(kiln_status_get_message(nullptr), "");
  EXPECT_STREQ(kiln_status_code_string(KILN_STATUS_INVALID_WEIGHTS), "INVALID_WEIGHTS");
  EXPECT_STREQ(kiln_dtype_name(KILN_DTYPE_I64), "i64");
  EXPECT_EQ(kiln_dtype_size(KILN_DTYPE_I64), 8u);
  EXPECT_EQ(kiln_dtype_size(kiln_dtype(0)), 0u);
  kiln_status_free(nullptr);
}
