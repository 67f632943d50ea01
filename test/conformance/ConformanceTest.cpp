//===- ConformanceTest.cpp - Kiln's Transformer against PyTorch's ---------===//
//
// make_reference.py builds torch.nn.Transformer with random weights and writes its
// state_dict, inputs and outputs; the Kiln-compiled model loads that state_dict under the
// same names and must compute the same function: max|a-b| / max|b| <= 1e-4 for encode
// and decode, batch 1 and a batch with different source lengths, at the tiny and the base
// configuration. The tiny model also runs through the reference interpreter, so a
// mismatch can be told apart as a model-definition or a backend problem.
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"
#include "Safetensors.h"

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/frontend/Registry.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <memory>

using namespace kiln;
using namespace kiln::dsl;
using kiln::test::CompiledModel;
using kiln::test::loadOrFail;
using kiln::test::take;

kiln::dsl::Model buildTransformerTiny();

namespace {

constexpr double kTolerance = 1e-4;

std::string dataDir(const std::string &config) {
  return std::string(KILN_CONFORMANCE_DATA_DIR) + "/" + config;
}

std::string libraryOf(const std::string &config) {
  if (config == "tiny")
    return KILN_TINY_LIBRARY;
  if (config == "tiny_prenorm_gelu")
    return KILN_TINY_PRENORM_GELU_LIBRARY;
  return KILN_BASE_LIBRARY;
}

CompiledModel compiled(const std::string &config) {
  return CompiledModel(libraryOf(config), dataDir(config) + "/weights.safetensors");
}

struct Case {
  std::string config;
  std::string batch;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.config << " " << c.batch; }

std::string caseName(const testing::TestParamInfo<Case> &info) {
  return info.param.config + "_" + info.param.batch;
}

class Conformance : public testing::TestWithParam<Case> {};

TEST_P(Conformance, EncodeAndDecodeMatchPyTorch) {
  const Case &c = GetParam();
  CompiledModel model = compiled(c.config);
  ASSERT_EQ(model.error(), "");
  reference::TensorMap data =
      loadOrFail(dataDir(c.config) + "/" + c.batch + ".safetensors");
  ASSERT_FALSE(data.empty());

  ASSERT_EQ(model.run("encode", data, {"src_ids", "src_lengths"}), "");
  double encodeError = test::relativeError(model.output("memory"), data["memory"].f32);
  EXPECT_LE(encodeError, kTolerance) << "encode, " << c.config << " " << c.batch;

  // Decode from PyTorch's memory so the two entry points are checked separately.
  ASSERT_EQ(model.run("decode", data, {"tgt_ids", "memory", "src_lengths"}), "");
  double decodeError = test::relativeError(model.output("logits"), data["logits"].f32);
  EXPECT_LE(decodeError, kTolerance) << "decode, " << c.config << " " << c.batch;
  std::printf("[ %s %s ] relative error vs PyTorch: encode %.3g, decode %.3g\n",
              c.config.c_str(), c.batch.c_str(), encodeError, decodeError);
}

INSTANTIATE_TEST_SUITE_P(PyTorch, Conformance,
                         testing::Values(Case{"tiny", "b1"}, Case{"tiny", "b3"},
                                         Case{"tiny_prenorm_gelu", "b1"},
                                         Case{"tiny_prenorm_gelu", "b3"},
                                         Case{"base", "b1"}, Case{"base", "b3"}),
                         caseName);

TEST(ConformanceReference, InterpreterMatchesPyTorch) {
  Model model = buildTransformerTiny();
  ASSERT_TRUE(model.ok());
  reference::TensorMap weights = loadOrFail(dataDir("tiny") + "/weights.safetensors");
  reference::TensorMap data = loadOrFail(dataDir("tiny") + "/b3.safetensors");
  auto memory = reference::run(
      model.module(), "encode",
      {{"src_ids", data["src_ids"]}, {"src_lengths", data["src_lengths"]}}, weights);
  ASSERT_TRUE(static_cast<bool>(memory)) << llvm::toString(memory.takeError());
  EXPECT_LE(test::relativeError((*memory)["memory"].f32, data["memory"].f32), 1e-5);
  auto logits = reference::run(model.module(), "decode",
                               {{"tgt_ids", data["tgt_ids"]},
                                {"memory", data["memory"]},
                                {"src_lengths", data["src_lengths"]}},
                               weights);
  ASSERT_TRUE(static_cast<bool>(logits)) << llvm::toString(logits.takeError());
  EXPECT_LE(test::relativeError((*logits)["logits"].f32, data["logits"].f32), 1e-5);
}

/// Bad input must give a clear error naming the problem, never a crash or garbage.
class ConformanceBadInput : public testing::Test {
protected:
  void SetUp() override {
    data_ = loadOrFail(dataDir("tiny") + "/b3.safetensors");
    ASSERT_FALSE(data_.empty());
    ASSERT_EQ(model_.error(), "");
  }
  std::string encode() { return model_.run("encode", data_, {"src_ids", "src_lengths"}); }

  CompiledModel model_ = compiled("tiny");
  reference::TensorMap data_;
};

TEST_F(ConformanceBadInput, TokenIdAtOrAboveVocabulary) {
  data_["src_ids"].i32[4] = 50;
  std::string error = encode();
  EXPECT_NE(error.find("src_ids"), std::string::npos) << error;
  EXPECT_NE(error.find("is 50, outside its bounds [0, 49]"), std::string::npos) << error;
}

TEST_F(ConformanceBadInput, NegativeTokenId) {
  data_["src_ids"].i32[0] = -3;
  std::string error = encode();
  EXPECT_NE(error.find("is -3, outside its bounds"), std::string::npos) << error;
}

TEST_F(ConformanceBadInput, ZeroLength) {
  data_["src_lengths"].i32[1] = 0;
  std::string error = encode();
  EXPECT_NE(error.find("src_lengths"), std::string::npos) << error;
  EXPECT_NE(error.find("is 0, outside its bounds [1, S]"), std::string::npos) << error;
}

TEST_F(ConformanceBadInput, LengthLongerThanSource) {
  data_["src_lengths"].i32[2] = data_["src_ids"].shape[1] + 1;
  std::string error = encode();
  EXPECT_NE(error.find("outside its bounds [1, S]"), std::string::npos) << error;
}

TEST_F(ConformanceBadInput, MismatchedBatch) {
  data_["src_lengths"] = reference::HostTensor::ints({2}, {3, 4});
  std::string error = encode();
  EXPECT_NE(error.find("dimension 'B' is 3 in input 'src_ids'"), std::string::npos)
      << error;
  EXPECT_NE(error.find("but 2 in input 'src_lengths'"), std::string::npos) << error;
}

TEST(ConformanceWeights, WeightsOfAnotherConfigurationAreRejectedByName) {
  kiln_model *model = nullptr;
  ASSERT_EQ(take(kiln_model_open(KILN_TINY_LIBRARY, &model)), "");
  kiln_weights *weights = nullptr;
  std::string error = take(kiln_weights_open(
      model, (dataDir("base") + "/weights.safetensors").c_str(), &weights));
  EXPECT_EQ(weights, nullptr);
  EXPECT_NE(error.find("embed.weight"), std::string::npos) << error;
  EXPECT_NE(error.find("transformer.encoder.layers.2"), std::string::npos)
      << "the base model's extra layers are unexpected in the tiny one: " << error;
  kiln_model_release(model);
}

} // namespace
