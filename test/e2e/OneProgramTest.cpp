//===- OneProgramTest.cpp - The DSL and the runtime in one translation unit -===//
//
// A program that builds a model with the DSL and runs its compiled library with the
// runtime's C++ API includes both headers. The DSL's model is kiln::dsl::Model and the
// runtime's handle is kiln::Model: two classes with inline members, which must never
// share a name (one would silently replace the other's inline functions at link time).
//
//===----------------------------------------------------------------------===//

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/frontend/Kiln.h"
#include "kiln/runtime.hpp"

#include "Harness.h"
#include "models/Models.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <type_traits>

static_assert(!std::is_same_v<kiln::Model, kiln::dsl::Model>,
              "the DSL's model and the runtime's model handle are distinct types");

TEST(OneProgram, BuildsWithTheDslAndRunsWithTheRuntime) {
  kiln::dsl::Model built = kiln::e2e::buildUnaryModel();
  ASSERT_TRUE(built.ok());
  kiln::Model compiled = kiln::Model::open(kiln::e2e::modelLibrary("e2e_unary"));
  EXPECT_EQ(compiled.name(), built.name());

  std::vector<kiln::TensorInfo> inputs = compiled.inputs("forward");
  ASSERT_EQ(inputs.size(), 1u);
  const std::vector<int64_t> shape = {2, 3, 5};
  std::vector<float> x(30);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (float &v : x)
    v = dist(rng);

  kiln::Session session(compiled, kiln::Weights());
  session.run("forward", {kiln::TensorArg::of(inputs[0].name, shape, x.data())});

  kiln::reference::TensorMap referenceInputs;
  referenceInputs[inputs[0].name] = kiln::reference::HostTensor::floats(shape, x);
  auto expected = kiln::reference::run(built.module(), "forward", referenceInputs, {});
  ASSERT_TRUE(static_cast<bool>(expected)) << llvm::toString(expected.takeError());
  ASSERT_EQ(session.outputCount(), expected->size());
  for (const auto &[name, want] : *expected) {
    std::vector<float> got = session.outputData<float>(name);
    ASSERT_EQ(got.size(), want.f32.size()) << name;
    double diff = 0, norm = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      diff += std::pow(double(got[i]) - want.f32[i], 2);
      norm += std::pow(double(want.f32[i]), 2);
    }
    EXPECT_LE(std::sqrt(diff / norm), 1e-6) << name;
  }
}
