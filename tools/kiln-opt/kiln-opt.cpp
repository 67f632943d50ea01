//===- kiln-opt.cpp - Runs kiln passes on MLIR text -----------------------===//
//
// The mlir-opt of Kiln: parses a module, runs the passes named on the command line and
// prints the result. The lit tests drive every pass through it.
//
//===----------------------------------------------------------------------===//

#include "kiln/ir/KilnDialect.h"
#include "kiln/passes/Passes.h"

#include "mlir/Dialect/StandardOps/IR/Ops.h"
#include "mlir/IR/Dialect.h"
#include "mlir/Support/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  // --view-op-graph: the graph as Graphviz DOT, e.g. to see what the fusion did.
  mlir::registerViewOpGraphPass();
  kiln::registerAllKilnPasses();

  // Read when the fusion runs, after the command line is parsed.
  static llvm::cl::opt<bool> fusionRemarks(
      "kiln-fusion-remarks",
      llvm::cl::desc("a remark at each kiln.softmax that kiln-fuse-attention leaves "
                     "unfused, saying why (whatever the pass's own option says)"),
      llvm::cl::init(false),
      llvm::cl::cb<void, bool>([](bool on) { kiln::setFusionRemarksEverywhere(on); }));

  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::StandardOpsDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
