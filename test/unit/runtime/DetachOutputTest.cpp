//===- DetachOutputTest.cpp - Outputs handed over without a copy ----------===//
//
// kiln_session_detach_output on the fake model: the buffer is the very block the kernels
// wrote, it keeps the run's values through later runs and the session's release, the
// session allocates (and counts) a fresh block for the output, and the calls that
// cannot detach say why. Run under ASan in the sanitized build: no leak, no
// use-after-free.
//
//===----------------------------------------------------------------------===//

#include "FakeSession.h"

#include "kiln/runtime.hpp"

using namespace kiln::test;

namespace {

struct DetachFixture : FakeSessionFixture {
  static constexpr int64_t kB = 3, kS = 5;
  std::vector<int64_t> shape{kB, kS, 4};

  // Runs forward on fresh random inputs; returns the z the reference computes.
  std::vector<float> runForward() {
    std::vector<float> x = randomFloats(size_t(kB * kS * 4), rng);
    std::vector<float> y = randomFloats(size_t(kB * kS * 4), rng);
    kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, x.data()),
                             tensor("y", KILN_DTYPE_F32, shape, y.data())};
    Result r = take(kiln_session_run(session, "forward", inputs, 2));
    EXPECT_TRUE(r.ok()) << r;
    return referenceForward(x, y, *fake);
  }
  kiln_session_stats stats() const {
    kiln_session_stats s;
    kiln_session_get_stats(session, &s);
    return s;
  }
};

std::vector<float> valuesOf(const kiln_buffer *buffer) {
  kiln_tensor t = kiln_buffer_tensor(buffer);
  const float *data = static_cast<const float *>(t.data);
  return std::vector<float>(data, data + t.shape[0] * t.shape[1]);
}

} // namespace

TEST_F(DetachFixture, BufferIsTheSessionsBlockAndOutlivesRunsAndSession) {
  std::vector<float> want = runForward();
  kiln_tensor z;
  ASSERT_OK(kiln_session_get_output(session, "z", &z));
  kiln_session_stats before = stats();

  kiln_buffer *buffer = nullptr;
  ASSERT_OK(kiln_session_detach_output(session, "z", &buffer));
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(kiln_buffer_data(buffer), z.data); // no copy
  kiln_tensor t = kiln_buffer_tensor(buffer);
  EXPECT_STREQ(t.name, "z");
  EXPECT_EQ(t.dtype, KILN_DTYPE_F32);
  ASSERT_EQ(t.rank, 2);
  EXPECT_EQ(std::vector<int64_t>(t.shape, t.shape + 2),
            (std::vector<int64_t>{kB * kS, 4}));
  EXPECT_EQ(t.data, z.data);
  EXPECT_EQ(valuesOf(buffer), want);
  // The block left the session's accounting with it.
  EXPECT_LT(stats().temp_bytes, before.temp_bytes);

  // Another run of the same shapes: the session allocates one block, for z only.
  std::vector<float> second = runForward();
  EXPECT_EQ(stats().temp_allocations, before.temp_allocations + 1);
  kiln_tensor z2;
  ASSERT_OK(kiln_session_get_output(session, "z", &z2));
  EXPECT_NE(z2.data, z.data);
  EXPECT_EQ(valuesOf(buffer), want);
  EXPECT_NE(want, second);

  // The caller owns it: writable, and alive after the session is gone.
  static_cast<float *>(kiln_buffer_data(buffer))[0] = 42.0f;
  kiln_session_release(session);
  session = nullptr;
  want[0] = 42.0f;
  EXPECT_EQ(valuesOf(buffer), want);
  kiln_buffer_release(buffer);
}

TEST_F(DetachFixture, DetachedOutputIsGoneFromTheSessionOthersStay) {
  runForward();
  kiln_buffer *buffer = nullptr;
  ASSERT_OK(kiln_session_detach_output(session, "z", &buffer));
  kiln_tensor t;
  for (Result r : {take(kiln_session_get_output(session, "z", &t)),
                   take(kiln_session_get_output_at(session, 0, &t))}) {
    EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
    EXPECT_EQ(r.message, "output 'z' was detached (kiln_session_detach_output): its "
                         "memory is the caller's kiln_buffer now");
  }
  kiln_buffer *again = buffer;
  Result r = take(kiln_session_detach_output(session, "z", &again));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(again, nullptr);
  EXPECT_OK(
      kiln_session_get_output(session, "s", &t)); // the other output is the session's
  kiln_buffer_release(buffer);
}

TEST_F(DetachFixture, DetachingEveryRunAllocatesOneBlockPerRun) {
  for (int run = 0; run < 4; ++run) {
    runForward();
    kiln_buffer *buffer = nullptr;
    ASSERT_OK(kiln_session_detach_output(session, "s", &buffer));
    kiln_buffer_release(buffer);
  }
  // The arena and z's block once, s's block at every run.
  EXPECT_EQ(stats().temp_allocations, 2u + 4u);
  EXPECT_EQ(stats().runs, 4u);
}

TEST_F(DetachFixture, BadCallsSayWhy) {
  kiln_buffer *buffer = nullptr;
  Result r = take(kiln_session_detach_output(session, "z", &buffer));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(r.message, "no outputs: the session has not run yet");
  runForward();
  r = take(kiln_session_detach_output(session, "w", &buffer));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_EQ(r.message, "entry 'forward' has no output 'w'; its outputs are 'z', 's'");
  r = take(kiln_session_detach_output(session, "z", nullptr));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(kiln_buffer_data(nullptr), nullptr);
  EXPECT_EQ(kiln_buffer_tensor(nullptr).data, nullptr);
  kiln_buffer_release(nullptr);
}

TEST_F(DetachFixture, CppWrapperOwnsTheBuffer) {
  kiln_session_release(session);
  session = nullptr;
  kiln_model_retain(model);
  kiln_weights_retain(weights);
  kiln::Model cppModel(model);
  kiln::Weights cppWeights(weights);
  kiln::Session cpp(cppModel, cppWeights);
  std::vector<float> x = randomFloats(size_t(kB * kS * 4), rng);
  std::vector<float> y = randomFloats(size_t(kB * kS * 4), rng);
  cpp.run("forward", {kiln::TensorArg::of("x", shape, x.data()),
                      kiln::TensorArg::of("y", shape, y.data())});
  const void *where = cpp.output("z").data;
  kiln::Buffer z = cpp.detachOutput("z");
  EXPECT_EQ(z.data(), where);
  kiln::OutputView view = z.view();
  EXPECT_EQ(view.name, "z");
  EXPECT_EQ(view.shape, (std::vector<int64_t>{kB * kS, 4}));
  std::vector<float> want = referenceForward(x, y, *fake);
  EXPECT_EQ(std::vector<float>(view.as<float>(), view.as<float>() + want.size()), want);
  EXPECT_THROW(cpp.detachOutput("z"), kiln::Error);
  kiln::Buffer moved = std::move(z);
  EXPECT_EQ(z.get(), nullptr);
  EXPECT_EQ(moved.data(), where);
}
