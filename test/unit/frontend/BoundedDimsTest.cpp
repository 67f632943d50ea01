//===- BoundedDimsTest.cpp - dyn("T", max) in the DSL ---------------------===//
//
// A bounded dimension reaches the IR as the input's `kiln.dim_max`; a name has one bound
// in an entry, and only inputs bound dimensions.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestSupport.h"

#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"
#include "kiln/ir/ValueRange.h"

#include "mlir/IR/BuiltinOps.h"

#include <gtest/gtest.h>

using namespace kiln;
using namespace kiln::dsl;
using namespace kiln::dsl::frontend_test;

namespace {

TEST(BoundedDims, TheBoundReachesTheIrForEveryInputNamingIt) {
  ModelBuilder m("bounded");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("T", 32)}, Bounds{0, 9});
  Tensor mask = e.input("mask", DType::F32, {dyn("B"), dyn("T")});
  e.output("y", mask + mask);
  e.output("ids_out", positions(ids, 1));
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  EXPECT_NE(printed(model).find("kiln.dim_max = [0, 32]"), std::string::npos)
      << printed(model);
  auto func = *model.module().getOps<mlir::FuncOp>().begin();
  EXPECT_EQ(dimMax(func, "T"), llvm::Optional<int64_t>(32));
  EXPECT_EQ(dimMax(func, "B"), llvm::None);
  EXPECT_EQ(dimExprMax(func, "T*2+1"), llvm::Optional<int64_t>(65));
  // Subtracting a name: a larger T gives a smaller value, so no bound follows.
  EXPECT_EQ(dimExprMax(func, "40-T"), llvm::None);
}

/// The range indexRange proves for the value of output `name` of `model`'s first entry.
llvm::Optional<IndexRange> outputRange(const Model &model, llvm::StringRef name) {
  auto func = *model.module().getOps<mlir::FuncOp>().begin();
  auto ret = mlir::cast<ReturnOp>(func.front().getTerminator());
  for (unsigned i = 0; i < ret.getNumOperands(); ++i)
    if (func.getResultAttrOfType<mlir::StringAttr>(i, kNameAttr).getValue() == name)
      return indexRange(ret.getOperand(i));
  ADD_FAILURE() << "no output " << name.str();
  return llvm::None;
}

TEST(BoundedDims, IndexRangesFollowBoundsAndBoundedPositions) {
  ModelBuilder m("ranges");
  Entry e = m.entry("f");
  Tensor ids = e.input("ids", DType::I32, {dyn("B"), dyn("T", 32)}, Bounds{2, 9});
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S")});
  e.output("flat", reshape(ids, {-1}));
  e.output("bounded", positions(ids, 1));
  e.output("unbounded", positions(x, 1));
  e.output("batch", positions(ids, 0));
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  llvm::Optional<IndexRange> idsRange = outputRange(model, "flat");
  ASSERT_TRUE(idsRange);
  EXPECT_EQ(idsRange->min, 2);
  EXPECT_EQ(idsRange->max, 9);
  llvm::Optional<IndexRange> bounded = outputRange(model, "bounded");
  ASSERT_TRUE(bounded);
  EXPECT_EQ(bounded->min, 0);
  EXPECT_EQ(bounded->max, 31);
  EXPECT_FALSE(outputRange(model, "unbounded"));
  EXPECT_FALSE(outputRange(model, "batch"));
}

TEST(BoundedDims, TwoDifferentBoundsOfOneNameAreAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  Tensor a = e.input("a", DType::F32, {dyn("T", 32)});
  unsigned line = __LINE__ + 1;
  Tensor b = e.input("b", DType::F32, {dyn("T", 64)});
  e.output("y", a + b);
  expectOneErrorAt(m.finish(), line,
                   "input 'b' bounds dimension 'T' by 64, but input 'a' bounds it by 32");
}

TEST(BoundedDims, ANegativeBoundIsAnError) {
  ModelBuilder m("bad");
  Entry e = m.entry("f");
  unsigned line = __LINE__ + 1;
  Tensor a = e.input("a", DType::F32, {dyn("T", -3)});
  e.output("y", relu(a));
  expectOneErrorAt(m.finish(), line,
                   "input 'a' bounds dimension 'T' by -3; a bound is a positive size");
}

TEST(BoundedDims, AStateCannotBoundADimension) {
  ModelBuilder m("bad");
  Entry e = m.entry("start");
  e.input("x", DType::F32, {dyn("B"), dyn("T", 8)});
  unsigned line = __LINE__ + 1;
  e.stateAlloc("cache", {dyn("B"), dyn("T", 8)});
  expectOneErrorAt(m.finish(), line,
                   "state 'cache' bounds dimension 'T' by 8; bound a "
                   "dimension where an input declares it");
}

} // namespace
