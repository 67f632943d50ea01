// DecoderOnlyTest.cpp - kiln::generate over a PrefillDecoder on the e2e tests' tiny GPT
// (test/e2e/models/TinyGpt.cpp) with random weights, against an independent search that
// re-runs the whole-sequence `forward` entry for every prefix (no caches): greedy tokens
// for prompts of different lengths in one batch, beam search (as wide as the vocabulary
// over two tokens: exhaustive) with its n-best list and scores, sampling's
// reproducibility and its degenerate settings; and the errors a user meets.
#include "kiln/generate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace {

constexpr int64_t kVocab = 23, kCapacity = 16;

class DecoderOnly : public ::testing::Test {
protected:
  void SetUp() override {
    model_ = kiln::Model::open(TINY_GPT_SO);
    std::mt19937 random(17);
    std::uniform_real_distribution<float> uniform(-0.6f, 0.6f);
    std::vector<kiln::TensorArg> tensors;
    for (const kiln::TensorInfo &p : model_.parameters()) {
      int64_t count = 1;
      for (int64_t d : p.shape)
        count *= d;
      data_.emplace_back(size_t(count));
      for (float &v : data_.back())
        v = uniform(random);
      tensors.push_back(kiln::TensorArg::of(p.name, p.shape, data_.back().data()));
    }
    path_ =
        ::testing::TempDir() + "tiny_gpt_" + std::to_string(::getpid()) + ".safetensors";
    kiln::writeSafetensors(path_, tensors);
    weights_ = kiln::Weights::open(model_, path_);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // log_softmax of forward's logits after the last token of `ids` (one sequence).
  std::vector<double> nextLogProbs(kiln::Session &session,
                                   const std::vector<int32_t> &ids) {
    session.run("forward",
                {kiln::TensorArg::of("ids", {1, int64_t(ids.size())}, ids.data())});
    std::vector<float> logits = session.outputData<float>("logits");
    const float *last = logits.data() + (ids.size() - 1) * kVocab;
    double max = *std::max_element(last, last + kVocab), sum = 0;
    for (int64_t v = 0; v < kVocab; ++v)
      sum += std::exp(last[v] - max);
    std::vector<double> out;
    for (int64_t v = 0; v < kVocab; ++v)
      out.push_back(last[v] - max - std::log(sum));
    return out;
  }

  kiln::GenerateOptions options(int maxNew) {
    kiln::GenerateOptions o;
    o.maxLength = maxNew;
    o.eosId = -1;
    return o;
  }

  kiln::Model model_;
  kiln::Weights weights_;
  std::vector<std::vector<float>> data_;
  std::string path_;
};

const std::vector<std::vector<int32_t>> kPrompts = {
    {3, 17, 4, 9, 21}, {8, 1}, {12, 0, 5}, {22, 7, 7, 2, 14, 6, 11}};

} // namespace

TEST_F(DecoderOnly, GreedyOnRaggedPromptsIsTheWholeSequenceArgMax) {
  kiln::PrefillDecoder decoder(model_, weights_);
  EXPECT_EQ(decoder.capacity(), kCapacity);
  EXPECT_EQ(decoder.vocabSize(), kVocab);
  const int maxNew = 6;
  std::vector<kiln::GenerateResult> results =
      kiln::generate(decoder, kPrompts, options(maxNew));
  ASSERT_EQ(results.size(), kPrompts.size());
  kiln::Session session(model_, weights_);
  for (size_t s = 0; s < kPrompts.size(); ++s) {
    std::vector<int32_t> ids = kPrompts[s], want;
    double raw = 0;
    for (int t = 0; t < maxNew; ++t) {
      std::vector<double> logp = nextLogProbs(session, ids);
      int32_t best = int32_t(std::max_element(logp.begin(), logp.end()) - logp.begin());
      raw += logp[size_t(best)];
      want.push_back(best);
      ids.push_back(best);
    }
    EXPECT_EQ(results[s].best.tokens, want) << "prompt " << s;
    EXPECT_NEAR(results[s].best.rawScore, raw, 1e-4) << "prompt " << s;
    EXPECT_FALSE(results[s].best.finished);
  }
  // One prefill (of the shortest prompt, 2 tokens), then one step per position up to
  // the longest prompt's last generated token but one: 7 + 6 - 1 - 2.
  EXPECT_EQ(decoder.stepCalls(), 10);
}

TEST_F(DecoderOnly, GreedyStopsAtEos) {
  kiln::PrefillDecoder decoder(model_, weights_);
  kiln::GenerateOptions o = options(5);
  std::vector<kiln::GenerateResult> first = kiln::generate(decoder, {kPrompts[0]}, o);
  ASSERT_EQ(first[0].best.tokens.size(), 5u);
  o.eosId = first[0].best.tokens[2];
  std::vector<kiln::GenerateResult> stopped = kiln::generate(decoder, {kPrompts[0]}, o);
  std::vector<int32_t> head(first[0].best.tokens.begin(),
                            first[0].best.tokens.begin() + 3);
  // The eos may come earlier if the greedy tokens repeat it.
  auto end = std::find(head.begin(), head.end(), o.eosId) + 1;
  EXPECT_EQ(stopped[0].best.tokens, std::vector<int32_t>(head.begin(), end));
  EXPECT_TRUE(stopped[0].best.finished);
}

