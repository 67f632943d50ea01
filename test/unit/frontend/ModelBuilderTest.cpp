//===- ModelBuilderTest.cpp - The DSL builds verified modules -------------===//
//
// A user's shape mistake must come back as an error at their own line, and a correct
// model as a verified module whose entry points describe their inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/frontend/Kiln.h"

#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"

#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(ModelBuilder, BuildsVerifiedModuleWithNamedInputsAndOutputs) {
  ModelBuilder m("tiny");
  Parameter w = m.parameter("proj.weight", {32, 16});
  Entry e = m.entry("forward");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 16});
  Tensor y = matmul(x, w, false, true);
  EXPECT_EQ(toString(y.shape()), "[B, S, 32]");
  e.output("y", relu(y));
  Model model = m.finish();
  ASSERT_TRUE(model.ok());
  std::string text = printed(model);
  EXPECT_NE(text.find("kiln.parameter \"proj.weight\" : tensor<32x16xf32>"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("kiln.dims = [\"B\", \"S\", \"\"]"), std::string::npos) << text;
  EXPECT_NE(text.find("kiln.name = \"y\""), std::string::npos) << text;
  EXPECT_NE(text.find("tensor<?x?x32xf32>"), std::string::npos) << text;
}

TEST(ModelBuilder, ShapeErrorPointsAtTheUsersLine) {
  ModelBuilder m("bad");
  Entry e = m.entry("forward");
  Tensor a = e.input("a", DType::F32, {dyn("B"), dyn("S"), 64});
  Tensor b = e.input("b", DType::F32, {dyn("B"), dyn("T"), 64});
  unsigned line = __LINE__ + 1;
  Tensor c = a + b;
  EXPECT_FALSE(c.valid());
  e.output("c", c);
  Model model = m.finish();
  ASSERT_FALSE(model.ok());
  ASSERT_EQ(model.errors().size(), 1u);
  const BuildError &err = model.errors()[0];
  EXPECT_TRUE(endsWith(err.file, "ModelBuilderTest.cpp")) << err.file;
  EXPECT_EQ(err.line, line);
  EXPECT_NE(err.message.find("S vs T"), std::string::npos) << err.message;
  EXPECT_NE(err.str().find("ModelBuilderTest.cpp:" + std::to_string(line)),
            std::string::npos);
}

TEST(ModelBuilder, MatmulContractionMismatchNamesBothSizes) {
  ModelBuilder m("bad");
  Parameter w = m.parameter("w", {32, 48});
  Entry e = m.entry("forward");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 16});
  unsigned line = __LINE__ + 1;
  Tensor y = matmul(x, w, false, true);
  e.output("y", y);
  Model model = m.finish();
  ASSERT_EQ(model.errors().size(), 1u);
  EXPECT_EQ(model.errors()[0].line, line);
  EXPECT_NE(model.errors()[0].message.find("contracts 16"), std::string::npos)
      << model.errors()[0].message;
  EXPECT_NE(model.errors()[0].message.find("contracts 48"), std::string::npos);
}

TEST(ModelBuilder, ErrorsDoNotCascade) {
  ModelBuilder m("bad");
  Entry e = m.entry("forward");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 8});
  Tensor bad = reshape(x, {0, 3}); // 8 elements per row cannot become 3.
  Tensor worse = relu(softmax(bad) * 2.0f);
  e.output("y", worse);
  Model model = m.finish();
  ASSERT_EQ(model.errors().size(), 1u) << model.errors()[0].str();
  EXPECT_NE(model.errors()[0].message.find("reshape"), std::string::npos);
}

TEST(ModelBuilder, ParameterRedeclaredWithAnotherShapeIsAnError) {
  ModelBuilder m("bad");
  m.parameter("embed.weight", {100, 16});
  Parameter same = m.parameter("embed.weight", {100, 16});
  EXPECT_EQ(same.name(), "embed.weight");
  unsigned line = __LINE__ + 1;
  m.parameter("embed.weight", {100, 32});
  Entry e = m.entry("f");
  e.output("y", relu(e.input("x", DType::F32, {4})));
  Model model = m.finish();
  ASSERT_EQ(model.errors().size(), 1u);
  EXPECT_EQ(model.errors()[0].line, line);
  EXPECT_NE(model.errors()[0].message.find("[100, 32]"), std::string::npos);
  EXPECT_NE(model.errors()[0].message.find("[100, 16]"), std::string::npos);
}

TEST(ModelBuilder, SharedParameterIsOneOpPerEntry) {
  ModelBuilder m("tied");
  Parameter w = m.parameter("w", {8, 8});
  Entry e1 = m.entry("one");
  Tensor x1 = e1.input("x", DType::F32, {dyn("B"), 8});
  e1.output("y", matmul(matmul(x1, w), w));
  Entry e2 = m.entry("two");
  Tensor x2 = e2.input("x", DType::F32, {dyn("B"), 8});
  e2.output("y", matmul(x2, w));
  Model model = m.finish();
  ASSERT_TRUE(model.ok());
  int parameters = 0;
  model.module().walk([&](ParameterOp) { ++parameters; });
  EXPECT_EQ(parameters, 2);
}

TEST(ModelBuilder, MixingEntriesIsAnError) {
  ModelBuilder m("bad");
  Entry e1 = m.entry("one");
  Tensor x1 = e1.input("x", DType::F32, {4});
  Entry e2 = m.entry("two");
  Tensor x2 = e2.input("x", DType::F32, {4});
  e1.output("y", relu(x1));
  e2.output("y", x1 + x2);
  Model model = m.finish();
  ASSERT_EQ(model.errors().size(), 1u);
  EXPECT_NE(model.errors()[0].message.find("different entry points"), std::string::npos);
}

TEST(ModelBuilder, EntryWithoutOutputsIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("empty");
  e.input("x", DType::F32, {4});
  Model model = m.finish();
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.errors()[0].message.find("no outputs"), std::string::npos);
}

TEST(ModelBuilder, ReshapeInfersDynamicDimension) {
  ModelBuilder m("r");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 64});
  Tensor flat = reshape(x, {-1, 64});
  EXPECT_EQ(toString(flat.shape()), "[B*S, 64]");
  Tensor heads = reshape(x, {0, 0, 4, -1});
  EXPECT_EQ(toString(heads.shape()), "[B, S, 4, 16]");
  e.output("y", flat);
  ASSERT_TRUE(m.finish().ok());
}

TEST(ModelBuilder, SymbolicShapesOfEntryFollowInputNames) {
  ModelBuilder m("s");
  Entry e = m.entry("f");
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 8});
  e.output("y", softmax(transpose(x, {0, 2, 1}), -1));
  Model model = m.finish();
  ASSERT_TRUE(model.ok());
  auto func = *model.module().getOps<mlir::FuncOp>().begin();
  auto shapes = inferSymbolicShapes(func);
  ASSERT_TRUE(succeeded(shapes));
  auto ret = llvm::cast<ReturnOp>(func.front().getTerminator());
  EXPECT_EQ(toString(shapes->lookup(ret.getOperand(0))), "[B, 8, S]");
}

} // namespace
