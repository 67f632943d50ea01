//===- FuseAttentionNumericsTest.cpp - Fusing never changes the results ---===//
//
// Each form of attention kiln-fuse-attention accepts, and a small Transformer built with
// the nn library, run by the reference interpreter before and after the default
// pipeline on the same random inputs and weights: the fusion must have happened (no
// kiln.softmax left) and the outputs must agree to f32 rounding,
// ‖fused − unfused‖ / ‖unfused‖ <= 1e-5.
//
//===----------------------------------------------------------------------===//

#include "kiln/backends/reference/Interpreter.h"
#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/nn/Transformer.h"
#include "kiln/ir/DimExpr.h"
#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SymbolicShapes.h"
#include "kiln/passes/Passes.h"

#include "mlir/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using kiln::reference::HostTensor;
using kiln::reference::TensorMap;

namespace {

/// The sizes of the named dynamic dims in every test: T queries, S keys.
const std::map<std::string, int64_t> kDims = {{"B", 2}, {"T", 5}, {"S", 7}};

/// Random inputs for `func`: f32 uniform in [-2, 2); i32 within the input's kiln.bounds
/// or else in [0, S] with the first element 0 (a sequence whose keys are all padding).
TensorMap randomInputs(FuncOp func, std::mt19937 &rng) {
  TensorMap inputs;
  auto lookup = [](StringRef name) -> Optional<int64_t> {
    auto it = kDims.find(name.str());
    return it == kDims.end() ? None : Optional<int64_t>(it->second);
  };
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto type = func.getArgument(i).getType().cast<RankedTensorType>();
    auto dims = func.getArgAttrOfType<ArrayAttr>(i, kiln::kDimsAttr);
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < type.getRank(); ++d)
      shape.push_back(type.isDynamicDim(d)
                          ? kDims.at(dims[d].cast<StringAttr>().getValue().str())
                          : type.getDimSize(d));
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::string name =
        func.getArgAttrOfType<StringAttr>(i, kiln::kNameAttr).getValue().str();
    if (type.getElementType().isF32()) {
      std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
      std::vector<float> data(n);
      for (float &x : data)
        x = dist(rng);
      inputs[name] = HostTensor::floats(shape, data);
      continue;
    }
    int64_t lo = 0, hi = kDims.at("S");
    bool bounded = false;
    if (auto bounds = func.getArgAttrOfType<ArrayAttr>(i, kiln::kBoundsAttr)) {
      lo = cantFail(
          kiln::evaluateDimExpr(bounds[0].cast<StringAttr>().getValue(), lookup));
      hi = cantFail(
          kiln::evaluateDimExpr(bounds[1].cast<StringAttr>().getValue(), lookup));
      bounded = true;
    }
    std::uniform_int_distribution<int32_t> dist(lo, hi);
    std::vector<int32_t> data(n);
    for (int32_t &x : data)
      x = dist(rng);
    if (!bounded)
      data[0] = 0;
    inputs[name] = HostTensor::ints(shape, data);
  }
  return inputs;
}

/// Random weights for every kiln.parameter of `module`.
TensorMap randomParameters(ModuleOp module, std::mt19937 &rng) {
  TensorMap parameters;
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  module.walk([&](kiln::ParameterOp p) {
    auto type = p.getType().cast<RankedTensorType>();
    std::vector<float> data(type.getNumElements());
    for (float &x : data)
      x = dist(rng);
    parameters[p.name().str()] = HostTensor::floats(type.getShape().vec(), data);
  });
  return parameters;
}

double relativeError(const std::vector<float> &a, const std::vector<float> &b) {
  double diff = 0.0, norm = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    norm += double(b[i]) * b[i];
  }
  return norm == 0.0 ? std::sqrt(diff) : std::sqrt(diff / norm);
}

