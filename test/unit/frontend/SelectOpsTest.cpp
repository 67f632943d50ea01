//===- SelectOpsTest.cpp - where, cast, i64 and integer arithmetic in the DSL ===//
//
// Shapes and dtypes the DSL infers for the selection and cast ops, and each misuse
// reported at the line that wrote it.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/frontend/Kiln.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

TEST(FrontendSelect, I64IdsCastForEmbeddingAndPositionArithmetic) {
  ModelBuilder m("gpt");
  Parameter table = m.parameter("wte.weight", {100, 16});
  Entry e = m.entry("f");
  Tensor tokens = e.input("input_ids", DType::I64, {dyn("B"), dyn("T")});
  Tensor p = e.input("past", DType::I32, {});
  Tensor ids = cast(tokens, DType::I32);
  EXPECT_EQ(ids.dtype(), DType::I32);
  EXPECT_EQ(toString(ids.shape()), "[B, T]");
  Tensor pos = positions(ids, 1) + p;
  EXPECT_EQ(pos.dtype(), DType::I32);
  EXPECT_EQ(toString(pos.shape()), "[T]");
  Tensor scores = e.input("scores", DType::F32, {dyn("B"), 4, dyn("T"), dyn("T")});
  Tensor masked =
      where(causalMask(ids, 1, MaskForm::Boolean), constant(m, -1e9f), scores);
  EXPECT_EQ(masked.dtype(), DType::F32);
  EXPECT_EQ(toString(masked.shape()), "[B, 4, T, T]");
  e.output("x", embedding(table, ids));
  e.output("positions", cast(pos, DType::I64) * cast(pos, DType::I64));
  e.output("masked", masked);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_NE(text.find("kiln.cast %arg0 : (tensor<?x?xi64>) -> tensor<?x?xi32>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kiln.where"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.mul"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor<?xi64> {kiln.name = \"positions\"}"), std::string::npos)
      << text;
}

TEST(FrontendSelect, EmbeddingOfI64IdsSaysToCastFirst) {
  ModelBuilder m("bad");
  Parameter table = m.parameter("embed.weight", {100, 16});
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I64, {dyn("B"), dyn("S")});
  unsigned line = __LINE__ + 1;
  Tensor x = embedding(table, ids);
  e.output("x", x);
  expectOneErrorAt(m.finish(), line,
                   "embedding needs ids of type i32, got an i64 tensor [B, S]; "
                   "convert it with cast(ids, DType::I32)");
}

TEST(FrontendSelect, AddOfI32AndF32IsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("T")});
  Tensor p = positions(x, 0);
  unsigned line = __LINE__ + 1;
  Tensor y = p + x;
  e.output("y", y);
  expectOneErrorAt(m.finish(), line, "add needs rhs of type i32, got an f32 tensor [T]");
}

TEST(FrontendSelect, DivOfIntegersIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::I32, {dyn("T")});
  unsigned line = __LINE__ + 1;
  Tensor y = x / x;
  e.output("y", y);
  expectOneErrorAt(m.finish(), line, "div needs f32 operands, got an i32 tensor [T]");
}

TEST(FrontendSelect, MulOfMasksIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("T")});
  Tensor c = causalMask(x, 0, MaskForm::Boolean);
  unsigned line = __LINE__ + 1;
  Tensor y = mul(c, c);
  e.output("y", cast(y, DType::F32));
  expectOneErrorAt(m.finish(), line,
                   "mul needs lhs of type f32, i32 or i64, got a boolean tensor [T, T]");
}

TEST(FrontendSelect, WhereNeedsABooleanCondition) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("T")});
  unsigned line = __LINE__ + 1;
  Tensor y = where(x, x, x);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "where needs condition of type i1, got an f32 tensor [T]");
}

TEST(FrontendSelect, WhereOfTwoDtypesIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("T")});
  Tensor c = causalMask(x, 0, MaskForm::Boolean);
  unsigned line = __LINE__ + 1;
  Tensor y = where(c, x, positions(x, 0));
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "where needs on_false of type f32, got an i32 tensor [T]");
}

TEST(FrontendSelect, WhereOfShapesThatDoNotBroadcast) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 8});
  Tensor c = causalMask(e.input("y", DType::F32, {dyn("S")}), 0, MaskForm::Boolean);
  unsigned line = __LINE__ + 1;
  Tensor y = where(c, x, x);
  e.output("y", y);
  expectOneErrorAt(
      m.finish(), line,
      "where: condition [S, S] does not broadcast against the values [B, 8]");
}

TEST(FrontendSelect, CastToBoolIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("T")});
  unsigned line = __LINE__ + 1;
  Tensor y = cast(x, DType::Bool);
  e.output("y", x);
  expectOneErrorAt(m.finish(), line, "cast converts between f32, i32 and i64, not to i1");
}

TEST(FrontendSelect, BoundsOnAnI64InputNameTheDtype) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  Tensor x = e.input("ids", DType::I64, {dyn("B")}, {0, 9});
  e.output("ids", x);
  expectOneErrorAt(m.finish(), line, "input 'ids' has bounds but is i64");
}

} // namespace
