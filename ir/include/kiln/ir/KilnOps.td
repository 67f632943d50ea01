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

/// A dense f32 elements attribute (MLIR 14's OpBase defines only the f64 one).
def Kiln_F32ElementsAttr : FloatElementsAttr<32>;

// `overrides` names the interface methods with a default that the op replaces
// ("inferElementType" for ops whose result element type differs from operand 0's).
class Kiln_ShapedOp<string mnemonic, list<Trait> traits = [],
                    list<string> overrides = []>
    : Kiln_Op<mnemonic, !listconcat(traits, [NoSideEffect,
        DeclareOpInterfaceMethods<Kiln_SymbolicShapeOpInterface, overrides>])>;

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

    A weight stored at a reduced precision (kiln-weight-precision) names the checkpoint
    tensor it is computed from (`source`), how (`conversion`: "bf16" rounds to the
    nearest bf16, "int8" quantizes each row symmetrically to [-127, 127], "int8_scale"
    is those rows' scales, max|row| / 127) and, when it covers only some rows of the
    source, which (`rows`, [start, end)). The runtime converts at load time, or maps a
    pre-converted tensor stored under the parameter's own name. "panels" lays the
    source's rows out for `kiln.unpack_panels`: f32 `[P, K, W]`, rows past the source's
    zero.

    ```mlir
    %q = kiln.parameter "decoder.layers.0.linear1.weight"
        {source = "decoder.layers.0.linear1.weight", conversion = "int8"} : tensor<2048x512xi8>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<StrAttr>:$source,
                   OptionalAttr<StrAttr>:$conversion, OptionalAttr<I64ArrayAttr>:$rows);
  let results = (outs Kiln_ParameterTensor:$result);
  let builders = [
    // A weight bound as the checkpoint stores it.
    OpBuilder<(ins "::mlir::Type":$type, "::llvm::StringRef":$name), [{
      build($_builder, $_state, type, $_builder.getStringAttr(name), nullptr, nullptr,
            nullptr);
    }]>
  ];
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let verifier = [{ return ::kiln::verifyParameter(*this); }];
}

def Kiln_UnpackPanelsOp : Kiln_Op<"unpack_panels", [NoSideEffect]> {
  let summary = "a weight matrix read from its column panels";
  let description = [{
    `result[n][k] = panels[n / W][k][n % W]` for the `[N, K]` result of `[P, K, W]`
    panels, (P - 1) * W < N <= P * W. The Halide backend stores the f32 weights of its
    CPU matrix products this way (a `kiln.parameter` with conversion "panels"), so that
    each panel of W output columns is one contiguous stream; it never materializes the
    result, whose readers take it as an index map of the panels.

    ```mlir
    %p = kiln.parameter "l.weight.panels" {source = "l.weight", conversion = "panels"}
        : tensor<32x512x64xf32>
    %w = kiln.unpack_panels %p : (tensor<32x512x64xf32>) -> tensor<2000x512xf32>
    ```
  }];
  let arguments = (ins Kiln_ParameterTensor:$panels);
  let results = (outs Kiln_ParameterTensor:$result);
  let assemblyFormat = "$panels attr-dict `:` functional-type(operands, results)";
  let verifier = [{ return ::kiln::verifyUnpackPanels(*this); }];
}

def Kiln_ReturnOp : Kiln_Op<"return", [NoSideEffect, Terminator,
                                       HasParent<"::mlir::FuncOp">]> {
  let summary = "returns the outputs of an entry point";
  let description = [{
    ```mlir
    kiln.return %memory : tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_BoundaryTensor>:$operands);
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
  let arguments = (ins Kiln_F32Tensor:$lhs, Kiln_WeightTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Kiln_LinearOp : Kiln_ShapedOp<"linear"> {
  let summary = "affine layer: input times the transposed weight, plus the bias";
  let description = [{
    `result[..., o] = sum_i input[..., i] * weight[o, i] + bias[o]`: the weight is stored
    [out, in] as PyTorch's `nn.Linear` stores it, so weights load without a transpose. The
    bias is required; a layer without one is a `kiln.matmul` with `transpose_rhs`. A
    bf16 weight (kiln-weight-precision's) is read as the f32 values it holds, so the
    products and their sums stay f32.

    ```mlir
    %y = kiln.linear %x, %w, %b
        : (tensor<?x?x512xf32>, tensor<2048x512xf32>, tensor<2048xf32>) -> tensor<?x?x2048xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, Kiln_WeightTensor:$weight,
                   Kiln_F32Tensor:$bias);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$input `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)";
}

def Kiln_QuantizedLinearOp : Kiln_ShapedOp<"quantized_linear"> {
  let summary = "affine layer over int8 weights, activations quantized per row";
  let description = [{
    The int8 form of `kiln.linear` (CTranslate2's and PyTorch's dynamic quantization):
    `weight` [out, in] holds each output channel quantized symmetrically, `weight_scale`
    [out] its scale. Each row of the input (its last dimension) is quantized at run time
    the same way:

    ```
    a[m]      = max_i |input[m, i]|
    q[m, i]   = a[m] == 0 ? 0 : round_half_even(input[m, i] * (127 / a[m]))   in [-127, 127]
    acc[m, o] = sum_i q[m, i] * weight[o, i]                                   exact int32
    result[m, o] = f32(acc[m, o]) * ((a[m] / 127) * weight_scale[o]) + bias[o]
    ```

    with every f32 operation rounded as written. The bias is optional: a tied output
    projection has none.

    ```mlir
    %y = kiln.quantized_linear %x, %w, %s, %b
        : (tensor<?x?x512xf32>, tensor<2048x512xi8>, tensor<2048xf32>, tensor<2048xf32>) -> tensor<?x?x2048xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, RankedTensorOf<[I8]>:$weight,
                   Kiln_F32Tensor:$weight_scale, Optional<Kiln_F32Tensor>:$bias);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$input `,` $weight `,` $weight_scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// An elementwise binary op is one `def` below: the broadcasting shape rule is this
// class's, so a new one needs no C++ in ir/. `operandType` widens it past f32.
class Kiln_BinaryOp<string mnemonic, string formula, Type operandType = Kiln_F32Tensor>
    : Kiln_Op<mnemonic, [NoSideEffect, SameOperandsAndResultElementType,
                         Kiln_SymbolicShapeOpInterface]> {
  let summary = "elementwise " # formula # " with NumPy broadcasting";
  let description = [{
    Dimensions of size 1 and missing leading dimensions broadcast. A dynamic dimension
    broadcasts only against a static 1 or the same dynamic dimension.

    ```mlir
    %y = kiln.}] # mnemonic # [{ %x, %b
        : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    ::kiln::ShapeResult inferSymbolicShape(::llvm::ArrayRef<::kiln::SymShape> operands) {
      return ::kiln::shape_rules::broadcast(operands[0], operands[1]);
    }
  }];
}

// On i32 and i64 (position arithmetic such as `positions + P`) as on f32; integer
// overflow wraps in the interpreter and is undefined in compiled kernels.
def Kiln_AddOp : Kiln_BinaryOp<"add", "lhs + rhs", Kiln_NumericTensor>;
def Kiln_SubOp : Kiln_BinaryOp<"sub", "lhs - rhs", Kiln_NumericTensor>;
def Kiln_MulOp : Kiln_BinaryOp<"mul", "lhs * rhs", Kiln_NumericTensor>;
def Kiln_DivOp : Kiln_BinaryOp<"div", "lhs / rhs">;

//===----------------------------------------------------------------------===//
// Selection and casts
//===----------------------------------------------------------------------===//

def Kiln_WhereOp : Kiln_ShapedOp<"where", [], ["inferElementType"]> {
  let summary = "picks each element from one of two tensors by a boolean condition";
  let description = [{
    `result = condition ? on_true : on_false`, elementwise, as PyTorch's `torch.where`:
    the three operands broadcast against each other as the binary ops' do, and
    `on_true`, `on_false` and the result have one element type (f32, i32 or i64).

    ```mlir
    %s = kiln.where %causal, %scores, %fill
        : (tensor<?x?xi1>, tensor<?x4x?x?xf32>, tensor<f32>) -> tensor<?x4x?x?xf32>
    ```
  }];
  let arguments = (ins Kiln_BoolTensor:$condition, Kiln_NumericTensor:$on_true,
                   Kiln_NumericTensor:$on_false);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)
  }];
  // MLIR 14's AllElementTypesMatch does not compile for three names.
  let verifier = [{ return ::kiln::verifyWhere(*this); }];
}

