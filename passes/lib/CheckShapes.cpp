//===- CheckShapes.cpp - Symbolic shape checking of entry points ----------===//

#include "PassDetail.h"

#include "kiln/ir/SymbolicShapes.h"

using namespace mlir;

namespace {
struct CheckShapesPass : public kiln::CheckShapesBase<CheckShapesPass> {
  void runOnOperation() override {
    if (failed(kiln::inferSymbolicShapes(getOperation())))
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> kiln::createCheckShapesPass() {
  return std::make_unique<CheckShapesPass>();
}
