//===- OpsTest.cpp - The encoder-decoder ops and input bounds of the DSL --===//
//
// Each op's result shape and dtype in named dims, and each misuse reported at the line
// that wrote it (with the op's name and the sizes involved).
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/frontend/Kiln.h"

#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

TEST(FrontendOps, EncoderInputsHaveNamedShapes) {
  ModelBuilder m("enc");
  Parameter table = m.parameter("embed.weight", {100, 16});
  Entry e = m.entry("encode");
  Tensor ids = e.input("src", DType::I32, {dyn("B"), dyn("S")}, {0, 99});
  Tensor len = e.input("src_lengths", DType::I32, {dyn("B")}, {1, "S"});
  Tensor x = embedding(table, ids);
  EXPECT_EQ(toString(x.shape()), "[B, S, 16]");
  EXPECT_EQ(x.dtype(), DType::F32);
  Tensor pos = positions(ids, -1);
  EXPECT_EQ(toString(pos.shape()), "[S]");
  EXPECT_EQ(pos.dtype(), DType::I32);
  Tensor pe = sinusoid(pos, 16);
  EXPECT_EQ(toString(pe.shape()), "[S, 16]");
  EXPECT_EQ(pe.dtype(), DType::F32);
  Tensor mask = paddingMask(len, ids, 1);
  EXPECT_EQ(toString(mask.shape()), "[B, S]");
  EXPECT_EQ(mask.dtype(), DType::F32);
  Tensor causal = causalMask(x, 1);
  EXPECT_EQ(toString(causal.shape()), "[S, S]");
  e.output("x", x + pe);
  e.output("mask", mask);
  e.output("causal", causal);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_NE(text.find("kiln.bounds = [\"0\", \"99\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.bounds = [\"1\", \"S\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.embedding"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.range %arg0 {axis = 1 : i64}"), std::string::npos) << text;
  EXPECT_NE(text.find("-> tensor<?x16xf32>"), std::string::npos) << text;
}

TEST(FrontendOps, SubtractionKeepsItsOperandOrderAndBroadcasts) {
  ModelBuilder m("sub");
  Parameter mean = m.parameter("mean", {16});
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 16});
  Tensor centred = x - mean;
  EXPECT_EQ(toString(centred.shape()), "[B, S, 16]");
  Tensor flipped = sub(mean, x);
  EXPECT_EQ(toString(flipped.shape()), "[B, S, 16]");
  e.output("centred", centred);
  e.output("flipped", flipped);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_NE(text.find("kiln.sub %arg0, %0 : (tensor<?x?x16xf32>, tensor<16xf32>)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kiln.sub %0, %arg0 : (tensor<16xf32>, tensor<?x?x16xf32>)"),
            std::string::npos)
      << text;
}

TEST(FrontendOps, SubtractionOfShapesThatDoNotBroadcastIsAnErrorAtTheLine) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 16});
  Tensor y = e.input("y", DType::F32, {dyn("B"), dyn("T"), 16});
  unsigned line = __LINE__ + 1;
  Tensor d = x - y;
  e.output("d", d);
  expectOneErrorAt(m.finish(), line,
                   "sub: shapes [B, S, 16] and [B, T, 16] do not broadcast: S vs T");
}