def Kiln_CastOp : Kiln_ShapedOp<"cast", [], ["inferElementType"]> {
  let summary = "converts each element to the result's element type";
  let description = [{
    Between f32, i32 and i64, as PyTorch's `Tensor.to(dtype)`: f32 to an integer
    truncates toward zero (2.7 -> 2, -2.7 -> -2); i64 to i32 keeps the low 32 bits
    (two's complement); an integer to f32 rounds to nearest. A NaN, an infinity or a
    float outside the integer type's range has no defined result (PyTorch's neither),
    and the compiled kernel and the interpreter may differ there. A cast to the input's
    own type is the identity.

    ```mlir
    %ids = kiln.cast %tokens : (tensor<?x?xi64>) -> tensor<?x?xi32>
    %p = kiln.cast %positions : (tensor<?xi32>) -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Kiln_NumericTensor:$input);
  let results = (outs Kiln_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_ConstantOp : Kiln_Op<"constant", [ConstantLike, NoSideEffect,
    TypesMatchWith<"result and value have the same type", "value", "result", "$_self">]> {
  let summary = "a constant f32 tensor";
  let description = [{
    The tensor `value` (a dense f32 elements attribute, usually a splat); its type is
    the result type, so the shape is static. Models divide attention scores by
    `sqrt(d_k)` written as such a constant, which kiln-fuse-attention reads.

    ```mlir
    %c = kiln.constant dense<8.0> : tensor<f32>
    %w = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins Kiln_F32ElementsAttr:$value);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Kiln_MaskedFillOp : Kiln_ShapedOp<"masked_fill"> {
  let summary = "replaces the elements where a boolean mask is true by a constant";
  let description = [{
    `result = mask ? value : input`, elementwise, with the i1 `mask` broadcast to the
    input's shape (it may not enlarge it), as PyTorch's `masked_fill`. `value` may be
    `-inf` (written `0xFF800000`) or a large finite negative such as -1e9; the two differ
    where every key of a row is masked: -inf makes the softmax of that row 0, a finite
    value makes it uniform.

    ```mlir
    %s = kiln.masked_fill %scores, %pad {value = 0xFF800000 : f32}
        : (tensor<?x8x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x8x?x?xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, Kiln_BoolTensor:$mask, F32Attr:$value);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$input `,` $mask attr-dict `:` functional-type(operands, results)";
}

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

def Kiln_GeluOp : Kiln_UnaryOp<"gelu"> {
  let summary = "exact GELU: 0.5 * x * (1 + erf(x / sqrt(2)))";
  let description = [{
    The erf form (PyTorch's default `approximate='none'`), not the tanh approximation.

    ```mlir
    %h = kiln.gelu %x : tensor<?x?x2048xf32>
    ```
  }];
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

// An elementwise function of one f32 tensor is one `def` below. Its shape rule is this
// class's (the operand's shape), so, as for Kiln_BinaryOp, a new one needs no C++ in
// ir/; Kiln_UnaryOp declares the rule out of line, which would need one per op.
class Kiln_MathOp<string mnemonic, string formula>
    : Kiln_Op<mnemonic, [NoSideEffect, SameOperandsAndResultType,
                         Kiln_SymbolicShapeOpInterface]> {
  let summary = "elementwise " # formula;
  let description = [{
    ```mlir
    %y = kiln.}] # mnemonic # [{ %x : tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let extraClassDeclaration = [{
    ::kiln::ShapeResult inferSymbolicShape(::llvm::ArrayRef<::kiln::SymShape> operands) {
      return ::kiln::ShapeResult::ok(operands[0]);
    }
  }];
}

