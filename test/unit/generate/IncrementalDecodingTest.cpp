// IncrementalDecodingTest.cpp - the shipped translator's decode_step (KV cache) against
// its whole-prefix decode: equal logits at every step for a batch of sources of different
// lengths, also after the cache rows are reordered the way a beam search does; and the
// errors of misuse (a step before decode_start, a position past the cache, a batch that
// is not the cache's).
#include "kiln/generate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

namespace {

const std::string kDir = TRANSLATOR_DIR;
constexpr int64_t kVocab = 45;
constexpr int32_t kBos = 1;

class IncrementalDecoding : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = kiln::Model::open(TRANSLATOR_SO);
    weights_ = kiln::Weights::open(model_, kDir + "/translator.safetensors");
    seed_ = std::random_device()();
    rng_.seed(seed_);
  }

  // Random source ids (no <pad>/<bos>/<eos>) of the given lengths, right-padded.
  void makeSources(const std::vector<int32_t> &lengths) {
    lengths_ = lengths;
    batch_ = int64_t(lengths.size());
    srcLen_ = *std::max_element(lengths.begin(), lengths.end());
    std::uniform_int_distribution<int32_t> id(3, kVocab - 1);
    srcIds_.assign(size_t(batch_ * srcLen_), 0);
    for (int64_t b = 0; b < batch_; ++b)
      for (int32_t s = 0; s < lengths[b]; ++s)
        srcIds_[size_t(b * srcLen_ + s)] = id(rng_);
  }

  // encode + decode_start in `session`; returns the memory [B, S, D].
  std::vector<float> start(kiln::Session &session) {
    session.run("encode",
                {kiln::TensorArg::of("src_ids", {batch_, srcLen_}, srcIds_.data()),
                 kiln::TensorArg::of("src_lengths", {batch_}, lengths_.data())});
    std::vector<float> memory = session.outputData<float>("memory");
    dModel_ = int64_t(memory.size()) / (batch_ * srcLen_);
    session.run("decode_start",
                {kiln::TensorArg::of("memory", {batch_, srcLen_, dModel_}, memory.data()),
                 kiln::TensorArg::of("src_lengths", {batch_}, lengths_.data())});
    return memory;
  }

  std::vector<float> step(kiln::Session &session, const std::vector<int32_t> &tokens,
                          int32_t position, const std::vector<int32_t> &lengths) {
    int64_t rows = int64_t(tokens.size());
    session.run("decode_step",
                {kiln::TensorArg::of("tgt_ids", {rows, 1}, tokens.data()),
                 kiln::TensorArg::of("step", {}, &position),
                 kiln::TensorArg::of("src_lengths", {rows}, lengths.data())});
    return session.outputData<float>("logits");
  }

  // Logits of the last position of decode(prefixes) [rows, V], memory rows by `sourceOf`.
  std::vector<float> wholePrefix(kiln::Session &session,
                                 const std::vector<std::vector<int32_t>> &prefixes,
                                 const std::vector<float> &memory,
                                 const std::vector<int32_t> &sourceOf) {
    int64_t rows = int64_t(prefixes.size()), t = int64_t(prefixes[0].size());
    int64_t rowMem = srcLen_ * dModel_;
    std::vector<int32_t> tgt, lengths;
    std::vector<float> mem;
    for (int64_t r = 0; r < rows; ++r) {
      tgt.insert(tgt.end(), prefixes[r].begin(), prefixes[r].end());
      mem.insert(mem.end(), memory.begin() + sourceOf[r] * rowMem,
                 memory.begin() + (sourceOf[r] + 1) * rowMem);
      lengths.push_back(lengths_[sourceOf[r]]);
    }
    session.run("decode",
                {kiln::TensorArg::of("tgt_ids", {rows, t}, tgt.data()),
                 kiln::TensorArg::of("memory", {rows, srcLen_, dModel_}, mem.data()),
                 kiln::TensorArg::of("src_lengths", {rows}, lengths.data())});
    std::vector<float> all = session.outputData<float>("logits");
    std::vector<float> last;
    for (int64_t r = 0; r < rows; ++r)
      last.insert(last.end(), all.begin() + (r * t + t - 1) * kVocab,
                  all.begin() + (r * t + t) * kVocab);
    return last;
  }

  // ‖got − want‖ / ‖want‖ of each row, all ≤ 1e-4.
  static void expectClose(const std::vector<float> &got, const std::vector<float> &want,
                          const std::string &what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t r = 0; r * kVocab < want.size(); ++r) {
      double diff = 0, norm = 0;
      for (int64_t i = 0; i < kVocab; ++i) {
        double w = want[r * kVocab + i], g = got[r * kVocab + i];
        diff += (g - w) * (g - w);
        norm += w * w;
      }
      ASSERT_GT(norm, 0) << what;
      EXPECT_LE(std::sqrt(diff / norm), 1e-4) << what << " row " << r;
    }
  }

  kiln::Model model_;
  kiln::Weights weights_;
  unsigned seed_ = 0;
  std::mt19937 rng_;
  std::vector<int32_t> srcIds_, lengths_;
  int64_t batch_ = 0, srcLen_ = 0, dModel_ = 0;
};

