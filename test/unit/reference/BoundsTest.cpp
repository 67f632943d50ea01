//===- BoundsTest.cpp - kiln.bounds on entry inputs in the interpreter ----===//
//
// An input outside its declared value range is rejected before any op runs, with a
// message naming the input, the element, its value and the bounds.
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

class ReferenceBounds : public ReferenceTest {
protected:
  void SetUp() override {
    // Ids index a 10-row table; lengths lie in [1, S], S bound by the ids; `last` is a
    // position in [0, S-1], bound by an input declared before the one naming S.
    parse(R"mlir(
      func @f(%last: tensor<?xi32> {kiln.name = "last", kiln.dims = ["B"],
                                    kiln.bounds = ["0", "S-1"]},
              %ids: tensor<?x?xi32> {kiln.name = "ids", kiln.dims = ["B", "S"],
                                     kiln.bounds = ["0", "9"]},
              %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"],
                                   kiln.bounds = ["1", "S"]})
          -> (tensor<?x?x4xf32> {kiln.name = "x"}) {
        %t = kiln.parameter "table" : tensor<10x4xf32>
        %0 = kiln.embedding %t, %ids : (tensor<10x4xf32>, tensor<?x?xi32>) -> tensor<?x?x4xf32>
        kiln.return %0 : tensor<?x?x4xf32>
      })mlir");
  }

  TensorMap inputs(std::vector<int32_t> ids, std::vector<int32_t> lengths,
                   std::vector<int32_t> last = {2, 0}) {
    return {{"ids", HostTensor::ints({2, 3}, std::move(ids))},
            {"len", HostTensor::ints({2}, std::move(lengths))},
            {"last", HostTensor::ints({2}, std::move(last))}};
  }
  TensorMap parameters() {
    return {{"table", HostTensor::floats({10, 4}, randomFloats(40, 301))}};
  }
};

TEST_F(ReferenceBounds, ValuesAtBothEndsAreAccepted) {
  TensorMap out = runOk("f", inputs({0, 9, 4, 7, 1, 9}, {1, 3}), parameters());
  EXPECT_EQ(out["x"].shape, (std::vector<int64_t>{2, 3, 4}));
}

TEST_F(ReferenceBounds, IdAboveTheVocabulary) {
  std::string error = runError("f", inputs({0, 9, 4, 7, 10, 9}, {1, 3}), parameters());
  EXPECT_TRUE(contains(error, "entry 'f' input 'ids' element [1, 1] is 10, outside its "
                              "bounds [0, 9]"));
}

TEST_F(ReferenceBounds, NegativeId) {
  EXPECT_TRUE(contains(runError("f", inputs({0, -3, 4, 7, 1, 9}, {1, 3}), parameters()),
                       "input 'ids' element [0, 1] is -3, outside its bounds [0, 9]"));
}

TEST_F(ReferenceBounds, LengthBeyondTheSequenceShowsTheEvaluatedBound) {
  EXPECT_TRUE(
      contains(runError("f", inputs({0, 9, 4, 7, 1, 9}, {4, 3}), parameters()),
               "input 'len' element [0] is 4, outside its bounds [1, S] = [1, 3]"));
}

TEST_F(ReferenceBounds, ZeroLength) {
  EXPECT_TRUE(
      contains(runError("f", inputs({0, 9, 4, 7, 1, 9}, {2, 0}), parameters()),
               "input 'len' element [1] is 0, outside its bounds [1, S] = [1, 3]"));
}

TEST_F(ReferenceBounds, ExpressionNamingALaterInput) {
  EXPECT_TRUE(
      contains(runError("f", inputs({0, 9, 4, 7, 1, 9}, {2, 3}, {2, 3}), parameters()),
               "input 'last' element [1] is 3, outside its bounds [0, S-1] = [0, 2]"));
}

TEST_F(ReferenceBounds, ExpressionsFollowPrecedence) {
  // S = 4: [S/2, 2*S-(S+2)/3] = [2, 6].
  parse(R"mlir(
    func @g(%x: tensor<?xi32> {kiln.name = "x", kiln.dims = ["S"],
                               kiln.bounds = ["S/2", "2*S-(S+2)/3"]}) -> tensor<?xi32> {
      kiln.return %x : tensor<?xi32>
    })mlir");
  EXPECT_EQ(runOk("g", {{"x", HostTensor::ints({4}, {2, 6, 3, 5})}})["result0"].i32,
            (std::vector<int32_t>{2, 6, 3, 5}));
  EXPECT_TRUE(
      contains(runError("g", {{"x", HostTensor::ints({4}, {2, 6, 7, 5})}}),
               "input 'x' element [2] is 7, outside its bounds [S/2, 2*S-(S+2)/3] "
               "= [2, 6]"));
  EXPECT_TRUE(contains(runError("g", {{"x", HostTensor::ints({4}, {2, 1, 3, 5})}}),
                       "element [1] is 1"));
}

} // namespace
