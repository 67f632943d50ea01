// kiln-pack-projections: linears over adjacent rows of one packed weight and bias, on
// one input, become one linear and slices of its result; every other linear over a
// weight slice that could have packed stays, with the remark that says why (a linear
// whose input no other projection reads has nothing to pack with, and no remark).
// RUN: kiln-opt %s --split-input-file --kiln-pack-projections=remarks=1 --verify-diagnostics | FileCheck %s
// The global flag gives the same remarks; without either, the pass says nothing.
// RUN: kiln-opt %s --split-input-file --kiln-fusion-remarks --kiln-pack-projections --verify-diagnostics -o /dev/null
// RUN: kiln-opt %s --split-input-file --kiln-pack-projections 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark

// Self-attention: q, k and v over the whole packed weight, in any order in the block.
// CHECK-LABEL: func @self_attention
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8xf32>
// CHECK-NEXT: %[[W:.+]] = kiln.parameter "in_proj_weight"
// CHECK-NEXT: %[[B:.+]] = kiln.parameter "in_proj_bias"
// CHECK-NEXT: %[[P:.+]] = kiln.linear %[[X]], %[[W]], %[[B]] : (tensor<?x?x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
// CHECK-NEXT: %[[Q:.+]] = kiln.slice %[[P]] {axis = 2 : i64, end = 8 : i64, start = 0 : i64} : (tensor<?x?x24xf32>) -> tensor<?x?x8xf32>
// CHECK-NEXT: %[[K:.+]] = kiln.slice %[[P]] {axis = 2 : i64, end = 16 : i64, start = 8 : i64}
// CHECK-NEXT: %[[V:.+]] = kiln.slice %[[P]] {axis = 2 : i64, end = 24 : i64, start = 16 : i64}
// CHECK-NEXT: kiln.return %[[Q]], %[[K]], %[[V]]
func @self_attention(%x: tensor<?x?x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %w = kiln.parameter "in_proj_weight" : tensor<24x8xf32>
  %b = kiln.parameter "in_proj_bias" : tensor<24xf32>
  %wv = kiln.slice %w {axis = 0 : i64, start = 16 : i64, end = 24 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bv = kiln.slice %b {axis = 0 : i64, start = 16 : i64, end = 24 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %v = kiln.linear %x, %wv, %bv : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %wq = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bq = kiln.slice %b {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %q = kiln.linear %x, %wq, %bq : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %wk = kiln.slice %w {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bk = kiln.slice %b {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %k = kiln.linear %x, %wk, %bk : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  kiln.return %q, %k, %v : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Cross-attention: k and v over the memory pack into rows [8, 24); q, over another
// input, stays alone.
// CHECK-LABEL: func @cross_attention
// CHECK-SAME: (%[[X:.+]]: tensor<?x1x8xf32>, %[[M:.+]]: tensor<?x?x8xf32>)
// CHECK: %[[Q:.+]] = kiln.linear %[[X]]
// CHECK: %[[WKV:.+]] = kiln.slice %{{.+}} {axis = 0 : i64, end = 24 : i64, start = 8 : i64} : (tensor<24x8xf32>) -> tensor<16x8xf32>
// CHECK-NEXT: %[[BKV:.+]] = kiln.slice %{{.+}} {axis = 0 : i64, end = 24 : i64, start = 8 : i64} : (tensor<24xf32>) -> tensor<16xf32>
// CHECK-NEXT: %[[P:.+]] = kiln.linear %[[M]], %[[WKV]], %[[BKV]] : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
// CHECK-NEXT: %[[K:.+]] = kiln.slice %[[P]] {axis = 2 : i64, end = 8 : i64, start = 0 : i64}
// CHECK-NEXT: %[[V:.+]] = kiln.slice %[[P]] {axis = 2 : i64, end = 16 : i64, start = 8 : i64}
// CHECK-NEXT: kiln.return %[[Q]], %[[K]], %[[V]]
func @cross_attention(%x: tensor<?x1x8xf32>, %m: tensor<?x?x8xf32>)
    -> (tensor<?x1x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %w = kiln.parameter "in_proj_weight" : tensor<24x8xf32>
  %b = kiln.parameter "in_proj_bias" : tensor<24xf32>
  %wq = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bq = kiln.slice %b {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %q = kiln.linear %x, %wq, %bq : (tensor<?x1x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x1x8xf32>
  %wk = kiln.slice %w {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bk = kiln.slice %b {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %k = kiln.linear %m, %wk, %bk : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %wv = kiln.slice %w {axis = 0 : i64, start = 16 : i64, end = 24 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bv = kiln.slice %b {axis = 0 : i64, start = 16 : i64, end = 24 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %v = kiln.linear %m, %wv, %bv : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  kiln.return %q, %k, %v : tensor<?x1x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Negative: slices of two different weights over one input.
// CHECK-LABEL: func @different_weights
// CHECK-COUNT-2: kiln.linear
// CHECK-NOT: kiln.linear
func @different_weights(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w1 = kiln.parameter "w1" : tensor<16x8xf32>
  %w2 = kiln.parameter "w2" : tensor<16x8xf32>
  %b = kiln.parameter "b" : tensor<16xf32>
  %wa = kiln.slice %w1 {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<16x8xf32>) -> tensor<8x8xf32>
  %ba = kiln.slice %b {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<16xf32>) -> tensor<8xf32>
  // expected-remark @+1 {{kiln.linear not packed with another projection of the same packed weight: the other linears over the same input project through rows of another weight or bias, which would have to be copied into one}}
  %a = kiln.linear %x, %wa, %ba : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wb = kiln.slice %w2 {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<16x8xf32>) -> tensor<8x8xf32>
  %bb = kiln.slice %b {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<16xf32>) -> tensor<8xf32>
  // expected-remark @+1 {{kiln.linear not packed with another projection of the same packed weight: the other linears over the same input project through rows of another weight or bias, which would have to be copied into one}}
  %c = kiln.linear %x, %wb, %bb : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %a, %c : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Negative: adjacent rows of one weight, but over two different inputs; each input has
// no other projection, so no remark.
// CHECK-LABEL: func @different_inputs
// CHECK-COUNT-2: kiln.linear
// CHECK-NOT: kiln.linear
func @different_inputs(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = kiln.parameter "w" : tensor<16x8xf32>
  %b = kiln.parameter "b" : tensor<16xf32>
  %wa = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<16x8xf32>) -> tensor<8x8xf32>
  %ba = kiln.slice %b {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<16xf32>) -> tensor<8xf32>
  %a = kiln.linear %x, %wa, %ba : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wb = kiln.slice %w {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<16x8xf32>) -> tensor<8x8xf32>
  %bb = kiln.slice %b {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<16xf32>) -> tensor<8xf32>
  %c = kiln.linear %y, %wb, %bb : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %a, %c : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Negative: rows [0, 8) and [16, 24) of one weight leave a gap that nobody asked for.
// CHECK-LABEL: func @not_adjacent
// CHECK-COUNT-2: kiln.linear
// CHECK-NOT: kiln.linear
func @not_adjacent(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = kiln.parameter "w" : tensor<24x8xf32>
  %b = kiln.parameter "b" : tensor<24xf32>
  %wa = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %ba = kiln.slice %b {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  // expected-remark @+1 {{its rows are not adjacent to the rows of another linear over the same input, weight and bias}}
  %a = kiln.linear %x, %wa, %ba : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wc = kiln.slice %w {axis = 0 : i64, start = 16 : i64, end = 24 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bc = kiln.slice %b {axis = 0 : i64, start = 16 : i64, end = 24 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  // expected-remark @+1 {{its rows are not adjacent to the rows of another linear over the same input, weight and bias}}
  %c = kiln.linear %x, %wc, %bc : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %a, %c : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Negative: the bias rows differ from the weight rows.
// CHECK-LABEL: func @bias_rows_differ
// CHECK-COUNT-2: kiln.linear
// CHECK-NOT: kiln.linear
func @bias_rows_differ(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = kiln.parameter "w" : tensor<16x8xf32>
  %b = kiln.parameter "b" : tensor<16xf32>
  %wa = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<16x8xf32>) -> tensor<8x8xf32>
  %ba = kiln.slice %b {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<16xf32>) -> tensor<8xf32>
  // expected-remark @+1 {{its bias is not the same rows [0, 8) of a packed bias}}
  %a = kiln.linear %x, %wa, %ba : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wb = kiln.slice %w {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<16x8xf32>) -> tensor<8x8xf32>
  %bb = kiln.slice %b {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<16xf32>) -> tensor<8xf32>
  // expected-remark @+1 {{its bias is not the same rows [8, 16) of a packed bias}}
  %c = kiln.linear %x, %wb, %bb : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %a, %c : tensor<?x8xf32>, tensor<?x8xf32>
}
