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

def FuseAttention : Pass<"kiln-fuse-attention", "mlir::FuncOp"> {
  let summary = "fuses scale -> mask -> softmax -> matmul into one kiln.attention";
  let description = [{
    Rewrites `matmul(softmax(mask(scale(matmul(Q, KT)))), V)` into
    `kiln.attention %q, %k, %v [, %mask] {scale, causal}`, anchored on the final matmul.
    Recognised forms:

    * scale: `kiln.scale`, or `kiln.mul` / `kiln.div` by a splat `kiln.constant` of
      rank 0 or all-ones shape, on the scores or on Q or K before the first matmul
      (factors multiply; division by sqrt(d_k) becomes a factor of 1/sqrt(d_k));
    * mask: `kiln.add` of an additive f32 mask (either operand order), or
      `kiln.masked_fill` with -inf of a boolean mask that a mask builder made (through
      reshapes and transposes), which becomes the builder's additive form; a
      `kiln.causal_mask` over the queries and keys of the scores becomes
      `causal = true`. Several masks combine when all but one are 0 / -inf masks (so the
      sum is exact);
    * KT: `transpose_rhs` on the first matmul, or a `kiln.transpose` swapping the last
      two dimensions of K; a K stored [..., d, Tk] otherwise gets one such transpose;
    * rank: [..., T, d] with at least one batch dimension ([B, H, T, d] or [B, T, d]).

    It leaves the graph alone, with a reason, when fusing could change what it
    computes: a softmax over another axis, an intermediate (scores, scaled or masked
    scores, weights) with another use, a scale that is not a splat constant, a
    `masked_fill` with a finite value (a fully masked row would be uniform, not 0), a
    transposed Q, mismatched shapes. With `remarks`, or kiln-opt's
    `--kiln-fusion-remarks`, every kiln.softmax left unfused gets a remark at its
    location saying why.
  }];
  let constructor = "kiln::createFuseAttentionPass()";
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "emit a remark at each kiln.softmax left unfused, with the reason">,
  ];
}

def FuseKernels : Pass<"kiln-fuse-kernels", "mlir::FuncOp"> {
  let summary = "groups elementwise ops with their producers and consumers into kiln.fusion kernels";
  let description = [{
    Forms `kiln.fusion` groups, each one kernel:

    * a `kiln.layer_norm` or `kiln.rms_norm` with the elementwise ops of its input's
      shape that only it reads (the residual add before a post-norm LayerNorm): its
      prologue, and the linear or quantized_linear that only the prologue reads (the
      sublayer's output projection) as its first stage;
    * a `kiln.linear`, `kiln.quantized_linear`, `kiln.matmul`, `kiln.layer_norm` or
      `kiln.rms_norm` with the chain of elementwise ops (add, sub, mul, div, scale,
      relu, gelu, masked_fill) that consumes its result alone: its epilogue (bias,
      activation, residual add);
    * a chain of elementwise ops, each read only by the next: one pointwise kernel.

    A value stays inside a group only when one op reads it and it has the group's
    shape (a broadcast to a larger shape would be recomputed per element), and only
    the last op's result leaves the group. Attention and the other ops stay their own
    kernels. With `remarks`, or kiln-opt's `--kiln-fusion-remarks`, every op left
    outside a group that becomes a kernel gets a remark at its location saying why.
  }];
  let constructor = "kiln::createFuseKernelsPass()";
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "emit a remark at each op left outside a kernel group, with the reason">,
  ];
}

def PackProjections : Pass<"kiln-pack-projections", "mlir::FuncOp"> {
  let summary = "packs linears over adjacent rows of one weight into one linear";
  let description = [{
    Rewrites linears that read the same input through row slices of one packed weight
    and the same rows of one packed bias (multi-head attention's `in_proj_weight` and
    `in_proj_bias`) into one linear over the rows they cover together, followed by a
    slice of its last dimension per original linear:

    ```mlir
    %wq = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 512 : i64} ...
    %q = kiln.linear %x, %wq, %bq ...   // and %k, %v over rows 512..1024, 1024..1536
    // becomes
    %qkv = kiln.linear %x, %w, %b : ... -> tensor<?x?x1536xf32>
    %q = kiln.slice %qkv {axis = 2 : i64, start = 0 : i64, end = 512 : i64} ...
    ```

    Self-attention's q, k and v become one linear over the whole weight; cross-attention's
    k and v (over the same memory) one over rows [d, 3d). Each output column is the same
    dot product plus the same bias as before, so the result is the same. Only runs of
    adjacent row ranges pack (a gap would compute rows nobody asked for); linears over
    slices of different weights or biases, or of different inputs, stay apart. With
    `remarks`, or kiln-opt's `--kiln-fusion-remarks`, each linear over a weight slice
    that another projection of its input could have packed with gets a remark saying
    why it did not (rows not adjacent, bias rows that differ, another weight).
  }];
  let constructor = "kiln::createPackProjectionsPass()";
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "emit a remark at each linear over a weight slice left unpacked, with the "
           "reason">,
  ];
}

