//===- MemoryFaultTest.cpp - Runs that fail for memory leave usable sessions ===//
//
// Issue 10, item 4: a run of the shipped translator that cannot get its memory, because
// the process's address space is limited (setrlimit(RLIMIT_AS)) or because the session's
// temp limit is lower than the run needs, returns a status naming memory; nothing aborts
// or raises a signal, and the session and its key/value caches keep working: the next
// decode_step gives bitwise the logits of a session that never failed, and once memory
// is there again the big run succeeds on the same session.
//
// Each case runs in a forked child (the limit must not reach the test runner, and the
// child must not inherit another test's Halide worker threads); the parent asserts that
// the child exited normally with status 0, and the child reports its own gtest failures.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

const std::string kWeights = std::string(TRANSLATOR_DIR) + "/translator.safetensors";
constexpr int64_t kModelDim = 128;

/// Runs `body` in a forked child and expects it to exit normally with status 0, which
/// it does when it recorded no gtest failure.
void inChild(const std::function<void()> &body) {
  fflush(stdout);
  pid_t pid = fork();
  ASSERT_GE(pid, 0) << "fork failed";
  if (pid == 0) {
    body();
    fflush(stdout);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status))
      << "the child died of signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child reported failures (above)";
}

/// The process's current address-space size in bytes (VmSize of /proc/self/status).
rlim_t addressSpaceBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmSize:") {
      rlim_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 16, '\n');
  }
  ADD_FAILURE() << "no VmSize in /proc/self/status";
  return RLIM_INFINITY;
}

/// AddressSanitizer's allocator and its own bookkeeping die when an address-space limit
/// denies them memory, before Kiln sees a failed allocation: in a sanitizer build
/// (KILN_SANITIZE) these tests say so and skip; the plain build runs them.
#if defined(__SANITIZE_ADDRESS__)
#define skipUnderAddressSanitizer()                                                      \
  GTEST_SKIP() << "an address-space limit aborts AddressSanitizer's own allocator; the " \
                  "plain build runs this test"
#else
#define skipUnderAddressSanitizer() (void)0
#endif

/// Sets the soft address-space limit (the hard one stays, so it can be raised again).
void limitAddressSpace(rlim_t bytes) {
  rlimit limit;
  ASSERT_EQ(getrlimit(RLIMIT_AS, &limit), 0);
  limit.rlim_cur = bytes;
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limit), 0);
}

/// Whether `message` holds `word`, ignoring case.
bool mentions(const std::string &message, const std::string &word) {
  std::string lower = message;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return lower.find(word) != std::string::npos;
}

/// Source ids [B, S] of full length, and their lengths.
struct Source {
  int64_t batch, length;
  std::vector<int32_t> ids, lengths;
  Source(int64_t batch, int64_t length)
      : batch(batch), length(length), ids(size_t(batch * length)),
        lengths(size_t(batch), int32_t(length)) {
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = int32_t(3 + i % 40);
  }
  /// Runs encode through the C API, so that a failure is a status to look at.
  kiln_status *encode(kiln::Session &session) const {
    kiln::TensorArg args[] = {
        kiln::TensorArg::of("src_ids", {batch, length}, ids.data()),
        kiln::TensorArg::of("src_lengths", {batch}, lengths.data())};
    kiln_tensor inputs[] = {args[0].raw(), args[1].raw()};
    return kiln_session_run(session.get(), "encode", inputs, 2);
  }
};

/// A session decoding one short source: encode, decode_start, and steps in order.
struct Decoder {
  const Source source{2, 5};
  int32_t position = 0;

  void start(kiln::Session &session) {
    session.run("encode",
                {kiln::TensorArg::of("src_ids", {2, 5}, source.ids.data()),
                 kiln::TensorArg::of("src_lengths", {2}, source.lengths.data())});
    std::vector<float> memory = session.outputData<float>("memory");
    session.run("decode_start",
                {kiln::TensorArg::of("memory", {2, 5, kModelDim}, memory.data()),
                 kiln::TensorArg::of("src_lengths", {2}, source.lengths.data())});
  }
  std::vector<float> step(kiln::Session &session) {
    std::vector<int32_t> tokens{int32_t(1 + position), int32_t(7 + position)};
    session.run("decode_step",
                {kiln::TensorArg::of("tgt_ids", {2, 1}, tokens.data()),
                 kiln::TensorArg::of("step", {}, &position),
                 kiln::TensorArg::of("src_lengths", {2}, source.lengths.data())});
    ++position;
    return session.outputData<float>("logits");
  }
};

