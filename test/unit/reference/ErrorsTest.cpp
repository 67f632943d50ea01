//===- ErrorsTest.cpp - Bad input to the interpreter is an error ----------===//
//
// Every way a caller (or a module) can be wrong gives an llvm::Error whose message says
// what and where, never a crash.
//
//===----------------------------------------------------------------------===//

#include "ReferenceTestUtil.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/Builders.h"

using namespace kiln::reference;
using namespace kiln::reference::test;

namespace {

class ReferenceErrors : public ReferenceTest {
protected:
  void SetUp() override {
    parse(R"mlir(
      func @f(%x: tensor<?x4xf32> {kiln.name = "x", kiln.dims = ["B", ""]},
              %m: tensor<?x4xf32> {kiln.name = "m", kiln.dims = ["B", ""]})
          -> (tensor<?x3xf32> {kiln.name = "y"}) {
        %w = kiln.parameter "w" : tensor<3x4xf32>
        %0 = kiln.mul %x, %m : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
        %1 = kiln.matmul %0, %w {transpose_rhs = true}
            : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
        kiln.return %1 : tensor<?x3xf32>
      }
      func @g(%x: tensor<?xf32>) -> tensor<2x3xf32> {
        %0 = kiln.reshape %x {shape = [-1, 3]} : (tensor<?xf32>) -> tensor<2x3xf32>
        kiln.return %0 : tensor<2x3xf32>
      }
      func @h(%x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
        %0 = kiln.add %x, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
        kiln.return %0 : tensor<?xf32>
      }
      func @k(%x: tensor<2x?xf32>, %y: tensor<?x3xf32>) -> tensor<2x3xf32> {
        %0 = kiln.matmul %x, %y : (tensor<2x?xf32>, tensor<?x3xf32>) -> tensor<2x3xf32>
        kiln.return %0 : tensor<2x3xf32>
      })mlir");
  }

