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

#include "Safetensors.h"

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/frontend/Registry.h"
#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <memory>

using namespace kiln;
using namespace kiln::dsl;

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

/// Frees a status; returns its message, or "" when OK.
std::string take(kiln_status *status) {
  if (!status)
    return "";
  std::string message = kiln_status_get_message(status);
  kiln_status_free(status);
  return message.empty() ? "(error without message)" : message;
}

/// A compiled model with PyTorch's weights loaded.
class CompiledModel {
public:
  CompiledModel(const std::string &config) {
    error_ = take(kiln_model_open(libraryOf(config).c_str(), &model_));
    if (error_.empty())
      error_ = take(kiln_weights_open(
          model_, (dataDir(config) + "/weights.safetensors").c_str(), &weights_));
    if (error_.empty())
      error_ = take(kiln_session_create(model_, weights_, nullptr, &session_));
  }
  ~CompiledModel() {
    kiln_session_release(session_);
    kiln_weights_release(weights_);
    kiln_model_release(model_);
  }
  const std::string &error() const { return error_; }

  /// Runs `entry` on the named tensors; returns the error message or "".
  std::string run(const std::string &entry, const reference::TensorMap &inputs,
                  const std::vector<std::string> &names) {
    std::vector<kiln_tensor> raw;
    for (const std::string &name : names) {
      const reference::HostTensor &t = inputs.at(name);
      raw.push_back({name.c_str(), t.isInt ? KILN_DTYPE_I32 : KILN_DTYPE_F32,
                     static_cast<int32_t>(t.shape.size()), t.shape.data(),
                     t.isInt ? static_cast<const void *>(t.i32.data()) : t.f32.data()});
    }
    return take(kiln_session_run(session_, entry.c_str(), raw.data(), raw.size()));
  }

  std::vector<float> output(const std::string &name) {
    kiln_tensor out;
    if (!take(kiln_session_get_output(session_, name.c_str(), &out)).empty())
      return {};
    size_t n = 1;
    for (int32_t i = 0; i < out.rank; ++i)
      n *= out.shape[i];
    const float *data = static_cast<const float *>(out.data);
    return std::vector<float>(data, data + n);
  }

private:
  kiln_model *model_ = nullptr;
  kiln_weights *weights_ = nullptr;
  kiln_session *session_ = nullptr;
  std::string error_;
};

reference::TensorMap load(const std::string &path) {
  auto tensors = test::readSafetensors(path);
  if (!tensors) {
    ADD_FAILURE() << llvm::toString(tensors.takeError());
    return {};
  }
  return std::move(*tensors);
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
  CompiledModel model(c.config);
  ASSERT_EQ(model.error(), "");
  reference::TensorMap data = load(dataDir(c.config) + "/" + c.batch + ".safetensors");
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
  reference::TensorMap weights = load(dataDir("tiny") + "/weights.safetensors");
  reference::TensorMap data = load(dataDir("tiny") + "/b3.safetensors");
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
    data_ = load(dataDir("tiny") + "/b3.safetensors");
    ASSERT_FALSE(data_.empty());
    ASSERT_EQ(model_.error(), "");
  }
  std::string encode() { return model_.run("encode", data_, {"src_ids", "src_lengths"}); }

  CompiledModel model_{"tiny"};
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
