// CppApiTest.cpp - the header-only C++ wrapper: RAII, exceptions with codes, typed
// outputs.
#include "TestUtil.h"

#include "kiln/runtime.hpp"

using namespace kiln::test;

TEST(CppApi, RunsForwardAndReturnsTypedOutputs) {
  std::mt19937 rng(7);
  FakeWeights fake(rng);
  kiln::Model model = kiln::Model::open(FAKE_MODEL);
  kiln::Weights weights = kiln::Weights::open(model, fake.path);
  kiln::Session session(model, weights);

  EXPECT_EQ(model.name(), "fake");
  EXPECT_EQ(model.entries(),
            (std::vector<std::string>{"forward", "widen", "broken", "encode"}));
  std::vector<kiln::TensorInfo> inputs = model.inputs("forward");
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[1].name, "y");
  EXPECT_EQ(inputs[1].dims, (std::vector<std::string>{"B", "S", "4"}));
  EXPECT_EQ(model.parameters()[0].shape, (std::vector<int64_t>{4}));

  std::vector<float> x = randomFloats(2 * 3 * 4, rng), y = randomFloats(2 * 3 * 4, rng);
  session.run("forward", {kiln::TensorArg::of("x", {2, 3, 4}, x.data()),
                          kiln::TensorArg::of("y", {2, 3, 4}, y.data())});
  std::vector<float> z = session.outputData<float>("z");
  std::vector<float> want = referenceForward(x, y, fake);
  ASSERT_EQ(z.size(), want.size());
  for (size_t i = 0; i < z.size(); ++i)
    EXPECT_FLOAT_EQ(z[i], want[i]);
  EXPECT_EQ(session.output("z").shape, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(session.stats().runs, 1u);
  EXPECT_THROW(session.output("z").as<int32_t>(), kiln::Error);

  // Copies share the handle; the original going away leaves the copy usable.
  kiln::Model copy = model;
  model = kiln::Model();
  EXPECT_EQ(copy.name(), "fake");
}

TEST(CppApi, ErrorsAreExceptionsWithCodes) {
  try {
    kiln::Model::open("/no/such/model.so");
    FAIL() << "expected kiln::Error";
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("/no/such/model.so"), std::string::npos);
  }
  kiln::Model model = kiln::Model::open(FAKE_MODEL);
  try {
    kiln::Session session(model, kiln::Weights());
    FAIL() << "expected kiln::Error";
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_INVALID_ARGUMENT);
  }
  try {
    model.inputs("nope");
    FAIL() << "expected kiln::Error";
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("available entries: forward"),
              std::string::npos);
  }
}