TEST(FrontendOps, DecoderHeadShapes) {
  ModelBuilder m("dec");
  Parameter w = m.parameter("proj.weight", {50, 16});
  Parameter b = m.parameter("proj.bias", {50});
  Parameter ffW = m.parameter("ff.weight", {64, 16});
  Parameter ffB = m.parameter("ff.bias", {64});
  Entry e = m.entry("decode");
  Tensor h = e.input("h", DType::F32, {dyn("B"), dyn("T"), 16});
  Tensor ys = e.input("ys", DType::I32, {dyn("B"), dyn("T")});
  Tensor ff = gelu(linear(h, ffW, ffB));
  EXPECT_EQ(toString(ff.shape()), "[B, T, 64]");
  Tensor logits = linear(h, w, b);
  EXPECT_EQ(toString(logits.shape()), "[B, T, 50]");
  Tensor logProbs = logSoftmax(logits);
  EXPECT_EQ(toString(logProbs.shape()), "[B, T, 50]");
  Tensor last = slice(logProbs, 1, 0, 1);
  EXPECT_EQ(toString(last.shape()), "[B, 1, 50]");
  Tensor next = argmax(last, -1);
  EXPECT_EQ(toString(next.shape()), "[B, 1]");
  EXPECT_EQ(next.dtype(), DType::I32);
  Tensor longer = concat({ys, next}, 1);
  EXPECT_EQ(toString(longer.shape()), "[B, T+1]");
  EXPECT_EQ(longer.dtype(), DType::I32);
  Tensor heads = concat({slice(ff, 2, 0, 16), slice(ff, -1, 16, 32), h}, -1);
  EXPECT_EQ(toString(heads.shape()), "[B, T, 48]");
  e.output("ys", longer);
  e.output("heads", heads);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  std::string text = printed(model);
  EXPECT_NE(text.find("kiln.argmax"), std::string::npos) << text;
  EXPECT_NE(text.find("-> tensor<?x1xi32>"), std::string::npos) << text;
}

TEST(FrontendOps, EmbeddingOfFloatIdsIsAnErrorAtTheLine) {
  ModelBuilder m("bad");
  Parameter table = m.parameter("embed.weight", {100, 16});
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::F32, {dyn("B"), dyn("S")});
  unsigned line = __LINE__ + 1;
  Tensor x = embedding(table, ids);
  e.output("x", x);
  expectOneErrorAt(m.finish(), line,
                   "embedding needs ids of type i32, got an f32 tensor [B, S]");
}

TEST(FrontendOps, SinusoidOfFloatPositionsIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor p = e.input("p", DType::F32, {dyn("S")});
  unsigned line = __LINE__ + 1;
  Tensor x = sinusoid(p, 8);
  e.output("x", x);
  expectOneErrorAt(m.finish(), line, "sinusoid needs positions of type i32");
}

TEST(FrontendOps, SinusoidOfOddSizeIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("S")});
  unsigned line = __LINE__ + 1;
  Tensor x = sinusoid(positions(ids, 1), 15);
  e.output("x", x);
  expectOneErrorAt(m.finish(), line,
                   "sinusoid: feature size must be static, positive and even, "
                   "got 15");
}

TEST(FrontendOps, LinearWithTheWeightTransposedIsAnError) {
  // A weight stored [in, out] instead of PyTorch's [out, in].
  ModelBuilder m("bad");
  Parameter w = m.parameter("w", {16, 64});
  Parameter b = m.parameter("b", {64});
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 16});
  unsigned line = __LINE__ + 1;
  Tensor y = linear(x, w, b);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "linear: input [B, 16] has 16 features but weight [16, 64] "
                   "takes 64");
}

TEST(FrontendOps, LinearBiasOfTheWrongSize) {
  ModelBuilder m("bad");
  Parameter w = m.parameter("w", {64, 16});
  Parameter b = m.parameter("b", {16});
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 16});
  unsigned line = __LINE__ + 1;
  Tensor y = linear(x, w, b);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line, "linear: bias has shape [16], expected [64]");
}

TEST(FrontendOps, PaddingMaskNeedsIntegerLengths) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("S")});
  Tensor len = e.input("len", DType::F32, {dyn("B")});
  unsigned line = __LINE__ + 1;
  Tensor mask = paddingMask(len, ids, 1);
  e.output("mask", mask);
  expectOneErrorAt(m.finish(), line, "padding_mask needs lengths of type i32");
}