def Kiln_TanhOp : Kiln_MathOp<"tanh", "tanh(x)">;
def Kiln_GeluTanhOp : Kiln_MathOp<"gelu_tanh",
    "GELU, tanh form: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))">;
def Kiln_SiluOp : Kiln_MathOp<"silu", "x * sigmoid(x)">;
def Kiln_RsqrtOp : Kiln_MathOp<"rsqrt", "1 / sqrt(x)">;
def Kiln_ExpOp : Kiln_MathOp<"exp", "e^x">;
def Kiln_NegOp : Kiln_MathOp<"neg", "-x">;
def Kiln_LogOp : Kiln_MathOp<"log", "natural logarithm">;
def Kiln_SigmoidOp : Kiln_MathOp<"sigmoid", "1 / (1 + e^-x)">;
def Kiln_SqrtOp : Kiln_MathOp<"sqrt", "square root">;

def Kiln_PowOp : Kiln_MathOp<"pow", "x^exponent for a constant exponent"> {
  let description = [{
    As PyTorch's `pow(x, exponent)` with a float exponent: NaN for a negative x and a
    non-integer exponent.

    ```mlir
    %y = kiln.pow %x {exponent = 3.0 : f32} : tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, F32Attr:$exponent);
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

def Kiln_LogSoftmaxOp : Kiln_UnaryOp<"log_softmax"> {
  let summary = "log of the softmax along one axis, computed without overflow";
  let description = [{
    `x - max - log(sum(exp(x - max)))` along `axis` (0 <= axis < rank). A row whose
    elements are all -inf (every key masked) gives -inf everywhere, the log of the 0 that
    `kiln.softmax` gives it, never NaN (PyTorch gives NaN). A NaN in a row makes that row
    NaN.

    ```mlir
    %lp = kiln.log_softmax %logits {axis = 2 : i64} : tensor<?x?x32000xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, I64Attr:$axis);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Kiln_ArgmaxOp : Kiln_ShapedOp<"argmax", [], ["inferElementType"]> {
  let summary = "index of the largest element along one axis";
  let description = [{
    The i32 index of the maximum along `axis` (0 <= axis < rank), which the result drops.
    On ties the first index wins; a NaN counts as larger than any number (the first NaN
    wins), as in PyTorch.

    ```mlir
    %next = kiln.argmax %logits {axis = 2 : i64} : (tensor<?x?x32000xf32>) -> tensor<?x?xi32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, I64Attr:$axis);
  let results = (outs Kiln_IndexTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
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

def Kiln_RmsNormOp : Kiln_ShapedOp<"rms_norm"> {
  let summary = "root-mean-square normalisation over the last dimension";
  let description = [{
    `x * rsqrt(mean(x^2) + epsilon) * gamma`, the mean taken over the last dimension
    (LLaMA's RMSNorm: no centring, no bias); `gamma` is 1-D of that size. Accumulated in
    f32 or wider.

    ```mlir
    %y = kiln.rms_norm %x, %g {epsilon = 1.0e-06 : f32}
        : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, Kiln_F32Tensor:$gamma, F32Attr:$epsilon);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$input `,` $gamma attr-dict `:` functional-type(operands, results)";
}

// A reduction over a set of axes is one `def` below: the shape rule and the axes'
// canonical form are this class's. Three ops rather than one with a kind attribute, as
// the elementwise ops are: each has one meaning and its own element types (mean is f32
// only), and the interpreter and the backend dispatch on the op as for every other.
class Kiln_ReduceOp<string mnemonic, string what, Type tensor>
    : Kiln_Op<mnemonic, [NoSideEffect, Kiln_SymbolicShapeOpInterface]> {
  let summary = what # " over a set of axes";
  let description = [{
    `axes` are distinct dimensions of the input, negative ones counting from the end;
    the result drops them or, with `keep_dim`, keeps each as a dimension of size 1.
    Dynamic dimensions may be reduced.

    ```mlir
    %s = kiln.}] # mnemonic # [{ %x {axes = [-1], keep_dim = true}
        : (tensor<?x?x512xf32>) -> tensor<?x?x1xf32>
    ```
  }];
  let arguments = (ins tensor:$input, I64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "false">:$keep_dim);
  let results = (outs tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let extraClassDeclaration = [{
    ::kiln::ShapeResult inferSymbolicShape(::llvm::ArrayRef<::kiln::SymShape> operands) {
      return ::kiln::shape_rules::reduce(operands[0],
                                         ::mlir::extractFromI64ArrayAttr(axes()),
                                         keep_dim());
    }
    /// The reduced axes in [0, rank), ascending (the verifier has checked them).
    ::llvm::SmallVector<int64_t, 4> reducedAxes() {
      return ::kiln::shape_rules::normaliseAxes(
          ::mlir::extractFromI64ArrayAttr(axes()),
          input().getType().cast<::mlir::ShapedType>().getRank());
    }
  }];
}

// f32 or i32; the sum of no elements is 0.
def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", "sum", RankedTensorOf<[F32, I32]>>;
// f32: the sum divided by the product of the reduced sizes (NaN when that is 0).
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", "mean", Kiln_F32Tensor>;
// f32 or i32; a NaN makes the result NaN, an all -inf set gives -inf, and no elements
// to take the maximum of is a run-time error.
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", "maximum", RankedTensorOf<[F32, I32]>>;

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

def Kiln_SliceOp : Kiln_ShapedOp<"slice"> {
  let summary = "a static range [start, end) of one dimension";
  let description = [{
    `result[..., j, ...] = input[..., start + j, ...]` for 0 <= j < end - start along
    `axis`; the other dimensions are kept. `0 <= start < end` always holds. Where the
    sliced dimension is static, `end <= size` is checked here; where it is dynamic, it
    holds by contract and is checked at run time (an error in the reference interpreter;
    a backend must reject the input too, e.g. by its input bounds check).

    ```mlir
    %head = kiln.slice %x {axis = 2 : i64, start = 64 : i64, end = 128 : i64}
        : (tensor<?x?x512xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins Kiln_AnyTensor:$input, I64Attr:$axis, I64Attr:$start,
                   I64Attr:$end);
  let results = (outs Kiln_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Kiln_ConcatOp : Kiln_ShapedOp<"concat", [SameOperandsAndResultElementType]> {
  let summary = "joins tensors along one axis";
  let description = [{
    The operands (at least one) follow each other along `axis`; all have the same rank,
    element type and other dimensions. The result's `axis` dimension is the sum of the
    operands' (a dimension expression such as `T+1` when some are dynamic).

    ```mlir
    %ys = kiln.concat %prefix, %next {axis = 1 : i64}
        : (tensor<?x?xi32>, tensor<?x1xi32>) -> tensor<?x?xi32>
    ```
  }];
  let arguments = (ins Variadic<Kiln_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Kiln_AnyTensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Embeddings, positions and masks
//===----------------------------------------------------------------------===//

def Kiln_EmbeddingOp : Kiln_ShapedOp<"embedding"> {
  let summary = "rows of an embedding table, picked by token id";
  let description = [{
    `result[..., d] = table[ids[...], d]` for a table of shape [V, D]. Ids must lie in
    [0, V): an id outside is an error of the run, in the reference interpreter and in a
    compiled kernel alike, never a clamped row. Ids proven in range (ValueRange.h: an
    entry input's `kiln.bounds`, positions of a dimension bounded by `kiln.dim_max`) are
    read unchecked; the kernel checks the others.

    ```mlir
    %e = kiln.embedding %table, %ids
        : (tensor<32000x512xf32>, tensor<?x?xi32>) -> tensor<?x?x512xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$table, Kiln_IndexTensor:$ids);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$table `,` $ids attr-dict `:` functional-type(operands, results)";
}

def Kiln_RangeOp : Kiln_ShapedOp<"range", [], ["inferElementType"]> {
  let summary = "the positions 0, 1, ..., N-1 of one dimension of a tensor";
  let description = [{
    `result[i] = i` (i32) for 0 <= i < N, where N is dimension `axis` of `like`. Only the
    shape of `like` is read, so positions follow a dynamic sequence length.

    ```mlir
    %pos = kiln.range %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
    ```
  }];
  let arguments = (ins Kiln_AnyTensor:$like, I64Attr:$axis);
  let results = (outs Kiln_IndexTensor:$result);
  let assemblyFormat = "$like attr-dict `:` functional-type(operands, results)";
}

def Kiln_SinusoidOp : Kiln_ShapedOp<"sinusoid", [], ["inferElementType"]> {
  let summary = "sinusoidal position encodings of the paper";
  let description = [{
    For each position p and 0 <= i < D/2: `result[..., 2i] = sin(p / 10000^(2i/D))` and
    `result[..., 2i+1] = cos(p / 10000^(2i/D))`. D is the last dimension of the result
    type, which must be static, positive and even; the result has the positions' shape
    with D appended.

    ```mlir
    %pe = kiln.sinusoid %pos : (tensor<?xi32>) -> tensor<?x512xf32>
    ```
  }];
  let arguments = (ins Kiln_IndexTensor:$positions);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$positions attr-dict `:` functional-type(operands, results)";
}

/// How kiln.rotary pairs the features it rotates.
def Kiln_RotaryStyleAttr : StringBasedAttr<
    And<[CPred<"$_self.isa<::mlir::StringAttr>()">,
         Or<[CPred<"$_self.cast<::mlir::StringAttr>().getValue() == \"half\"">,
             CPred<"$_self.cast<::mlir::StringAttr>().getValue() == \"interleaved\"">]>]>,
    "\"half\" or \"interleaved\"">;

def Kiln_RotaryOp : Kiln_ShapedOp<"rotary"> {
  let summary = "rotary position embedding (RoPE) of the last dimension";
  let description = [{
    For input [..., T, D] (D static and even) and i32 positions [T], rotates pair i of
    row t (0 <= i < D/2) by the angle `positions[t] * base^(-2i/D)`:
    `(a, b) -> (a cos - b sin, b cos + a sin)`. Style `half` (LLaMA, GPT-NeoX) pairs
    feature i with i + D/2; style `interleaved` (GPT-J) pairs 2i with 2i + 1.

    ```mlir
    %q = kiln.rotary %x, %pos {base = 1.000000e+04 : f32, style = "half"}
        : (tensor<?x8x?x64xf32>, tensor<?xi32>) -> tensor<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$input, Kiln_IndexTensor:$positions,
                   F32Attr:$base, Kiln_RotaryStyleAttr:$style);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$input `,` $positions attr-dict `:` functional-type(operands, results)";
}

def Kiln_PaddingMaskOp : Kiln_ShapedOp<"padding_mask", [], ["inferElementType"]> {
  let summary = "mask of the padded keys of each sequence";
  let description = [{
    Masks key `j` of sequence `b` where `j >= lengths[b]`, for 0 <= j < N where N is
    dimension `axis` of `like` (only its shape is read). The result type picks the form:
    f32 is additive (`0` kept, `-inf` masked: added to attention scores, it masks the
    padding after each sequence); i1 is boolean (`true` = masked, for
    `kiln.masked_fill`).

    ```mlir
    %m = kiln.padding_mask %lengths, %src {axis = 1 : i64}
        : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
    %p = kiln.padding_mask %lengths, %src {axis = 1 : i64}
        : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
    ```
  }];
  let arguments = (ins Kiln_IndexTensor:$lengths, Kiln_AnyTensor:$like, I64Attr:$axis);
  let results = (outs Kiln_MaskTensor:$result);
  let assemblyFormat = "$lengths `,` $like attr-dict `:` functional-type(operands, results)";
}

def Kiln_CausalMaskOp : Kiln_ShapedOp<"causal_mask", [], ["inferElementType"]> {
  let summary = "mask of the future keys of each query";
  let description = [{
    An N x N matrix, N being dimension `axis` of `like` (only its shape is read), that
    masks key `j` of query `i` where `j > i` (above the diagonal). As for
    `kiln.padding_mask`, the result type picks the form: f32 is additive (`0` kept,
    `-inf` masked), i1 is boolean (`true` = masked).

    ```mlir
    %c = kiln.causal_mask %tgt {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xf32>
    %b = kiln.causal_mask %tgt {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xi1>
    ```
  }];
  let arguments = (ins Kiln_AnyTensor:$like, I64Attr:$axis);
  let results = (outs Kiln_MaskTensor:$result);
  let assemblyFormat = "$like attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Fused ops (formed by passes)
//===----------------------------------------------------------------------===//

def Kiln_AttentionOp : Kiln_ShapedOp<"attention"> {
  let summary = "scaled dot-product attention, softmax(scale * q kT + mask) v, in one op";
  let description = [{
    For every batch index (the leading dimensions: [B, H] for multi-head attention, [B]
    for the 3-D form) and query `i`:

    ```
    s[i, j]      = scale * sum_d q[i, d] * k[j, d] + mask[i, j] + causal[i, j]
    causal[i, j] = -inf where `causal` is set and j > i + (Tk - Tq), else 0
    result[i, :] = sum_j softmax_j(s[i, :]) * v[j, :]
    ```

    `q` is [..., Tq, d], `k` [..., Tk, d] (not transposed) and `v` [..., Tk, dv]; the
    result is [..., Tq, dv]. All have one rank, at least 3; batch dimensions broadcast as
    in `kiln.matmul`. The optional `mask` is additive f32 (0 keeps a key, -inf masks it,
    any other value is added) and broadcasts to [..., Tq, Tk] without enlarging it.
    `causal` aligns the diagonal bottom-right: with Tq = Tk it is `kiln.causal_mask`, and
    a decode step with a KV cache (Tq = 1) sees every key.

    A row whose scores are all -inf (every key masked, by `mask` or by causality) is
    `masked_row_value` throughout (default 0: kiln.softmax makes such a row 0, and 0 times
    v is 0). A row of large but finite negative scores is not masked: its weights are the
    softmax's (uniform when all are equal). A NaN score makes its row NaN.

    kiln-fuse-attention forms this op from `softmax(mask(scale(matmul(q, kT)))) · v`;
    both compute the same up to f32 rounding.

    ```mlir
    %o = kiln.attention %q, %k, %v, %mask {scale = 0.125 : f32}
        : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>,
           tensor<?x1x1x?xf32>) -> tensor<?x8x?x64xf32>
    %d = kiln.attention %q, %k, %v {scale = 0.125 : f32, causal = true}
        : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>)
          -> tensor<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins Kiln_F32Tensor:$query, Kiln_F32Tensor:$key, Kiln_F32Tensor:$value,
                   Optional<Kiln_F32Tensor>:$mask, F32Attr:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   DefaultValuedAttr<F32Attr, "0.0f">:$masked_row_value);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Kernel groups
//===----------------------------------------------------------------------===//

def Kiln_FusionOp : Kiln_Op<"fusion", [IsolatedFromAbove, SingleBlock, NoSideEffect]> {
  let summary = "ops grouped into one kernel";
  let description = [{
    The body computes the result from the block's arguments, which are the operands, and
    `kiln.yield`s it: what XLA calls a fusion computation. kiln-fuse-kernels forms it
    around at most one anchor (`kiln.linear`, `kiln.matmul` or `kiln.layer_norm`), whose
    schedule the kernel takes: elementwise ops after the anchor are its epilogue, applied
    to each output tile as it is stored; elementwise ops before it (a layer_norm's
    residual add) are recomputed where the anchor reads them. A body with no anchor is a
    chain of elementwise ops, one pointwise kernel. Each operand is one kernel argument,
    so the group's intermediate values never reach memory.

    ```mlir
    %y = kiln.fusion %x, %w, %b
        : (tensor<?x512xf32>, tensor<2048x512xf32>, tensor<2048xf32>) -> tensor<?x2048xf32> {
    ^bb0(%a: tensor<?x512xf32>, %c: tensor<2048x512xf32>, %d: tensor<2048xf32>):
      %0 = kiln.linear %a, %c, %d
          : (tensor<?x512xf32>, tensor<2048x512xf32>, tensor<2048xf32>) -> tensor<?x2048xf32>
      %1 = kiln.relu %0 : tensor<?x2048xf32>
      kiln.yield %1 : tensor<?x2048xf32>
    }
    ```
  }];
  // Operands may be reduced-precision weights (bf16, i8) that a product in the body
  // reads.
  let arguments = (ins Variadic<AnyTypeOf<[Kiln_AnyTensor, Kiln_ParameterTensor]>>:$operands);
  let results = (outs Kiln_AnyTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$operands attr-dict `:` functional-type($operands, results) $body";
  let verifier = [{ return ::kiln::verifyFusion(*this); }];
  let extraClassDeclaration = [{
    /// The value the body yields.
    ::mlir::Value yielded();
  }];
}

def Kiln_YieldOp : Kiln_Op<"yield", [NoSideEffect, Terminator,
                                     HasParent<"::kiln::FusionOp">]> {
  let summary = "the result of a kiln.fusion body";
  let description = [{
    ```mlir
    kiln.yield %1 : tensor<?x2048xf32>
    ```
  }];
  let arguments = (ins Kiln_AnyTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// Session state (key/value caches of incremental decoding)
//===----------------------------------------------------------------------===//

// A state is a tensor that the runtime keeps in a session between runs of the model's
// entry points, named model-wide. Its first dimension is the batch: the runtime gathers
// rows of every state when a search reorders or drops its hypotheses
// (kiln_session_gather_states). These ops have side effects, so passes keep them and
// keep their order.

def Kiln_StateAllocOp : Kiln_Op<"state_alloc", [MemoryEffects<[MemWrite]>]> {
  let summary = "(re)creates a session state, filled with zeros";
  let description = [{
    Makes state `name` a zero-filled tensor of type `type`, whose dynamic dimensions are
    the entry's dims named by `dims` (one string per dimension, "" for static ones, as
    an entry input's `kiln.dims`). What the state held before is forgotten. A key/value
    cache is allocated this way once per batch, at its full capacity, and then filled
    one position per step by `kiln.kv_append`.

    ```mlir
    kiln.state_alloc "decoder.layers.0.self_attn.k_cache" {dims = ["B", "", "", ""]}
        : tensor<?x8x128x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, TypeAttr:$type,
                   StrArrayAttr:$dims);
  let assemblyFormat = "$name attr-dict `:` $type";
  let verifier = [{ return ::kiln::verifyStateAlloc(*this); }];
}

def Kiln_StateWriteOp : Kiln_Op<"state_write", [MemoryEffects<[MemWrite]>]> {
  let summary = "(re)creates a session state holding a copy of a tensor";
  let description = [{
    Makes state `name` a copy of `value`, with its shape. Cross-attention keys and
    values are computed once per source this way and read by every decoding step.

    ```mlir
    kiln.state_write "decoder.layers.0.multihead_attn.k" , %k : tensor<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Kiln_F32Tensor:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
  let verifier = [{ return ::kiln::verifyStateWrite(*this); }];
}

def Kiln_StateReadOp : Kiln_Op<"state_read", [MemoryEffects<[MemRead]>]> {
  let summary = "the current value of a session state";
  let description = [{
    Reads state `name`, which an earlier run (of this or another entry point) created.
    Its dynamic dimensions are named by `dims` ("" for static ones); like an entry
    input's dims, they are bound by the state's actual shape at run time (and must agree
    with the inputs that bind the same names). The runtime reads it in place.

    ```mlir
    %k = kiln.state_read "decoder.layers.0.multihead_attn.k" {dims = ["B", "", "S", ""]}
        : tensor<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrArrayAttr:$dims);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let verifier = [{ return ::kiln::verifyStateRead(*this); }];
}

def Kiln_KvAppendOp : Kiln_Op<"kv_append", [MemoryEffects<[MemRead, MemWrite]>,
    DeclareOpInterfaceMethods<Kiln_SymbolicShapeOpInterface>]> {
  let summary = "writes positions into a key/value cache, in place, and reads the prefix";
  let description = [{
    State `name` is a cache of shape `value`'s shape with dimension `axis` (N >= 1
    positions in `value`, static or dynamic) replaced by `capacity`. This writes `value`
    at indices [P, P + N) of that dimension and returns the cache's first P + N
    positions along `axis`: every key or value up to and including these. P is
    `position`: the entry dimension it names (an input declares it with
    `kiln.value_dim`: its value is the decoding step) or a static integer ("0": a
    prefill writes the prompt from the start). Nothing is copied but `value`: the result
    is a view of the cache, so a decoding step's cost grows with P, not P². The cache
    must exist (`kiln.state_alloc`) with that shape, and P + N may not exceed
    `capacity` (the runtime rejects a run that would write past the cache).

    ```mlir
    %k = kiln.kv_append "decoder.layers.0.self_attn.k_cache", %k_new
        {axis = 2 : i64, capacity = 128 : i64, position = "P"}
        : (tensor<?x8x1x64xf32>) -> tensor<?x8x?x64xf32>
    %k0 = kiln.kv_append "decoder.layers.0.self_attn.k_cache", %prompt_k
        {axis = 2 : i64, capacity = 128 : i64, position = "0"}
        : (tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Kiln_F32Tensor:$value, I64Attr:$axis,
                   I64Attr:$capacity, StrAttr:$position);
  let results = (outs Kiln_F32Tensor:$result);
  let assemblyFormat = "$name `,` $value attr-dict `:` functional-type(operands, results)";
  let verifier = [{ return ::kiln::verifyKvAppend(*this); }];
}

#endif // KILN_IR_KILNOPS_TD
