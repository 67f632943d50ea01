//===- ErrorMessagesTest.cpp - Build errors a user can act on -------------===//
//
// Each message names its op once, at the line the user wrote, and says how to fix the
// mistake where the fix is known: a transposed operand, a cast, an output to declare, a
// value to pass between entries.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/frontend/nn/Attention.h"

#include <gtest/gtest.h>

using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

TEST(ErrorMessages, MatmulNamesItselfOnceAndHintsTheTransposedRhs) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor q = e.input("q", DType::F32, {dyn("B"), dyn("T"), 8});
  Tensor k = e.input("k", DType::F32, {dyn("B"), dyn("T"), 8});
  unsigned line = __LINE__ + 1;
  e.output("scores", matmul(q, k));
  Model model = m.finish();
  expectOneErrorAt(
      model, line,
      "matmul: contraction dimensions differ: lhs [B, T, 8] contracts 8, rhs "
      "[B, T, 8] contracts T; did you mean transposeRhs=true?");
  EXPECT_EQ(model.errors()[0].message.find("matmul: matmul"), std::string::npos);
}

TEST(ErrorMessages, NoTransposeHintWhereTransposingDoesNotHelp) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor a = e.input("a", DType::F32, {dyn("B"), 8});
  Tensor b = e.input("b", DType::F32, {5, 3});
  e.output("y", matmul(a, b));
  Model model = m.finish();
  ASSERT_EQ(model.errors().size(), 1u);
  EXPECT_EQ(model.errors()[0].message.find("did you mean"), std::string::npos)
      << model.errors()[0].message;
}

TEST(ErrorMessages, AWrongDtypeHintsTheCast) {
  ModelBuilder m("bad");
  Parameter table = m.parameter("embed.weight", {10, 4});
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::F32, {dyn("B")});
  unsigned line = __LINE__ + 1;
  e.output("x", embedding(table, ids));
  expectOneErrorAt(m.finish(), line,
                   "embedding needs ids of type i32, got an f32 tensor [B]; convert it "
                   "with cast(ids, DType::I32)");
}

TEST(ErrorMessages, AMissingOutputPointsAtTheEntrysDeclaration) {
  ModelBuilder m("bad");
  unsigned line = __LINE__ + 1;
  Entry e = m.entry("decode");
  e.input("x", DType::F32, {4});
  Model model = m.finish();
  expectOneErrorAt(model, line,
                   "entry point 'decode' has no outputs and writes no state");
  EXPECT_EQ(model.errors()[0].file, __FILE__);
}

TEST(ErrorMessages, MixedEntriesNameBothEntriesAndOperands) {
  ModelBuilder m("bad");
  Entry encode = m.entry("encode");
  Tensor memory = encode.input("memory", DType::F32, {dyn("B"), 4});
  encode.output("y", relu(memory));
  Entry decode = m.entry("decode");
  Tensor x = decode.input("x", DType::F32, {dyn("B"), 4});
  unsigned line = __LINE__ + 1;
  decode.output("y", x + memory);
  expectOneErrorAt(m.finish(), line,
                   "operands come from different entry points: operand #0 [B, 4] is a "
                   "tensor of entry 'decode' and operand #1 [B, 4] is a tensor of entry "
                   "'encode'");
}

TEST(ErrorMessages, AnErrorInsideAModuleIsReportedOnceAndLaterOnesStillAre) {
  ModelBuilder m("bad");
  nn::MultiHeadAttention attention(m, "attn.", /*dModel=*/16, /*heads=*/2);
  Entry e = m.entry("forward");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 12});
  Tensor ok = e.input("ok", DType::F32, {dyn("B"), dyn("S"), 16});
  unsigned first = __LINE__ + 1;
  e.output("y", attention(x, x, x, std::nullopt));
  // A second call is a second mistake: reported too.
  unsigned second = __LINE__ + 1;
  e.output("z", attention(ok, x, x, std::nullopt));
  Model model = m.finish();
  ASSERT_EQ(model.errors().size(), 2u) << model.errors()[0].str();
  EXPECT_EQ(model.errors()[0].line, first);
  EXPECT_EQ(model.errors()[1].line, second);
  EXPECT_NE(model.errors()[0].message.find("linear: input [B, S, 12] has 12 features"),
            std::string::npos)
      << model.errors()[0].message;
}

} // namespace
