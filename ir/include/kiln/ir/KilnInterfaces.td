//===- KilnInterfaces.td - Interfaces of kiln ops ----------*- tablegen -*-===//
//
// Shape inference over symbolic dimensions, shared by the verifier (with unknown
// dimensions), the DSL (with named ones, to report errors at the user's call site) and
// the backends (to describe every buffer of an entry point in terms of its inputs).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_KILNINTERFACES_TD
#define KILN_IR_KILNINTERFACES_TD

include "mlir/IR/OpBase.td"

def Kiln_SymbolicShapeOpInterface : OpInterface<"SymbolicShapeOpInterface"> {
  let cppNamespace = "::kiln";
  let description = [{
    An op whose single result shape is a function of its operands' shapes and its
    attributes. The verifier checks the declared result type against the inferred shape.
  }];
  let methods = [
    InterfaceMethod<
      "Infers the result shape from the operands' symbolic shapes, or explains why "
      "they do not fit together.",
      "::kiln::ShapeResult", "inferSymbolicShape",
      (ins "::llvm::ArrayRef<::kiln::SymShape>":$operandShapes)>,
    InterfaceMethod<
      "The element type the result must have. By default that of the first operand; "
      "ops that make ids from floats or floats from ids (argmax, sinusoid, masks) "
      "override it. Called only once the operands are known to be ranked tensors.",
      "::mlir::Type", "inferElementType", (ins), /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return $_op->getOperand(0).getType()
            .template cast<::mlir::ShapedType>().getElementType();
      }]>,
  ];
  let verify = [{ return ::kiln::verifySymbolicShape($_op); }];
}

#endif // KILN_IR_KILNINTERFACES_TD