/// What the child is given above the address space it has when the limit is set: less
/// than the big encode needs, more than a decode step of the short source does.
constexpr rlim_t kMargin = 16 << 20;

/// Decodes two steps on `session` with a big encode in between that fails with
/// RESOURCE_EXHAUSTED and a message mentioning `cause`, and expects the logits of step 1
/// to be bitwise those of a session that never failed. `fail` sets up the failure just
/// before the encode, whose source needs far more than kMargin of temporaries (the
/// attention scores alone are 32 x 4 x 256 x 256 floats: 32 MiB); `recover`, unless null,
/// undoes it, and the big encode then succeeds.
void expectDecodingSurvives(kiln::Session &session, const std::string &cause,
                            const std::function<void()> &fail,
                            const std::function<void()> &recover) {
  const Source big(32, 256);
  kiln::Model model = kiln::Model::open(TRANSLATOR_SO);
  kiln::Weights weights = kiln::Weights::open(model, kWeights);
  kiln::Session reference(model, weights);
  Decoder expected;
  expected.start(reference);
  expected.step(reference);
  std::vector<float> stepOne = expected.step(reference);

  Decoder decoder;
  decoder.start(session);
  decoder.step(session);
  fail();
  kiln_status *failed = big.encode(session);
  std::string message = kiln_status_get_message(failed);
  EXPECT_EQ(kiln_status_get_code(failed), KILN_STATUS_RESOURCE_EXHAUSTED) << message;
  EXPECT_TRUE(mentions(message, cause)) << message;
  kiln_status_free(failed);
  EXPECT_EQ(decoder.step(session), stepOne) << "the caches changed under a failed run";
  if (!recover)
    return;
  recover();
  kiln_status *status = big.encode(session);
  EXPECT_EQ(status, nullptr) << kiln_status_get_message(status);
  kiln_status_free(status);
  EXPECT_EQ(session.output("memory").shape,
            (std::vector<int64_t>{big.batch, big.length, kModelDim}));
}

} // namespace

TEST(MemoryFaults, AddressSpaceLimitFailsTheRunNotTheSession) {
  skipUnderAddressSanitizer();
  inChild([] {
    kiln::Model model = kiln::Model::open(TRANSLATOR_SO);
    kiln::Weights weights = kiln::Weights::open(model, kWeights);
    kiln::Session session(model, weights);
    rlimit original;
    ASSERT_EQ(getrlimit(RLIMIT_AS, &original), 0);
    expectDecodingSurvives(
        session, "memory", [] { limitAddressSpace(addressSpaceBytes() + kMargin); },
        [&] { limitAddressSpace(original.rlim_cur); });
  });
}

TEST(MemoryFaults, AddressSpaceLimitFailsOpeningWeightsWithAStatus) {
  skipUnderAddressSanitizer();
  inChild([] {
    kiln::Model model = kiln::Model::open(TRANSLATOR_SO);
    limitAddressSpace(addressSpaceBytes()); // no room for the 4 MB mapping
    kiln_weights *weights = nullptr;
    kiln_status *status = kiln_weights_open(model.get(), kWeights.c_str(), &weights);
    EXPECT_NE(status, nullptr);
    EXPECT_EQ(weights, nullptr);
    EXPECT_TRUE(mentions(kiln_status_get_message(status), "memory"))
        << kiln_status_get_message(status);
    kiln_status_free(status);
  });
}

TEST(MemoryFaults, TempLimitFailsTheRunNotTheSession) {
  inChild([] {
    kiln::Model model = kiln::Model::open(TRANSLATOR_SO);
    kiln::Weights weights = kiln::Weights::open(model, kWeights);
    kiln_session_options options;
    kiln_session_options_initialize(&options);
    options.max_temp_bytes = kMargin; // the limit is the session's: it cannot be raised
    kiln::Session session(model, weights, &options);
    expectDecodingSurvives(
        session, "over the session's limit", [] {}, nullptr);
  });
}
