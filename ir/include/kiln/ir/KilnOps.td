//===- KilnOps.td - Ops of the kiln dialect ----------------*- tablegen -*-===//
//
// One def per op. Shape and attribute invariants live in the ops' symbolic shape rules
// (ShapeRules.cpp) and are enforced by the verifier; passes never re-check them.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_KILNOPS_TD
#define KILN_IR_KILNOPS_TD

include "kiln/ir/KilnDialect.td"
include "kiln/ir/KilnInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Kiln_ShapedOp<string mnemonic, list<Trait> traits = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [NoSideEffect,
        DeclareOpInterfaceMethods<Kiln_SymbolicShapeOpInterface>])>;

//===----------------------------------------------------------------------===//
// Graph inputs and terminator
//===----------------------------------------------------------------------===//

def Kiln_ParameterOp : Kiln_Op<"parameter", [NoSideEffect]> {
  let summary = "a named weight, bound at run time";
  let description = [{
    Produces the model weight called `name`. The runtime binds it to the tensor of the
    same name in the weights file, whose shape and dtype must equal the result type, so
    every dimension is static.

    ```mlir
    %w = kiln.parameter "encoder.layers.0.linear1.weight" : tensor<2048x512xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Kiln_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let verifier = [{ return ::kiln::verifyParameter(*this); }];
}

def Kiln_ReturnOp : Kiln_Op<"return", [NoSideEffect, Terminator,
                                       HasParent<"::mlir::FuncOp">]> {
  let summary = "returns the outputs of an entry point";
  let description = [{
    ```mlir
    kiln.return %memory : tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_AnyTensor>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let verifier = [{ return ::kiln::verifyReturn(*this); }];
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Kiln_MatmulOp : Kiln_ShapedOp<"matmul"> {
  let summary = "batched matrix product with transpose flags";
  let description = [{
    `result[..., m, n] = sum_k lhs'[..., m, k] * rhs'[..., k, n]` where `lhs'` and `rhs'`
    are the operands with their last two dimensions swapped when `transpose_lhs` /
    `transpose_rhs` is set. Leading (batch) dimensions broadcast as in NumPy, so a
    rank-2 weight multiplies every row of a [B, S, D] activation.

    ```mlir
    %y = kiln.matmul %x, %w {transpose_rhs = true}
        : (tensor<?x?x512xf32>, tensor<2048x512xf32>) -> tensor<?x?x2048xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$lhs, Kiln_F32Tensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Kiln_BinaryOp<string mnemonic, string formula>
    : Kiln_ShapedOp<mnemonic, [SameOperandsAndResultElementType]> {
  let summary = "elementwise " # formula # " with NumPy broadcasting";
  let description = [{
    Dimensions of size 1 and missing leading dimensions broadcast. A dynamic dimension
    broadcasts only against a static 1 or the same dynamic dimension.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x, %b
        : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$lhs, Kiln_F32Tensor:$rhs);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Kiln_AddOp : Kiln_BinaryOp<"add", "lhs + rhs">;
def Kiln_MulOp : Kiln_BinaryOp<"mul", "lhs * rhs">;

class Kiln_UnaryOp<string mnemonic, list<Trait> traits = []>
    : Kiln_ShapedOp<mnemonic, !listconcat(traits, [SameOperandsAndResultType])> {
  let arguments = (ins Kiln_F32Tensor:$input);
  let results = (outs Kiln_F32Tensor:$result);
}

def Kiln_ScaleOp : Kiln_UnaryOp<"scale"> {
  let summary = "multiplies every element by a constant";
  let description = [{
    Kept apart from `kiln.mul` so that the constant is visible to passes (the attention
    fusion reads the softmax scale from it).

    ```mlir
    %s = kiln.scale %scores {factor = 0.125 : f32} : tensor<?x8x?x?xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, F32Attr:$factor);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasFolder = 1;
}

def Kiln_ReluOp : Kiln_UnaryOp<"relu"> {
  let summary = "max(x, 0)";
  let description = [{
    ```mlir
    %h = kiln.relu %x : tensor<?x?x2048xf32>
    ```
  }];
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Kiln_SoftmaxOp : Kiln_UnaryOp<"softmax"> {
  let summary = "softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis` (0 <= axis < rank). A row whose
    elements are all -inf (every key masked) gives 0, not NaN.

    ```mlir
    %p = kiln.softmax %s {axis = 3 : i64} : tensor<?x8x?x?xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, I64Attr:$axis);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Kiln_LayerNormOp : Kiln_ShapedOp<"layer_norm"> {
  let summary = "layer normalisation over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * gamma + beta`, mean and (biased) variance taken
    over the last dimension; `gamma` and `beta` are 1-D of that size.

    ```mlir
    %y = kiln.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32}
        : (tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, Kiln_F32Tensor:$gamma,
                   Kiln_F32Tensor:$beta, F32Attr:$epsilon);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$input `,` $gamma `,` $beta attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_ShapedOp<"reshape"> {
  let summary = "reinterprets the row-major data under a new shape";
  let description = [{
    Each entry of `shape` is a static size (> 0), 0 to keep the input's dimension at the
    same position, or -1 (at most once) for the size implied by the element count. The
    0 and -1 entries let a reshape keep dynamic batch and sequence dimensions.

    ```mlir
    %h = kiln.reshape %x {shape = [0, 0, 8, 64]}
        : (tensor<?x?x512xf32>) -> tensor<?x?x8x64xf32>
    ```
  }];
  let arguments = (ins Kiln_AnyTensor:$input, I64ArrayAttr:$shape);
  let results = (outs Kiln_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_ShapedOp<"transpose"> {
  let summary = "permutes dimensions";
  let description = [{
    `result` dimension i is `input` dimension `permutation[i]`.

    ```mlir
    %t = kiln.transpose %h {permutation = [0, 2, 1, 3]}
        : (tensor<?x?x8x64xf32>) -> tensor<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins Kiln_AnyTensor:$input, I64ArrayAttr:$permutation);
  let results = (outs Kiln_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

#endif // KILN_IR_KILNOPS_TD
