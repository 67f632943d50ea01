//===- CompileTest.cpp - compileModel called in-process, and its errors ----===//
//
// The models of OpsTest are compiled at build time by NAME-gen; these tests call the
// backend's API directly: a compile at run time (with .stmt output), and the ways a
// compile fails, each of which must say what went wrong instead of aborting (Halide's
// own errors included: HalideGuard.h is the backend's one internal header used here).
//
//===----------------------------------------------------------------------===//

#include "HalideGuard.h"
#include "Harness.h"
#include "models/Models.h"

#include "kiln/backends/halide/Compile.h"
#include "kiln/frontend/Kiln.h"
#include "kiln/passes/Passes.h"

#include "Halide.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::e2e;
namespace hb = kiln::halide_backend;

namespace {

Model buildTinyModel() {
  ModelBuilder m("e2e_tiny");
  Entry f = m.entry("forward");
  Tensor x = f.input("x", DType::F32, {dyn("N")});
  f.output("y", scale(x, 3.0f));
  return m.finish();
}

/// A fresh directory under the tests' build directory, removed with everything in it at
/// the end of the test.
class ScratchDir {
public:
  explicit ScratchDir(const std::string &prefix) {
    std::error_code ec =
        llvm::sys::fs::createUniqueDirectory(buildDir() + "/" + prefix, path_);
    EXPECT_FALSE(ec) << ec.message();
  }
  ~ScratchDir() { llvm::sys::fs::remove_directories(path_); }
  std::string str() const { return path_.str().str(); }

private:
  llvm::SmallString<256> path_;
};

/// Runs the pipeline and the compile function `fn` on `model`, collecting diagnostics.
struct Compiled {
  mlir::FailureOr<std::string> result = mlir::failure();
  std::string diagnostics;
};

template <typename Fn> Compiled compile(Model &model, Fn fn) {
  Compiled out;
  mlir::ScopedDiagnosticHandler handler(&model.context(), [&](mlir::Diagnostic &d) {
    out.diagnostics += d.str() + "\n";
    return mlir::success();
  });
  mlir::PassManager pm(&model.context());
  buildDefaultPipeline(pm);
  if (mlir::failed(pm.run(model.module())))
    return out;
  out.result = fn(model.module());
  return out;
}

bool exists(const std::string &path) { return llvm::sys::fs::exists(path); }

} // namespace

TEST(CompileTest, CompilesAtRunTimeWithStatements) {
  Model model = buildTinyModel();
  ASSERT_TRUE(model.ok());
  hb::CompileOptions options;
  ScratchDir dir("runtime-compile");
  options.outputDir = dir.str();
  options.emitStmt = true;
  hb::CompileStats stats;
  Compiled c = compile(model, [&](mlir::ModuleOp m) {
    return hb::compileModel(m, "e2e_tiny", options, &stats);
  });
  ASSERT_TRUE(mlir::succeeded(c.result)) << c.diagnostics;
  EXPECT_EQ(*c.result, options.outputDir + "/e2e_tiny.so");
  EXPECT_EQ(stats.kernels, 1u);
  EXPECT_EQ(stats.steps, 1u);
  std::string kernels = options.outputDir + "/e2e_tiny.kernels/";
  EXPECT_TRUE(exists(kernels + "kiln_e2e_tiny_k0_scale.o"));
  EXPECT_TRUE(exists(kernels + "kiln_e2e_tiny_k0_scale.stmt"));
  EXPECT_TRUE(exists(kernels + "halide_runtime.o"));
  EXPECT_TRUE(exists(kernels + "manifest.json"));

  Harness h(*c.result, buildTinyModel);
  ASSERT_TRUE(h.ok());
  for (int64_t n : {1, 37, 1000})
    EXPECT_EQ(h.check({{"N", n}}), 1u);
}

TEST(CompileTest, UnsupportedTargetIsAnError) {
  for (const char *target : {"not-a-target", "x86-64-windows"}) {
    Model model = buildTinyModel();
    ASSERT_TRUE(model.ok());
    hb::CompileOptions options;
    options.target = target;
    options.outputDir = buildDir() + "/never-written";
    Compiled c = compile(model, [&](mlir::ModuleOp m) {
      return hb::compileModel(m, "e2e_tiny", options);
    });
    EXPECT_TRUE(mlir::failed(c.result)) << target;
    EXPECT_NE(c.diagnostics.find("unsupported target '" + std::string(target) + "'"),
              std::string::npos)
        << c.diagnostics;
  }
  EXPECT_FALSE(exists(buildDir() + "/never-written"));
}

TEST(CompileTest, UnknownCpuTuneIsAnError) {
  // KILN_CPU_TUNE names the core the CPU schedules are tuned for (zen4 or generic).
  Model model = buildTinyModel();
  ASSERT_TRUE(model.ok());
  hb::CompileOptions options;
  options.outputDir = buildDir() + "/never-written-tune";
  const char *set = std::getenv("KILN_CPU_TUNE");
  std::string previous = set ? set : "";
  setenv("KILN_CPU_TUNE", "zen9", 1);
  Compiled c = compile(
      model, [&](mlir::ModuleOp m) { return hb::compileModel(m, "e2e_tiny", options); });
  if (set)
    setenv("KILN_CPU_TUNE", previous.c_str(), 1);
  else
    unsetenv("KILN_CPU_TUNE");
  EXPECT_TRUE(mlir::failed(c.result));
  EXPECT_NE(c.diagnostics.find("KILN_CPU_TUNE is 'zen9'; expected zen4 or generic"),
            std::string::npos)
      << c.diagnostics;
  EXPECT_FALSE(exists(options.outputDir));
}

