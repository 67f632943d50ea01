//===- NaNWeightsTest.cpp - A model that computes NaN is an error ---------===//
//
// The shipped translator with every weight NaN: greedy and beam search with both
// decoders throw, naming the step and source, and kiln-run translate exits 1 with that
// message. Before, NaN log-probabilities ranked nowhere and the search returned the empty
// translation with exit 0.
//
//===----------------------------------------------------------------------===//

#include "../runtime/KilnRunTool.h"
#include "../runtime/TestUtil.h"
#include "kiln/generate.h"

#include <cstring>
#include <limits>

using namespace kiln::test;

namespace {

const std::string kDir = TRANSLATOR_DIR;

// translator.safetensors with the same header and every f32 of the data NaN.
std::string writeNaNWeights() {
  std::string bytes = readFile(kDir + "/translator.safetensors");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = headerLen << 8 | uint8_t(bytes[size_t(i)]);
  size_t data = 8 + size_t(headerLen);
  EXPECT_EQ(bytes.find("\"I32\""), std::string::npos) << "all weights are f32";
  EXPECT_EQ((bytes.size() - data) % 4, 0u);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t at = data; at + 4 <= bytes.size(); at += 4)
    std::memcpy(&bytes[at], &nan, 4);
  std::string path = tempPath("translator_nan.safetensors");
  writeFile(path, bytes);
  return path;
}

} // namespace

TEST(NaNWeights, SearchesThrowAndKilnRunFails) {
  std::string path = writeNaNWeights();
  auto vocab = kiln::Vocabulary::fromConfig(kDir + "/config.json");
  kiln::Model model = kiln::Model::open(TRANSLATOR_SO);
  kiln::Weights weights = kiln::Weights::open(model, path);
  std::vector<std::vector<int32_t>> sources{vocab.encodeSource("4096"),
                                            vocab.encodeSource("17")};
  kiln::KVCacheDecoder cached(model, weights, vocab.options().padId);
  kiln::PrefixDecoder prefix(model, weights, vocab.options().padId);
  for (kiln::StepDecoder *decoder : {static_cast<kiln::StepDecoder *>(&cached),
                                     static_cast<kiln::StepDecoder *>(&prefix)})
    for (int beam : {0, 4}) {
      kiln::GenerateOptions options = kiln::GenerateOptions::forVocabulary(vocab);
      if (beam) {
        options.search = kiln::GenerateOptions::Search::Beam;
        options.beamSize = beam;
      }
      try {
        kiln::generate(*decoder, sources, options);
        ADD_FAILURE() << "no error with beam " << beam;
      } catch (const kiln::Error &e) {
        EXPECT_EQ(e.code(), KILN_STATUS_KERNEL_ERROR);
        EXPECT_EQ(std::string(e.what()),
                  "decode step 0: the model computed NaN log-probabilities for source 0 "
                  "(token id 0 first); its weights or activations hold NaN or overflow");
      }
    }

  ToolRun run = kilnRun({"translate", TRANSLATOR_SO, "--weights", path, "--config",
                         kDir + "/config.json", "--beam", "4", "4096"});
  EXPECT_FALSE(run.crashed) << run.err;
  EXPECT_EQ(run.exitCode, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("the model computed NaN log-probabilities"), std::string::npos)
      << run.err;
  std::remove(path.c_str());
}
