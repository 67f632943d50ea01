//===- StatesTest.cpp - Session states in the interpreter -----------------===//
//
// kiln.state_alloc / state_write / state_read / kv_append over a StateMap that lives
// across runs, and kiln.value_dim inputs binding the position of a decoding step.
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

class ReferenceStates : public ReferenceTest {
protected:
  void SetUp() override {
    parse(R"mlir(
      func @start(%m: tensor<?x3xf32> {kiln.name = "memory", kiln.dims = ["B", ""]}) {
        kiln.state_alloc "cache" {dims = ["B", "", ""]} : tensor<?x4x2xf32>
        kiln.state_write "memory", %m : tensor<?x3xf32>
        kiln.return
      }
      func @step(%x: tensor<?x1x2xf32> {kiln.name = "x", kiln.dims = ["B", "", ""]},
                 %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P",
                                  kiln.bounds = ["0", "9"]})
          -> (tensor<?x?x2xf32> {kiln.name = "keys"}, tensor<?x3xf32> {kiln.name = "m"}) {
        %c = kiln.kv_append "cache", %x {axis = 1 : i64, capacity = 4 : i64, position = "P"}
            : (tensor<?x1x2xf32>) -> tensor<?x?x2xf32>
        %m = kiln.state_read "memory" {dims = ["B", ""]} : tensor<?x3xf32>
        kiln.return %c, %m : tensor<?x?x2xf32>, tensor<?x3xf32>
      }
      func @alone(%x: tensor<?x1x2xf32> {kiln.name = "x", kiln.dims = ["B", "", ""]},
                  %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"})
          -> (tensor<?x?x2xf32> {kiln.name = "keys"}) {
        kiln.state_alloc "cache" {dims = ["B", "", ""]} : tensor<?x4x2xf32>
        %c = kiln.kv_append "cache", %x {axis = 1 : i64, capacity = 4 : i64, position = "P"}
            : (tensor<?x1x2xf32>) -> tensor<?x?x2xf32>
        kiln.return %c : tensor<?x?x2xf32>
      }
      func @prefill(%x: tensor<?x?x2xf32> {kiln.name = "x", kiln.dims = ["B", "N", ""]})
          -> (tensor<?x?x2xf32> {kiln.name = "keys"}) {
        kiln.state_alloc "cache" {dims = ["B", "", ""]} : tensor<?x4x2xf32>
        %c = kiln.kv_append "cache", %x {axis = 1 : i64, capacity = 4 : i64, position = "0"}
            : (tensor<?x?x2xf32>) -> tensor<?x?x2xf32>
        kiln.return %c : tensor<?x?x2xf32>
      }
      func @pair(%x: tensor<?x2x2xf32> {kiln.name = "x", kiln.dims = ["B", "", ""]},
                 %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"})
          -> (tensor<?x?x2xf32> {kiln.name = "keys"}) {
        %c = kiln.kv_append "cache", %x {axis = 1 : i64, capacity = 4 : i64, position = "P"}
            : (tensor<?x2x2xf32>) -> tensor<?x?x2xf32>
        kiln.return %c : tensor<?x?x2xf32>
      }
      func @slice(%x: tensor<?x1x2xf32> {kiln.name = "x", kiln.dims = ["B", "", ""]},
                  %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"})
          -> (tensor<?x3x2xf32> {kiln.name = "keys"}) {
        %c = kiln.kv_append "cache", %x {axis = 1 : i64, capacity = 4 : i64, position = "P"}
            : (tensor<?x1x2xf32>) -> tensor<?x?x2xf32>
        %s = kiln.slice %c {axis = 1 : i64, start = 0 : i64, end = 3 : i64}
            : (tensor<?x?x2xf32>) -> tensor<?x3x2xf32>
        kiln.return %s : tensor<?x3x2xf32>
      })mlir");
  }

  llvm::Expected<TensorMap> runWith(llvm::StringRef entry, const TensorMap &inputs) {
    return run(*module, entry, inputs, {}, &states);
  }

  static TensorMap stepInputs(std::vector<float> x, int32_t step) {
    int64_t batch = static_cast<int64_t>(x.size()) / 2;
    return {{"x", HostTensor::floats({batch, 1, 2}, std::move(x))},
            {"step", HostTensor::ints({}, {step})}};
  }

  TensorMap startInputs(int64_t batch) {
    return {{"memory", HostTensor::floats({batch, 3}, randomFloats(batch * 3, 7))}};
  }

  StateMap states;
};

TEST_F(ReferenceStates, StepsAppendToTheCacheAcrossRuns) {
  llvm::Expected<TensorMap> started = runWith("start", startInputs(2));
  ASSERT_TRUE(bool(started)) << llvm::toString(started.takeError());
  EXPECT_TRUE(started->empty());
  ASSERT_EQ(states.count("cache"), 1u);
  EXPECT_EQ(states["cache"].shape, (std::vector<int64_t>{2, 4, 2}));
  EXPECT_EQ(states["cache"].f32, std::vector<float>(16, 0.0f));
  EXPECT_EQ(states["memory"].f32, startInputs(2)["memory"].f32);

  llvm::Expected<TensorMap> first = runWith("step", stepInputs({1, 2, 3, 4}, 0));
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  EXPECT_EQ((*first)["keys"].shape, (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ((*first)["keys"].f32, (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ((*first)["m"].f32, states["memory"].f32);

  llvm::Expected<TensorMap> second = runWith("step", stepInputs({5, 6, 7, 8}, 1));
  ASSERT_TRUE(bool(second)) << llvm::toString(second.takeError());
  EXPECT_EQ((*second)["keys"].shape, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ((*second)["keys"].f32, (std::vector<float>{1, 2, 5, 6, 3, 4, 7, 8}));
  EXPECT_EQ(states["cache"].f32,
            (std::vector<float>{1, 2, 5, 6, 0, 0, 0, 0, 3, 4, 7, 8, 0, 0, 0, 0}));
}

TEST_F(ReferenceStates, AnEntryCanCreateAndAppendInOneRun) {
  TensorMap out = runOk("alone", stepInputs({1, 2}, 3));
  EXPECT_EQ(out["keys"].f32, (std::vector<float>{0, 0, 0, 0, 0, 0, 1, 2}));
}

TEST_F(ReferenceStates, PrefillWritesABlockFromZeroAndABlockAppendsAtP) {
  // Rows b of x [2, 2, 2] hold 1..4 and 5..8: positions 0 and 1 of each batch row.
  llvm::Expected<TensorMap> prefilled = runWith(
      "prefill", {{"x", HostTensor::floats({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_TRUE(bool(prefilled)) << llvm::toString(prefilled.takeError());
  EXPECT_EQ((*prefilled)["keys"].shape, (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ((*prefilled)["keys"].f32, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  llvm::Expected<TensorMap> appended = runWith(
      "pair", {{"x", HostTensor::floats({2, 2, 2}, {9, 10, 11, 12, 13, 14, 15, 16})},
               {"step", HostTensor::ints({}, {2})}});
  ASSERT_TRUE(bool(appended)) << llvm::toString(appended.takeError());
  EXPECT_EQ((*appended)["keys"].shape, (std::vector<int64_t>{2, 4, 2}));
  EXPECT_EQ((*appended)["keys"].f32,
            (std::vector<float>{1, 2, 3, 4, 9, 10, 11, 12, 5, 6, 7, 8, 13, 14, 15, 16}));
  StateMap before = states;
  llvm::Expected<TensorMap> past =
      runWith("pair", {{"x", HostTensor::floats({2, 2, 2}, randomFloats(8, 3))},
                       {"step", HostTensor::ints({}, {3})}});
  ASSERT_FALSE(bool(past));
  std::string error = llvm::toString(past.takeError());
  EXPECT_NE(error.find("state 'cache': writing 2 positions from position 3 (P = 3, N = "
                       "2) does not fit the capacity 4"),
            std::string::npos)
      << error;
  EXPECT_EQ(states["cache"].f32, before["cache"].f32);
}

TEST_F(ReferenceStates, MissingStateIsAnError) {
  llvm::Expected<TensorMap> result = runWith("step", stepInputs({1, 2}, 0));
  ASSERT_FALSE(bool(result));
  EXPECT_NE(llvm::toString(result.takeError())
                .find("state 'cache' is not set: no earlier run created it"),
            std::string::npos);
}

TEST_F(ReferenceStates, PositionPastTheCapacityIsAnErrorThatChangesNoState) {
  ASSERT_TRUE(bool(runWith("start", startInputs(1))));
  StateMap before = states;
  llvm::Expected<TensorMap> result = runWith("alone", stepInputs({1, 2}, 4));
  ASSERT_FALSE(bool(result));
  std::string error = llvm::toString(result.takeError());
  EXPECT_NE(
      error.find("state 'cache': writing 1 position from position 4 (P = 4, N = 1) does "
                 "not fit the capacity 4"),
      std::string::npos)
      << error;
  // The runtime checks every state before it changes one: even the cache that "alone"
  // re-creates before its append is as it was.
  EXPECT_EQ(states["cache"].f32, before["cache"].f32);
  EXPECT_EQ(states.count("memory"), 1u);
}

TEST_F(ReferenceStates, FailureAfterAnAppendForgetsTheCache) {
  ASSERT_TRUE(bool(runWith("start", startInputs(1))));
  // [1, P + 1, 2] with P = 0 is too short for the slice, which fails after the append.
  llvm::Expected<TensorMap> result = runWith("slice", stepInputs({1, 2}, 0));
  ASSERT_FALSE(bool(result));
  llvm::consumeError(result.takeError());
  EXPECT_EQ(states.count("cache"), 0u);
  EXPECT_EQ(states.count("memory"), 1u);
}

TEST_F(ReferenceStates, BatchOfTheCacheMustMatch) {
  ASSERT_TRUE(bool(runWith("start", startInputs(2))));
  llvm::Expected<TensorMap> result = runWith("step", stepInputs({1, 2, 3, 4, 5, 6}, 0));
  ASSERT_FALSE(bool(result));
  std::string error = llvm::toString(result.takeError());
  EXPECT_NE(
      error.find("the cache has shape [2, 4, 2] but a value [3, 1, 2] with capacity 4 "
                 "along axis 1 needs [3, 4, 2]"),
      std::string::npos)
      << error;
}

TEST_F(ReferenceStates, StateReadBindsItsDims) {
  // The memory has batch 2; the appended x batch 2 too, but then B disagrees with a
  // memory of batch 1.
  ASSERT_TRUE(bool(runWith("start", startInputs(2))));
  states["memory"] = HostTensor::floats({1, 3});
  llvm::Expected<TensorMap> result = runWith("step", stepInputs({1, 2, 3, 4}, 0));
  ASSERT_FALSE(bool(result));
  std::string error = llvm::toString(result.takeError());
  EXPECT_NE(error.find("dimension 'B' is 2 in input 'x' but 1 in state 'memory'"),
            std::string::npos)
      << error;
}

TEST_F(ReferenceStates, ValueDimIsCheckedByItsBoundsBeforeItBinds) {
  ASSERT_TRUE(bool(runWith("start", startInputs(1))));
  for (int32_t step : {-1, 10}) {
    llvm::Expected<TensorMap> result = runWith("step", stepInputs({1, 2}, step));
    ASSERT_FALSE(bool(result));
    std::string error = llvm::toString(result.takeError());
    EXPECT_NE(error.find("input 'step' element [] is " + std::to_string(step) +
                         ", outside its bounds [0, 9]"),
              std::string::npos)
        << error;
  }
  // Rejected inputs run nothing: the states stay.
  EXPECT_EQ(states.count("cache"), 1u);
  // Without bounds, a negative size is still an error.
  std::string error = runError("alone", stepInputs({1, 2}, -1));
  EXPECT_NE(error.find("input 'step' is -1, but its value is the size of dimension 'P', "
                       "which cannot be negative"),
            std::string::npos)
      << error;
}

} // namespace
