//===- MaskOpsTest.cpp - div, constant, masked_fill and boolean masks -----===//

#include "ReferenceTestUtil.h"

#include <limits>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceMaskOps = ReferenceTest;

const float kInf = std::numeric_limits<float>::infinity();

TEST_F(ReferenceMaskOps, DivBroadcastsAConstant) {
  parse(R"mlir(
    func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
      %c = kiln.constant dense<4.0> : tensor<f32>
      %w = kiln.constant dense<[1.0, 2.0, -4.0]> : tensor<3xf32>
      %0 = kiln.div %x, %c : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
      %1 = kiln.div %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      kiln.return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
    })mlir");
  TensorMap out = runOk("f", {{"arg0", HostTensor::floats({2, 3}, {1, 2, 3, 4, 5, 6})}});
  EXPECT_EQ(out["result0"].f32, (std::vector<float>{0.25f, 0.5f, 0.75f, 1, 1.25f, 1.5f}));
  EXPECT_EQ(out["result1"].f32, (std::vector<float>{1, 1, -0.75f, 4, 2.5f, -1.5f}));
}

TEST_F(ReferenceMaskOps, BooleanMasksAndMaskedFill) {
  // Keys past each length are filled with -inf; then the future of each query with -9.
  parse(R"mlir(
    func @f(%s: tensor<2x3x3xf32>, %len: tensor<2xi32>) -> tensor<2x3x3xf32> {
      %pm = kiln.padding_mask %len, %s {axis = 2 : i64} : (tensor<2xi32>, tensor<2x3x3xf32>) -> tensor<2x3xi1>
      %m = kiln.reshape %pm {shape = [2, 1, 3]} : (tensor<2x3xi1>) -> tensor<2x1x3xi1>
      %cm = kiln.causal_mask %s {axis = 1 : i64} : (tensor<2x3x3xf32>) -> tensor<3x3xi1>
      %a = kiln.masked_fill %s, %m {value = 0xFF800000 : f32} : (tensor<2x3x3xf32>, tensor<2x1x3xi1>) -> tensor<2x3x3xf32>
      %b = kiln.masked_fill %a, %cm {value = -9.0 : f32} : (tensor<2x3x3xf32>, tensor<3x3xi1>) -> tensor<2x3x3xf32>
      kiln.return %b : tensor<2x3x3xf32>
    })mlir");
  std::vector<float> s(18);
  for (int i = 0; i < 18; ++i)
    s[i] = float(i);
  TensorMap out = runOk("f", {{"arg0", HostTensor::floats({2, 3, 3}, s)},
                              {"arg1", HostTensor::ints({2}, {2, 0})}});
  std::vector<float> expected = {0,     -9, -9, 3,     4,     -9, 6,     7,     -kInf,
                                 -kInf, -9, -9, -kInf, -kInf, -9, -kInf, -kInf, -kInf};
  EXPECT_EQ(out["result0"].f32, expected);
}

TEST_F(ReferenceMaskOps, AnEntryCannotTakeABooleanInput) {
  parse(R"mlir(
    func @f(%x: tensor<2xf32>, %m: tensor<2xi1>) -> tensor<2xf32> {
      %0 = kiln.masked_fill %x, %m {value = 0.0 : f32} : (tensor<2xf32>, tensor<2xi1>) -> tensor<2xf32>
      kiln.return %0 : tensor<2xf32>
    })mlir");
  std::string error = runError(
      "f", {{"arg0", HostTensor::floats({2})}, {"arg1", HostTensor::ints({2}, {0, 1})}});
  EXPECT_TRUE(contains(error, "input 'arg1' has type tensor<2xi1>: i1 (a boolean mask) "
                              "exists only inside an entry point"));
}

} // namespace
