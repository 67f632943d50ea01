//===- ProfileTest.cpp - Timing kernel calls on the fake model ------------===//
//
// kiln_session_options.profile on the fake model, whose manifest gives each step of
// `forward` a source line (and its last step two): the calls, their aggregates, the
// Chrome trace, the reset, and a session without profile recording nothing.
//
//===----------------------------------------------------------------------===//

#include "FakeSession.h"
#include "Json.h"

#include <map>
#include <numeric>

using namespace kiln::test;

namespace {

struct Profiled : FakeSessionFixture {
  kiln_session *profiled = nullptr;

  void SetUp() override {
    FakeSessionFixture::SetUp();
    kiln_session_options options;
    kiln_session_options_initialize(&options);
    options.profile = 1;
    ASSERT_OK(kiln_session_create(model, weights, &options, &profiled));
  }
  void TearDown() override {
    kiln_session_release(profiled);
    FakeSessionFixture::TearDown();
  }

  void runForward(kiln_session *s, int runs) {
    std::vector<int64_t> shape{2, 3, 4};
    std::vector<float> x = randomFloats(24, rng), y = randomFloats(24, rng);
    kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, x.data()),
                             tensor("y", KILN_DTYPE_F32, shape, y.data())};
    for (int r = 0; r < runs; ++r)
      ASSERT_OK(kiln_session_run(s, "forward", inputs, 2));
  }

  std::vector<kiln_profile_call> calls() {
    const kiln_profile_call *calls = nullptr;
    size_t count = 0;
    EXPECT_OK(kiln_session_profile_calls(profiled, &calls, &count));
    return std::vector<kiln_profile_call>(calls, calls + count);
  }

  std::vector<kiln_profile_row> summary(int32_t by) {
    const kiln_profile_row *rows = nullptr;
    size_t count = 0;
    EXPECT_OK(kiln_session_profile_summary(profiled, by, &rows, &count));
    return std::vector<kiln_profile_row>(rows, rows + count);
  }
};

} // namespace

TEST_F(Profiled, RecordsEveryKernelCallOfEveryRunWithItsSourceLine) {
  runForward(profiled, 3);
  std::vector<kiln_profile_call> recorded = calls();
  ASSERT_EQ(recorded.size(), 9u); // 3 runs x 3 steps
  const char *kernels[] = {"fake_add", "fake_scale", "fake_addb"};
  const char *locs[] = {"fake.cpp:10", "fake.cpp:11", "fake.cpp:12"};
  uint64_t lastEnd = 0;
  for (size_t i = 0; i < recorded.size(); ++i) {
    const kiln_profile_call &c = recorded[i];
    EXPECT_STREQ(c.entry, "forward");
    EXPECT_EQ(c.run, i / 3);
    EXPECT_EQ(c.step, i % 3);
    EXPECT_STREQ(c.kernel, kernels[i % 3]);
    EXPECT_STREQ(c.loc, locs[i % 3]);
    EXPECT_STREQ(c.locs, i % 3 == 2 ? "fake.cpp:12, fake.cpp:13" : "");
    EXPECT_GT(c.duration_ns, 0u);
    EXPECT_GE(c.start_ns, lastEnd) << "calls overlap or run out of order";
    lastEnd = c.start_ns + c.duration_ns;
  }
}

TEST_F(Profiled, SummariesAddUpToTheCalls) {
  runForward(profiled, 4);
  std::vector<kiln_profile_call> recorded = calls();
  uint64_t total = 0;
  std::map<std::string, uint64_t> byKernel, byLoc;
  for (const kiln_profile_call &c : recorded) {
    total += c.duration_ns;
    byKernel[c.kernel] += c.duration_ns;
    byLoc[c.loc] += c.duration_ns;
  }
  for (auto [key, expected] : {std::pair{KILN_PROFILE_BY_KERNEL, &byKernel},
                               std::pair{KILN_PROFILE_BY_LOC, &byLoc}}) {
    std::vector<kiln_profile_row> rows = summary(key);
    ASSERT_EQ(rows.size(), 3u);
    uint64_t sum = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const kiln_profile_row &row = rows[i];
      EXPECT_EQ(row.calls, 4u) << row.name;
      EXPECT_EQ(row.total_ns, expected->at(row.name)) << row.name;
      EXPECT_LE(row.min_ns, row.max_ns);
      EXPECT_GT(row.min_ns, 0u);
      EXPECT_LE(row.min_ns * row.calls, row.total_ns);
      if (i > 0) {
        EXPECT_GE(rows[i - 1].total_ns, row.total_ns) << "not by decreasing time";
      }
      sum += row.total_ns;
    }
    EXPECT_EQ(sum, total);
  }
  const kiln_profile_row *rows;
  size_t count;
  Result bad = take(kiln_session_profile_summary(profiled, 7, &rows, &count));
  EXPECT_EQ(bad.code, KILN_STATUS_INVALID_ARGUMENT) << bad;
  EXPECT_NE(bad.message.find("unknown key 7"), std::string::npos) << bad;
}