TEST(FrontendOps, MaskAxisOutOfRange) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("S")});
  unsigned line = __LINE__ + 1;
  Tensor mask = causalMask(ids, 2);
  e.output("mask", mask);
  expectOneErrorAt(m.finish(), line,
                   "causal_mask: axis 2 is out of range for shape [B, S]");
}

TEST(FrontendOps, SlicePastAStaticEnd) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 64});
  unsigned line = __LINE__ + 1;
  Tensor y = slice(x, -1, 32, 96);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line, "slice: end 96 exceeds dimension 1 of [B, 64]");
}

TEST(FrontendOps, SliceOfADynamicDimensionIsStatic) {
  ModelBuilder m("s");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 8});
  Tensor first = slice(x, 1, 0, 1);
  EXPECT_EQ(toString(first.shape()), "[B, 1, 8]");
  e.output("first", first);
  EXPECT_TRUE(m.finish().ok());
}

TEST(FrontendOps, ConcatOfMixedDtypes) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("T")});
  Tensor x = e.input("x", DType::F32, {dyn("B"), 1});
  unsigned line = __LINE__ + 1;
  Tensor y = concat({ids, x}, 1);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "concat needs operands of one dtype, got i32 [B, T] and f32 [B, 1]");
}

TEST(FrontendOps, ConcatOfDifferentBatches) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor a = e.input("a", DType::F32, {dyn("B"), dyn("S"), 8});
  Tensor b = e.input("b", DType::F32, {dyn("C"), dyn("T"), 8});
  unsigned line = __LINE__ + 1;
  Tensor y = concat({a, b}, 1);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "concat: operand #1 [C, T, 8] differs from operand #0 [B, S, 8] in "
                   "dimension 0: C vs B");
}

TEST(FrontendOps, ArgmaxOfIdsIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("T")});
  unsigned line = __LINE__ + 1;
  Tensor y = argmax(ids, 1);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "argmax needs f32 operands, got an i32 tensor [B, T]");
}

TEST(FrontendOps, LogSoftmaxAxisOutOfRange) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 8});
  unsigned line = __LINE__ + 1;
  Tensor y = logSoftmax(x, 3);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "log_softmax: axis 3 is out of range for shape [B, 8]");
}

TEST(FrontendOps, RmsNormAndReductionShapes) {
  ModelBuilder m("r");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("T"), 64});
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("T")});
  Parameter g = m.parameter("g", {64});
  Tensor n = rmsNorm(x, g);
  EXPECT_EQ(toString(n.shape()), "[B, T, 64]");
  Tensor s = reduceSum(n, {-1}, /*keepDim=*/true);
  EXPECT_EQ(toString(s.shape()), "[B, T, 1]");
  Tensor mean = reduceMean(x, {1, 0});
  EXPECT_EQ(toString(mean.shape()), "[64]");
  Tensor max = reduceMax(ids, {-1});
  EXPECT_EQ(toString(max.shape()), "[B]");
  EXPECT_EQ(max.dtype(), DType::I32);
  e.output("s", s);
  e.output("mean", mean);
  e.output("max", max);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  // The IR holds the axes ascending and non-negative, and the epsilon.
  std::string text = printed(model);
  EXPECT_NE(text.find("kiln.reduce_mean %arg0 {axes = [0, 1], keep_dim = false}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kiln.reduce_sum %1 {axes = [2], keep_dim = true}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("epsilon = 9.99999997E-7"), std::string::npos) << text;
}

TEST(FrontendOps, ReduceAxisOutOfRangeNamesTheAxisAsWritten) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 8});
  unsigned line = __LINE__ + 1;
  Tensor y = reduceSum(x, {-3});
  e.output("y", y);
  expectOneErrorAt(
      m.finish(), line,
      "reduce_sum: axis -3 is out of range for shape [B, 8] (expected -2 to 1)");
}

TEST(FrontendOps, ReduceAxisTwiceIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 8});
  unsigned line = __LINE__ + 1;
  Tensor y = reduceMax(x, {1, -1});
  e.output("y", y);
  expectOneErrorAt(m.finish(), line, "reduce_max: axes [1, -1] name dimension 1 twice");
}

