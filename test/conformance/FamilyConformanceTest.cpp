//===- FamilyConformanceTest.cpp - GPT-2, LLaMA and BERT against PyTorch ---===//
//
// make_family_reference.py writes Hugging Face-style GPT-2, LLaMA and BERT models with
// random weights (state_dicts under HF's names), inputs and outputs. The Kiln-compiled
// gpt_tiny, llama_tiny and bert_tiny load those weights unconverted and must compute
// the same function: max|a-b| / max|b| <= 1e-4 at several batch sizes and lengths,
// padded batches of BERT included. For the decoder-only models, prefill of a prompt and
// then one step per position must give, at every position, what the whole-sequence
// forward gives (and so what PyTorch gives).
//
//===----------------------------------------------------------------------===//

#include "CompiledModel.h"

#include <gtest/gtest.h>

using namespace kiln;
using kiln::test::CompiledModel;
using kiln::test::loadOrFail;
using kiln::test::relativeError;

namespace {

constexpr double kTolerance = 1e-4;

std::string dataDir(const std::string &model) {
  return std::string(KILN_FAMILY_DATA_DIR) + "/" + model;
}

std::string libraryOf(const std::string &model) {
  if (model == "gpt2")
    return KILN_GPT_TINY_LIBRARY;
  if (model == "llama")
    return KILN_LLAMA_TINY_LIBRARY;
  return KILN_BERT_TINY_LIBRARY;
}

struct Case {
  std::string model;
  std::string batch;
};

void PrintTo(const Case &c, std::ostream *os) { *os << c.model << " " << c.batch; }

std::string caseName(const testing::TestParamInfo<Case> &info) {
  return info.param.model + "_" + info.param.batch;
}

/// Columns [begin, end) of ids [B, T].
reference::HostTensor columns(const reference::HostTensor &ids, int64_t begin,
                              int64_t end) {
  int64_t rows = ids.shape[0], width = ids.shape[1];
  reference::HostTensor out = reference::HostTensor::ints({rows, end - begin});
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t t = begin; t < end; ++t)
      out.i32[b * (end - begin) + t - begin] = ids.i32[b * width + t];
  return out;
}

/// Position t of logits [B, T, V]: [B, V].
std::vector<float> atPosition(const std::vector<float> &logits, int64_t rows,
                              int64_t length, int64_t vocab, int64_t t) {
  std::vector<float> out;
  for (int64_t b = 0; b < rows; ++b) {
    auto row = logits.begin() + (b * length + t) * vocab;
    out.insert(out.end(), row, row + vocab);
  }
  return out;
}

class CompiledCase : public testing::TestWithParam<Case> {
protected:
  void SetUp() override {
    ASSERT_EQ(model_.error(), "");
    data_ =
        loadOrFail(dataDir(GetParam().model) + "/" + GetParam().batch + ".safetensors");
    ASSERT_FALSE(data_.empty());
  }

  CompiledModel model_{libraryOf(GetParam().model),
                       dataDir(GetParam().model) + "/weights.safetensors"};
  reference::TensorMap data_;
};

using DecoderOnly = CompiledCase;

TEST_P(DecoderOnly, ForwardMatchesPyTorch) {
  ASSERT_EQ(model_.run("forward", data_, {"ids"}), "");
  double error = relativeError(model_.output("logits"), data_["logits"].f32);
  EXPECT_LE(error, kTolerance);
  std::printf("[ %s %s ] forward vs PyTorch: %.3g\n", GetParam().model.c_str(),
              GetParam().batch.c_str(), error);
}

TEST_P(DecoderOnly, PrefillThenStepsMatchForwardAtEveryPosition) {
  const reference::HostTensor &ids = data_["ids"];
  int64_t rows = ids.shape[0], length = ids.shape[1];
  int64_t vocab = data_["logits"].shape[2];
  ASSERT_EQ(model_.run("forward", data_, {"ids"}), "");
  std::vector<float> whole = model_.output("logits");
  // A one-token prompt and a longer one: each position after the prompt is a step.
  for (int64_t prompt : {int64_t(1), (length + 1) / 2}) {
    reference::TensorMap inputs{{"ids", columns(ids, 0, prompt)}};
    ASSERT_EQ(model_.run("prefill", inputs, {"ids"}), "");
    auto expect = [&](int64_t t, const char *what) {
      std::vector<float> got = model_.output("logits");
      EXPECT_LE(relativeError(got, atPosition(whole, rows, length, vocab, t)), kTolerance)
          << what << " at position " << t << " after a prompt of " << prompt;
      EXPECT_LE(
          relativeError(got, atPosition(data_["logits"].f32, rows, length, vocab, t)),
          kTolerance)
          << what << " vs PyTorch at position " << t;
    };
    expect(prompt - 1, "prefill");
    for (int64_t t = prompt; t < length; ++t) {
      inputs = {{"ids", columns(ids, t, t + 1)},
                {"position", reference::HostTensor::ints({}, {static_cast<int32_t>(t)})}};
      ASSERT_EQ(model_.run("step", inputs, {"ids", "position"}), "");
      expect(t, "step");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PyTorch, DecoderOnly,
                         testing::Values(Case{"gpt2", "b1"}, Case{"gpt2", "b3"},
                                         Case{"gpt2", "b2"}, Case{"llama", "b1"},
                                         Case{"llama", "b3"}, Case{"llama", "b2"}),
                         caseName);

using Bert = CompiledCase;

TEST_P(Bert, ClassifyMatchesPyTorch) {
  ASSERT_EQ(model_.run("classify", data_, {"ids", "token_type_ids", "lengths"}), "");
  double error = relativeError(model_.output("logits"), data_["logits"].f32);
  EXPECT_LE(error, kTolerance);
  std::printf("[ bert %s ] classify vs PyTorch: %.3g\n", GetParam().batch.c_str(), error);
}

TEST_P(Bert, PaddingDoesNotChangeTheLogits) {
  // Padding tokens past a sequence's length are masked: other ids there give the same
  // logits.
  reference::HostTensor &ids = data_["ids"];
  int64_t rows = ids.shape[0], length = ids.shape[1];
  if (llvm::all_of(data_["lengths"].i32, [&](int32_t l) { return l == length; }))
    GTEST_SKIP() << "no padding in this batch";
  ASSERT_EQ(model_.run("classify", data_, {"ids", "token_type_ids", "lengths"}), "");
  std::vector<float> before = model_.output("logits");
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t t = data_["lengths"].i32[b]; t < length; ++t)
      ids.i32[b * length + t] = (ids.i32[b * length + t] + 17) % 256;
  ASSERT_EQ(model_.run("classify", data_, {"ids", "token_type_ids", "lengths"}), "");
  EXPECT_LE(relativeError(model_.output("logits"), before), 1e-6);
}

// b3 and b2 are padded batches (lengths 12, 5, 9 and 1, 16).
INSTANTIATE_TEST_SUITE_P(PyTorch, Bert,
                         testing::Values(Case{"bert", "b1"}, Case{"bert", "b3"},
                                         Case{"bert", "b2"}),
                         caseName);

} // namespace
