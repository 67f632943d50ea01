// kiln-fuse-attention: each form of attention it fuses, then each graph it must leave
// alone, with the remark that says why at the softmax.
// RUN: kiln-opt %s --split-input-file --kiln-fuse-attention=remarks=1 --verify-diagnostics | FileCheck %s
// The global flag gives the same remarks; without either, the pass says nothing.
// RUN: kiln-opt %s --split-input-file --kiln-fusion-remarks --kiln-fuse-attention --verify-diagnostics -o /dev/null
// RUN: kiln-opt %s --split-input-file --kiln-fuse-attention 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark

//===----------------------------------------------------------------------===//
// Fused
//===----------------------------------------------------------------------===//

// What the DSL's MultiHeadAttention emits: transpose_rhs, kiln.scale, an additive
// padding mask reshaped to [B, 1, 1, S]. The mask builder stays outside the fused op.
// CHECK-LABEL: func @multi_head_padding_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<?x8x?x64xf32> {{.*}}, %[[K:.+]]: tensor<?x8x?x64xf32> {{.*}}, %[[V:.+]]: tensor<?x8x?x64xf32> {{.*}}, %[[LEN:.+]]: tensor<?xi32> {{.*}}, %[[IDS:.+]]: tensor<?x?xi32> {{.*}})
// CHECK-NEXT: %[[PM:.+]] = kiln.padding_mask %[[LEN]], %[[IDS]] {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[M:.+]] = kiln.reshape %[[PM]] {shape = [0, 1, 1, -1]}
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f32}
// CHECK-SAME: : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x1x1x?xf32>) -> tensor<?x8x?x64xf32>
// CHECK-NEXT: kiln.return %[[O]]
func @multi_head_padding_mask(
    %q: tensor<?x8x?x64xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
    %k: tensor<?x8x?x64xf32> {kiln.name = "k", kiln.dims = ["B", "", "S", ""]},
    %v: tensor<?x8x?x64xf32> {kiln.name = "v", kiln.dims = ["B", "", "S", ""]},
    %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"]},
    %ids: tensor<?x?xi32> {kiln.name = "ids", kiln.dims = ["B", "S"]}) -> tensor<?x8x?x64xf32> {
  %pm = kiln.padding_mask %len, %ids {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
  %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x?xf32>
  %c = kiln.scale %s {factor = 0.125 : f32} : tensor<?x8x?x?xf32>
  %a = kiln.add %c, %m : (tensor<?x8x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x8x?x?xf32>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<?x8x?x?xf32>
  %o = kiln.matmul %p, %v : (tensor<?x8x?x?xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32>
  kiln.return %o : tensor<?x8x?x64xf32>
}

// -----

// The mask as the lhs of the add, no scale at all.
// CHECK-LABEL: func @mask_first_no_scale
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[K:.+]]: tensor<2x2x5x4xf32>, %[[V:.+]]: tensor<2x2x5x4xf32>, %[[M:.+]]: tensor<2x1x1x5xf32>)
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.000000e+00 : f32}
// CHECK-NEXT: kiln.return %[[O]]
func @mask_first_no_scale(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>,
                          %m: tensor<2x1x1x5xf32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %a = kiln.add %m, %s : (tensor<2x1x1x5xf32>, tensor<2x2x5x5xf32>) -> tensor<2x2x5x5xf32>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// kiln.mul by a splat constant, scalar or of an all-ones shape, in either order.
// CHECK-LABEL: func @mul_by_splat_constants
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[K:.+]]: tensor<2x2x5x4xf32>, %[[V:.+]]: tensor<2x2x5x4xf32>)
// CHECK: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32}
// CHECK-NOT: kiln.mul
// CHECK: kiln.return %[[O]]
func @mul_by_splat_constants(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %half = kiln.constant dense<0.5> : tensor<f32>
  %quarter = kiln.constant dense<0.25> : tensor<1x1x1x1xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %a = kiln.mul %s, %half : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5x5xf32>
  %b = kiln.mul %quarter, %a : (tensor<1x1x1x1xf32>, tensor<2x2x5x5xf32>) -> tensor<2x2x5x5xf32>
  %p = kiln.softmax %b {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// Division by sqrt(d_k) written as a constant: a factor of 1/8.
// CHECK-LABEL: func @divide_by_sqrt_dk
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x64xf32>, %[[K:.+]]: tensor<2x2x5x64xf32>, %[[V:.+]]: tensor<2x2x5x64xf32>)
// CHECK: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32}
// CHECK-NOT: kiln.div
// CHECK: kiln.return %[[O]]
func @divide_by_sqrt_dk(%q: tensor<2x2x5x64xf32>, %k: tensor<2x2x5x64xf32>, %v: tensor<2x2x5x64xf32>) -> tensor<2x2x5x64xf32> {
  %sqrt = kiln.constant dense<8.0> : tensor<f32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<2x2x5x64xf32>, tensor<2x2x5x64xf32>) -> tensor<2x2x5x5xf32>
  %d = kiln.div %s, %sqrt : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5x5xf32>
  %p = kiln.softmax %d {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x64xf32>) -> tensor<2x2x5x64xf32>
  kiln.return %o : tensor<2x2x5x64xf32>
}