def PrintGraph : Pass<"kiln-print-graph", "mlir::ModuleOp"> {
  let summary = "prints the entry points as a Graphviz (DOT) graph on stdout";
  let description = [{
    Draws the module as `NAME-gen --emit=dot` does (kiln/passes/GraphDot.h): entry
    inputs and outputs by their `kiln.name`, parameters by their full names, one node
    per op with its result's symbolic shape and dtype and the model's `file:line` from
    its location, each `kiln.fusion` and `kiln.attention` as a cluster labelled with
    its anchor. The module itself is left unchanged, so `-o /dev/null` keeps stdout to
    the graph:

    ```
    kiln-opt model.mlir --kiln-default-pipeline --kiln-print-graph=entry=encode \
        -o /dev/null | dot -Tsvg > encode.svg
    ```
  }];
  let constructor = "kiln::createPrintGraphPass()";
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "draw only this entry point (default: every entry, each in a cluster)">,
  ];
}

def TrimPadding : Pass<"kiln-trim-padding", "mlir::FuncOp"> {
  let summary = "marks entry points that may run without the padding past their longest sequence";
  let description = [{
    An entry whose input is a vector of lengths bounded by a dimension of another
    input's shape (`kiln.bounds = ["1", "S"]`: sequences padded to S positions) gets
    `kiln.trim = {dim = "S", lengths = <argument>}` when no position before T =
    max(lengths) can read a position at or past T: every op works position by position
    (elementwise ops, linears and norms along other axes, embeddings, positions and
    their encodings, masks, transposes, reshapes that keep positions whole), and
    `kiln.attention` over keys along S has an additive padding mask of those lengths
    (alone, reshaped, or added to another mask). The runtime then runs the entry over
    T positions and writes zeros past T in its outputs: the values before T are those
    of a run over S. An entry with a reduction, softmax, product, slice or concat along
    S, an unmasked attention over S keys, or a state or cache op that S reaches, stays
    whole; with `remarks`, or kiln-opt's `--kiln-fusion-remarks`, the first such op
    gets a remark saying why.
  }];
  let constructor = "kiln::createTrimPaddingPass()";
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "emit a remark at the op that keeps an entry over all its padding">,
  ];
}

def WeightPrecision : Pass<"kiln-weight-precision", "mlir::ModuleOp"> {
  let summary = "stores the weights of linears as bf16, or as int8 with per-row scales";
  let description = [{
    Converts the weights that the model's products read (CTranslate2's compute_type,
    PyTorch's dynamic quantization): every `kiln.linear` whose weight is an f32
    `kiln.parameter` or a row slice of one, and every `kiln.matmul` with `transpose_rhs`
    over a rank-2 one (the tied output projection). With `weights=bf16` the op reads a
    bf16 parameter instead; with `weights=int8` it becomes a `kiln.quantized_linear`
    over an int8 parameter and its scales (the linear's bias stays):

    ```mlir
    %w = kiln.parameter "linear1.weight" : tensor<2048x512xf32>
    %y = kiln.linear %x, %w, %b : ...
    // becomes, with weights=int8
    %q = kiln.parameter "linear1.weight"
        {conversion = "int8", source = "linear1.weight"} : tensor<2048x512xi8>
    %s = kiln.parameter "linear1.weight.scale"
        {conversion = "int8_scale", source = "linear1.weight"} : tensor<2048xf32>
    %y = kiln.quantized_linear %x, %q, %s, %b : ...
    ```

    A converted parameter takes its source's name when it covers all of its rows and
    nothing reads the source at f32; otherwise `[start:end]` names its rows and
    `.bf16` / `.int8` follows when the f32 source is still read (a tied embedding
    table, whose gather stays f32); scales append `.scale`. Products over the same rows
    share one parameter; slices and parameters left unread go. Embeddings, norms,
    biases and attention keep f32. The module gets `kiln.weights = "bf16"` or `"int8"`;
    `weights=f32` changes nothing. With `remarks`, or kiln-opt's
    `--kiln-fusion-remarks`, each linear or matmul over a rank-2 weight that stays f32
    gets a remark saying why (a computed weight, a slice along another axis, a
    transposed lhs).
  }];
  let constructor = "kiln::createWeightPrecisionPass()";
  let options = [
    Option<"weights", "weights", "std::string", /*default=*/"\"f32\"",
           "the precision to store the weights at: f32, bf16 or int8">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "emit a remark at each product over a rank-2 weight that stays f32, with the "
           "reason">,
  ];
}

#endif // KILN_PASSES_PASSES_TD
