// GenerateTest.cpp - kiln_generate on the shipped translator: tokenizer errors, greedy
// accuracy on the held-out set, beam 1 == greedy, and beam K=4 against reference_beam.py,
// each with the KV-cache decoder and with whole-prefix re-decoding.
#include "kiln/generate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>

namespace {

const std::string kDir = TRANSLATOR_DIR;

std::vector<std::string> split(const std::string &line, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(line);
  while (std::getline(in, part, sep))
    parts.push_back(part);
  // getline drops a trailing empty field (the empty output's column is never last here).
  return parts;
}

enum class DecoderKind { KVCache, Prefix };

void PrintTo(DecoderKind kind, std::ostream *os) {
  *os << (kind == DecoderKind::KVCache ? "KVCache" : "Prefix");
}

// Model, weights and vocabulary loaded once for the whole test program; every search
// test runs with both decoders.
class Translator : public ::testing::TestWithParam<DecoderKind> {
protected:
  static void SetUpTestSuite() {
    vocab_ = new kiln::Vocabulary(kiln::Vocabulary::fromConfig(kDir + "/config.json"));
    model_ = new kiln::Model(kiln::Model::open(TRANSLATOR_SO));
    weights_ =
        new kiln::Weights(kiln::Weights::open(*model_, kDir + "/translator.safetensors"));
  }
  static void TearDownTestSuite() {
    delete weights_;
    delete model_;
    delete vocab_;
  }

  static std::vector<kiln::GenerateResult> run(const std::vector<std::string> &texts,
                                               kiln::GenerateOptions options,
                                               bool allowOverLength = false) {
    std::unique_ptr<kiln::StepDecoder> decoder;
    if (GetParam() == DecoderKind::KVCache)
      decoder = std::make_unique<kiln::KVCacheDecoder>(*model_, *weights_,
                                                       vocab_->options().padId);
    else
      decoder = std::make_unique<kiln::PrefixDecoder>(*model_, *weights_,
                                                      vocab_->options().padId);
    std::vector<std::vector<int32_t>> sources;
    for (const std::string &t : texts)
      sources.push_back(vocab_->encodeSource(t, allowOverLength));
    return kiln::generate(*decoder, sources, options);
  }
  static kiln::GenerateOptions greedy() {
    return kiln::GenerateOptions::forVocabulary(*vocab_);
  }
  static kiln::GenerateOptions beam(int k, double alpha) {
    kiln::GenerateOptions o = greedy();
    o.search = kiln::GenerateOptions::Search::Beam;
    o.beamSize = k;
    o.alpha = alpha;
    o.nBest = true;
    return o;
  }

  static kiln::Vocabulary *vocab_;
  static kiln::Model *model_;
  static kiln::Weights *weights_;
};
kiln::Vocabulary *Translator::vocab_ = nullptr;
kiln::Model *Translator::model_ = nullptr;
kiln::Weights *Translator::weights_ = nullptr;

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_INVALID_ARGUMENT);
    return e.what();
  }
  ADD_FAILURE() << "no kiln::Error thrown";
  return "";
}

TEST_F(Translator, VocabularyFromConfig) {
  EXPECT_EQ(vocab_->size(), 45u);
  EXPECT_EQ(vocab_->options().maxSourceLen, 8);
  EXPECT_EQ(vocab_->options().maxTargetLen, 13);
  EXPECT_EQ(vocab_->token(2), "<eos>");
  EXPECT_EQ(vocab_->encodeSource(" 4096\n"), (std::vector<int32_t>{8, 4, 13, 10}));
  std::vector<int32_t> words = vocab_->encodeTarget("four thousand ninety six");
  words.push_back(2);
  words.push_back(20); // after <eos>: ignored
  EXPECT_EQ(vocab_->decodeTarget(words), "four thousand ninety six");
  EXPECT_EQ(vocab_->decodeTarget({1, 0, 18, 2}), "four");
}

TEST_P(Translator, BadInputIsAClearError) {
  std::string letter = errorOf([] { vocab_->encodeSource("40a6"); });
  EXPECT_NE(letter.find("character 'a' at position 2"), std::string::npos) << letter;
  EXPECT_NE(letter.find("not in the vocabulary"), std::string::npos) << letter;
  std::string empty = errorOf([] { vocab_->encodeSource("  "); });
  EXPECT_NE(empty.find("empty input"), std::string::npos) << empty;
  std::string tooLong = errorOf([] { vocab_->encodeSource("123456789"); });
  EXPECT_NE(tooLong.find("9 characters; the model takes at most 8"), std::string::npos)
      << tooLong;
  std::string word = errorOf([] { vocab_->encodeTarget("four thousend"); });
  EXPECT_NE(word.find("word 'thousend' at position 1"), std::string::npos) << word;
  // The escape hatch for out-of-domain experiments.
  EXPECT_EQ(vocab_->encodeSource("04526698572", true).size(), 11u);
  // Search options are validated too.
  kiln::GenerateOptions bad = greedy();
  bad.maxLength = 0;
  errorOf([&] { run({"1"}, bad); });
}

