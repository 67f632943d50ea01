//===- PlanParametersTest.cpp - Converted parameters in the plan and manifest ===//
//
// What the planner makes of weights stored at a reduced precision (kiln.parameter with
// a conversion, docs/manifest.md "Parameters at a reduced precision"): their dtype and
// where the runtime computes them from, the model's `weights`, parameter buffers that
// kernels read in place, and the errors for what the runtime could not bind.
//
//===----------------------------------------------------------------------===//

#include "Lower.h"
#include "PlanTestSupport.h"

using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

/// A bf16 model's decode step: the packed projection's first 16 rows converted apart
/// (rows [0, 16) of its f32 source), a whole weight converted under its own name, and
/// an f32 bias.
const char *kBf16Step = R"mlir(
module attributes {kiln.weights = "bf16"} {
func @step(%x: tensor<?x1x8xf32> {kiln.name = "x", kiln.dims = ["B", "", ""]})
    -> (tensor<?x1x16xf32> {kiln.name = "y"}) {
  %wq = kiln.parameter "in_proj_weight[0:16]"
      {source = "in_proj_weight", conversion = "bf16", rows = [0, 16]} : tensor<16x8xbf16>
  %bq = kiln.parameter "in_proj_bias" : tensor<48xf32>
  %b = kiln.slice %bq {axis = 0 : i64, start = 0 : i64, end = 16 : i64}
      : (tensor<48xf32>) -> tensor<16xf32>
  %q = kiln.linear %x, %wq, %b
      : (tensor<?x1x8xf32>, tensor<16x8xbf16>, tensor<16xf32>) -> tensor<?x1x16xf32>
  %w = kiln.parameter "out.weight" {source = "out.weight", conversion = "bf16"}
      : tensor<16x16xbf16>
  %y = kiln.matmul %q, %w {transpose_rhs = true}
      : (tensor<?x1x16xf32>, tensor<16x16xbf16>) -> tensor<?x1x16xf32>
  kiln.return %y : tensor<?x1x16xf32>
}
}
)mlir";

TEST_F(PlanTest, ConvertedParametersSayWhatTheyAreComputedFrom) {
  ASSERT_TRUE(plan(kBf16Step)) << errors;
  EXPECT_EQ(str(root().get("weights")), R"("bf16")");
  EXPECT_EQ(str(root().get("parameters")),
            R"([{"conversion":"bf16","dtype":"bf16","name":"in_proj_weight[0:16]",)"
            R"("rows":[0,16],"shape":[16,8],"source":"in_proj_weight"},)"
            R"({"dtype":"f32","name":"in_proj_bias","shape":[48]},)"
            R"({"conversion":"bf16","dtype":"bf16","name":"out.weight","shape":[16,16],)"
            R"("source":"out.weight"}])");
}

TEST_F(PlanTest, KernelsReadConvertedParametersInPlace) {
  ASSERT_TRUE(plan(kBf16Step)) << errors;
  const llvm::json::Object &step = entry("step");
  // x, the two bf16 weights as parameter buffers, the bias slice as a view; the linear
  // reads buffer 1 and the matmul buffer 5 themselves: nothing copies a weight.
  EXPECT_EQ(str(&buffer(step, 1)),
            R"({"dtype":"bf16","kind":"parameter","parameter":0,"shape":[16,8]})");
  EXPECT_EQ(str(&buffer(step, 5)),
            R"({"dtype":"bf16","kind":"parameter","parameter":2,"shape":[16,16]})");
  const llvm::json::Array &steps = *step.getArray("steps");
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(str(steps[0].getAsObject()->get("args")), "[0,1,3,4]");
  EXPECT_EQ(str(steps[1].getAsObject()->get("args")), "[4,5,6]");
}

TEST_F(PlanTest, ModelWithoutWeightsAttributeWritesNoWeightsKey) {
  ASSERT_TRUE(plan(R"mlir(
    func @f(%x: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "y"}) {
      %w = kiln.parameter "w" : tensor<4xf32>
      %y = kiln.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      kiln.return %y : tensor<4xf32>
    })mlir"))
      << errors;
  EXPECT_EQ(root().get("weights"), nullptr) << text_;
  EXPECT_EQ(str(root().get("parameters")), R"([{"dtype":"f32","name":"w","shape":[4]}])");
}

