//===- FakeSession.h - A session on the fake model, for tests ---*- C++ -*-===//
//
// The fixture most runtime tests start from: fake_model opened, random weights for it
// written and opened, and one session on both; all released after the test.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_RUNTIME_FAKESESSION_H
#define KILN_TEST_UNIT_RUNTIME_FAKESESSION_H

#include "TestUtil.h"

#include <memory>

namespace kiln::test {

struct FakeSessionFixture : ::testing::Test {
  std::mt19937 rng{42};
  kiln_model *model = nullptr;
  kiln_weights *weights = nullptr;
  kiln_session *session = nullptr;
  std::unique_ptr<FakeWeights> fake;

  void SetUp() override {
    ASSERT_OK(kiln_model_open(FAKE_MODEL, &model));
    fake = std::make_unique<FakeWeights>(rng);
    ASSERT_OK(kiln_weights_open(model, fake->path.c_str(), &weights));
    ASSERT_OK(kiln_session_create(model, weights, nullptr, &session));
  }
  void TearDown() override {
    kiln_session_release(session);
    kiln_weights_release(weights);
    kiln_model_release(model);
  }
};

} // namespace kiln::test

#endif // KILN_TEST_UNIT_RUNTIME_FAKESESSION_H
