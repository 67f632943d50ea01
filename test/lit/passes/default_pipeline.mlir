// The pipeline every model goes through: shape checks, folding, attention fusion, then
// CSE and DCE; here with fusion remarks on, as `NAME-gen --fusion-remarks` runs it, and
// without the kernel groups that come last (fuse_kernels.mlir tests those).
// RUN: kiln-opt %s --split-input-file --kiln-default-pipeline='fusion-remarks=1 fuse-kernels=0' --verify-diagnostics | FileCheck %s
// Without the option, the same pipeline says nothing about unfused softmaxes; the shape
// error below still fails it (hence `not`).
// RUN: not kiln-opt %s --split-input-file --kiln-default-pipeline 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET
// QUIET-NOT: remark
// QUIET: 'kiln.add' op shapes [S, 4] and [T, 4] do not broadcast
// QUIET-NOT: remark

// Duplicate parameters merge (CSE), dead ops go (DCE), the scale chain merges and the
// head split/merge transposes cancel.
// CHECK-LABEL: func @block
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32> {kiln.dims = ["B", "S", ""], kiln.name = "x"})
// CHECK-NEXT: %[[W:.+]] = kiln.parameter "w" : tensor<512x512xf32>
// CHECK-NEXT: %[[Y:.+]] = kiln.matmul %[[X]], %[[W]] {transpose_rhs = true}
// CHECK-NEXT: %[[S:.+]] = kiln.scale %[[Y]] {factor = 1.250000e-01 : f32}
// CHECK-NEXT: %[[H:.+]] = kiln.reshape %[[S]] {shape = [0, 0, 8, 64]}
// CHECK-NEXT: %[[Z:.+]] = kiln.add %[[H]], %[[H]]
// CHECK-NEXT: kiln.return %[[Z]]
func @block(%x: tensor<?x?x512xf32> {kiln.name = "x", kiln.dims = ["B", "S", ""]})
    -> tensor<?x?x8x64xf32> {
  %w1 = kiln.parameter "w" : tensor<512x512xf32>
  %w2 = kiln.parameter "w" : tensor<512x512xf32>
  %unused = kiln.parameter "unused" : tensor<4xf32>
  %y = kiln.matmul %x, %w1 {transpose_rhs = true}
      : (tensor<?x?x512xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
  %dead = kiln.matmul %x, %w2 {transpose_rhs = true}
      : (tensor<?x?x512xf32>, tensor<512x512xf32>) -> tensor<?x?x512xf32>
  %s1 = kiln.scale %y {factor = 0.5 : f32} : tensor<?x?x512xf32>
  %s2 = kiln.scale %s1 {factor = 0.25 : f32} : tensor<?x?x512xf32>
  %h = kiln.reshape %s2 {shape = [0, 0, 8, 64]} : (tensor<?x?x512xf32>) -> tensor<?x?x8x64xf32>
  %t = kiln.transpose %h {permutation = [0, 2, 1, 3]} : (tensor<?x?x8x64xf32>) -> tensor<?x8x?x64xf32>
  %u = kiln.transpose %t {permutation = [0, 2, 1, 3]} : (tensor<?x8x?x64xf32>) -> tensor<?x?x8x64xf32>
  %z = kiln.add %u, %h : (tensor<?x?x8x64xf32>, tensor<?x?x8x64xf32>) -> tensor<?x?x8x64xf32>
  kiln.return %z : tensor<?x?x8x64xf32>
}

// -----

// CHECK-LABEL: func @two_entries_stay_apart
// CHECK: kiln.parameter "w"
// CHECK-LABEL: func @second_entry
// CHECK: kiln.parameter "w"
func @two_entries_stay_apart(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = kiln.parameter "w" : tensor<4xf32>
  %0 = kiln.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}
func @second_entry(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = kiln.parameter "w" : tensor<4xf32>
  %0 = kiln.add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}

// -----

// Negative: the shape check fails the pipeline at the offending op.
func @mismatched_sequences(%a: tensor<?x4xf32> {kiln.dims = ["S", ""]},
                           %b: tensor<?x4xf32> {kiln.dims = ["T", ""]}) -> tensor<?x4xf32> {
  // expected-error @+1 {{'kiln.add' op shapes [S, 4] and [T, 4] do not broadcast: S vs T}}
  %0 = kiln.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  kiln.return %0 : tensor<?x4xf32>
}

// -----

// Two attention layers on a boolean padding mask. Canonicalization merges each layer's
// two scales before the fusion reads them; the fusion rebuilds the mask in additive form
// once per layer, and CSE merges the two copies.
// CHECK-LABEL: func @two_attention_layers
// CHECK-SAME: (%[[X:.+]]: tensor<?x2x?x4xf32> {{.*}}, %[[LEN:.+]]: tensor<?xi32> {{.*}})
// CHECK-NEXT: %[[PM:.+]] = kiln.padding_mask %[[LEN]], %[[X]] {axis = 2 : i64} : (tensor<?xi32>, tensor<?x2x?x4xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[M:.+]] = kiln.reshape %[[PM]] {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
// CHECK-NEXT: %[[A:.+]] = kiln.attention %[[X]], %[[X]], %[[X]], %[[M]] {scale = 1.250000e-01 : f32}
// CHECK-NEXT: %[[B:.+]] = kiln.attention %[[A]], %[[A]], %[[A]], %[[M]] {scale = 1.250000e-01 : f32}
// CHECK-NEXT: kiln.return %[[B]]
func @two_attention_layers(%x: tensor<?x2x?x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "S", ""]},
                           %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"]}) -> tensor<?x2x?x4xf32> {
  %pm = kiln.padding_mask %len, %x {axis = 2 : i64} : (tensor<?xi32>, tensor<?x2x?x4xf32>) -> tensor<?x?xi1>
  %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xi1>) -> tensor<?x1x1x?xi1>
  %s1 = kiln.matmul %x, %x {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %c1 = kiln.scale %s1 {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
  %d1 = kiln.scale %c1 {factor = 0.25 : f32} : tensor<?x2x?x?xf32>
  %f1 = kiln.masked_fill %d1, %m {value = 0xFF800000 : f32} : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x2x?x?xf32>
  %p1 = kiln.softmax %f1 {axis = 3 : i64} : tensor<?x2x?x?xf32>
  %o1 = kiln.matmul %p1, %x : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %s2 = kiln.matmul %o1, %o1 {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %c2 = kiln.scale %s2 {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
  %d2 = kiln.scale %c2 {factor = 0.25 : f32} : tensor<?x2x?x?xf32>
  %f2 = kiln.masked_fill %d2, %m {value = 0xFF800000 : f32} : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x2x?x?xf32>
  %p2 = kiln.softmax %f2 {axis = 3 : i64} : tensor<?x2x?x?xf32>
  %o2 = kiln.matmul %p2, %o1 : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %o2 : tensor<?x2x?x4xf32>
}

// -----

// Negative: the attention weights are an output too, so the layer stays unfused, and
// the remark says so at the softmax.
// CHECK-LABEL: func @weights_are_an_output
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @weights_are_an_output(%x: tensor<2x2x5x4xf32> {kiln.name = "x"})
    -> (tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>) {
  %s = kiln.matmul %x, %x {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{kiln.softmax not fused into kiln.attention: the attention weights (the softmax's result) have another use}}
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %x : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o, %p : tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>
}

// -----

// State ops have effects: folding, CSE and DCE keep every write, in order, and the reads
// around them; a read after a write is not merged with the read before it, and a
// kv_append whose prefix nobody reads still writes the cache. (Identical state ops
// side by side are here to tempt CSE, not as a model the runtime would plan.)
// CHECK-LABEL: func @states_keep_their_order
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf32> {{.*}}, %[[STEP:.+]]: tensor<i32> {{.*}})
// CHECK-NEXT: %[[A:.+]] = kiln.state_read "s" {dims = ["B", ""]} : tensor<?x4xf32>
// CHECK-NEXT: kiln.state_write "s", %[[X]] : tensor<?x4xf32>
// CHECK-NEXT: %[[B:.+]] = kiln.state_read "s" {dims = ["B", ""]} : tensor<?x4xf32>
// CHECK-NEXT: kiln.state_alloc "c" {dims = ["B", "", ""]} : tensor<?x8x4xf32>
// CHECK-NEXT: kiln.state_alloc "c" {dims = ["B", "", ""]} : tensor<?x8x4xf32>
// CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[X]] {shape = [0, 1, 4]}
// CHECK-NEXT: kiln.kv_append "c", %[[R]] {axis = 1 : i64, capacity = 8 : i64, position = "P"}
// CHECK-NEXT: %[[K:.+]] = kiln.kv_append "c", %[[R]] {axis = 1 : i64, capacity = 8 : i64, position = "P"}
// CHECK-NEXT: kiln.state_write "k", %[[K]] : tensor<?x?x4xf32>
// CHECK-NEXT: %[[SUM:.+]] = kiln.add %[[A]], %[[B]]
// CHECK-NEXT: kiln.return %[[SUM]]
func @states_keep_their_order(%x: tensor<?x4xf32> {kiln.name = "x", kiln.dims = ["B", ""]},
                              %step: tensor<i32> {kiln.name = "step", kiln.dims = [], kiln.value_dim = "P"})
    -> tensor<?x4xf32> {
  %a = kiln.state_read "s" {dims = ["B", ""]} : tensor<?x4xf32>
  kiln.state_write "s", %x : tensor<?x4xf32>
  %b = kiln.state_read "s" {dims = ["B", ""]} : tensor<?x4xf32>
  kiln.state_alloc "c" {dims = ["B", "", ""]} : tensor<?x8x4xf32>
  kiln.state_alloc "c" {dims = ["B", "", ""]} : tensor<?x8x4xf32>
  %r = kiln.reshape %x {shape = [0, 1, 4]} : (tensor<?x4xf32>) -> tensor<?x1x4xf32>
  %unused = kiln.kv_append "c", %r {axis = 1 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x1x4xf32>) -> tensor<?x?x4xf32>
  %k = kiln.kv_append "c", %r {axis = 1 : i64, capacity = 8 : i64, position = "P"}
      : (tensor<?x1x4xf32>) -> tensor<?x?x4xf32>
  kiln.state_write "k", %k : tensor<?x?x4xf32>
  %sum = kiln.add %a, %b : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  kiln.return %sum : tensor<?x4xf32>
}