// -----

// A scale on Q and one on K (before the first matmul) fold into the attribute. The
// scaled Q has another user, so its kiln.scale stays for it.
// CHECK-LABEL: func @scale_on_query_and_key
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[K:.+]]: tensor<2x2x5x4xf32>, %[[V:.+]]: tensor<2x2x5x4xf32>)
// CHECK: %[[QS:.+]] = kiln.scale %[[Q]] {factor = 5.000000e-01 : f32}
// CHECK: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32}
// CHECK: kiln.return %[[O]], %[[QS]]
func @scale_on_query_and_key(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>)
    -> (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) {
  %qs = kiln.scale %q {factor = 0.5 : f32} : tensor<2x2x5x4xf32>
  %ks = kiln.scale %k {factor = 0.5 : f32} : tensor<2x2x5x4xf32>
  %s = kiln.matmul %qs, %ks {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o, %qs : tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>
}

// -----

// Kᵀ as an explicit transpose of K's last two dims: the fused op takes K itself.
// CHECK-LABEL: func @explicit_key_transpose
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[K:.+]]: tensor<2x2x7x4xf32>, %[[V:.+]]: tensor<2x2x7x3xf32>)
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 5.000000e-01 : f32}
// CHECK-SAME: -> tensor<2x2x5x3xf32>
// CHECK-NEXT: kiln.return %[[O]]
func @explicit_key_transpose(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x7x4xf32>, %v: tensor<2x2x7x3xf32>) -> tensor<2x2x5x3xf32> {
  %kt = kiln.transpose %k {permutation = [0, 1, 3, 2]} : (tensor<2x2x7x4xf32>) -> tensor<2x2x4x7xf32>
  %s = kiln.matmul %q, %kt : (tensor<2x2x5x4xf32>, tensor<2x2x4x7xf32>) -> tensor<2x2x5x7xf32>
  %c = kiln.scale %s {factor = 0.5 : f32} : tensor<2x2x5x7xf32>
  %p = kiln.softmax %c {axis = 3 : i64} : tensor<2x2x5x7xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x7xf32>, tensor<2x2x7x3xf32>) -> tensor<2x2x5x3xf32>
  kiln.return %o : tensor<2x2x5x3xf32>
}

// -----

// K stored [B, H, d, S] as it comes: the fusion transposes it once for the fused op.
// CHECK-LABEL: func @key_stored_transposed
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[KT:.+]]: tensor<2x2x4x7xf32>, %[[V:.+]]: tensor<2x2x7x3xf32>)
// CHECK-NEXT: %[[K:.+]] = kiln.transpose %[[KT]] {permutation = [0, 1, 3, 2]} : (tensor<2x2x4x7xf32>) -> tensor<2x2x7x4xf32>
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]]
func @key_stored_transposed(%q: tensor<2x2x5x4xf32>, %kt: tensor<2x2x4x7xf32>, %v: tensor<2x2x7x3xf32>) -> tensor<2x2x5x3xf32> {
  %s = kiln.matmul %q, %kt : (tensor<2x2x5x4xf32>, tensor<2x2x4x7xf32>) -> tensor<2x2x5x7xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x2x5x7xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x7xf32>, tensor<2x2x7x3xf32>) -> tensor<2x2x5x3xf32>
  kiln.return %o : tensor<2x2x5x3xf32>
}

// -----