TEST(FrontendOps, ReduceMeanOfIdsIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("T")});
  unsigned line = __LINE__ + 1;
  Tensor y = reduceMean(ids, {1});
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "reduce_mean needs f32 operands, got an i32 tensor [B, T]");
}

TEST(FrontendOps, RmsNormGammaOfTheWrongSize) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 8});
  Parameter g = m.parameter("g", {4});
  unsigned line = __LINE__ + 1;
  Tensor y = rmsNorm(x, g);
  e.output("y", y);
  expectOneErrorAt(m.finish(), line,
                   "rms_norm: gamma has shape [4], expected [8] to match the last "
                   "dimension of [B, 8]");
}

//===----------------------------------------------------------------------===//
// Input bounds
//===----------------------------------------------------------------------===//

TEST(FrontendBounds, EndsMayBeIntegersDimsOrExpressions) {
  ModelBuilder m("b");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("S")}, {0, 49});
  Tensor len = e.input("len", DType::I32, {dyn("B")}, {1, dyn("S")});
  Tensor last = e.input("last", DType::I32, {dyn("B")}, {0, "S-1"});
  Tensor offset = e.input("offset", DType::I32, {dyn("B")}, {-5, 5});
  e.output("ids", ids);
  e.output("len", len);
  e.output("last", last);
  e.output("offset", offset);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  auto func = *model.module().getOps<mlir::FuncOp>().begin();
  auto bounds = [&](unsigned i) {
    std::string s;
    llvm::raw_string_ostream os(s);
    if (auto attr = func.getArgAttr(i, kBoundsAttr))
      attr.print(os);
    return os.str();
  };
  EXPECT_EQ(bounds(0), "[\"0\", \"49\"]");
  EXPECT_EQ(bounds(1), "[\"1\", \"S\"]");
  EXPECT_EQ(bounds(2), "[\"0\", \"S-1\"]");
  // The manifest grammar has no unary minus.
  EXPECT_EQ(bounds(3), "[\"0-5\", \"5\"]");
}

TEST(FrontendBounds, MayNameADimensionOfALaterInput) {
  ModelBuilder m("b");
  Entry e = m.entry("f");
  Tensor len = e.input("len", DType::I32, {dyn("B")}, {1, "S"});
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("S")});
  e.output("mask", paddingMask(len, ids, 1));
  EXPECT_TRUE(m.finish().ok());
}

TEST(FrontendBounds, OnAFloatInputIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  Tensor x = e.input("x", DType::F32, {dyn("B")}, {0, 1});
  e.output("x", x);
  expectOneErrorAt(m.finish(), line, "input 'x' has bounds but is f32");
}

TEST(FrontendBounds, UnknownDimensionIsAnErrorAtTheInput) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("S")});
  unsigned line = __LINE__ + 1;
  Tensor len = e.input("len", DType::I32, {dyn("B")}, {1, "T"});
  e.output("mask", paddingMask(len, ids, 1));
  expectOneErrorAt(m.finish(), line,
                   "bounds of input 'len' use dimension 'T', which entry 'f' does not "
                   "bind (no input or state it reads has it)");
}

TEST(FrontendBounds, SyntaxErrorIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  Tensor ids = e.input("ids", DType::I32, {dyn("S")}, {0, "S-"});
  e.output("ids", ids);
  expectOneErrorAt(m.finish(), line,
                   "bounds of input 'ids': invalid dimension expression \"S-\": "
                   "unexpected end");
}

TEST(FrontendBounds, EmptyRangeIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  Tensor ids = e.input("ids", DType::I32, {dyn("S")}, {10, 9});
  e.output("ids", ids);
  expectOneErrorAt(m.finish(), line, "bounds of input 'ids' are empty: [10, 9]");
}

} // namespace
