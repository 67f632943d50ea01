//===- WeightPanelsTest.cpp - which weights packWeightPanels stores in panels ----===//
//
// A module with every kind of weight reader: an encode's linears (packed; two row
// slices of a stacked weight each by their rows, one inside a kernel group), a decode
// step's matrix-vector linears (kept, and with them the same weight in every other
// entry), a tied table that an embedding gathers (kept). The packed
// module must compute what the original does, bit for bit, on the same f32
// checkpoint: the interpreter converts the new parameters from their sources.
//
//===----------------------------------------------------------------------===//

#include "KernelHarness.h"

#include "kiln/ir/KilnOps.h"

#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>
#include <map>

using namespace kiln;
using namespace kiln::halide_backend;
using namespace kiln::halide_backend::test;

namespace {

constexpr const char *kModule = R"mlir(
func @encode(%x: tensor<?x?x8xf32> {kiln.name = "x", kiln.dims = ["B", "S", ""]},
             %ids: tensor<?x?xi32> {kiln.name = "ids", kiln.dims = ["B", "S"]})
    -> (tensor<?x?x20xf32> {kiln.name = "y"}, tensor<?x?x12xf32> {kiln.name = "kv"},
        tensor<?x?x7xf32> {kiln.name = "logits"}, tensor<?x?x6xf32> {kiln.name = "q"}) {
  %w = kiln.parameter "enc.w" : tensor<20x8xf32>
  %b = kiln.parameter "enc.b" : tensor<20xf32>
  %y = kiln.linear %x, %w, %b : (tensor<?x?x8xf32>, tensor<20x8xf32>, tensor<20xf32>)
      -> tensor<?x?x20xf32>
  %s = kiln.parameter "stack" : tensor<18x8xf32>
  %sb = kiln.parameter "stack.b" : tensor<12xf32>
  %kvw = kiln.slice %s {axis = 0 : i64, start = 6 : i64, end = 18 : i64}
      : (tensor<18x8xf32>) -> tensor<12x8xf32>
  %kv = kiln.fusion %x, %kvw, %sb : (tensor<?x?x8xf32>, tensor<12x8xf32>, tensor<12xf32>)
      -> tensor<?x?x12xf32> {
  ^bb0(%fx: tensor<?x?x8xf32>, %fw: tensor<12x8xf32>, %fb: tensor<12xf32>):
    %l = kiln.linear %fx, %fw, %fb : (tensor<?x?x8xf32>, tensor<12x8xf32>,
        tensor<12xf32>) -> tensor<?x?x12xf32>
    %r = kiln.relu %l : tensor<?x?x12xf32>
    kiln.yield %r : tensor<?x?x12xf32>
  }
  %qw = kiln.slice %s {axis = 0 : i64, start = 0 : i64, end = 6 : i64}
      : (tensor<18x8xf32>) -> tensor<6x8xf32>
  %qb = kiln.parameter "q.b" : tensor<6xf32>
  %q = kiln.linear %x, %qw, %qb : (tensor<?x?x8xf32>, tensor<6x8xf32>, tensor<6xf32>)
      -> tensor<?x?x6xf32>
  %t = kiln.parameter "table" : tensor<7x8xf32>
  %e = kiln.embedding %t, %ids : (tensor<7x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %logits = kiln.matmul %e, %t {transpose_rhs = true}
      : (tensor<?x?x8xf32>, tensor<7x8xf32>) -> tensor<?x?x7xf32>
  kiln.return %y, %kv, %logits, %q
      : tensor<?x?x20xf32>, tensor<?x?x12xf32>, tensor<?x?x7xf32>, tensor<?x?x6xf32>
}

func @decode_step(%h: tensor<?x1x8xf32> {kiln.name = "h", kiln.dims = ["B", "", ""]})
    -> (tensor<?x1x6xf32> {kiln.name = "q"}, tensor<?x1x20xf32> {kiln.name = "f"}) {
  %qw = kiln.parameter "dec.q" : tensor<6x8xf32>
  %qb = kiln.parameter "q.b" : tensor<6xf32>
  %q = kiln.linear %h, %qw, %qb : (tensor<?x1x8xf32>, tensor<6x8xf32>, tensor<6xf32>)
      -> tensor<?x1x6xf32>
  %d = kiln.parameter "dec.w" : tensor<20x8xf32>
  %db = kiln.parameter "enc.b" : tensor<20xf32>
  %f = kiln.linear %h, %d, %db : (tensor<?x1x8xf32>, tensor<20x8xf32>, tensor<20xf32>)
      -> tensor<?x1x20xf32>
  kiln.return %q, %f : tensor<?x1x6xf32>, tensor<?x1x20xf32>
}
)mlir";

class WeightPanels : public ::testing::Test {
protected:
  WeightPanels() { context.loadDialect<KilnDialect>(); }

  mlir::OwningOpRef<mlir::ModuleOp> parse() {
    auto module = mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
    EXPECT_TRUE(module) << "cannot parse the test module";
    return module;
  }