TEST_F(IncrementalDecoding, StepMatchesWholePrefixAtEveryPosition) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  makeSources({8, 3, 5});
  kiln::Session cached(model_, weights_), whole(model_, weights_);
  std::vector<float> memory = start(cached);
  std::uniform_int_distribution<int32_t> id(3, kVocab - 1);
  std::vector<std::vector<int32_t>> prefixes(size_t(batch_), {kBos});
  std::vector<int32_t> sourceOf = {0, 1, 2};
  for (int32_t p = 0; p < 13; ++p) {
    std::vector<int32_t> last;
    for (const auto &prefix : prefixes)
      last.push_back(prefix.back());
    std::vector<float> got = step(cached, last, p, lengths_);
    expectClose(got, wholePrefix(whole, prefixes, memory, sourceOf),
                "position " + std::to_string(p));
    for (auto &prefix : prefixes)
      prefix.push_back(id(rng_));
  }
  kiln_session_stats stats = cached.stats();
  EXPECT_GT(stats.state_bytes, 0u);
}

TEST_F(IncrementalDecoding, ReorderedRowsContinueTheirPrefixes) {
  SCOPED_TRACE("seed " + std::to_string(seed_));
  makeSources({6, 2});
  kiln::Session cached(model_, weights_), whole(model_, weights_);
  std::vector<float> memory = start(cached);
  std::uniform_int_distribution<int32_t> id(3, kVocab - 1);
  // Rows as a beam search moves them: two beams per source, then a reorder with a
  // duplicated row, a dropped row and a swap, then a shrink.
  std::vector<std::vector<int32_t>> gathers = {
      {0, 0, 1, 1}, {1, 0, 0, 3}, {3, 1, 2}, {2, 0}};
  std::vector<int32_t> sourceOf = {0, 1};
  std::vector<std::vector<int32_t>> prefixes = {{kBos}, {kBos}};
  for (int32_t p = 0; p < 6; ++p) {
    if (p < int32_t(gathers.size())) {
      const std::vector<int32_t> &rows = gathers[size_t(p)];
      cached.gatherStates(rows);
      std::vector<int32_t> nextSource;
      std::vector<std::vector<int32_t>> nextPrefixes;
      for (int32_t r : rows) {
        nextSource.push_back(sourceOf[size_t(r)]);
        nextPrefixes.push_back(prefixes[size_t(r)]);
      }
      sourceOf = nextSource;
      prefixes = nextPrefixes;
    }
    std::vector<int32_t> last, lengths;
    for (size_t r = 0; r < prefixes.size(); ++r) {
      last.push_back(prefixes[r].back());
      lengths.push_back(lengths_[size_t(sourceOf[r])]);
    }
    std::vector<float> got = step(cached, last, p, lengths);
    expectClose(got, wholePrefix(whole, prefixes, memory, sourceOf),
                "position " + std::to_string(p));
    for (auto &prefix : prefixes)
      prefix.push_back(id(rng_));
  }
  EXPECT_GT(cached.stats().state_rows_copied, 0u);
}

std::string errorOf(kiln_status_code code, const std::function<void()> &f) {
  try {
    f();
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no kiln::Error thrown";
  return "";
}

TEST_F(IncrementalDecoding, MisuseIsAClearError) {
  makeSources({4, 2, 3});
  kiln::Session session(model_, weights_);
  std::string early = errorOf(KILN_STATUS_FAILED_PRECONDITION, [&] {
    step(session, {kBos, kBos, kBos}, 0, lengths_);
  });
  EXPECT_NE(early.find("decode_start"), std::string::npos) << early;
  start(session);
  std::string past = errorOf(KILN_STATUS_INVALID_ARGUMENT, [&] {
    step(session, {kBos, kBos, kBos}, 64, lengths_);
  });
  EXPECT_NE(past.find("'step'"), std::string::npos) << past;
  EXPECT_NE(past.find("[0, 63]"), std::string::npos) << past;
  std::string batch = errorOf(KILN_STATUS_INVALID_ARGUMENT, [&] {
    step(session, {kBos, kBos}, 0, {4, 2});
  });
  EXPECT_NE(batch.find("state"), std::string::npos) << batch;
  std::string row = errorOf(KILN_STATUS_INVALID_ARGUMENT, [&] {
    session.gatherStates({0, 3});
  });
  EXPECT_NE(row.find("rows[1] is 3"), std::string::npos) << row;
  // A step past the positions written once returned logits computed on zeros.
  std::string skip = errorOf(KILN_STATUS_INVALID_ARGUMENT, [&] {
    step(session, {kBos, kBos, kBos}, 2, lengths_);
  });
  EXPECT_NE(skip.find("state 'transformer.decoder.layers.0.self_attn.k_cache' has 0 "
                      "positions written along dim 2; writing position 2 would leave "
                      "positions 0 to 1 unwritten"),
            std::string::npos)
      << skip;
  // The failed calls left the caches usable.
  EXPECT_EQ(step(session, {kBos, kBos, kBos}, 0, lengths_).size(), size_t(3 * kVocab));

  kiln::KVCacheDecoder decoder(model_, weights_);
  EXPECT_EQ(decoder.capacity(), 64);
  kiln::GenerateOptions options;
  options.maxLength = 70;
  options.eosId = -1;
  std::string full = errorOf(KILN_STATUS_INVALID_ARGUMENT, [&] {
    kiln::generate(decoder, {{5, 6, 7}}, options);
  });
  EXPECT_NE(full.find("KV cache of 64 positions"), std::string::npos) << full;
}

} // namespace