TEST_F(Profiled, TraceHasOneCompleteEventPerCall) {
  runForward(profiled, 2);
  std::string path = tempPath("trace.json");
  ASSERT_OK(kiln_session_profile_write_trace(profiled, path.c_str()));
  std::string error;
  auto trace = kiln::rt::parseJson(readFile(path), error);
  std::remove(path.c_str());
  ASSERT_TRUE(trace) << error;
  const kiln::rt::Json *events = trace->find("traceEvents");
  ASSERT_TRUE(events && events->isArray());
  std::vector<kiln_profile_call> recorded = calls();
  size_t k = 0;
  for (const kiln::rt::Json &event : events->items()) {
    if (event.find("ph")->asString() != "X")
      continue;
    ASSERT_LT(k, recorded.size());
    const kiln_profile_call &c = recorded[k++];
    EXPECT_EQ(event.find("name")->asString(), c.kernel);
    EXPECT_NEAR(event.find("ts")->asDouble(), c.start_ns / 1e3, 1e-3);
    EXPECT_NEAR(event.find("dur")->asDouble(), c.duration_ns / 1e3, 1e-3);
    const kiln::rt::Json *args = event.find("args");
    ASSERT_TRUE(args);
    EXPECT_EQ(args->find("entry")->asString(), "forward");
    EXPECT_EQ(args->find("loc")->asString(), c.loc);
    EXPECT_EQ(args->find("run")->asInt(), int64_t(c.run));
  }
  EXPECT_EQ(k, recorded.size());
  EXPECT_EQ(k, 6u);
}

TEST_F(Profiled, ResetForgetsTheCalls) {
  runForward(profiled, 2);
  ASSERT_OK(kiln_session_profile_reset(profiled));
  EXPECT_TRUE(calls().empty());
  EXPECT_TRUE(summary(KILN_PROFILE_BY_KERNEL).empty());
  runForward(profiled, 1);
  std::vector<kiln_profile_call> recorded = calls();
  ASSERT_EQ(recorded.size(), 3u);
  EXPECT_EQ(recorded[0].run, 0u);
}

TEST_F(Profiled, ASessionWithoutProfileRecordsNothing) {
  runForward(session, 2);
  const kiln_profile_call *calls = nullptr;
  size_t count = 7;
  Result off = take(kiln_session_profile_calls(session, &calls, &count));
  EXPECT_EQ(off.code, KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_NE(off.message.find("kiln_session_options.profile"), std::string::npos) << off;
  EXPECT_EQ(count, 7u);
  EXPECT_EQ(take(kiln_session_profile_write_trace(session, "unused.json")).code,
            KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(take(kiln_session_profile_reset(session)).code,
            KILN_STATUS_FAILED_PRECONDITION);
}

TEST_F(Profiled, ThreadCountsOutsideTheRangeAreRefused) {
  for (int32_t threads : {-1, 257}) {
    kiln_session_options options;
    kiln_session_options_initialize(&options);
    options.num_threads = threads;
    kiln_session *s = nullptr;
    Result r = take(kiln_session_create(model, weights, &options, &s));
    EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << threads;
    EXPECT_NE(r.message.find("num_threads is " + std::to_string(threads)),
              std::string::npos)
        << r;
    EXPECT_EQ(s, nullptr);
  }
}