  /// "NAME: TYPE (conversion of SOURCE rows [a, b))" for each parameter of `entry`.
  static std::map<std::string, std::string> parameters(mlir::ModuleOp module,
                                                       llvm::StringRef entry) {
    std::map<std::string, std::string> found;
    auto func = module.lookupSymbol<mlir::FuncOp>(entry);
    func.walk([&](ParameterOp p) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << p.getType();
      if (p.conversion())
        os << " (" << *p.conversion() << " of " << *p.source() << ")";
      if (auto rows = p.rows())
        os << " rows " << *rows;
      found[p.name().str()] = os.str();
    });
    return found;
  }

  /// The outputs of `entry` on fresh random inputs and checkpoint.
  static reference::TensorMap run(mlir::ModuleOp module, llvm::StringRef entry) {
    reference::TensorMap checkpoint, inputs;
    unsigned seed = 3;
    for (auto [name, shape] :
         std::vector<std::pair<std::string, Shape>>{{"enc.w", {20, 8}},
                                                    {"enc.b", {20}},
                                                    {"stack", {18, 8}},
                                                    {"stack.b", {12}},
                                                    {"table", {7, 8}},
                                                    {"q.b", {6}},
                                                    {"dec.q", {6, 8}},
                                                    {"dec.w", {20, 8}}})
      checkpoint[name] = randomTensor(shape, seed++);
    if (entry == "encode") {
      inputs["x"] = randomTensor({2, 3, 8}, 20);
      inputs["ids"] = HostTensor::ints({2, 3}, {0, 6, 3, 2, 5, 1});
    } else {
      inputs["h"] = randomTensor({3, 1, 8}, 21);
    }
    llvm::Expected<reference::TensorMap> outputs =
        reference::run(module, entry, inputs, checkpoint);
    if (!outputs) {
      ADD_FAILURE() << llvm::toString(outputs.takeError());
      return {};
    }
    return *outputs;
  }

  mlir::MLIRContext context;
};

TEST_F(WeightPanels, PacksOnlyWeightsThatManyRowsMultiply) {
  auto module = parse();
  ASSERT_TRUE(mlir::succeeded(packWeightPanels(*module, 4)));
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*module)));
  std::map<std::string, std::string> encode = parameters(*module, "encode");
  EXPECT_EQ(encode["enc.w.panels"], "tensor<5x8x4xf32> (panels of enc.w) rows [0, 20]");
  // Two row slices of a stacked weight, one read by a kernel group: each its panels.
  EXPECT_EQ(encode["stack[0:6].panels"],
            "tensor<2x8x4xf32> (panels of stack) rows [0, 6]");
  EXPECT_EQ(encode["stack[6:18].panels"],
            "tensor<3x8x4xf32> (panels of stack) rows [6, 18]");
  EXPECT_EQ(encode.count("stack"), 0u);
  EXPECT_EQ(encode["table"], "tensor<7x8xf32>") << "an embedding gathers it too";
  EXPECT_EQ(encode["enc.b"], "tensor<20xf32>");
  std::map<std::string, std::string> step = parameters(*module, "decode_step");
  EXPECT_EQ(step["dec.w"], "tensor<20x8xf32>") << "a matrix-vector product reads it";
  EXPECT_EQ(step["dec.q"], "tensor<6x8xf32>");
}

TEST_F(WeightPanels, AWeightThatOneEntryReadsAsStoredIsNotPackedAnywhere) {
  // enc.w is also the decode step's matrix-vector weight here: one layout serves both.
  std::string text = kModule;
  text.replace(text.find("\"dec.w\""), 7, "\"enc.w\"");
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  ASSERT_TRUE(mlir::succeeded(packWeightPanels(*module, 4)));
  EXPECT_EQ(parameters(*module, "encode")["enc.w"], "tensor<20x8xf32>");
}

TEST_F(WeightPanels, PackedModuleComputesTheSame) {
  auto original = parse(), packed = parse();
  ASSERT_TRUE(mlir::succeeded(packWeightPanels(*packed, 4)));
  for (llvm::StringRef entry : {"encode", "decode_step"}) {
    reference::TensorMap want = run(*original, entry), got = run(*packed, entry);
    ASSERT_EQ(want.size(), got.size()) << entry.str();
    for (auto &[name, tensor] : want) {
      EXPECT_EQ(got[name].shape, tensor.shape) << name;
      EXPECT_EQ(got[name].f32, tensor.f32) << name;
    }
  }
}

TEST_F(WeightPanels, WidthZeroLeavesTheModule) {
  auto module = parse();
  std::string before;
  llvm::raw_string_ostream(before) << *module;
  ASSERT_TRUE(mlir::succeeded(packWeightPanels(*module, 0)));
  std::string after;
  llvm::raw_string_ostream(after) << *module;
  EXPECT_EQ(before, after);
}

} // namespace