// A causal mask over the queries, with named dims showing Tq = Tk = T: it becomes the
// `causal` attribute and the mask builder goes.
// CHECK-LABEL: func @causal_by_named_dims
// CHECK-SAME: (%[[Q:.+]]: tensor<?x8x?x64xf32> {{.*}}, %[[K:.+]]: tensor<?x8x?x64xf32> {{.*}}, %[[V:.+]]: tensor<?x8x?x64xf32> {{.*}})
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 1.250000e-01 : f32}
// CHECK-SAME: : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32>
// CHECK-NEXT: kiln.return %[[O]]
func @causal_by_named_dims(
    %q: tensor<?x8x?x64xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
    %k: tensor<?x8x?x64xf32> {kiln.name = "k", kiln.dims = ["B", "", "T", ""]},
    %v: tensor<?x8x?x64xf32> {kiln.name = "v", kiln.dims = ["B", "", "T", ""]}) -> tensor<?x8x?x64xf32> {
  %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<?x8x?x64xf32>) -> tensor<?x?xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x?xf32>
  %c = kiln.scale %s {factor = 0.125 : f32} : tensor<?x8x?x?xf32>
  %a = kiln.add %c, %cm : (tensor<?x8x?x?xf32>, tensor<?x?xf32>) -> tensor<?x8x?x?xf32>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<?x8x?x?xf32>
  %o = kiln.matmul %p, %v : (tensor<?x8x?x?xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32>
  kiln.return %o : tensor<?x8x?x64xf32>
}

// -----

// Static sizes prove Tq = Tk = N too, also through a reshape that adds leading 1s.
// CHECK-LABEL: func @causal_static_reshaped
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[V:.+]]: tensor<2x2x5x4xf32>)
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[Q]], %[[V]] {causal = true, scale = 1.000000e+00 : f32}
// CHECK-NEXT: kiln.return %[[O]]
func @causal_static_reshaped(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<2x2x5x4xf32>) -> tensor<5x5xf32>
  %m = kiln.reshape %cm {shape = [1, 1, 5, 5]} : (tensor<5x5xf32>) -> tensor<1x1x5x5xf32>
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %a = kiln.add %s, %m : (tensor<2x2x5x5xf32>, tensor<1x1x5x5xf32>) -> tensor<2x2x5x5xf32>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// Unnamed dynamic dims cannot show N = Tq = Tk, so the causal mask stays an ordinary
// (exact) additive mask operand: still fused, no remark.
// CHECK-LABEL: func @causal_unproven_stays_a_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<?x2x?x4xf32>, %[[K:.+]]: tensor<?x2x?x4xf32>, %[[V:.+]]: tensor<?x2x?x4xf32>)
// CHECK-NEXT: %[[CM:.+]] = kiln.causal_mask %[[Q]]
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]], %[[CM]] {scale = 1.000000e+00 : f32}
// CHECK-NEXT: kiln.return %[[O]]
func @causal_unproven_stays_a_mask(%q: tensor<?x2x?x4xf32>, %k: tensor<?x2x?x4xf32>, %v: tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32> {
  %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<?x2x?x4xf32>) -> tensor<?x?xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %a = kiln.add %s, %cm : (tensor<?x2x?x?xf32>, tensor<?x?xf32>) -> tensor<?x2x?x?xf32>
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<?x2x?x?xf32>
  %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %o : tensor<?x2x?x4xf32>
}

// -----

