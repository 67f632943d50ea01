//===- KilnDialect.td - The kiln dialect definition --------*- tablegen -*-===//
//
// The dialect in which Kiln represents a Transformer: a dataflow graph of tensor ops,
// one func per entry point of the model.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_KILNDIALECT_TD
#define KILN_IR_KILNDIALECT_TD

include "mlir/IR/OpBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Tensor-level ops of encoder-decoder Transformers";
  let description = [{
    Values are ranked tensors of f32 (activations, weights) or i32 (token ids, lengths),
    with static or dynamic (`?`) dimensions; boolean masks (i1, true = masked) exist
    only inside an entry point: the runtime's dtypes are f32, i32 and i64, so no entry
    input, output or weight is i1. Each entry point of a model is a builtin
    `func` whose arguments carry `kiln.name` and `kiln.dims` (the names of their dynamic
    dimensions, "" for static ones) and whose results carry `kiln.name`. An i32 input may
    also carry `kiln.bounds = ["LO", "HI"]`, the inclusive range its values must lie in,
    each end an integer or a dimension expression over the entry's named dims (token ids
    in `["0", "31999"]`, lengths in `["1", "S"]`); the runtime rejects inputs outside it
    before any kernel runs. A rank-0 i32 input may carry `kiln.value_dim = "P"`: its
    value binds the dimension P (a decoding step's position). Weights enter the graph through `kiln.parameter`, bound by
    name at run time.
  }];
  // Checks the form of `kiln.bounds` and `kiln.value_dim` (SymbolicShapes.h documents
  // them).
  let hasRegionArgAttrVerify = 1;
  // kiln.constant, for folders and the greedy rewriter.
  let hasConstantMaterializer = 1;
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

def Kiln_F32Tensor : RankedTensorOf<[F32]>;
def Kiln_IndexTensor : RankedTensorOf<[I32]>;
def Kiln_BoolTensor : RankedTensorOf<[I1]>;
/// Numbers: what arithmetic (add, sub, mul, where) and kiln.cast take.
def Kiln_NumericTensor : RankedTensorOf<[F32, I32, I64]>;
/// What crosses an entry's boundary: inputs, outputs and weights.
def Kiln_BoundaryTensor : RankedTensorOf<[F32, I32, I64]>;
/// What a weight can be stored as: f32, or the reduced precisions that
/// kiln-weight-precision converts weights to (bf16 values, int8 quantized values).
def Kiln_ParameterTensor : RankedTensorOf<[F32, I32, I64, BF16, I8]>;
/// The weight operand of a product: f32, or bf16 values read as the f32 they equal.
def Kiln_WeightTensor : RankedTensorOf<[F32, BF16]>;
/// What data movement (reshape, transpose, slice, concat) carries: any value.
def Kiln_AnyTensor : RankedTensorOf<[F32, I32, I64, I1]>;
/// A mask: additive f32 (0 keeps, -inf masks) or boolean i1 (true masks).
def Kiln_MaskTensor : RankedTensorOf<[F32, I1]>;

#endif // KILN_IR_KILNDIALECT_TD
