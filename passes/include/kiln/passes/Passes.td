//===- Passes.td - Kiln's passes ---------------------------*- tablegen -*-===//

#ifndef KILN_PASSES_PASSES_TD
#define KILN_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def CheckShapes : Pass<"kiln-check-shapes", "mlir::FuncOp"> {
  let summary = "checks that every dynamic dimension of an entry point is accounted for";
  let description = [{
    Runs the ops' symbolic shape rules over each entry point, starting from the names its
    inputs give their dynamic dimensions. Fails, at the offending op, when two dynamic
    dimensions that must be equal have different names (e.g. adding a [B, S, D] tensor to
    a [B, T, D] one) or an input leaves a dynamic dimension unnamed. After this pass the
    backends can describe every buffer to the runtime in terms of the inputs.
  }];
  let constructor = "kiln::createCheckShapesPass()";
}

#endif // KILN_PASSES_PASSES_TD
