//===- SourceLocationTest.cpp - Ops of nn modules point at the user's line -===//
//
// An op built inside an nn module carries the chain of module calls, outermost the
// user's line; an op the user built directly a plain file location; an error inside a
// module is reported at the user's line with the modules as notes.
//
//===----------------------------------------------------------------------===//

#include "kiln/frontend/Kiln.h"
#include "kiln/frontend/nn/Transformer.h"

#include "kiln/ir/KilnOps.h"
#include "kiln/ir/SourceLocation.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <set>

using namespace kiln;
using namespace kiln::dsl;

namespace {

/// The modules of the frames inside modules, outermost first, joined by " / ".
std::string modules(const std::vector<SourceFrame> &frames) {
  std::string text;
  for (size_t i = 1; i < frames.size(); ++i)
    text += (i == 1 ? "" : " / ") + frames[i].module;
  return text;
}

TEST(SourceLocation, OpsOfNnModulesCarryTheChainFromTheUsersLine) {
  ModelBuilder m("tiny");
  nn::Transformer transformer(m, "transformer", nn::TransformerConfig::tiny());
  unsigned line = __LINE__ + 1;
  transformer.declareEntries(m);
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();

  std::set<std::string> chains;
  bool sawAttentionSoftmax = false, sawParameterInModule = false;
  model.module().walk([&](mlir::Operation *op) {
    if (mlir::isa<mlir::ModuleOp>(op))
      return;
    std::vector<SourceFrame> frames = sourceFrames(op->getLoc());
    ASSERT_GE(frames.size(), 2u) << op->getName().getStringRef().str();
    EXPECT_EQ(frames.front().file, __FILE__);
    EXPECT_EQ(frames.front().line, line);
    EXPECT_EQ(frames.front().module, "");
    EXPECT_EQ(frames[1].module, "nn::Transformer 'transformer'");
    for (size_t i = 1; i < frames.size(); ++i)
      EXPECT_TRUE(llvm::StringRef(frames[i].file).endswith(".cpp")) << frames[i].file;
    chains.insert(chainText(frames));
    std::string names = modules(frames);
    if (mlir::isa<SoftmaxOp>(op) &&
        names == "nn::Transformer 'transformer' / nn::Encoder 'transformer.encoder' / "
                 "nn::EncoderLayer 'transformer.encoder.layers.0' / "
                 "nn::MultiHeadAttention 'transformer.encoder.layers.0.self_attn'") {
      sawAttentionSoftmax = true;
      EXPECT_EQ(llvm::sys::path::filename(frames.back().file), "Attention.cpp");
    }
    if (auto parameter = mlir::dyn_cast<ParameterOp>(op);
        parameter && parameter.name() == "transformer.encoder.layers.0.linear1.bias")
      sawParameterInModule =
          frames.back().module == "nn::Linear 'transformer.encoder.layers.0.linear1'";
  });
  EXPECT_TRUE(sawAttentionSoftmax);
  EXPECT_TRUE(sawParameterInModule);
  // The same line of every layer reads the same: the chain holds lines, not names.
  std::string prefix = std::string(__FILE__) + ":" + std::to_string(line) + " > ";
  for (const std::string &chain : chains)
    EXPECT_EQ(chain.rfind(prefix, 0), 0u) << chain;
  EXPECT_TRUE(llvm::any_of(chains, [](const std::string &chain) {
    return llvm::StringRef(chain).contains(" > Attention.cpp:");
  }));
}

TEST(SourceLocation, OpsTheUserBuildsKeepAPlainFileLocation) {
  ModelBuilder m("plain");
  Entry e = m.entry("forward");
  Tensor x = e.input("x", DType::F32, {dyn("B"), 4});
  unsigned line = __LINE__ + 1;
  e.output("y", relu(x));
  Model model = m.finish();
  ASSERT_TRUE(model.ok()) << model.errors()[0].str();
  int relus = 0;
  model.module().walk([&](ReluOp op) {
    ++relus;
    auto loc = op->getLoc().dyn_cast<mlir::FileLineColLoc>();
    ASSERT_TRUE(loc);
    EXPECT_EQ(loc.getLine(), line);
    EXPECT_EQ(chainText(sourceFrames(op->getLoc())),
              std::string(__FILE__) + ":" + std::to_string(line));
  });
  EXPECT_EQ(relus, 1);
}

TEST(SourceLocation, AnErrorInsideAModuleIsAtTheUsersLineWithTheModulesAsNotes) {
  ModelBuilder m("bad");
  nn::MultiHeadAttention attention(m, "h.0.attn.", /*dModel=*/16, /*heads=*/2);
  Entry e = m.entry("forward");
  // Width 12 where the attention projects 16.
  Tensor x = e.input("x", DType::F32, {dyn("B"), dyn("S"), 12});
  unsigned line = __LINE__ + 1;
  e.output("y", attention(x, x, x, std::nullopt));
  Model model = m.finish();
  ASSERT_FALSE(model.ok());
  // The q, k and v projections all fail; the first error is the only one.
  ASSERT_EQ(model.errors().size(), 1u) << model.errors()[1].str();
  const BuildError &error = model.errors()[0];
  EXPECT_EQ(error.file, __FILE__);
  EXPECT_EQ(error.line, line) << error.str();
  ASSERT_EQ(error.notes.size(), 2u) << error.str();
  EXPECT_EQ(error.notes[0].message, "in nn::MultiHeadAttention 'h.0.attn'");
  EXPECT_EQ(error.notes[0].file, __FILE__);
  EXPECT_EQ(error.notes[0].line, line);
  EXPECT_EQ(error.notes[1].message, "raised here");
  EXPECT_EQ(llvm::sys::path::filename(error.notes[1].file), "Attention.cpp");
  std::string text = error.str();
  EXPECT_NE(text.find(": note: in nn::MultiHeadAttention 'h.0.attn'\n"),
            std::string::npos)
      << text;
}

TEST(SourceLocation, AFusedLocationGivesEachDistinctChainInOrder) {
  mlir::MLIRContext context;
  auto file = [&](const char *name, unsigned line) -> mlir::Location {
    return mlir::FileLineColLoc::get(&context, name, line, 1);
  };
  auto inModule = [&](const char *module, mlir::Location inner, mlir::Location caller) {
    return mlir::CallSiteLoc::get(
        mlir::NameLoc::get(mlir::StringAttr::get(&context, module), inner), caller);
  };
  mlir::Location user = file("/src/model.cpp", 32);
  mlir::Location q = inModule("nn::Linear 'q'", file("/kiln/Layers.cpp", 17), user);
  mlir::Location k = inModule("nn::Linear 'k'", file("/kiln/Layers.cpp", 17), user);
  mlir::Location plain = file("/src/model.cpp", 40);
  mlir::Location fused = mlir::FusedLoc::get(&context, {q, plain, k, q});

  std::vector<std::vector<SourceFrame>> chains = sourceChains(fused);
  ASSERT_EQ(chains.size(), 3u);
  EXPECT_EQ(chains[0][1].module, "nn::Linear 'q'");
  EXPECT_EQ(chains[1].size(), 1u);
  EXPECT_EQ(chains[2][1].module, "nn::Linear 'k'");
  // q and k differ in their module only: one line of text.
  EXPECT_EQ(chainTexts(fused),
            (std::vector<std::string>{"/src/model.cpp:32 > Layers.cpp:17",
                                      "/src/model.cpp:40"}));
  EXPECT_EQ(sourceFrames(fused).size(), 2u);
  EXPECT_TRUE(sourceFrames(mlir::UnknownLoc::get(&context)).empty());
}

} // namespace
