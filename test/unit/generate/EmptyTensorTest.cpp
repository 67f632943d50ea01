//===- EmptyTensorTest.cpp - Tensors with a zero inner dimension run ------===//
//
// The translator's real Halide kernels on empty tensors whose zero is not the batch: the
// session once gave them strides that broke the kernels' dense-layout constraint
// ("Constraint violated: ids.stride.1 (1) == (1*ids.extent.0) (0)"). Now every empty
// tensor has the strides the kernels expect and a step with nothing to compute is not
// called, so these runs succeed with empty outputs.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.hpp"

#include <gtest/gtest.h>

namespace {

const std::string kDir = TRANSLATOR_DIR;

struct EmptyTensors : ::testing::Test {
  kiln::Model model = kiln::Model::open(TRANSLATOR_SO);
  kiln::Weights weights = kiln::Weights::open(model, kDir + "/translator.safetensors");
  kiln::Session session{model, weights};
};

} // namespace

TEST_F(EmptyTensors, DecodeOfNoTargetPositions) {
  std::vector<float> memory(2 * 3 * 128, 0.25f);
  std::vector<int32_t> lengths{3, 2};
  session.run("decode", {kiln::TensorArg::of("tgt_ids", {2, 0}, (const int32_t *)nullptr),
                         kiln::TensorArg::of("memory", {2, 3, 128}, memory.data()),
                         kiln::TensorArg::of("src_lengths", {2}, lengths.data())});
  kiln::OutputView logits = session.output("logits");
  EXPECT_EQ(logits.shape, (std::vector<int64_t>{2, 0, 45}));
}

TEST_F(EmptyTensors, DecodeStartOfAnEmptyMemoryCreatesEmptyCaches) {
  std::vector<int32_t> lengths{0, 0};
  session.run("decode_start",
              {kiln::TensorArg::of("memory", {2, 0, 128}, (const float *)nullptr),
               kiln::TensorArg::of("src_lengths", {2}, lengths.data())});
  kiln::OutputView cache =
      session.state("transformer.decoder.layers.0.multihead_attn.memory_k");
  ASSERT_EQ(cache.shape.size(), 4u);
  EXPECT_EQ(cache.shape[0], 2);
  EXPECT_EQ(cache.shape[2], 0);
}