  TensorMap goodInputs() {
    return {{"x", HostTensor::floats({2, 4}, randomFloats(8, 51))},
            {"m", HostTensor::floats({2, 4}, randomFloats(8, 52))}};
  }
  TensorMap goodParameters() {
    return {{"w", HostTensor::floats({3, 4}, randomFloats(12, 53))}};
  }
};

TEST_F(ReferenceErrors, GoodInputsRun) {
  TensorMap out = runOk("f", goodInputs(), goodParameters());
  EXPECT_EQ(out["y"].shape, (std::vector<int64_t>{2, 3}));
}

TEST_F(ReferenceErrors, UnknownEntryListsTheKnownOnes) {
  std::string error = runError("encode", goodInputs(), goodParameters());
  EXPECT_TRUE(contains(error, "no entry point named 'encode'"));
  EXPECT_TRUE(contains(error, "f, g, h, k"));
}

TEST_F(ReferenceErrors, MissingInput) {
  TensorMap inputs = goodInputs();
  inputs.erase("m");
  EXPECT_TRUE(contains(runError("f", inputs, goodParameters()),
                       "entry 'f' is missing input 'm'"));
}

TEST_F(ReferenceErrors, UnexpectedInput) {
  TensorMap inputs = goodInputs();
  inputs["mask"] = HostTensor::floats({2, 4}, randomFloats(8, 54));
  EXPECT_TRUE(contains(runError("f", inputs, goodParameters()),
                       "entry 'f' has no input named 'mask'"));
}

TEST_F(ReferenceErrors, MissingParameter) {
  EXPECT_TRUE(contains(runError("f", goodInputs(), {}), "parameter 'w' is missing"));
}

TEST_F(ReferenceErrors, ParameterOfWrongShape) {
  TensorMap parameters = {{"w", HostTensor::floats({4, 3}, randomFloats(12, 55))}};
  EXPECT_TRUE(contains(runError("f", goodInputs(), parameters),
                       "parameter 'w' has shape [4, 3] but its type is tensor<3x4xf32>"));
}

TEST_F(ReferenceErrors, InputOfWrongRank) {
  TensorMap inputs = goodInputs();
  inputs["x"] = HostTensor::floats({8}, randomFloats(8, 56));
  EXPECT_TRUE(contains(runError("f", inputs, goodParameters()),
                       "input 'x' has shape [8] but its type is tensor<?x4xf32>"));
}

TEST_F(ReferenceErrors, InputOfWrongStaticDim) {
  TensorMap inputs = goodInputs();
  inputs["x"] = HostTensor::floats({2, 5}, randomFloats(10, 57));
  EXPECT_TRUE(contains(runError("f", inputs, goodParameters()),
                       "input 'x' has shape [2, 5] but its type is tensor<?x4xf32>"));
}

TEST_F(ReferenceErrors, InputOfWrongElementType) {
  TensorMap inputs = goodInputs();
  inputs["x"] = HostTensor::ints({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_TRUE(contains(runError("f", inputs, goodParameters()),
                       "input 'x' holds i32 data but its type is tensor<?x4xf32>"));
}

TEST_F(ReferenceErrors, DataSizeDisagreesWithShape) {
  TensorMap inputs = goodInputs();
  inputs["x"] = HostTensor::floats({2, 4}, randomFloats(7, 58));
  EXPECT_TRUE(contains(runError("f", inputs, goodParameters()),
                       "input 'x' holds 7 elements but its shape [2, 4] has 8"));
}

TEST_F(ReferenceErrors, NegativeSize) {
  TensorMap inputs = goodInputs();
  inputs["x"] = HostTensor::floats({-2, 4}, randomFloats(8, 59));
  EXPECT_TRUE(contains(runError("f", inputs, goodParameters()), "has shape [-2, 4]"));
}

TEST_F(ReferenceErrors, NamedDimBoundTwiceDifferently) {
  TensorMap inputs = goodInputs();
  inputs["m"] = HostTensor::floats({3, 4}, randomFloats(12, 60));
  EXPECT_TRUE(contains(runError("f", inputs, goodParameters()),
                       "dimension 'B' is 2 in input 'x' but 3 in input 'm'"));
}

TEST_F(ReferenceErrors, DynamicSizesThatDoNotBroadcast) {
  std::string error = runError("h", {{"arg0", HostTensor::floats({3}, {1, 2, 3})},
                                     {"arg1", HostTensor::floats({5}, {1, 2, 3, 4, 5})}});
  EXPECT_TRUE(contains(error, "'kiln.add' at loc("));
  EXPECT_TRUE(contains(error, "shapes [3] and [5] do not broadcast"));
}

TEST_F(ReferenceErrors, DynamicContractionSizesDiffer) {
  std::string error =
      runError("k", {{"arg0", HostTensor::floats({2, 4}, randomFloats(8, 61))},
                     {"arg1", HostTensor::floats({5, 3}, randomFloats(15, 62))}});
  EXPECT_TRUE(contains(error, "'kiln.matmul'"));
  EXPECT_TRUE(contains(error, "contracts 4, rhs [5, 3] contracts 5"));
}

TEST_F(ReferenceErrors, ReshapeThatCannotInfer) {
  EXPECT_TRUE(
      contains(runError("g", {{"arg0", HostTensor::floats({7}, randomFloats(7, 63))}}),
               "cannot infer the -1 entry from 7 elements"));
}

TEST_F(ReferenceErrors, ResultContradictsStaticDeclaredSize) {
  // 9 elements reshape to [3, 3], which the declared tensor<2x3xf32> rules out.
  std::string error =
      runError("g", {{"arg0", HostTensor::floats({9}, randomFloats(9, 64))}});
  EXPECT_TRUE(contains(error, "'kiln.reshape'"));
  EXPECT_TRUE(contains(error, "result has shape [3, 3] but its type is tensor<2x3xf32>"));
}

TEST_F(ReferenceErrors, UnsupportedOp) {
  context.allowUnregisteredDialects();
  parse(R"mlir(
    func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = "kiln_future.gelu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      kiln.return %0 : tensor<2xf32>
    })mlir");
  EXPECT_TRUE(contains(runError("f", {{"arg0", HostTensor::floats({2}, {1, 2})}}),
                       "'kiln_future.gelu' at loc(\"-\":3:12): is not supported by the "
                       "reference interpreter"));
}

TEST_F(ReferenceErrors, ModuleBrokenAfterParsingIsRejected) {
  // A pass could leave an op invalid; the interpreter verifies before it reads
  // attributes.
  parse(R"mlir(
    func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = kiln.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
      kiln.return %0 : tensor<2x3xf32>
    })mlir");
  auto func = module->lookupSymbol<mlir::FuncOp>("f");
  kiln::SoftmaxOp softmax = *func.getOps<kiln::SoftmaxOp>().begin();
  softmax->setAttr("axis", mlir::Builder(&context).getI64IntegerAttr(7));
  std::string error =
      runError("f", {{"arg0", HostTensor::floats({2, 3}, randomFloats(6, 65))}});
  EXPECT_TRUE(contains(error, "entry 'f' is invalid"));
  EXPECT_TRUE(contains(error, "'kiln.softmax' op axis 7 is out of range"));
}

TEST_F(ReferenceErrors, ExternalFunctionIsNotAnEntry) {
  parse("func private @f(tensor<2xf32>) -> tensor<2xf32>");
  EXPECT_TRUE(contains(runError("f", {{"arg0", HostTensor::floats({2}, {1, 2})}}),
                       "must have a body"));
}

} // namespace
