// kiln-check-shapes: every dynamic dimension is named by an input and flows through the
// ops' shape rules without contradiction.
// RUN: kiln-opt %s --split-input-file --allow-unregistered-dialect --kiln-check-shapes --verify-diagnostics | FileCheck %s

// A consistent entry passes unchanged.
// CHECK-LABEL: func @encoder_projection
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32> {kiln.dims = ["B", "S", ""], kiln.name = "x"})
// CHECK: %[[W:.+]] = kiln.parameter "wq.weight"
// CHECK: %[[Q:.+]] = kiln.matmul %[[X]], %[[W]] {transpose_rhs = true}
// CHECK: %[[H:.+]] = kiln.reshape %[[Q]] {shape = [0, 0, 8, 64]}
// CHECK: %[[T:.+]] = kiln.transpose %[[H]] {permutation = [0, 2, 1, 3]}
// CHECK: %[[F:.+]] = kiln.reshape %[[X]] {shape = [-1, 512]}
// CHECK: kiln.add %[[F]], %[[F]]
// CHECK: kiln.return %[[T]]
func @encoder_projection(%x: tensor<?x?x512xf32> {kiln.name = "x", kiln.dims = ["B", "S", ""]})
    -> tensor<?x8x?x64xf32> {
  %w = kiln.parameter "wq.weight" : tensor<512x512xf32>
  %q = kiln.matmul %x, %w {transpose_rhs = true}
      : (tensor<?x?x512xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
  %h = kiln.reshape %q {shape = [0, 0, 8, 64]} : (tensor<?x?x512xf32>) -> tensor<?x?x8x64xf32>
  %t = kiln.transpose %h {permutation = [0, 2, 1, 3]}
      : (tensor<?x?x8x64xf32>) -> tensor<?x8x?x64xf32>
  // [B, S, 512] -> [B*S, 512]: the inferred dim is the product of the names.
  %f = kiln.reshape %x {shape = [-1, 512]} : (tensor<?x?x512xf32>) -> tensor<?x512xf32>
  %g = kiln.add %f, %f : (tensor<?x512xf32>, tensor<?x512xf32>) -> tensor<?x512xf32>
  kiln.return %t : tensor<?x8x?x64xf32>
}

// -----

// Values of foreign ops that are not tensors have no shape to check; they are skipped.
// CHECK-LABEL: func @foreign_scalar
// CHECK: "test.scalar"() : () -> f32
func @foreign_scalar(%x: tensor<?x4xf32> {kiln.dims = ["B", ""]}) -> tensor<?x4xf32> {
  %c = "test.scalar"() : () -> f32
  %0 = kiln.relu %x : tensor<?x4xf32>
  kiln.return %0 : tensor<?x4xf32>
}

// -----

// The verifier cannot tell S from T (both are `?`); the named shapes can.
func @add_different_sequences(%src: tensor<?x?x512xf32> {kiln.dims = ["B", "S", ""]},
                              %tgt: tensor<?x?x512xf32> {kiln.dims = ["B", "T", ""]})
    -> tensor<?x?x512xf32> {
  // expected-error @+1 {{'kiln.add' op shapes [B, S, 512] and [B, T, 512] do not broadcast: S vs T}}
  %0 = kiln.add %src, %tgt : (tensor<?x?x512xf32>, tensor<?x?x512xf32>) -> tensor<?x?x512xf32>
  kiln.return %0 : tensor<?x?x512xf32>
}

// -----

func @scores_without_transpose(%q: tensor<?x?x64xf32> {kiln.dims = ["B", "S", ""]},
                               %k: tensor<?x?x64xf32> {kiln.dims = ["B", "T", ""]})
    -> tensor<?x?x64xf32> {
  // expected-error @+1 {{'kiln.matmul' op contraction dimensions differ: lhs [B, S, 64] contracts 64, rhs [B, T, 64] contracts T}}
  %0 = kiln.matmul %q, %k : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  kiln.return %0 : tensor<?x?x64xf32>
}

// -----

func @flattened_tokens_vs_targets(%x: tensor<?x?x512xf32> {kiln.dims = ["B", "S", ""]},
                                  %y: tensor<?x512xf32> {kiln.dims = ["T", ""]})
    -> tensor<?x512xf32> {
  %f = kiln.reshape %x {shape = [-1, 512]} : (tensor<?x?x512xf32>) -> tensor<?x512xf32>
  // expected-error @+1 {{'kiln.add' op shapes [B*S, 512] and [T, 512] do not broadcast: B*S vs T}}
  %0 = kiln.add %f, %y : (tensor<?x512xf32>, tensor<?x512xf32>) -> tensor<?x512xf32>
  kiln.return %0 : tensor<?x512xf32>
}

// -----

// expected-error @+1 {{input #0 of 'unnamed_dim' has an unnamed dynamic dimension 1 (set the 'kiln.dims' argument attribute)}}
func @unnamed_dim(%x: tensor<?x?xf32> {kiln.dims = ["B", ""]}) -> tensor<?x?xf32> {
  kiln.return %x : tensor<?x?xf32>
}

// -----

// expected-error @+1 {{input #0 of 'no_dims_attr' has an unnamed dynamic dimension 0}}
func @no_dims_attr(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  kiln.return %x : tensor<?x4xf32>
}

// -----

// expected-error @+1 {{input #1 of 'scalar_input' has type 'f32'; entry inputs must be ranked tensors}}
func @scalar_input(%x: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  kiln.return %x : tensor<4xf32>
}

// -----

// Positions and masks take their sizes from the named dims of `like`; a concat along a
// named dim sums it ("T+1"), which no longer matches T.
func @next_token_appended(%ys: tensor<?x?xi32> {kiln.dims = ["B", "T"]},
                          %next: tensor<?x1xi32> {kiln.dims = ["B", ""]},
                          %len: tensor<?xi32> {kiln.dims = ["B"], kiln.bounds = ["1", "T"]})
    -> tensor<?x?xf32> {
  %c = kiln.causal_mask %ys {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xf32>
  %m = kiln.padding_mask %len, %ys {axis = 1 : i64}
      : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
  %longer = kiln.concat %ys, %next {axis = 1 : i64}
      : (tensor<?x?xi32>, tensor<?x1xi32>) -> tensor<?x?xi32>
  %c2 = kiln.causal_mask %longer {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xf32>
  // expected-error @+1 {{'kiln.add' op shapes [T, T] and [T+1, T+1] do not broadcast: T vs T+1}}
  %0 = kiln.add %c, %c2 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  kiln.return %0 : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func @masks_and_positions_agree
// CHECK: kiln.add
func @masks_and_positions_agree(%ids: tensor<?x?xi32> {kiln.dims = ["B", "S"]},
                                %len: tensor<?xi32> {kiln.dims = ["B"]})
    -> tensor<?x?x?xf32> {
  %pos = kiln.range %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
  %first = kiln.slice %ids {axis = 1 : i64, start = 0 : i64, end = 1 : i64}
      : (tensor<?x?xi32>) -> tensor<?x1xi32>
  %m = kiln.padding_mask %len, %ids {axis = 1 : i64}
      : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
  %m3 = kiln.reshape %m {shape = [0, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x?xf32>
  %c = kiln.causal_mask %pos {axis = 0 : i64} : (tensor<?xi32>) -> tensor<?x?xf32>
  // [B, 1, S] + [S, S] -> [B, S, S]
  %0 = kiln.add %m3, %c : (tensor<?x1x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  kiln.return %0 : tensor<?x?x?xf32>
}

// -----

// Negative: a boolean input. Masks are made inside an entry; the runtime has no i1.
// expected-error @+1 {{input #0 of 'boolean_input' has type 'tensor<4xi1>'; i1 exists only inside an entry point (inputs are f32 or i32)}}
func @boolean_input(%m: tensor<4xi1>) -> tensor<4xf32> {
  %0 = kiln.constant dense<0.0> : tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}

// -----

// Incremental decoding: a state_read binds S like an input, the step's value binds P, and
// kv_append gives P+1 positions, which the shapes then follow.
// CHECK-LABEL: func @decode_step_shapes
// CHECK: kiln.kv_append
// CHECK: kiln.padding_mask
func @decode_step_shapes(%q: tensor<?x4x1x8xf32> {kiln.dims = ["B", "", "", ""]},
                         %step: tensor<i32> {kiln.dims = [], kiln.value_dim = "P"},
                         %len: tensor<?xi32> {kiln.dims = ["B"], kiln.bounds = ["1", "S"]})
    -> (tensor<?x4x1x?xf32>, tensor<?x1x1x?xf32>) {
  kiln.state_alloc "k_cache" {dims = ["B", "", "", ""]} : tensor<?x4x16x8xf32>
  %k = kiln.kv_append "k_cache", %q {axis = 2 : i64, capacity = 16 : i64, position = "P"}
      : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x4x1x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x1x?xf32>
  %mk = kiln.state_read "memory_k" {dims = ["B", "", "S", ""]} : tensor<?x4x?x8xf32>
  %pm = kiln.padding_mask %len, %mk {axis = 2 : i64} : (tensor<?xi32>, tensor<?x4x?x8xf32>) -> tensor<?x?xf32>
  %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
  kiln.return %s, %m : tensor<?x4x1x?xf32>, tensor<?x1x1x?xf32>
}

// -----

// Negative: the self-attention scores cover P+1 cached keys, the memory mask S keys.
func @cache_positions_are_not_the_source(%q: tensor<?x4x1x8xf32> {kiln.dims = ["B", "", "", ""]},
                                         %step: tensor<i32> {kiln.dims = [], kiln.value_dim = "P"},
                                         %len: tensor<?xi32> {kiln.dims = ["B"]})
    -> tensor<?x4x1x?xf32> {
  %k = kiln.kv_append "k_cache", %q {axis = 2 : i64, capacity = 16 : i64, position = "P"}
      : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x4x1x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x1x?xf32>
  %mk = kiln.state_read "memory_k" {dims = ["B", "", "S", ""]} : tensor<?x4x?x8xf32>
  %pm = kiln.padding_mask %len, %mk {axis = 2 : i64} : (tensor<?xi32>, tensor<?x4x?x8xf32>) -> tensor<?x?xf32>
  %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
  // expected-error @+1 {{'kiln.add' op shapes [B, 4, 1, P+1] and [B, 1, 1, S] do not broadcast: P+1 vs S}}
  %0 = kiln.add %s, %m : (tensor<?x4x1x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x1x?xf32>
  kiln.return %0 : tensor<?x4x1x?xf32>
}

// -----

// Negative: nothing binds the position, so the runtime could not evaluate it.
func @kv_append_position_unbound(%v: tensor<?x4x1x8xf32> {kiln.dims = ["B", "", "", ""]})
    -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append position 'P' is not bound by the entry: declare a rank-0 i32 input with kiln.value_dim = "P"}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 16 : i64, position = "P"}
      : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  kiln.return %k : tensor<?x4x?x8xf32>
}

// -----

// Negative: a new state's size must be known from the entry's inputs.
func @state_alloc_dim_unbound(%x: tensor<?x4xf32> {kiln.dims = ["B", ""]}) {
  // expected-error @+1 {{'kiln.state_alloc' op dimension 'N' of state 'c' is not bound by the entry (no input or kiln.state_read names it)}}
  kiln.state_alloc "c" {dims = ["N", "", ""]} : tensor<?x4x16xf32>
  kiln.return
}
