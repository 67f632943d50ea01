//===- ProfileTest.cpp - Profiling and threads on the demo model ----------===//
//
// The shipped demo model run with kiln_session_options.profile: every kernel of its
// entry is timed once per step and run, each call carries a line of the model's source
// that exists, the aggregates add up, and the Chrome trace has one event per call; and
// num_threads reaches the thread pool of the model's own Halide runtime. A model built
// from nn modules (the conformance tests' tiny Transformer) is profiled by call chain:
// the user's line first, then the modules' lines.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <map>
#include <set>

kiln::dsl::Model buildDemo();
kiln::dsl::Model buildTransformerTiny();

using namespace kiln::e2e;

namespace {

const Dims kDims = {{"B", 2}, {"S", 7}};

kiln_session_options optionsWith(int32_t profile, int32_t threads) {
  kiln_session_options options;
  kiln_session_options_initialize(&options);
  options.profile = profile;
  options.num_threads = threads;
  return options;
}

/// The source file a manifest "loc" names: absolute, or relative to the directory the
/// model's C++ was compiled in (the build tree's root, or its models/ with Makefiles).
std::string sourceFile(llvm::StringRef file) {
  if (llvm::sys::path::is_absolute(file))
    return file.str();
  for (std::string base : {KILN_BINARY_DIR, KILN_BINARY_DIR "/models"}) {
    llvm::SmallString<256> path(base);
    llvm::sys::path::append(path, file);
    if (llvm::sys::fs::exists(path))
      return path.str().str();
  }
  return "";
}

/// Fails unless `loc` is "FILE:LINE" with LINE a line of an existing FILE.
void expectSourceLine(const std::string &loc) {
  auto [file, lineText] = llvm::StringRef(loc).rsplit(':');
  unsigned line = 0;
  ASSERT_FALSE(lineText.getAsInteger(10, line)) << loc;
  std::string path = sourceFile(file);
  ASSERT_FALSE(path.empty()) << loc << ": no such file";
  auto buffer = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buffer)) << path;
  size_t lines = (*buffer)->getBuffer().count('\n');
  EXPECT_GE(line, 1u) << loc;
  EXPECT_LE(line, lines) << loc << ": " << path << " has " << lines << " lines";
}

} // namespace