TEST_F(DecoderOnly, BeamAsWideAsTheVocabularyIsExhaustive) {
  kiln::PrefillDecoder decoder(model_, weights_);
  kiln::GenerateOptions o = options(2);
  o.search = kiln::GenerateOptions::Search::Beam;
  o.beamSize = int(kVocab);
  o.nBest = true;
  std::vector<std::vector<int32_t>> prompts = {kPrompts[1], kPrompts[0]};
  std::vector<kiln::GenerateResult> results = kiln::generate(decoder, prompts, o);
  kiln::Session session(model_, weights_);
  for (size_t s = 0; s < prompts.size(); ++s) {
    // Every two-token continuation, scored by the whole-sequence forward.
    struct Scored {
      double raw;
      std::vector<int32_t> tokens;
    };
    std::vector<Scored> all;
    std::vector<double> first = nextLogProbs(session, prompts[s]);
    for (int32_t a = 0; a < kVocab; ++a) {
      std::vector<int32_t> ids = prompts[s];
      ids.push_back(a);
      std::vector<double> second = nextLogProbs(session, ids);
      for (int32_t b = 0; b < kVocab; ++b)
        all.push_back({first[size_t(a)] + second[size_t(b)], {a, b}});
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const Scored &x, const Scored &y) { return x.raw > y.raw; });
    ASSERT_EQ(results[s].nBest.size(), size_t(kVocab)) << "prompt " << s;
    for (size_t i = 0; i < results[s].nBest.size(); ++i) {
      EXPECT_EQ(results[s].nBest[i].tokens, all[i].tokens) << "prompt " << s << " #" << i;
      EXPECT_NEAR(results[s].nBest[i].rawScore, all[i].raw, 1e-4);
    }
  }
}

TEST_F(DecoderOnly, BeamOfOneIsGreedy) {
  kiln::PrefillDecoder decoder(model_, weights_);
  kiln::GenerateOptions o = options(5);
  std::vector<kiln::GenerateResult> greedy = kiln::generate(decoder, kPrompts, o);
  o.search = kiln::GenerateOptions::Search::Beam;
  o.beamSize = 1;
  std::vector<kiln::GenerateResult> beam = kiln::generate(decoder, kPrompts, o);
  for (size_t s = 0; s < kPrompts.size(); ++s)
    EXPECT_EQ(beam[s].best.tokens, greedy[s].best.tokens) << "prompt " << s;
}

TEST_F(DecoderOnly, SamplingIsReproducibleAndDegeneratesToGreedy) {
  kiln::PrefillDecoder decoder(model_, weights_);
  kiln::GenerateOptions o = options(8);
  std::vector<kiln::GenerateResult> greedy = kiln::generate(decoder, kPrompts, o);
  auto tokens = [&](const kiln::GenerateOptions &opts) {
    std::vector<std::vector<int32_t>> out;
    for (const kiln::GenerateResult &r : kiln::generate(decoder, kPrompts, opts))
      out.push_back(r.best.tokens);
    return out;
  };
  std::vector<std::vector<int32_t>> greedyTokens;
  for (const kiln::GenerateResult &r : greedy)
    greedyTokens.push_back(r.best.tokens);
  o.search = kiln::GenerateOptions::Search::Sample;
  o.temperature = 1.5;
  o.seed = 7;
  std::vector<std::vector<int32_t>> sampled = tokens(o);
  EXPECT_EQ(tokens(o), sampled);
  o.seed = 8;
  EXPECT_NE(tokens(o), sampled);
  EXPECT_NE(sampled, greedyTokens);
  o.topK = 1;
  EXPECT_EQ(tokens(o), greedyTokens);
  o.topK = 0;
  o.topP = 1e-9;
  EXPECT_EQ(tokens(o), greedyTokens);
  o.topP = 1;
  o.temperature = 1e-6;
  EXPECT_EQ(tokens(o), greedyTokens);
}

TEST_F(DecoderOnly, ErrorsNameTheProblem) {
  kiln::PrefillDecoder decoder(model_, weights_);
  auto expectError = [&](const std::vector<std::vector<int32_t>> &prompts, int maxNew,
                         const std::string &message) {
    try {
      kiln::generate(decoder, prompts, options(maxNew));
      ADD_FAILURE() << "no error for: " << message;
    } catch (const kiln::Error &e) {
      EXPECT_EQ(e.code(), KILN_STATUS_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  expectError({{1, 2}, {4, 23}}, 3,
              "prompt 1 token 1: id 23 is not in the vocabulary [0, 22]");
  expectError({{1, 2}, {}}, 3, "prompt 1 is empty");
  expectError({std::vector<int32_t>(17, 1)}, 1,
              "a prompt of 17 tokens and up to 1 new tokens need 17 positions, but the "
              "model's caches hold 16 (the prompt is too long)");
  expectError({std::vector<int32_t>(10, 1)}, 8,
              "need 17 positions, but the model's caches hold 16; generate at most 7 new "
              "tokens");
}

TEST(DecoderOnlyModel, AModelWithoutPrefillIsAnError) {
  kiln::Model translator = kiln::Model::open(TRANSLATOR_SO);
  kiln::Weights weights = kiln::Weights::open(translator, std::string(TRANSLATOR_DIR) +
                                                              "/translator.safetensors");
  try {
    kiln::PrefillDecoder decoder(translator, weights);
    ADD_FAILURE() << "the translator has no prefill entry";
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("model has no entry 'prefill': a decoder-only "
                                         "model needs 'prefill(ids [B, N]) -> logits [B, "
                                         "V]' and 'step(ids [B, 1], position) -> logits "
                                         "[B, V]' (its entries: encode, decode"),
              std::string::npos)
        << e.what();
  }
}