TEST(CompileTest, MissingCCompilerFailsBeforeCompiling) {
  Model model = buildTinyModel();
  ASSERT_TRUE(model.ok());
  hb::CompileOptions options;
  ScratchDir dir("no-cc");
  options.outputDir = dir.str();
  options.cCompiler = "kiln-no-such-cc";
  Compiled c = compile(
      model, [&](mlir::ModuleOp m) { return hb::compileModel(m, "e2e_tiny", options); });
  EXPECT_TRUE(mlir::failed(c.result));
  EXPECT_NE(c.diagnostics.find("cannot find the C compiler 'kiln-no-such-cc'"),
            std::string::npos)
      << c.diagnostics;
  EXPECT_FALSE(exists(options.outputDir + "/e2e_tiny.kernels/halide_runtime.o"));
}

TEST(CompileTest, LinkFailureShowsTheCommandAndItsOutput) {
  Model model = buildTinyModel();
  ASSERT_TRUE(model.ok());
  hb::CompileOptions options;
  ScratchDir dir("link-failure");
  options.outputDir = dir.str();
  options.extraLinkArgs = {"-lkiln_no_such_library"};
  Compiled c = compile(
      model, [&](mlir::ModuleOp m) { return hb::compileModel(m, "e2e_tiny", options); });
  EXPECT_TRUE(mlir::failed(c.result));
  for (const char *expected :
       {"linking the model failed", "-shared", "-lkiln_no_such_library", "exit code",
        "kiln_no_such_library"})
    EXPECT_NE(c.diagnostics.find(expected), std::string::npos)
        << "missing '" << expected << "' in:\n"
        << c.diagnostics;
  // Nothing half-written is left where the library would be.
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(options.outputDir, ec), end; it != end && !ec;
       it.increment(ec))
    EXPECT_EQ(llvm::sys::path::extension(it->path()), ".kernels") << it->path();
}

TEST(CompileTest, ManifestEscapesNamesAndListsEveryBuffer) {
  Model model = buildUnaryModel();
  ASSERT_TRUE(model.ok());
  Compiled c = compile(model, [&](mlir::ModuleOp m) {
    return hb::emitManifest(m, "e2e_unary", hb::CompileOptions());
  });
  ASSERT_TRUE(mlir::succeeded(c.result)) << c.diagnostics;
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(*c.result);
  ASSERT_TRUE(bool(json)) << llvm::toString(json.takeError()) << "\n" << *c.result;
  const llvm::json::Object &root = *json->getAsObject();
  EXPECT_EQ(root.getInteger("abi_version").getValueOr(0), 5);
  EXPECT_EQ(root.getString("model").getValueOr(""), "e2e_unary");
  const llvm::json::Object &entry = *(*root.getArray("entries"))[0].getAsObject();
  const llvm::json::Object &input = *(*entry.getArray("inputs"))[0].getAsObject();
  EXPECT_EQ(input.getString("name").getValueOr("").str(), "x \"quoted\" \\ \t\x01 é");
  // The input, and one temp per kernel: scale, relu, and relu(x * -2.5) as one group
  // (kiln-fuse-kernels), each its own kernel.
  EXPECT_EQ(entry.getArray("buffers")->size(), 4u);
  EXPECT_EQ(entry.getArray("steps")->size(), 3u);
  EXPECT_EQ(root.getArray("kernels")->size(), 3u);
  // Temp i is written by step i - 1, and all three are outputs, read after the run:
  // every range runs to the last step.
  for (size_t i = 1; i < 4; ++i) {
    const llvm::json::Array *live =
        (*entry.getArray("buffers"))[i].getAsObject()->getArray("live");
    ASSERT_TRUE(live && live->size() == 2) << "buffers[" << i << "] has no live range";
    EXPECT_EQ((*live)[0].getAsInteger().getValueOr(-1), int64_t(i) - 1)
        << "buffers[" << i << "]";
    EXPECT_EQ((*live)[1].getAsInteger().getValueOr(-1), 2) << "buffers[" << i << "]";
  }
}

TEST(CompileTest, HalideErrorsBecomeMessages) {
  llvm::Optional<std::string> error = hb::guardHalide("testing", [] {
    Halide::Func undefined("undefined_func");
    undefined.realize({4});
  });
  ASSERT_TRUE(error.hasValue());
  EXPECT_NE(error->find("undefined Func"), std::string::npos) << *error;
  EXPECT_FALSE(llvm::StringRef(*error).startswith("Error")) << *error;
  EXPECT_FALSE(hb::guardHalide("testing", [] {}).hasValue());
}