// masked_fill with -inf of a boolean padding mask: the builder and its reshape are
// re-run in additive form, which is what the fused op takes.
// CHECK-LABEL: func @masked_fill_boolean_padding
// CHECK-SAME: (%[[Q:.+]]: tensor<?x2x?x4xf32> {{.*}}, %[[K:.+]]: tensor<?x2x?x4xf32> {{.*}}, %[[V:.+]]: tensor<?x2x?x4xf32> {{.*}}, %[[LEN:.+]]: tensor<?xi32> {{.*}})
// CHECK-NEXT: %[[PM:.+]] = kiln.padding_mask %[[LEN]], %[[K]] {axis = 2 : i64} : (tensor<?xi32>, tensor<?x2x?x4xf32>) -> tensor<?x?xf32>
// CHECK-NEXT: %[[M:.+]] = kiln.reshape %[[PM]] {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 5.000000e-01 : f32}
// CHECK-NEXT: kiln.return %[[O]]
func @masked_fill_boolean_padding(
    %q: tensor<?x2x?x4xf32> {kiln.name = "q", kiln.dims = ["B", "", "T", ""]},
    %k: tensor<?x2x?x4xf32> {kiln.name = "k", kiln.dims = ["B", "", "S", ""]},
    %v: tensor<?x2x?x4xf32> {kiln.name = "v", kiln.dims = ["B", "", "S", ""]},
    %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"]}) -> tensor<?x2x?x4xf32> {
  %pm = kiln.padding_mask %len, %k {axis = 2 : i64} : (tensor<?xi32>, tensor<?x2x?x4xf32>) -> tensor<?x?xi1>
  %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xi1>) -> tensor<?x1x1x?xi1>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  %c = kiln.scale %s {factor = 0.5 : f32} : tensor<?x2x?x?xf32>
  %f = kiln.masked_fill %c, %m {value = 0xFF800000 : f32} : (tensor<?x2x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x2x?x?xf32>
  %p = kiln.softmax %f {axis = 3 : i64} : tensor<?x2x?x?xf32>
  %o = kiln.matmul %p, %v : (tensor<?x2x?x?xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  kiln.return %o : tensor<?x2x?x4xf32>
}

// -----

// masked_fill with -inf of a boolean causal mask over the scores' own T: `causal`.
// CHECK-LABEL: func @masked_fill_boolean_causal
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[K:.+]]: tensor<2x2x5x4xf32>, %[[V:.+]]: tensor<2x2x5x4xf32>)
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 1.000000e+00 : f32}
// CHECK-NEXT: kiln.return %[[O]]
func @masked_fill_boolean_causal(%q: tensor<2x2x5x4xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<2x2x5x4xf32>) -> tensor<5x5xi1>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %f = kiln.masked_fill %s, %cm {value = 0xFF800000 : f32} : (tensor<2x2x5x5xf32>, tensor<5x5xi1>) -> tensor<2x2x5x5xf32>
  %p = kiln.softmax %f {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// A decoder's self-attention masking the future and the padding: the causal mask
// becomes the attribute, the padding mask the operand.
// CHECK-LABEL: func @causal_and_padding
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[V:.+]]: tensor<2x2x5x4xf32>, %[[M:.+]]: tensor<2x1x1x5xf32>)
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[Q]], %[[V]], %[[M]] {causal = true, scale = 1.000000e+00 : f32}
// CHECK-NEXT: kiln.return %[[O]]
func @causal_and_padding(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %m: tensor<2x1x1x5xf32>) -> tensor<2x2x5x4xf32> {
  %cm = kiln.causal_mask %q {axis = 2 : i64} : (tensor<2x2x5x4xf32>) -> tensor<5x5xf32>
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %a = kiln.add %s, %cm : (tensor<2x2x5x5xf32>, tensor<5x5xf32>) -> tensor<2x2x5x5xf32>
  %b = kiln.add %a, %m : (tensor<2x2x5x5xf32>, tensor<2x1x1x5xf32>) -> tensor<2x2x5x5xf32>
  %p = kiln.softmax %b {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// An arbitrary additive mask (a bias) plus a padding mask: one is 0 / -inf, so their
// sum, computed once outside the fused op, rounds as the graph did.
// CHECK-LABEL: func @bias_and_padding_combine
// CHECK-SAME: (%[[Q:.+]]: tensor<2x2x5x4xf32>, %[[V:.+]]: tensor<2x2x5x4xf32>, %[[BIAS:.+]]: tensor<2x5x5xf32>, %[[LEN:.+]]: tensor<2xi32>)
// CHECK: %[[PM:.+]] = kiln.padding_mask %[[LEN]], %[[Q]]
// CHECK: %[[M:.+]] = kiln.reshape %[[PM]]
// CHECK: %[[SUM:.+]] = kiln.add %[[M]], %[[BIAS]] : (tensor<2x1x5xf32>, tensor<2x5x5xf32>) -> tensor<2x5x5xf32>
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[Q]], %[[V]], %[[SUM]]
// CHECK-NEXT: kiln.return %[[O]]
func @bias_and_padding_combine(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %bias: tensor<2x5x5xf32>,
                               %len: tensor<2xi32>) -> tensor<2x2x5x4xf32> {
  %pm = kiln.padding_mask %len, %q {axis = 2 : i64} : (tensor<2xi32>, tensor<2x2x5x4xf32>) -> tensor<2x5xf32>
  %m = kiln.reshape %pm {shape = [2, 1, 5]} : (tensor<2x5xf32>) -> tensor<2x1x5xf32>
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %a = kiln.add %s, %bias : (tensor<2x2x5x5xf32>, tensor<2x5x5xf32>) -> tensor<2x2x5x5xf32>
  %b = kiln.add %a, %m : (tensor<2x2x5x5xf32>, tensor<2x1x5xf32>) -> tensor<2x2x5x5xf32>
  %p = kiln.softmax %b {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// A 0 / -inf mask added before a positive scale: scaling it changes nothing.
// CHECK-LABEL: func @padding_mask_under_the_scale
// CHECK: %[[PM:.+]] = kiln.padding_mask
// CHECK-NEXT: %[[M:.+]] = kiln.reshape %[[PM]]
// CHECK-NEXT: kiln.attention %{{.+}}, %{{.+}}, %{{.+}}, %[[M]] {scale = 1.250000e-01 : f32}
func @padding_mask_under_the_scale(%q: tensor<2x5x4xf32>, %v: tensor<2x5x4xf32>, %len: tensor<2xi32>) -> tensor<2x5x4xf32> {
  %pm = kiln.padding_mask %len, %q {axis = 1 : i64} : (tensor<2xi32>, tensor<2x5x4xf32>) -> tensor<2x5xf32>
  %m = kiln.reshape %pm {shape = [2, 1, 5]} : (tensor<2x5xf32>) -> tensor<2x1x5xf32>
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x5xf32>
  %a = kiln.add %s, %m : (tensor<2x5x5xf32>, tensor<2x1x5xf32>) -> tensor<2x5x5xf32>
  %c = kiln.scale %a {factor = 0.125 : f32} : tensor<2x5x5xf32>
  %p = kiln.softmax %c {axis = 2 : i64} : tensor<2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x5x5xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  kiln.return %o : tensor<2x5x4xf32>
}

// -----

// The 3-D form [B, T, d] (one head, or heads folded into the batch).
// CHECK-LABEL: func @three_dimensional
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x16xf32>, %[[K:.+]]: tensor<?x?x16xf32>, %[[V:.+]]: tensor<?x?x8xf32>)
// CHECK-NEXT: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32}
// CHECK-SAME: : (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
func @three_dimensional(%q: tensor<?x?x16xf32>, %k: tensor<?x?x16xf32>, %v: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x?xf32>
  %c = kiln.scale %s {factor = 0.25 : f32} : tensor<?x?x?xf32>
  %p = kiln.softmax %c {axis = 2 : i64} : tensor<?x?x?xf32>
  %o = kiln.matmul %p, %v : (tensor<?x?x?xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  kiln.return %o : tensor<?x?x8xf32>
}

// -----

// One step of incremental decoding, as the DSL's DecoderLayer::step emits it: the
// self-attention's one query attends to every cached key (kv_append's P+1 positions,
// no mask); the cross-attention reads the memory's keys and values from states and
// masks padding by the source lengths.
// CHECK-LABEL: func @decode_step_with_caches
// CHECK-SAME: (%[[Q:.+]]: tensor<?x4x1x8xf32> {{.*}}, %[[KN:.+]]: tensor<?x4x1x8xf32> {{.*}}, %[[VN:.+]]: tensor<?x4x1x8xf32> {{.*}}, %[[STEP:.+]]: tensor<i32> {{.*}}, %[[LEN:.+]]: tensor<?xi32> {{.*}})
// CHECK-NEXT: %[[K:.+]] = kiln.kv_append "k_cache", %[[KN]]
// CHECK-NEXT: %[[V:.+]] = kiln.kv_append "v_cache", %[[VN]]
// CHECK-NEXT: %[[SELF:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 0.353553385 : f32}
// CHECK-SAME: : (tensor<?x4x1x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x1x8xf32>
// CHECK-NEXT: %[[MK:.+]] = kiln.state_read "memory_k"
// CHECK-NEXT: %[[MV:.+]] = kiln.state_read "memory_v"
// CHECK-NEXT: %[[PM:.+]] = kiln.padding_mask %[[LEN]], %[[MK]] {axis = 2 : i64}
// CHECK-NEXT: %[[M:.+]] = kiln.reshape %[[PM]] {shape = [0, 1, 1, -1]}
// CHECK-NEXT: %[[CROSS:.+]] = kiln.attention %[[SELF]], %[[MK]], %[[MV]], %[[M]] {scale = 0.353553385 : f32}
// CHECK-NEXT: kiln.return %[[CROSS]]
func @decode_step_with_caches(
    %q: tensor<?x4x1x8xf32> {kiln.name = "q", kiln.dims = ["B", "", "", ""]},
    %kn: tensor<?x4x1x8xf32> {kiln.name = "k", kiln.dims = ["B", "", "", ""]},
    %vn: tensor<?x4x1x8xf32> {kiln.name = "v", kiln.dims = ["B", "", "", ""]},
    %step: tensor<i32> {kiln.name = "step", kiln.dims = [], kiln.value_dim = "P"},
    %len: tensor<?xi32> {kiln.name = "src_lengths", kiln.dims = ["B"], kiln.bounds = ["1", "S"]})
    -> tensor<?x4x1x8xf32> {
  %k = kiln.kv_append "k_cache", %kn {axis = 2 : i64, capacity = 16 : i64, position = "P"}
      : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  %v = kiln.kv_append "v_cache", %vn {axis = 2 : i64, capacity = 16 : i64, position = "P"}
      : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x4x1x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x1x?xf32>
  %c = kiln.scale %s {factor = 0.353553385 : f32} : tensor<?x4x1x?xf32>
  %p = kiln.softmax %c {axis = 3 : i64} : tensor<?x4x1x?xf32>
  %self = kiln.matmul %p, %v : (tensor<?x4x1x?xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x1x8xf32>
  %mk = kiln.state_read "memory_k" {dims = ["B", "", "S", ""]} : tensor<?x4x?x8xf32>
  %mv = kiln.state_read "memory_v" {dims = ["B", "", "S", ""]} : tensor<?x4x?x8xf32>
  %pm = kiln.padding_mask %len, %mk {axis = 2 : i64} : (tensor<?xi32>, tensor<?x4x?x8xf32>) -> tensor<?x?xf32>
  %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
  %s2 = kiln.matmul %self, %mk {transpose_rhs = true} : (tensor<?x4x1x8xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x1x?xf32>
  %c2 = kiln.scale %s2 {factor = 0.353553385 : f32} : tensor<?x4x1x?xf32>
  %a2 = kiln.add %c2, %m : (tensor<?x4x1x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x4x1x?xf32>
  %p2 = kiln.softmax %a2 {axis = 3 : i64} : tensor<?x4x1x?xf32>
  %cross = kiln.matmul %p2, %mv : (tensor<?x4x1x?xf32>, tensor<?x4x?x8xf32>) -> tensor<?x4x1x8xf32>
  kiln.return %cross : tensor<?x4x1x8xf32>
}

//===----------------------------------------------------------------------===//
// Left alone, with a reason
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func @softmax_over_queries
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @softmax_over_queries(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{kiln.softmax not fused into kiln.attention: the softmax is over axis 2, not the last axis (3) that indexes the keys}}
  %p = kiln.softmax %s {axis = 2 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// The attention weights are also an output (e.g. to plot them).
// CHECK-LABEL: func @weights_returned
// CHECK: %[[P:.+]] = kiln.softmax
// CHECK: kiln.return %{{.+}}, %[[P]]
func @weights_returned(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> (tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>) {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the attention weights (the softmax's result) have another use besides the matmul with V}}
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o, %p : tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>
}

// -----

// CHECK-LABEL: func @raw_scores_returned
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @raw_scores_returned(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> (tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>) {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %c = kiln.scale %s {factor = 0.5 : f32} : tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the scores computed by 'kiln.matmul' have another use}}
  %p = kiln.softmax %c {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o, %s : tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>
}

// -----

// CHECK-LABEL: func @scaled_scores_returned
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @scaled_scores_returned(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %m: tensor<2x1x1x5xf32>)
    -> (tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>) {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %c = kiln.scale %s {factor = 0.5 : f32} : tensor<2x2x5x5xf32>
  %a = kiln.add %c, %m : (tensor<2x2x5x5xf32>, tensor<2x1x1x5xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the scores computed by 'kiln.scale' have another use}}
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o, %c : tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>
}

// -----

// CHECK-LABEL: func @masked_scores_returned
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @masked_scores_returned(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %m: tensor<2x1x1x5xf32>)
    -> (tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>) {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %a = kiln.add %s, %m : (tensor<2x2x5x5xf32>, tensor<2x1x1x5xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the scores computed by 'kiln.add' have another use}}
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o, %a : tensor<2x2x5x4xf32>, tensor<2x2x5x5xf32>
}

// -----

// CHECK-LABEL: func @scale_by_a_tensor
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @scale_by_a_tensor(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %t: tensor<f32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %c = kiln.mul %s, %t : (tensor<2x2x5x5xf32>, tensor<f32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the scores go through a 'kiln.mul' by a tensor that is not a kiln.constant}}
  %p = kiln.softmax %c {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// CHECK-LABEL: func @scale_by_a_non_splat_constant
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @scale_by_a_non_splat_constant(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %w = kiln.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %c = kiln.mul %s, %w : (tensor<2x2x5x5xf32>, tensor<5xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the scores go through a 'kiln.mul' by a kiln.constant that is not a splat}}
  %p = kiln.softmax %c {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// CHECK-LABEL: func @constant_divided_by_scores
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @constant_divided_by_scores(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %one = kiln.constant dense<1.0> : tensor<f32>
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %c = kiln.div %one, %s : (tensor<f32>, tensor<2x2x5x5xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the scores divide a kiln.constant}}
  %p = kiln.softmax %c {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// CHECK-LABEL: func @query_transposed
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @query_transposed(%qt: tensor<2x2x4x5xf32>, %k: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %qt, %k {transpose_lhs = true, transpose_rhs = true} : (tensor<2x2x4x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the Q·Kᵀ matmul transposes Q (transpose_lhs)}}
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// CHECK-LABEL: func @value_transposed
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @value_transposed(%q: tensor<2x2x5x4xf32>, %vt: tensor<2x2x4x5xf32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the matmul with V takes V transposed (transpose_rhs)}}
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %vt {transpose_rhs = true} : (tensor<2x2x5x5xf32>, tensor<2x2x4x5xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// CHECK-LABEL: func @weights_transposed
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @weights_transposed(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the matmul with V transposes the attention weights (transpose_lhs)}}
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v {transpose_lhs = true} : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// A finite fill differs from -inf where every key is masked: uniform weights, not 0.
// CHECK-LABEL: func @masked_fill_finite
// CHECK: kiln.masked_fill
// CHECK-NOT: kiln.attention
func @masked_fill_finite(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %len: tensor<2xi32>) -> tensor<2x2x5x4xf32> {
  %pm = kiln.padding_mask %len, %q {axis = 2 : i64} : (tensor<2xi32>, tensor<2x2x5x4xf32>) -> tensor<2x5xi1>
  %m = kiln.reshape %pm {shape = [2, 1, 1, 5]} : (tensor<2x5xi1>) -> tensor<2x1x1x5xi1>
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %f = kiln.masked_fill %s, %m {value = -1.0e9 : f32} : (tensor<2x2x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{kiln.masked_fill fills with -1.000000e+09, not -inf: with a finite fill a row masked everywhere gets uniform weights where kiln.attention gives 0 (only -inf fills fuse)}}
  %p = kiln.softmax %f {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// CHECK-LABEL: func @masked_fill_of_an_unknown_boolean
// CHECK: kiln.masked_fill
// CHECK-NOT: kiln.attention
func @masked_fill_of_an_unknown_boolean(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %b: tensor<2x1x1x5xi1>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %f = kiln.masked_fill %s, %b {value = 0xFF800000 : f32} : (tensor<2x2x5x5xf32>, tensor<2x1x1x5xi1>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the boolean mask of kiln.masked_fill is not made by kiln.padding_mask or kiln.causal_mask}}
  %p = kiln.softmax %f {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// An arbitrary bias added before the scale would have to be scaled too.
// CHECK-LABEL: func @bias_under_the_scale
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @bias_under_the_scale(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %bias: tensor<2x1x1x5xf32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %a = kiln.add %s, %bias : (tensor<2x2x5x5xf32>, tensor<2x1x1x5xf32>) -> tensor<2x2x5x5xf32>
  %c = kiln.scale %a {factor = 0.5 : f32} : tensor<2x2x5x5xf32>
  // expected-remark @+1 {{an additive mask is added before a scale (by 5.000000e-01), which fusing would have to apply to the mask as well}}
  %p = kiln.softmax %c {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// A negative scale turns a -inf mask under it into +inf.
// CHECK-LABEL: func @mask_under_a_negative_scale
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @mask_under_a_negative_scale(%q: tensor<2x5x4xf32>, %v: tensor<2x5x4xf32>, %len: tensor<2xi32>) -> tensor<2x5x4xf32> {
  %pm = kiln.padding_mask %len, %q {axis = 1 : i64} : (tensor<2xi32>, tensor<2x5x4xf32>) -> tensor<2x5xf32>
  %m = kiln.reshape %pm {shape = [2, 1, 5]} : (tensor<2x5xf32>) -> tensor<2x1x5xf32>
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x5xf32>
  %a = kiln.add %s, %m : (tensor<2x5x5xf32>, tensor<2x1x5xf32>) -> tensor<2x5x5xf32>
  %c = kiln.scale %a {factor = -1.0 : f32} : tensor<2x5x5xf32>
  // expected-remark @+1 {{a mask is added before a scale by -1.000000e+00, which turns its -inf into +inf or NaN}}
  %p = kiln.softmax %c {axis = 2 : i64} : tensor<2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x5x5xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  kiln.return %o : tensor<2x5x4xf32>
}

// -----

// CHECK-LABEL: func @two_general_masks
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @two_general_masks(%q: tensor<2x2x5x4xf32>, %v: tensor<2x2x5x4xf32>, %m1: tensor<2x1x1x5xf32>, %m2: tensor<5x5xf32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  %a = kiln.add %s, %m1 : (tensor<2x2x5x5xf32>, tensor<2x1x1x5xf32>) -> tensor<2x2x5x5xf32>
  %b = kiln.add %a, %m2 : (tensor<2x2x5x5xf32>, tensor<5x5xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{the scores get two additive masks that are not 0/-inf masks}}
  %p = kiln.softmax %b {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// The mask's batch of 3 enlarges the scores of one sequence: not a mask of them.
// CHECK-LABEL: func @mask_enlarges_the_scores
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @mask_enlarges_the_scores(%q: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>, %m: tensor<3x1x1x5xf32>) -> tensor<3x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<1x2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x5x5xf32>
  %a = kiln.add %s, %m : (tensor<1x2x5x5xf32>, tensor<3x1x1x5xf32>) -> tensor<3x2x5x5xf32>
  // expected-remark @+1 {{of the kiln.add broadcasts the scores to a larger shape}}
  %p = kiln.softmax %a {axis = 3 : i64} : tensor<3x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<3x2x5x5xf32>, tensor<1x2x5x4xf32>) -> tensor<3x2x5x4xf32>
  kiln.return %o : tensor<3x2x5x4xf32>
}

// -----

// V shared as a rank-2 [S, dv] matrix: kiln.attention takes q, k and v of one rank.
// CHECK-LABEL: func @value_of_another_rank
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @value_of_another_rank(%q: tensor<2x2x5x4xf32>, %v: tensor<5x4xf32>) -> tensor<2x2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x2x5x4xf32>, tensor<2x2x5x4xf32>) -> tensor<2x2x5x5xf32>
  // expected-remark @+1 {{Q, K and V have ranks 4, 4 and 2; kiln.attention takes them of one rank}}
  %p = kiln.softmax %s {axis = 3 : i64} : tensor<2x2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x5x5xf32>, tensor<5x4xf32>) -> tensor<2x2x5x4xf32>
  kiln.return %o : tensor<2x2x5x4xf32>
}

// -----

// CHECK-LABEL: func @rank_two
// CHECK: kiln.softmax
// CHECK-NOT: kiln.attention
func @rank_two(%q: tensor<5x4xf32>, %v: tensor<5x4xf32>) -> tensor<5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x5xf32>
  // expected-remark @+1 {{Q, K and V have rank 2; kiln.attention needs a batch dimension}}
  %p = kiln.softmax %s {axis = 1 : i64} : tensor<5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<5x5xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  kiln.return %o : tensor<5x4xf32>
}

// -----

// CHECK-LABEL: func @scores_from_an_input
// CHECK: kiln.softmax
func @scores_from_an_input(%s: tensor<2x5x5xf32>, %v: tensor<2x5x4xf32>) -> tensor<2x5x4xf32> {
  // expected-remark @+1 {{the scores the softmax reads are an entry input, not a kiln.matmul of Q and K}}
  %p = kiln.softmax %s {axis = 2 : i64} : tensor<2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x5x5xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  kiln.return %o : tensor<2x5x4xf32>
}

// -----

// CHECK-LABEL: func @scores_through_relu
// CHECK: kiln.softmax
func @scores_through_relu(%q: tensor<2x5x4xf32>, %v: tensor<2x5x4xf32>) -> tensor<2x5x4xf32> {
  %s = kiln.matmul %q, %q {transpose_rhs = true} : (tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x5xf32>
  %r = kiln.relu %s : tensor<2x5x5xf32>
  // expected-remark @+1 {{the scores the softmax reads are computed by 'kiln.relu', which is neither a scale, a mask nor the Q·Kᵀ matmul}}
  %p = kiln.softmax %r {axis = 2 : i64} : tensor<2x5x5xf32>
  %o = kiln.matmul %p, %v : (tensor<2x5x5xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  kiln.return %o : tensor<2x5x4xf32>
}

// -----

// A softmax that is not attention at all (a classifier's output) still gets a remark.
// CHECK-LABEL: func @softmax_alone
// CHECK: kiln.softmax
func @softmax_alone(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  // expected-remark @+1 {{its result is not the lhs of a kiln.matmul (the attention weights times V)}}
  %p = kiln.softmax %x {axis = 1 : i64} : tensor<2x10xf32>
  kiln.return %p : tensor<2x10xf32>
}