/// Runs every entry of `module` unfused (as written) and after the default pipeline;
/// expects `attention` kiln.attention ops and no softmax after it, and equal outputs.
void expectFusionKeepsResults(ModuleOp module, int attention) {
  OwningOpRef<ModuleOp> fused = module.clone();
  PassManager pm(module.getContext());
  kiln::buildDefaultPipeline(pm);
  ASSERT_TRUE(succeeded(pm.run(*fused)));
  int attentionOps = 0, softmaxOps = 0;
  fused->walk([&](kiln::AttentionOp) { ++attentionOps; });
  fused->walk([&](kiln::SoftmaxOp) { ++softmaxOps; });
  EXPECT_EQ(attentionOps, attention);
  EXPECT_EQ(softmaxOps, 0);

  std::mt19937 rng(5);
  TensorMap parameters = randomParameters(module, rng);
  for (FuncOp func : module.getOps<FuncOp>()) {
    // reference::run runs one entry without a session, so entries that keep states
    // (decode_start, decode_step) are left to test/unit/generate, which runs them in
    // order on the compiled translator.
    bool usesStates = false;
    func.walk([&](Operation *op) {
      usesStates |= isa<kiln::StateAllocOp, kiln::StateWriteOp, kiln::StateReadOp,
                        kiln::KvAppendOp>(op);
    });
    if (usesStates)
      continue;
    TensorMap inputs = randomInputs(func, rng);
    auto unfusedOut = kiln::reference::run(module, func.getName(), inputs, parameters);
    ASSERT_TRUE(bool(unfusedOut)) << llvm::toString(unfusedOut.takeError());
    auto fusedOut = kiln::reference::run(*fused, func.getName(), inputs, parameters);
    ASSERT_TRUE(bool(fusedOut)) << llvm::toString(fusedOut.takeError());
    for (const auto &[name, expected] : *unfusedOut) {
      const HostTensor &actual = fusedOut->at(name);
      ASSERT_EQ(actual.shape, expected.shape) << name;
      EXPECT_LE(relativeError(actual.f32, expected.f32), 1e-5)
          << func.getName().str() << " output " << name;
    }
  }
}

class FuseAttentionNumerics : public ::testing::Test {
protected:
  FuseAttentionNumerics() { context.loadDialect<kiln::KilnDialect>(); }

  void check(StringRef text, int attention) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(module) << text.str();
    expectFusionKeepsResults(*module, attention);
  }

  MLIRContext context;
};

TEST_F(FuseAttentionNumerics, MaskedFillOfABooleanPaddingMaskDivisionAndTransposedK) {
  check(R"mlir(
    func @f(%q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
            %k: tensor<?x2x?x4xf32> {kiln.name = "k", kiln.dims = ["B", "", "S", ""]},
            %v: tensor<?x2x?x3xf32> {kiln.name = "v", kiln.dims = ["B", "", "S", ""]},
            %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"]}) -> tensor<?x2x?x3xf32> {
      %kt = kiln.transpose %k {permutation = [0, 1, 3, 2]} : (tensor<?x2x?x4xf32>) -> tensor<?x2x4x?xf32>
      %s = kiln.matmul %q, %kt : (tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32>
      %d = kiln.constant dense<2.0> : tensor<f32>
      %c = kiln.div %s, %d : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
      %pm = kiln.padding_mask %len, %k {axis = 2 : i64} : (tensor<?xi32>, tensor<?x2x?x4xf32>) -> tensor<?x?xi1>
      %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xi1>) -> tensor<?x1x1x?xi1>
      %a = kiln.masked_fill %c, %m {value = 0xFF800000 : f32} : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x2x?x?xf32>
      %p = kiln.softmax %a {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x3xf32>) -> tensor<?x2x?x3xf32>
      kiln.return %o : tensor<?x2x?x3xf32>
    })mlir",
        1);
}