TEST_F(PlanTest, Int8ParametersAndTheirScales) {
  const char *text = R"mlir(
  module attributes {kiln.weights = "int8"} {
  func @f(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]})
      -> (tensor<?x4xf32> {kiln.name = "y"}) {
    %q = kiln.parameter "w[4:8]" {source = "w", conversion = "int8", rows = [4, 8]}
        : tensor<4x8xi8>
    %s = kiln.parameter "w[4:8].scale"
        {source = "w", conversion = "int8_scale", rows = [4, 8]} : tensor<4xf32>
    %y = kiln.quantized_linear %x, %q, %s
        : (tensor<?x8xf32>, tensor<4x8xi8>, tensor<4xf32>) -> tensor<?x4xf32>
    kiln.return %y : tensor<?x4xf32>
  }
  })mlir";
  // The Halide lowering of quantized_linear is branch lowp-int8's.
  mlir::OwningOpRef<mlir::ModuleOp> probe =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(probe);
  mlir::Operation *op =
      &*std::next(probe->lookupSymbol<mlir::FuncOp>("f").front().begin(), 2);
  if (!needsKernel(op))
    GTEST_SKIP() << "kiln.quantized_linear has no Halide lowering in this build";
  ASSERT_TRUE(plan(text)) << errors;
  EXPECT_EQ(str(root().get("weights")), R"("int8")");
  EXPECT_EQ(str(root().get("parameters")),
            R"([{"conversion":"int8","dtype":"i8","name":"w[4:8]","rows":[4,8],)"
            R"("shape":[4,8],"source":"w"},)"
            R"({"conversion":"int8_scale","dtype":"f32","name":"w[4:8].scale",)"
            R"("rows":[4,8],"shape":[4],"source":"w"}])");
  EXPECT_EQ(str(&buffer(entry("f"), 1)),
            R"({"dtype":"i8","kind":"parameter","parameter":0,"shape":[4,8]})");
}

TEST_F(PlanTest, EntriesMustAgreeOnAConversion) {
  // Entries share a parameter by name: the same name from another source is an error.
  auto entryText = [](const std::string &name, const std::string &source) {
    return "func @" + name +
           R"((%x: tensor<2xf32> {kiln.name = "x"}) -> (tensor<3xf32> {kiln.name = "y"}) {
      %w = kiln.parameter "w" {source = ")" +
           source + R"(", conversion = "bf16"} : tensor<3x2xbf16>
      %b = kiln.parameter "b" : tensor<3xf32>
      %y = kiln.linear %x, %w, %b : (tensor<2xf32>, tensor<3x2xbf16>, tensor<3xf32>)
          -> tensor<3xf32>
      kiln.return %y : tensor<3xf32>
    }
)";
  };
  EXPECT_FALSE(plan(entryText("a", "w") + entryText("b", "v")));
  EXPECT_NE(errors.find("parameter 'w' is bf16 [3, 2] (conversion bf16 of 'v') here but "
                        "bf16 [3, 2] (conversion bf16 of 'w') in an earlier entry point"),
            std::string::npos)
      << errors;
}

TEST_F(PlanTest, Bf16InputIsAnError) {
  // A reduced precision is for weights: the runtime passes inputs as f32, i32 or i64.
  EXPECT_FALSE(plan(R"mlir(
    func @f(%x: tensor<2xf32> {kiln.name = "x"}, %w: tensor<3x2xbf16> {kiln.name = "w"})
        -> (tensor<3xf32> {kiln.name = "y"}) {
      %b = kiln.parameter "b" : tensor<3xf32>
      %y = kiln.linear %x, %w, %b : (tensor<2xf32>, tensor<3x2xbf16>, tensor<3xf32>)
          -> tensor<3xf32>
      kiln.return %y : tensor<3xf32>
    })mlir"));
  EXPECT_NE(
      errors.find("cannot compile a tensor of type 'tensor<3x2xbf16>' in a buffer of "
                  "kind 'input': bf16 is for parameters only"),
      std::string::npos)
      << errors;
}

} // namespace