TEST(DemoProfileTest, EveryKernelCallIsTimedWithItsSourceLine) {
  kiln_session_options options = optionsWith(1, 0);
  Harness h(KILN_DEMO_LIBRARY, buildDemo, 1, &options);
  ASSERT_TRUE(h.ok());
  constexpr uint64_t kRuns = 3;
  for (uint64_t r = 0; r < kRuns; ++r)
    ASSERT_EQ(h.check(kDims), 1u);

  // What the manifest says a run of forward calls.
  llvm::Optional<llvm::json::Value> manifest = manifestOf(h.model());
  ASSERT_TRUE(manifest);
  const llvm::json::Array &kernels = *manifest->getAsObject()->getArray("kernels");
  const llvm::json::Object &entry =
      *(*manifest->getAsObject()->getArray("entries"))[0].getAsObject();
  ASSERT_EQ(entry.getString("name").getValueOr(""), "forward");
  std::map<std::string, uint64_t> callsPerKernel;
  size_t steps = 0;
  for (const llvm::json::Value &step : *entry.getArray("steps")) {
    int64_t k = step.getAsObject()->getInteger("kernel").getValueOr(-1);
    callsPerKernel[kernels[size_t(k)].getAsString()->str()] += kRuns;
    ++steps;
  }

  const kiln_profile_call *calls = nullptr;
  size_t count = 0;
  ASSERT_TRUE(expectOk(kiln_session_profile_calls(h.session(), &calls, &count),
                       "kiln_session_profile_calls"));
  EXPECT_EQ(count, kRuns * steps);
  uint64_t total = 0;
  bool inModelFile = false;
  std::set<std::string> locs;
  for (size_t i = 0; i < count; ++i) {
    total += calls[i].duration_ns;
    ASSERT_STRNE(calls[i].loc, "") << "step " << calls[i].step << " has no source line";
    locs.insert(calls[i].loc);
    inModelFile |= llvm::StringRef(calls[i].loc).contains("models/demo.cpp:");
  }
  EXPECT_TRUE(inModelFile) << "no kernel call points at models/demo.cpp";
  for (const std::string &loc : locs)
    expectSourceLine(loc);

  const kiln_profile_row *rows = nullptr;
  size_t rowCount = 0;
  ASSERT_TRUE(expectOk(
      kiln_session_profile_summary(h.session(), KILN_PROFILE_BY_KERNEL, &rows, &rowCount),
      "kiln_session_profile_summary"));
  std::map<std::string, uint64_t> seen;
  double percent = 0;
  for (size_t i = 0; i < rowCount; ++i) {
    seen[rows[i].name] = rows[i].calls;
    EXPECT_GT(rows[i].total_ns, 0u) << rows[i].name;
    EXPECT_GT(rows[i].min_ns, 0u) << rows[i].name;
    percent += 100.0 * double(rows[i].total_ns) / double(total);
  }
  EXPECT_EQ(seen, callsPerKernel);
  EXPECT_NEAR(percent, 100.0, 1e-6);

  ASSERT_TRUE(expectOk(
      kiln_session_profile_summary(h.session(), KILN_PROFILE_BY_LOC, &rows, &rowCount),
      "kiln_session_profile_summary"));
  EXPECT_EQ(rowCount, locs.size());
  uint64_t locCalls = 0;
  for (size_t i = 0; i < rowCount; ++i)
    locCalls += rows[i].calls;
  EXPECT_EQ(locCalls, count);

  llvm::SmallString<128> trace;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("kiln-trace", "json", trace));
  ASSERT_TRUE(expectOk(kiln_session_profile_write_trace(h.session(), trace.c_str()),
                       "kiln_session_profile_write_trace"));
  auto text = llvm::MemoryBuffer::getFile(trace);
  llvm::sys::fs::remove(trace);
  ASSERT_TRUE(bool(text));
  llvm::Expected<llvm::json::Value> json = llvm::json::parse((*text)->getBuffer());
  ASSERT_TRUE(bool(json)) << llvm::toString(json.takeError());
  size_t events = 0;
  for (const llvm::json::Value &event : *json->getAsObject()->getArray("traceEvents")) {
    const llvm::json::Object &e = *event.getAsObject();
    if (e.getString("ph").getValueOr("") != "X")
      continue;
    ++events;
    EXPECT_TRUE(callsPerKernel.count(e.getString("name").getValueOr("").str()));
    EXPECT_GT(e.getNumber("dur").getValueOr(0), 0);
    EXPECT_EQ(e.getObject("args")->getString("entry").getValueOr(""), "forward");
  }
  EXPECT_EQ(events, count);
}

TEST(DemoProfileTest, NumThreadsSetsTheModelLibrarysThreadPool) {
  kiln_session_options options = optionsWith(0, 3);
  Harness h(KILN_DEMO_LIBRARY, buildDemo, 1, &options);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h.check(kDims), 1u);
  // The loader gives back the library the runtime opened, and with it its Halide runtime.
  void *library = dlopen(KILN_DEMO_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr) << dlerror();
  auto setThreads =
      reinterpret_cast<int (*)(int)>(dlsym(library, "halide_set_num_threads"));
  ASSERT_NE(setThreads, nullptr);
  EXPECT_EQ(setThreads(0), 3); // returns the count the run set; 0 restores the default
  dlclose(library);
}

TEST(TransformerProfileTest, ByLineRowsStartAtTheUsersLineThenTheModules) {
  kiln_session_options options = optionsWith(1, 0);
  Harness h(KILN_TINY_LIBRARY, buildTransformerTiny, 1, &options);
  ASSERT_TRUE(h.ok());
  ASSERT_EQ(h.check({{"B", 2}, {"S", 5}}, "encode"), 1u);
  const kiln_profile_row *rows = nullptr;
  size_t rowCount = 0;
  ASSERT_TRUE(expectOk(
      kiln_session_profile_summary(h.session(), KILN_PROFILE_BY_LOC, &rows, &rowCount),
      "kiln_session_profile_summary"));
  // Every op is built by the one declareEntries() line of transformer_tiny.cpp: the
  // modules' lines are what tell the rows apart.
  EXPECT_GT(rowCount, 3u);
  bool attention = false;
  for (size_t i = 0; i < rowCount; ++i) {
    auto [user, modules] = llvm::StringRef(rows[i].name).split(" > ");
    EXPECT_TRUE(user.contains("test/conformance/transformer_tiny.cpp:")) << rows[i].name;
    expectSourceLine(user.str());
    EXPECT_TRUE(modules.contains("Transformer.cpp:")) << rows[i].name;
    attention |= modules.contains("Attention.cpp:");
  }
  EXPECT_TRUE(attention) << "no row points into nn::MultiHeadAttention";
}
