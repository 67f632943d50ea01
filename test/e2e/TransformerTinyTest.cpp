//===- TransformerTinyTest.cpp - A whole Transformer against the reference ===//
//
// The conformance tests' tiny Transformer (2 + 2 layers, 4 heads) as its build compiled
// it, with random weights, against the reference interpreter on fresh random inputs:
// encode, the whole-prefix decode, and decode_start followed by decode_step at
// successive positions, each side with its own key/value caches. Its kernels read q, k
// and v from one packed projection through strided views and attention writes merged
// heads in place (Plan.cpp), so this is where a wrong stride or offset shows.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <gtest/gtest.h>

kiln::dsl::Model buildTransformerTiny();

using namespace kiln::e2e;

namespace {
/// One token; lengths that fill no whole tile; a batch of four.
const Dims kSources[] = {
    {{"B", 1}, {"S", 1}}, {{"B", 2}, {"S", 13}}, {{"B", 4}, {"S", 40}}};
} // namespace

TEST(TransformerTinyTest, EncodeAndDecodeMatchTheReference) {
  Harness h(KILN_TINY_LIBRARY, buildTransformerTiny);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims : kSources) {
    EXPECT_EQ(h.check(dims, "encode"), 1u);
    Dims decode = dims;
    decode["T"] = 5;
    EXPECT_EQ(h.check(decode, "decode"), 1u);
  }
}

// A batch shorter than its padding runs over its longest sequence only (the manifest's
// "trim"): values before it as the reference computes over all S positions, zeros past
// it. Longest 4 of S = 11 in encode and in decode's memory; 11 itself runs whole.
TEST(TransformerTinyTest, ABatchRunsOverItsLongestSequence) {
  Harness h(KILN_TINY_LIBRARY, buildTransformerTiny);
  ASSERT_TRUE(h.ok());
  for (int32_t longest : {4, 11}) {
    SCOPED_TRACE("longest " + std::to_string(longest));
    auto lengths = [&](const std::string &name, kiln::reference::HostTensor &t) {
      if (name == "src_lengths")
        t.i32 = {3, longest, 1};
    };
    Dims dims{{"B", 3}, {"S", 11}};
    EXPECT_EQ(h.check(dims, "encode", lengths), 1u);
    kiln_tensor memory;
    ASSERT_EQ(kiln_session_get_output(h.session(), "memory", &memory), nullptr);
    ASSERT_EQ(memory.rank, 3);
    ASSERT_EQ(memory.shape[1], 11);
    const float *data = static_cast<const float *>(memory.data);
    int64_t width = memory.shape[2];
    // Each position is computed (a LayerNorm's output: not all zeros) or cut (all zeros).
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t s = 0; s < 11; ++s) {
        bool zeros = true;
        for (int64_t d = 0; d < width; ++d)
          zeros = zeros && data[(b * 11 + s) * width + d] == 0.0f;
        EXPECT_EQ(zeros, s >= longest) << "row " << b << ", position " << s;
      }
    // The padded output is the caller's to keep, at the caller's length.
    kiln_buffer *kept = nullptr;
    ASSERT_EQ(kiln_session_detach_output(h.session(), "memory", &kept), nullptr);
    kiln_tensor detached = kiln_buffer_tensor(kept);
    EXPECT_EQ(std::vector<int64_t>(detached.shape, detached.shape + detached.rank),
              (std::vector<int64_t>{3, 11, width}));
    EXPECT_EQ(static_cast<const float *>(detached.data)[(2 * 11 + 10) * width],
              longest < 11 ? 0.0f : data[(2 * 11 + 10) * width]);
    kiln_buffer_release(kept);
    Dims decode = dims;
    decode["T"] = 5;
    EXPECT_EQ(h.check(decode, "decode", lengths), 1u);
  }
}

TEST(TransformerTinyTest, DecodeStepsMatchTheReference) {
  Harness h(KILN_TINY_LIBRARY, buildTransformerTiny);
  ASSERT_TRUE(h.ok());
  for (int64_t batch : {1, 3}) {
    Dims dims{{"B", batch}, {"S", 9}};
    h.check(dims, "decode_start");
    for (int32_t position = 0; position < 6; ++position) {
      SCOPED_TRACE("B = " + std::to_string(batch) + ", P = " + std::to_string(position));
      auto atPosition = [&](const std::string &name, kiln::reference::HostTensor &t) {
        if (name == "step")
          t.i32 = {position};
      };
      EXPECT_EQ(h.check(dims, "decode_step", atPosition), 1u);
    }
  }
}
