//===- ConcurrentRunsTest.cpp - 8 threads x 1000 runs over one model and weights ===//
//
// The shipped translator's encode under load (issue 10, item 4): eight threads, each with
// its own session over ONE model handle and ONE weights handle, run it 1000 times on a
// rotation of inputs of different shapes (so temporaries grow and are reused while the
// other threads run the same kernels), and every output must be bitwise equal to what a
// single-threaded session computed for the same input.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 8;
constexpr int kRunsPerThread = 1000;
constexpr int32_t kSrcVocab = 45;

/// One encode input: right-padded source ids [B, S] and their lengths [B].
struct Source {
  int64_t batch, length;
  std::vector<int32_t> ids, lengths;

  std::vector<kiln::TensorArg> args() const {
    return {kiln::TensorArg::of("src_ids", {batch, length}, ids.data()),
            kiln::TensorArg::of("src_lengths", {batch}, lengths.data())};
  }
};

std::vector<Source> makeSources(std::mt19937 &rng) {
  const int64_t shapes[][2] = {{1, 3}, {2, 5}, {1, 8}, {3, 2}, {2, 7}, {1, 1}, {4, 4}};
  std::uniform_int_distribution<int32_t> id(3, kSrcVocab - 1);
  std::vector<Source> sources;
  for (const auto &[batch, length] : shapes) {
    Source s{batch, length, {}, {}};
    for (int64_t b = 0; b < batch; ++b) {
      int32_t used = int32_t(length - b % length); // rows of different lengths
      s.lengths.push_back(used);
      for (int64_t i = 0; i < length; ++i)
        s.ids.push_back(i < used ? id(rng) : 0);
    }
    sources.push_back(std::move(s));
  }
  return sources;
}

/// The bytes of `session`'s memory output.
std::vector<char> memoryBytes(const kiln::Session &session) {
  kiln::OutputView memory = session.output("memory");
  size_t bytes = sizeof(float);
  for (int64_t d : memory.shape)
    bytes *= size_t(d);
  const char *data = static_cast<const char *>(memory.data);
  return std::vector<char>(data, data + bytes);
}

} // namespace

TEST(ConcurrentRuns, EightThreadsOfSessionsOverOneModelAndWeightsAgreeBitwise) {
  kiln::Model model = kiln::Model::open(TRANSLATOR_SO);
  kiln::Weights weights =
      kiln::Weights::open(model, std::string(TRANSLATOR_DIR) + "/translator.safetensors");
  std::mt19937 rng(7);
  const std::vector<Source> sources = makeSources(rng);

  std::vector<std::vector<char>> expected;
  {
    kiln::Session single(model, weights);
    for (const Source &s : sources) {
      single.run("encode", s.args());
      expected.push_back(memoryBytes(single));
    }
  }

  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::string> firstProblem(kThreads);
  std::vector<uint64_t> runs(kThreads, 0);
  auto work = [&](int thread) {
    try {
      kiln::Session session(model, weights);
      for (int i = 0; i < kRunsPerThread; ++i) {
        size_t which = size_t(thread + i) % sources.size();
        session.run("encode", sources[which].args());
        if (memoryBytes(session) != expected[which] && mismatches++ == 0)
          firstProblem[thread] = "run " + std::to_string(i) + " on input " +
                                 std::to_string(which) + " differs";
      }
      runs[thread] = session.stats().runs;
    } catch (const kiln::Error &e) {
      if (errors++ == 0)
        firstProblem[thread] = e.what();
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back(work, t);
  for (std::thread &t : threads)
    t.join();

  std::string problems;
  for (const std::string &p : firstProblem)
    problems += p.empty() ? "" : p + "\n";
  EXPECT_EQ(mismatches.load(), 0) << problems;
  EXPECT_EQ(errors.load(), 0) << problems;
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(runs[t], uint64_t(kRunsPerThread)) << "thread " << t;
}
