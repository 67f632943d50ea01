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

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  kiln::registerAllKilnPasses();

  mlir::DialectRegistry registry;
  registry.insert<kiln::KilnDialect, mlir::StandardOpsDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
