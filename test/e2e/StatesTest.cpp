//===- StatesTest.cpp - Incremental decoding with session states, end to end ===//
//
// A hand-written kiln module with a key/value cache, compiled at test time by the Halide
// backend and run through the runtime for a sequence of decoding steps, against the
// reference interpreter running the same module with its own states: each step's
// outputs and, through kiln_session_get_state, the caches themselves.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "kiln/backends/halide/Compile.h"
#include "kiln/ir/KilnDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace kiln;
using namespace kiln::e2e;
using reference::HostTensor;

namespace {

/// `start` allocates [B, 2, 8, 4] caches and stores a memory; each `step` projects its
/// token x [B, 2, 1, 4], appends k and v at position P (the value of input "step") and
/// attends with q over the first P + 1 positions (y, strided keys and values) and over
/// the memory (z, dense ones); the scores q.k^T of an unfused graph read the strided
/// keys too; `peek` returns the key cache's prefix itself. `prefill` creates the caches
/// (B from its input) and writes a block of N positions from 0 in one run; `alloc`
/// creates a cache with B from a value input alone; `pair` appends a static block of
/// two positions at P.
const char *kDecoder = R"mlir(
func @start(%m: tensor<?x2x3x4xf32> {kiln.name = "memory", kiln.dims = ["B", "", "", ""]}) {
  kiln.state_alloc "k_cache" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  kiln.state_alloc "v_cache" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  kiln.state_write "memory", %m : tensor<?x2x3x4xf32>
  kiln.return
}
func @step(%x: tensor<?x2x1x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.dims = [], kiln.value_dim = "P",
                            kiln.bounds = ["0", "7"]})
    -> (tensor<?x2x1x4xf32> {kiln.name = "y"}, tensor<?x2x1x4xf32> {kiln.name = "z"},
        tensor<?x2x1x?xf32> {kiln.name = "scores"}) {
  %wq = kiln.parameter "wq" : tensor<4x4xf32>
  %bq = kiln.parameter "bq" : tensor<4xf32>
  %wk = kiln.parameter "wk" : tensor<4x4xf32>
  %bk = kiln.parameter "bk" : tensor<4xf32>
  %wv = kiln.parameter "wv" : tensor<4x4xf32>
  %bv = kiln.parameter "bv" : tensor<4xf32>
  %q = kiln.linear %x, %wq, %bq
      : (tensor<?x2x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x2x1x4xf32>
  %k = kiln.linear %x, %wk, %bk
      : (tensor<?x2x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x2x1x4xf32>
  %v = kiln.linear %x, %wv, %bv
      : (tensor<?x2x1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x2x1x4xf32>
  %ks = kiln.kv_append "k_cache", %k {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %vs = kiln.kv_append "v_cache", %v {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %y = kiln.attention %q, %ks, %vs {scale = 0.5 : f32}
      : (tensor<?x2x1x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x1x4xf32>
  %m = kiln.state_read "memory" {dims = ["B", "", "S", ""]} : tensor<?x2x?x4xf32>
  %z = kiln.attention %q, %m, %m {scale = 0.5 : f32}
      : (tensor<?x2x1x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x1x4xf32>
  %s = kiln.matmul %q, %ks {transpose_rhs = true}
      : (tensor<?x2x1x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x1x?xf32>
  kiln.return %y, %z, %s : tensor<?x2x1x4xf32>, tensor<?x2x1x4xf32>, tensor<?x2x1x?xf32>
}
func @peek(%x: tensor<?x2x1x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P", kiln.bounds = ["0", "7"]})
    -> (tensor<?x2x?x4xf32> {kiln.name = "keys"}) {
  %ks = kiln.kv_append "k_cache", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %ks : tensor<?x2x?x4xf32>
}
func @prefill(%x: tensor<?x2x?x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "N", ""]})
    -> (tensor<?x2x?x4xf32> {kiln.name = "y"}) {
  %wk = kiln.parameter "wk" : tensor<4x4xf32>
  %bk = kiln.parameter "bk" : tensor<4xf32>
  %k = kiln.linear %x, %wk, %bk
      : (tensor<?x2x?x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<?x2x?x4xf32>
  kiln.state_alloc "k_cache" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  kiln.state_alloc "v_cache" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  %ks = kiln.kv_append "k_cache", %k {axis = 2 : i64, capacity = 8 : i64, position = "0"}
      : (tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %vs = kiln.kv_append "v_cache", %x {axis = 2 : i64, capacity = 8 : i64, position = "0"}
      : (tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %y = kiln.attention %x, %ks, %vs {scale = 0.5 : f32}
      : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %y : tensor<?x2x?x4xf32>
}
func @alloc(%b: tensor<i32> {kiln.name = "batch", kiln.value_dim = "B", kiln.bounds = ["1", "8"]}) {
  kiln.state_alloc "k_cache" {dims = ["B", "", "", ""]} : tensor<?x2x8x4xf32>
  kiln.return
}
func @pair(%x: tensor<?x2x2x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P", kiln.bounds = ["0", "7"]})
    -> (tensor<?x2x?x4xf32> {kiln.name = "keys"}) {
  %ks = kiln.kv_append "k_cache", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x2x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %ks : tensor<?x2x?x4xf32>
}
)mlir";

HostTensor randomFloats(std::vector<int64_t> shape, std::mt19937 &random) {
  HostTensor t = HostTensor::floats(std::move(shape));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float &v : t.f32)
    v = uniform(random);
  return t;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Expects `actual` (from the runtime) to be `expected` within kTolerance: the same
/// shape, max|a - b| / max|b| small.
void expectClose(const std::string &what, const kiln_tensor &actual,
                 const HostTensor &expected) {
  std::vector<int64_t> shape(actual.shape, actual.shape + actual.rank);
  ASSERT_EQ(shape, expected.shape)
      << what << ": " << shapeString(shape) << " vs " << shapeString(expected.shape);
  ASSERT_EQ(actual.dtype, KILN_DTYPE_F32) << what;
  const auto *data = static_cast<const float *>(actual.data);
  double diff = 0, scale = 0;
  for (size_t i = 0; i < expected.f32.size(); ++i) {
    ASSERT_TRUE(std::isfinite(data[i])) << what << " element " << i;
    diff = std::max(diff, std::fabs(double(data[i]) - expected.f32[i]));
    scale = std::max(scale, std::fabs(double(expected.f32[i])));
  }
  EXPECT_LE(scale > 0 ? diff / scale : diff, kTolerance) << what;
}

/// A directory of its own under the tests' build directory, removed at exit: ctest
/// runs each test in its own process, maybe several at once.
struct ScratchDir {
  llvm::SmallString<256> path;
  ScratchDir() {
    std::error_code ec =
        llvm::sys::fs::createUniqueDirectory(buildDir() + "/states", path);
    EXPECT_FALSE(ec) << ec.message();
  }
  ~ScratchDir() { llvm::sys::fs::remove_directories(path); }
};

/// A context with the kiln dialect whose diagnostics are collected in `text`.
struct DiagnosticContext {
  DiagnosticContext() { context.loadDialect<KilnDialect>(); }
  mlir::MLIRContext context;
  std::string text;
  mlir::ScopedDiagnosticHandler handler{&context, [this](mlir::Diagnostic &d) {
                                          text += d.str() + "\n";
                                          return mlir::success();
                                        }};
};

/// Compiles the decoder into `outputDir`; its path, or "" (with a test failure) when it
/// does not compile.
std::string compileDecoder(const std::string &outputDir) {
  DiagnosticContext diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kDecoder, &diagnostics.context);
  if (!module) {
    ADD_FAILURE() << "the module does not parse: " << diagnostics.text;
    return std::string();
  }
  halide_backend::CompileOptions options;
  options.outputDir = outputDir;
  mlir::FailureOr<std::string> path =
      halide_backend::compileModel(*module, "e2e_states", options);
  if (mlir::failed(path)) {
    ADD_FAILURE() << "the module does not compile: " << diagnostics.text;
    return std::string();
  }
  return *path;
}

/// Where ctest's fixture (the test below) leaves the compiled decoder for every
/// DecoderStates test, each its own process: compiling it took each of them 7 s, 15
/// under the sanitizers. Unset when the tests run outside ctest.
const char *sharedDecoderDir() { return std::getenv("KILN_E2E_STATES_DIR"); }

TEST(DecoderStatesLibrary, Compiles) {
  const char *shared = sharedDecoderDir();
  if (!shared) {
    ScratchDir dir;
    EXPECT_FALSE(compileDecoder(dir.path.str().str()).empty());
    return;
  }
  ASSERT_FALSE(llvm::sys::fs::create_directories(shared));
  // Never a library of an earlier build beside a failed compile.
  llvm::sys::fs::remove(std::string(shared) + "/e2e_states.so");
  std::string path = compileDecoder(shared);
  ASSERT_FALSE(path.empty());
  EXPECT_TRUE(llvm::sys::fs::exists(path)) << path;
}

/// The decoder that the fixture compiled, or else one compiled once per process.
const std::string &decoderLibrary() {
  static std::string library = []() -> std::string {
    if (const char *shared = sharedDecoderDir()) {
      std::string path = std::string(shared) + "/e2e_states.so";
      if (llvm::sys::fs::exists(path))
        return path;
    }
    static ScratchDir dir;
    return compileDecoder(dir.path.str().str());
  }();
  return library;
}

/// The compiled decoder in a runtime session, and the module in the interpreter, with
/// the same random weights; each keeps its own states.
class DecoderStates : public ::testing::Test {
protected:
  void SetUp() override {
    context.loadDialect<KilnDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(kDecoder, &context);
    ASSERT_TRUE(module);
    const std::string &library = decoderLibrary();
    ASSERT_FALSE(library.empty());
    ASSERT_TRUE(expectOk(kiln_model_open(library.c_str(), &model), "kiln_model_open"));
    std::vector<kiln_tensor> tensors;
    for (const char *name : {"wq", "wk", "wv"})
      parameters[name] = randomFloats({4, 4}, random);
    for (const char *name : {"bq", "bk", "bv"})
      parameters[name] = randomFloats({4}, random);
    for (auto &[name, t] : parameters)
      tensors.push_back({name.c_str(), KILN_DTYPE_F32,
                         static_cast<int32_t>(t.shape.size()), t.shape.data(),
                         t.f32.data()});
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("kiln-states", "safetensors", path));
    bool opened =
        expectOk(kiln_safetensors_write(path.c_str(), tensors.data(), tensors.size()),
                 "kiln_safetensors_write") &&
        expectOk(kiln_weights_open(model, path.c_str(), &weights), "kiln_weights_open");
    llvm::sys::fs::remove(path);
    ASSERT_TRUE(opened);
    ASSERT_TRUE(expectOk(kiln_session_create(model, weights, nullptr, &session),
                         "kiln_session_create"));
  }

  void TearDown() override {
    kiln_session_release(session);
    kiln_weights_release(weights);
    kiln_model_release(model);
  }

  /// Runs `entry` on `inputs` in both, and expects the same outputs.
  void runBoth(const std::string &entry, const reference::TensorMap &inputs) {
    SCOPED_TRACE("entry " + entry);
    std::vector<kiln_tensor> runtimeInputs;
    for (const auto &[name, t] : inputs)
      runtimeInputs.push_back(
          {name.c_str(), t.isInt ? KILN_DTYPE_I32 : KILN_DTYPE_F32,
           static_cast<int32_t>(t.shape.size()), t.shape.data(),
           t.isInt ? static_cast<const void *>(t.i32.data()) : t.f32.data()});
    ASSERT_TRUE(expectOk(kiln_session_run(session, entry.c_str(), runtimeInputs.data(),
                                          runtimeInputs.size()),
                         "kiln_session_run"));
    llvm::Expected<reference::TensorMap> expected =
        reference::run(*module, entry, inputs, parameters, &states);
    ASSERT_TRUE(bool(expected)) << llvm::toString(expected.takeError());
    ASSERT_EQ(kiln_session_output_count(session), expected->size());
    for (const auto &[name, want] : *expected) {
      kiln_tensor actual;
      if (expectOk(kiln_session_get_output(session, name.c_str(), &actual), "get output"))
        expectClose("output '" + name + "'", actual, want);
    }
  }

  /// Expects the session's state `name` to be the interpreter's.
  void expectState(const std::string &name) {
    kiln_tensor actual;
    ASSERT_TRUE(expectOk(kiln_session_get_state(session, name.c_str(), &actual),
                         "kiln_session_get_state"));
    ASSERT_EQ(states.count(name), 1u) << name;
    expectClose("state '" + name + "'", actual, states[name]);
  }

  reference::TensorMap stepInputs(int64_t batch, int32_t position) {
    return {{"x", randomFloats({batch, 2, 1, 4}, random)},
            {"step", HostTensor::ints({}, {position})}};
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  kiln_model *model = nullptr;
  kiln_weights *weights = nullptr;
  kiln_session *session = nullptr;
  reference::TensorMap parameters;
  reference::StateMap states;
  std::mt19937 random{7};
};

TEST_F(DecoderStates, ManifestDeclaresTheStates) {
  ASSERT_EQ(kiln_model_state_count(model), 3u);
  EXPECT_STREQ(kiln_model_state_name(model, 0), "k_cache");
  EXPECT_STREQ(kiln_model_state_name(model, 1), "v_cache");
  EXPECT_STREQ(kiln_model_state_name(model, 2), "memory");
}

TEST_F(DecoderStates, StepsMatchTheReference) {
  const int64_t batch = 2;
  runBoth("start", {{"memory", randomFloats({batch, 2, 3, 4}, random)}});
  expectState("k_cache");
  expectState("memory");
  for (int32_t position = 0; position <= 5; ++position) {
    SCOPED_TRACE("P = " + std::to_string(position));
    runBoth("step", stepInputs(batch, position));
    expectState("k_cache");
    expectState("v_cache");
  }
  // The positions past the last step are still the zeros state_alloc wrote.
  kiln_tensor cache;
  ASSERT_TRUE(expectOk(kiln_session_get_state(session, "v_cache", &cache), "get state"));
  const auto *data = static_cast<const float *>(cache.data);
  for (int64_t row = 0; row < batch * 2; ++row)
    for (int64_t p = 6; p < 8; ++p)
      for (int64_t d = 0; d < 4; ++d)
        EXPECT_EQ(data[(row * 8 + p) * 4 + d], 0.0f);
}

TEST_F(DecoderStates, PrefillWritesABlockThenStepsContinue) {
  for (int64_t batch : {1, 3}) {
    for (int32_t prompt : {1, 5, 8}) {
      SCOPED_TRACE("B = " + std::to_string(batch) + ", N = " + std::to_string(prompt));
      runBoth("prefill", {{"x", randomFloats({batch, 2, prompt, 4}, random)}});
      expectState("k_cache");
      expectState("v_cache");
      // The memory the steps attend to; kept out of the prefill on purpose.
      runBoth("start", {{"memory", randomFloats({batch, 2, 3, 4}, random)}});
      runBoth("prefill", {{"x", randomFloats({batch, 2, prompt, 4}, random)}});
      for (int32_t position = prompt; position < std::min(prompt + 2, 8); ++position)
        runBoth("step", stepInputs(batch, position));
      expectState("k_cache");
      expectState("v_cache");
    }
  }
}

TEST_F(DecoderStates, BlockAppendsAtAPosition) {
  runBoth("start", {{"memory", randomFloats({2, 2, 3, 4}, random)}});
  for (int32_t position : {0, 2, 3, 5})
    runBoth("pair", {{"x", randomFloats({2, 2, 2, 4}, random)},
                     {"step", HostTensor::ints({}, {position})}});
  expectState("k_cache");
}

TEST_F(DecoderStates, AValueInputAloneSizesANewCache) {
  runBoth("alloc", {{"batch", HostTensor::ints({}, {3})}});
  expectState("k_cache");
  kiln_tensor cache;
  ASSERT_TRUE(expectOk(kiln_session_get_state(session, "k_cache", &cache), "get state"));
  EXPECT_EQ(shapeString(std::vector<int64_t>(cache.shape, cache.shape + cache.rank)),
            "[3, 2, 8, 4]");
  runBoth("pair", {{"x", randomFloats({3, 2, 2, 4}, random)},
                   {"step", HostTensor::ints({}, {0})}});
  expectState("k_cache");
}

/// Expects running `entry` on `inputs` to fail with `code` and a message holding `text`.
void expectRunError(kiln_session *session, const char *entry,
                    const reference::TensorMap &inputs, kiln_status_code code,
                    const std::string &text) {
  std::vector<kiln_tensor> runtimeInputs;
  for (const auto &[name, t] : inputs)
    runtimeInputs.push_back(
        {name.c_str(), t.isInt ? KILN_DTYPE_I32 : KILN_DTYPE_F32,
         static_cast<int32_t>(t.shape.size()), t.shape.data(),
         t.isInt ? static_cast<const void *>(t.i32.data()) : t.f32.data()});
  kiln_status *status =
      kiln_session_run(session, entry, runtimeInputs.data(), runtimeInputs.size());
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(kiln_status_get_code(status), code);
  EXPECT_NE(std::string(kiln_status_get_message(status)).find(text), std::string::npos)
      << kiln_status_get_message(status);
  kiln_status_free(status);
}

TEST_F(DecoderStates, WritingPastTheCapacityNamesStatePositionsAndCapacity) {
  expectRunError(session, "prefill", {{"x", randomFloats({1, 2, 9, 4}, random)}},
                 KILN_STATUS_INVALID_ARGUMENT,
                 "entry 'prefill': writing 9 positions from position 0 into state "
                 "'k_cache' (P = 0, N = 9) needs P + N <= its capacity 8 along dim 2");
  runBoth("prefill", {{"x", randomFloats({1, 2, 6, 4}, random)}});
  runBoth("pair", {{"x", randomFloats({1, 2, 2, 4}, random)},
                   {"step", HostTensor::ints({}, {6})}});
  // P = 7 passes the input's bounds [0, 7]; P + 2 does not fit.
  expectRunError(
      session, "pair",
      {{"x", randomFloats({1, 2, 2, 4}, random)}, {"step", HostTensor::ints({}, {7})}},
      KILN_STATUS_INVALID_ARGUMENT,
      "entry 'pair': writing 2 positions from position 7 into state 'k_cache' "
      "(P = 7, N = 2) needs P + N <= its capacity 8 along dim 2");
}

TEST_F(DecoderStates, ASkippedPositionAfterAPrefillIsAnError) {
  runBoth("start", {{"memory", randomFloats({1, 2, 3, 4}, random)}});
  runBoth("prefill", {{"x", randomFloats({1, 2, 3, 4}, random)}});
  expectRunError(session, "step", stepInputs(1, 4), KILN_STATUS_INVALID_ARGUMENT,
                 "state 'k_cache' has 3 positions written along dim 2 (0 to 2); writing "
                 "position 4 would leave position 3 unwritten");
}

TEST_F(DecoderStates, ReturnedPrefixIsACopy) {
  runBoth("start", {{"memory", randomFloats({3, 2, 3, 4}, random)}});
  for (int32_t position : {0, 1, 2})
    runBoth("peek", stepInputs(3, position));
  kiln_tensor keys;
  ASSERT_TRUE(expectOk(kiln_session_get_output(session, "keys", &keys), "get output"));
  EXPECT_EQ(shapeString(std::vector<int64_t>(keys.shape, keys.shape + keys.rank)),
            "[3, 2, 3, 4]");
}

TEST_F(DecoderStates, StepWithoutStartFails) {
  reference::TensorMap inputs = stepInputs(2, 0);
  std::vector<kiln_tensor> runtimeInputs = {
      {"x", KILN_DTYPE_F32, 4, inputs["x"].shape.data(), inputs["x"].f32.data()},
      {"step", KILN_DTYPE_I32, 0, nullptr, inputs["step"].i32.data()}};
  kiln_status *status = kiln_session_run(session, "step", runtimeInputs.data(), 2);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(std::string(kiln_status_get_message(status)).find("k_cache"),
            std::string::npos)
      << kiln_status_get_message(status);
  kiln_status_free(status);
}

TEST(StatesCompileTest, ReshapedPrefixIsAnError) {
  DiagnosticContext diagnostics;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(R"mlir(
func @step(%x: tensor<?x2x1x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]},
           %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"})
    -> (tensor<?x2x?xf32> {kiln.name = "y"}) {
  %ks = kiln.kv_append "k_cache", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x2x1x4xf32>) -> tensor<?x2x?x4xf32>
  %r = kiln.reshape %ks {shape = [0, 0, -1]} : (tensor<?x2x?x4xf32>) -> tensor<?x2x?xf32>
  kiln.return %r : tensor<?x2x?xf32>
}
)mlir",
                                              &diagnostics.context);
  ASSERT_TRUE(module) << diagnostics.text;
  halide_backend::CompileOptions options;
  options.outputDir = buildDir() + "/never-written-states";
  EXPECT_TRUE(
      mlir::failed(halide_backend::compileModel(*module, "e2e_bad_states", options)));
  EXPECT_NE(diagnostics.text.find("cannot reshape a strided view of a cache"),
            std::string::npos)
      << diagnostics.text;
  EXPECT_FALSE(llvm::sys::fs::exists(options.outputDir));
}

} // namespace