// The fp32 translator gets every held-out input right; one compiled with reduced-
// precision weights (test/unit/precision) may miss one (issue 14: at least 199/200).
#ifndef HELDOUT_MIN_CORRECT
#define HELDOUT_MIN_CORRECT 200
#endif

TEST_P(Translator, GreedyHeldOutAccuracy) {
  std::ifstream in(kDir + "/heldout.tsv");
  ASSERT_TRUE(in);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) {
      std::vector<std::string> f = split(line, '\t');
      ASSERT_EQ(f.size(), 2u) << line;
      pairs.emplace_back(f[0], f[1]);
    }
  ASSERT_EQ(pairs.size(), 200u);
  // Batches of 20 consecutive lines mix 3- to 8-digit sources, so padding is exercised.
  size_t correct = 0;
  for (size_t b = 0; b < pairs.size(); b += 20) {
    std::vector<std::string> texts;
    for (size_t i = b; i < b + 20; ++i)
      texts.push_back(pairs[i].first);
    std::vector<kiln::GenerateResult> out = run(texts, greedy());
    for (size_t i = 0; i < texts.size(); ++i) {
      std::string got = vocab_->decodeTarget(out[i].best.tokens);
      if (got == pairs[b + i].second)
        ++correct;
      else
        std::printf("MISS %s: got '%s', want '%s'\n", texts[i].c_str(), got.c_str(),
                    pairs[b + i].second.c_str());
    }
  }
  std::printf("greedy held-out exact match: %zu/%zu = %.1f%%\n", correct, pairs.size(),
              100.0 * double(correct) / double(pairs.size()));
  EXPECT_GE(correct, static_cast<size_t>(HELDOUT_MIN_CORRECT));
}

TEST_P(Translator, BeamOneIsGreedy) {
  std::vector<std::string> texts = {"073812",   "4096",        "7",
                                    "12000345", "04526698572", "90017"};
  std::vector<kiln::GenerateResult> g = run(texts, greedy(), true);
  std::vector<kiln::GenerateResult> b = run(texts, beam(1, 0.6), true);
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(g[i].best.tokens, b[i].best.tokens) << texts[i];
    EXPECT_NEAR(g[i].best.rawScore, b[i].best.rawScore, 1e-9) << texts[i];
  }
  // The reference's greedy answers to the two out-of-domain inputs.
  EXPECT_EQ(vocab_->decodeTarget(g[0].best.tokens), "");
  EXPECT_NEAR(g[0].best.rawScore, -0.843352, 1e-3);
  EXPECT_EQ(
      vocab_->decodeTarget(g[4].best.tokens),
      "seventy four million five hundred twenty six thousand six hundred ninety eight");
}

TEST_P(Translator, BeamMatchesReference) {
  // INPUT -> n-best rows (rank order) as written by reference_beam.py --nbest.
  std::ifstream in(kDir + "/beam_reference.tsv");
  ASSERT_TRUE(in);
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::vector<std::string>>> want;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::vector<std::string> f = split(line, '\t');
    ASSERT_EQ(f.size(), 5u) << line;
    if (!want.count(f[0]))
      order.push_back(f[0]);
    want[f[0]].push_back(f);
  }
  ASSERT_TRUE(want.count("073812") && want.count("04526698572"));
  // All inputs in one batch: sources of 1 to 11 characters.
  std::vector<kiln::GenerateResult> got = run(order, beam(4, 0.6), true);
  for (size_t i = 0; i < order.size(); ++i) {
    const auto &rows = want[order[i]];
    const kiln::GenerateResult &r = got[i];
    EXPECT_EQ(vocab_->decodeTarget(r.best.tokens), rows[0][2]) << order[i];
    ASSERT_EQ(r.nBest.size(), rows.size()) << order[i];
    for (size_t k = 0; k < rows.size(); ++k) {
      EXPECT_EQ(vocab_->decodeTarget(r.nBest[k].tokens), rows[k][2])
          << order[i] << " #" << k;
      EXPECT_NEAR(r.nBest[k].score, std::stod(rows[k][3]), 1e-3) << order[i] << " #" << k;
      EXPECT_NEAR(r.nBest[k].rawScore, std::stod(rows[k][4]), 1e-3)
          << order[i] << " #" << k;
    }
  }
}

TEST_P(Translator, BeamAlphaZeroPrefersEmptyFor073812) {
  // README: with alpha = 0 the short empty hypothesis wins; the length penalty decides.
  std::vector<kiln::GenerateResult> r = run({"073812"}, beam(4, 0.0));
  EXPECT_EQ(vocab_->decodeTarget(r[0].best.tokens), "");
  EXPECT_EQ(r[0].best.tokens, (std::vector<int32_t>{2}));
}

INSTANTIATE_TEST_SUITE_P(Decoders, Translator,
                         ::testing::Values(DecoderKind::KVCache, DecoderKind::Prefix),
                         [](const ::testing::TestParamInfo<DecoderKind> &info) {
                           return info.param == DecoderKind::KVCache ? "KVCache"
                                                                     : "Prefix";
                         });

} // namespace