TEST_F(FuseAttentionNumerics, BooleanCausalMaskAndScaledQuery) {
  check(R"mlir(
    func @f(%q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
            %k: tensor<?x2x?x4xf32> {kiln.name = "k", kiln.dims = ["B", "", "T", ""]},
            %v: tensor<?x2x?x4xf32> {kiln.name = "v", kiln.dims = ["B", "", "T", ""]}) -> tensor<?x2x?x4xf32> {
      %c = kiln.constant dense<0.5> : tensor<1x1x1x1xf32>
      %qs = kiln.mul %c, %q : (tensor<1x1x1x1xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      %s = kiln.matmul %qs, %k {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
      %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<?x2x?x4xf32>) -> tensor<?x?xi1>
      %a = kiln.masked_fill %s, %cm {value = 0xFF800000 : f32} : (tensor<?x2x?x?xf32>, tensor<?x?xi1>) -> tensor<?x2x?x?xf32>
      %p = kiln.softmax %a {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      kiln.return %o : tensor<?x2x?x4xf32>
    })mlir",
        1);
}

TEST_F(FuseAttentionNumerics, ThreeDimensionalFormMaskFirstAndMultipliedScores) {
  check(R"mlir(
    func @f(%q: tensor<?x?x8xf32> {kiln.name = "q", kiln.dims = ["B", "T", ""]},
            %k: tensor<?x?x8xf32> {kiln.name = "k", kiln.dims = ["B", "S", ""]},
            %v: tensor<?x?x8xf32> {kiln.name = "v", kiln.dims = ["B", "S", ""]},
            %m: tensor<?x?xf32> {kiln.name = "m", kiln.dims = ["T", "S"]}) -> tensor<?x?x8xf32> {
      %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x?xf32>
      %c = kiln.constant dense<0.3> : tensor<f32>
      %x = kiln.mul %s, %c : (tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
      %a = kiln.add %m, %x : (tensor<?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
      %p = kiln.softmax %a {axis = 2 : i64} : tensor<?x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x?x?xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
      kiln.return %o : tensor<?x?x8xf32>
    })mlir",
        1);
}

TEST_F(FuseAttentionNumerics, CausalPlusPaddingAndMaskUnderTheScale) {
  // Decoder self-attention masking both the future and the padding: the causal mask
  // becomes the attribute, the padding mask the operand. The second attention adds its
  // mask before scaling, which is exact for a 0 / -inf mask and a positive scale.
  check(R"mlir(
    func @f(%q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
            %v: tensor<?x2x?x4xf32> {kiln.name = "v", kiln.dims = ["B", "", "T", ""]},
            %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"]})
        -> (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) {
      %pm = kiln.padding_mask %len, %q {axis = 2 : i64} : (tensor<?xi32>, tensor<?x2x?x4xf32>) -> tensor<?x?xf32>
      %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
      %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<?x2x?x4xf32>) -> tensor<?x?xf32>
      %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
      %c = kiln.scale %s {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
      %a = kiln.add %c, %cm : (tensor<?x2x?x?xf32>, tensor<?x?xf32>) -> tensor<?x2x?x?xf32>
      %b = kiln.add %a, %m : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
      %p = kiln.softmax %b {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      %s2 = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
      %a2 = kiln.add %s2, %m : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x?xf32>
      %c2 = kiln.scale %a2 {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
      %p2 = kiln.softmax %c2 {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o2 = kiln.matmul %p2, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      kiln.return %o, %o2 : tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
    })mlir",
        2);
}

TEST_F(FuseAttentionNumerics, KeysStoredTransposedGetATranspose) {
  // kt is [B, H, d, S] as it comes: the fused op needs K [B, H, S, d].
  check(R"mlir(
    func @f(%q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
            %kt: tensor<?x2x4x?xf32> {kiln.name = "kt", kiln.dims = ["B", "", "", "S"]},
            %v: tensor<?x2x?x4xf32> {kiln.name = "v", kiln.dims = ["B", "", "S", ""]}) -> tensor<?x2x?x4xf32> {
      %s = kiln.matmul %q, %kt : (tensor<?x2x?x4xf32>, tensor<?x2x4x?xf32>) -> tensor<?x2x?x?xf32>
      %p = kiln.softmax %s {axis = 3 : i64} : tensor<?x2x?x?xf32>
      %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
      kiln.return %o : tensor<?x2x?x4xf32>
    })mlir",
        1);
}

kiln::dsl::Model buildTinyTransformer() {
  kiln::dsl::ModelBuilder m("tiny");
  kiln::dsl::nn::Transformer transformer(m, "transformer",
                                         kiln::dsl::nn::TransformerConfig::tiny());
  transformer.declareEntries(m);
  return m.finish();
}

TEST(FuseAttentionNumericsModels, SmallTransformerEncodeAndDecode) {
  kiln::dsl::Model model = buildTinyTransformer();
  ASSERT_TRUE(model.ok());
  // 2 encoder self-attentions; 2 causal self- and 2 cross-attentions in decode; 2 self-
  // (over the cache) and 2 cross-attentions in decode_step.
  expectFusionKeepsResults(model.module(), 10);
}

} // namespace
