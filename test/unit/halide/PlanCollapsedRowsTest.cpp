//===- PlanCollapsedRowsTest.cpp - Product kernels over [B*S, D] views ----===//
//
// With collapseRows (a CPU target's plan), a linear over [B, S, D] rows reads a dense
// [B*S, D] view of its input and writes one of its result, while the entry's output
// stays [B, S, N]; a decoding step's [B, 1, D] rows keep their buffers.
//
//===----------------------------------------------------------------------===//

#include "PlanTestSupport.h"

using namespace kiln::halide_backend::test;
using llvm::json::Array;
using llvm::json::Object;

namespace {

const char *kProjections = R"mlir(
func @encode(%x: tensor<?x?x8xf32> {kiln.name = "x", kiln.dims = ["B", "S", ""]})
    -> (tensor<?x?x16xf32> {kiln.name = "y"}) {
  %w = kiln.parameter "proj.weight" : tensor<16x8xf32>
  %b = kiln.parameter "proj.bias" : tensor<16xf32>
  %y = kiln.linear %x, %w, %b
      : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  kiln.return %y : tensor<?x?x16xf32>
}
func @step(%x: tensor<?x1x8xf32> {kiln.name = "x", kiln.dims = ["B", "", ""]})
    -> (tensor<?x1x16xf32> {kiln.name = "y"}) {
  %w = kiln.parameter "proj.weight" : tensor<16x8xf32>
  %b = kiln.parameter "proj.bias" : tensor<16xf32>
  %y = kiln.linear %x, %w, %b
      : (tensor<?x1x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x1x16xf32>
  kiln.return %y : tensor<?x1x16xf32>
}
)mlir";

TEST_F(PlanTest, LinearOverSequencesRunsOverViewsOfItsRowsCollapsed) {
  collapseRows = true;
  ASSERT_TRUE(plan(kProjections)) << errors;
  const Object &encode = entry("encode");
  const Array &buffers = *encode.getArray("buffers");
  // x, the weight, the bias, x's view, the result and its view.
  ASSERT_EQ(buffers.size(), 6u) << text_;
  EXPECT_EQ(str(&buffers[3]), R"({"dtype":"f32","kind":"view","shape":["B*S",8],)"
                              R"("view_of":0})");
  EXPECT_EQ(str(&buffers[5]), R"({"dtype":"f32","kind":"view","shape":["B*S",16],)"
                              R"("view_of":4})");
  const Array &steps = *encode.getArray("steps");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(str(steps[0].getAsObject()->get("args")), "[3,1,2,5]");
  // The caller reads the result as the model wrote it: [B, S, 16].
  EXPECT_EQ(str(encode.get("outputs")),
            R"([{"buffer":4,"dtype":"f32","name":"y","shape":["B","S",16]}])");

  // A decoding step's rows: no views, and a kernel of its own.
  const Object &step = entry("step");
  EXPECT_EQ(step.getArray("buffers")->size(), 4u) << text_;
  EXPECT_EQ(str((*step.getArray("steps"))[0].getAsObject()->get("args")), "[0,1,2,3]");
  EXPECT_EQ(root().getArray("kernels")->size(), 2u);
}

TEST_F(PlanTest, WithoutCollapsedRowsTheLinearReadsItsBuffers) {
  ASSERT_TRUE(plan(kProjections)) << errors;
  const Object &encode = entry("encode");
  EXPECT_EQ(encode.getArray("buffers")->size(), 4u) << text_;
  EXPECT_EQ(str((*encode.getArray("steps"))[0].getAsObject()->get("args")), "[0,1,2,3]");
}

} // namespace
