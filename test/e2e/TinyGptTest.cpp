//===- TinyGptTest.cpp - A decoder-only model: prefill + steps == forward -===//
//
// The tiny GPT of models/TinyGpt.cpp as its build compiled it, with random weights:
// each entry against the reference interpreter on fresh random ids, and the decoder-only
// contract itself: a prefill of the first N tokens followed by steps gives, at every
// position, the logits of the whole-sequence forward (several batches and prompt
// lengths, prompts up to the caches' capacity).
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "models/Models.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kiln;
using namespace kiln::e2e;

namespace {

constexpr int64_t kVocab = 23;

/// Runs `entry` of `h`'s session on ids [B, T] (and the step's position); returns the
/// logits.
std::vector<float> runIds(Harness &h, const char *entry, std::vector<int32_t> ids,
                          int64_t batch, int32_t position = -1) {
  int64_t shape[2] = {batch, int64_t(ids.size()) / batch};
  std::vector<kiln_tensor> inputs = {{"ids", KILN_DTYPE_I32, 2, shape, ids.data()}};
  if (position >= 0)
    inputs.push_back({"position", KILN_DTYPE_I32, 0, nullptr, &position});
  if (!expectOk(kiln_session_run(h.session(), entry, inputs.data(), inputs.size()),
                entry))
    return {};
  kiln_tensor logits;
  if (!expectOk(kiln_session_get_output(h.session(), "logits", &logits), "logits"))
    return {};
  int64_t count = 1;
  for (int32_t d = 0; d < logits.rank; ++d)
    count *= logits.shape[d];
  const auto *data = static_cast<const float *>(logits.data);
  return std::vector<float>(data, data + count);
}

/// max|a - b| / max|b| over row `row` of a [B, V] tensor against position t of a
/// [B, T, V] one.
double relativeError(const std::vector<float> &rows, const std::vector<float> &whole,
                     int64_t batch, int64_t length, int64_t t) {
  double diff = 0, scale = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t v = 0; v < kVocab; ++v) {
      double want = whole[size_t((b * length + t) * kVocab + v)];
      diff = std::max(diff, std::fabs(rows[size_t(b * kVocab + v)] - want));
      scale = std::max(scale, std::fabs(want));
    }
  return diff / scale;
}

} // namespace

TEST(TinyGptTest, EntriesMatchTheReference) {
  Harness h(modelLibrary("e2e_tiny_gpt"), buildTinyGptModel);
  ASSERT_TRUE(h.ok());
  for (int64_t batch : {1, 3}) {
    EXPECT_EQ(h.check({{"B", batch}, {"T", 7}}, "forward"), 1u);
    EXPECT_EQ(h.check({{"B", batch}, {"N", 5}}, "prefill"), 1u);
    for (int32_t position = 5; position < 8; ++position) {
      SCOPED_TRACE("B = " + std::to_string(batch) + ", P = " + std::to_string(position));
      EXPECT_EQ(h.check({{"B", batch}}, "step",
                        [&](const std::string &name, reference::HostTensor &t) {
                          if (name == "position")
                            t.i32 = {position};
                        }),
                1u);
    }
  }
}

TEST(TinyGptTest, PrefillAndStepsEqualForwardAtEveryPosition) {
  Harness h(modelLibrary("e2e_tiny_gpt"), buildTinyGptModel, /*seed=*/11);
  ASSERT_TRUE(h.ok());
  std::mt19937 random(5);
  std::uniform_int_distribution<int32_t> token(0, kVocab - 1);
  const int64_t length = kTinyGptPositions;
  for (int64_t batch : {1, 2, 4}) {
    for (int64_t prompt : {int64_t(1), int64_t(6), length}) {
      SCOPED_TRACE("B = " + std::to_string(batch) + ", N = " + std::to_string(prompt));
      std::vector<int32_t> ids(size_t(batch * length));
      for (int32_t &id : ids)
        id = token(random);
      std::vector<float> whole = runIds(h, "forward", ids, batch);
      ASSERT_EQ(whole.size(), size_t(batch * length * kVocab));
      std::vector<int32_t> head;
      for (int64_t b = 0; b < batch; ++b)
        head.insert(head.end(), ids.begin() + b * length,
                    ids.begin() + b * length + prompt);
      std::vector<float> next = runIds(h, "prefill", head, batch);
      ASSERT_EQ(next.size(), size_t(batch * kVocab));
      EXPECT_LE(relativeError(next, whole, batch, length, prompt - 1), kTolerance)
          << "prefill";
      for (int64_t t = prompt; t < length; ++t) {
        std::vector<int32_t> column;
        for (int64_t b = 0; b < batch; ++b)
          column.push_back(ids[size_t(b * length + t)]);
        next = runIds(h, "step", column, batch, int32_t(t));
        ASSERT_EQ(next.size(), size_t(batch * kVocab));
        EXPECT_LE(relativeError(next, whole, batch, length, t), kTolerance)
            << "step at position " << t;
      }
    }
  }
}

TEST(TinyGptTest, APromptPastThePositionsIsAClearError) {
  Harness h(modelLibrary("e2e_tiny_gpt"), buildTinyGptModel);
  ASSERT_TRUE(h.ok());
  std::vector<int32_t> ids(size_t(kTinyGptPositions + 1), 1);
  int64_t shape[2] = {1, kTinyGptPositions + 1};
  kiln_tensor input = {"ids", KILN_DTYPE_I32, 2, shape, ids.data()};
  kiln_status *status = kiln_session_run(h.session(), "prefill", &input, 1);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_get_message(status))
                .find("entry 'prefill': input 'ids' dim 1 (N) is 17, above its bound 16"),
            std::string::npos)
      << kiln_status_get_message(status);
  kiln_status_free(status);
}
