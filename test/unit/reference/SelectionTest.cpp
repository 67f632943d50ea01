//===- SelectionTest.cpp - where, cast and integer arithmetic in the interpreter ===//

#include "ReferenceTestUtil.h"

#include <cmath>
#include <limits>

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

using ReferenceSelection = ReferenceTest;

TEST_F(ReferenceSelection, WhereBroadcastsAllThreeOperands) {
  // condition [3, 4] (true where j >= lengths[i]), on_true [2, 1, 4], on_false [4]
  // -> [2, 3, 4].
  parse(R"mlir(
    func @f(%len: tensor<3xi32>, %like: tensor<3x4xi32>, %a: tensor<2x1x4xf32>,
            %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
      %cond = kiln.padding_mask %len, %like {axis = 1 : i64}
          : (tensor<3xi32>, tensor<3x4xi32>) -> tensor<3x4xi1>
      %0 = kiln.where %cond, %a, %b
          : (tensor<3x4xi1>, tensor<2x1x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
      kiln.return %0 : tensor<2x3x4xf32>
    })mlir");
  std::vector<int32_t> len = randomInts(3, 11, 0, 4);
  std::vector<float> a = randomFloats(8, 1), b = randomFloats(4, 2);
  TensorMap out = runOk("f", {{"arg0", HostTensor::ints({3}, len)},
                              {"arg1", HostTensor::ints({3, 4})},
                              {"arg2", HostTensor::floats({2, 1, 4}, a)},
                              {"arg3", HostTensor::floats({4}, b)}});
  const HostTensor &r = out["result0"];
  ASSERT_EQ(r.shape, (std::vector<int64_t>{2, 3, 4}));
  ASSERT_EQ(r.f32.size(), 24u);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(r.f32[(i * 3 + j) * 4 + k], k >= len[j] ? a[i * 4 + k] : b[k]);
}

TEST_F(ReferenceSelection, WherePicksByConditionOnIntegers) {
  // The causal mask of 4 positions: element (i, j) is true where j > i.
  parse(R"mlir(
    func @f(%like: tensor<4xi32>, %a: tensor<4x4xi64>, %b: tensor<4xi64>)
        -> tensor<4x4xi64> {
      %cond = kiln.causal_mask %like {axis = 0 : i64} : (tensor<4xi32>) -> tensor<4x4xi1>
      %0 = kiln.where %cond, %a, %b
          : (tensor<4x4xi1>, tensor<4x4xi64>, tensor<4xi64>) -> tensor<4x4xi64>
      kiln.return %0 : tensor<4x4xi64>
    })mlir");
  std::vector<int64_t> a = randomValues<int64_t>(16, 3, -(int64_t(1) << 40), 1 << 20);
  std::vector<int64_t> b = randomValues<int64_t>(4, 4, 0, int64_t(1) << 50);
  TensorMap out = runOk("f", {{"arg0", HostTensor::ints({4})},
                              {"arg1", HostTensor::longs({4, 4}, a)},
                              {"arg2", HostTensor::longs({4}, b)}});
  const HostTensor &r = out["result0"];
  ASSERT_TRUE(r.isI64);
  ASSERT_EQ(r.i64.size(), 16u);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(r.i64[i * 4 + j], j > i ? a[i * 4 + j] : b[j]) << i << "," << j;
}

TEST_F(ReferenceSelection, CastFloatToIntegersTruncatesTowardZero) {
  parse(R"mlir(
    func @f(%x: tensor<8xf32>) -> (tensor<8xi32>, tensor<8xi64>) {
      %0 = kiln.cast %x : (tensor<8xf32>) -> tensor<8xi32>
      %1 = kiln.cast %x : (tensor<8xf32>) -> tensor<8xi64>
      kiln.return %0, %1 : tensor<8xi32>, tensor<8xi64>
    })mlir");
  std::vector<float> x = randomFloats(8, 5, -1000.0f, 1000.0f);
  x[0] = 2.7f;
  x[1] = -2.7f;
  x[2] = 6e9f; // past i32, within i64
  TensorMap out = runOk("f", {{"arg0", HostTensor::floats({8}, x)}});
  for (int i = 0; i < 8; ++i) {
    double t = std::trunc(double(x[i]));
    if (i != 2)
      EXPECT_EQ(out["result0"].i32[i], static_cast<int32_t>(t)) << x[i];
    EXPECT_EQ(out["result1"].i64[i], static_cast<int64_t>(t)) << x[i];
  }
  EXPECT_EQ(out["result0"].i32[0], 2);
  EXPECT_EQ(out["result0"].i32[1], -2);
  // Outside i32: the type's minimum, as x86 (and PyTorch there) gives.
  EXPECT_EQ(out["result0"].i32[2], std::numeric_limits<int32_t>::min());
}

TEST_F(ReferenceSelection, CastBetweenIntegersAndToFloat) {
  parse(R"mlir(
    func @f(%x: tensor<6xi64>) -> (tensor<6xi32>, tensor<6xf32>, tensor<6xi64>) {
      %0 = kiln.cast %x : (tensor<6xi64>) -> tensor<6xi32>
      %1 = kiln.cast %x : (tensor<6xi64>) -> tensor<6xf32>
      %2 = kiln.cast %0 : (tensor<6xi32>) -> tensor<6xi64>
      kiln.return %0, %1, %2 : tensor<6xi32>, tensor<6xf32>, tensor<6xi64>
    })mlir");
  std::vector<int64_t> x = randomValues<int64_t>(6, 6, -(int64_t(1) << 45), 1 << 30);
  x[0] = (int64_t(1) << 32) + 5; // i32 keeps the low 32 bits: 5
  TensorMap out = runOk("f", {{"arg0", HostTensor::longs({6}, x)}});
  EXPECT_EQ(out["result0"].i32[0], 5);
  for (int i = 0; i < 6; ++i) {
    auto low = static_cast<int32_t>(static_cast<uint32_t>(x[i]));
    EXPECT_EQ(out["result0"].i32[i], low);
    EXPECT_EQ(out["result1"].f32[i], static_cast<float>(x[i]));
    EXPECT_EQ(out["result2"].i64[i], low);
  }
}

TEST_F(ReferenceSelection, IntegerAddSubMulBroadcastAndWrap) {
  parse(R"mlir(
    func @f(%x: tensor<2x3xi32>, %p: tensor<i32>)
        -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>) {
      %0 = kiln.add %x, %p : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
      %1 = kiln.sub %x, %p : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x3xi32>
      %2 = kiln.mul %x, %x : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
      kiln.return %0, %1, %2 : tensor<2x3xi32>, tensor<2x3xi32>, tensor<2x3xi32>
    })mlir");
  std::vector<int32_t> x = randomInts(6, 7, -100000, 100000);
  x[0] = std::numeric_limits<int32_t>::max();
  int32_t p = randomInts(1, 8, 1, 1000)[0];
  TensorMap out = runOk(
      "f", {{"arg0", HostTensor::ints({2, 3}, x)}, {"arg1", HostTensor::ints({}, {p})}});
  auto wrap = [](int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); };
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(out["result0"].i32[i], wrap(int64_t(x[i]) + p));
    EXPECT_EQ(out["result1"].i32[i], wrap(int64_t(x[i]) - p));
    EXPECT_EQ(out["result2"].i32[i], wrap(int64_t(x[i]) * x[i]));
  }
  EXPECT_EQ(out["result0"].i32[0], std::numeric_limits<int32_t>::min() + p - 1);
}

TEST_F(ReferenceSelection, I64AddOfPositions) {
  parse(R"mlir(
    func @f(%x: tensor<5xi64>, %y: tensor<5xi64>) -> tensor<5xi64> {
      %0 = kiln.add %x, %y : (tensor<5xi64>, tensor<5xi64>) -> tensor<5xi64>
      kiln.return %0 : tensor<5xi64>
    })mlir");
  std::vector<int64_t> x = randomValues<int64_t>(5, 9, -(int64_t(1) << 40), 1 << 20);
  std::vector<int64_t> y = randomValues<int64_t>(5, 10, 0, int64_t(1) << 40);
  HostTensor out = runBinary(HostTensor::longs({5}, x), HostTensor::longs({5}, y));
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(out.i64[i], x[i] + y[i]);
}

TEST_F(ReferenceSelection, I64InputWithI32DataIsAnError) {
  parse(R"mlir(
    func @f(%x: tensor<2xi64>) -> tensor<2xi64> {
      kiln.return %x : tensor<2xi64>
    })mlir");
  EXPECT_TRUE(contains(runError("f", {{"arg0", HostTensor::ints({2}, {1, 2})}}),
                       "holds i32 data but its type is tensor<2xi64>"));
}

} // namespace
