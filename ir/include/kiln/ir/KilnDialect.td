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
    with static or dynamic (`?`) dimensions. Each entry point of a model is a builtin
    `func` whose arguments carry `kiln.name` and `kiln.dims` (the names of their dynamic
    dimensions, "" for static ones) and whose results carry `kiln.name`. Weights enter
    the graph through `kiln.parameter`, bound by name at run time.
  }];
}

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

def Kiln_F32Tensor : RankedTensorOf<[F32]>;
def Kiln_IndexTensor : RankedTensorOf<[I32]>;
def Kiln_AnyTensor : RankedTensorOf<[F32, I32]>;

#endif // KILN_IR_KILNDIALECT_TD
