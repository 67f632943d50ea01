// kiln-weight-precision: the weights of linears and tied output projections become bf16
// parameters, or int8 ones with their scales read by kiln.quantized_linear; every other
// product over a rank-2 weight keeps f32, with the remark that says why. kiln-opt
// verifies the module after the pass.
// RUN: kiln-opt %s --split-input-file --kiln-weight-precision='weights=bf16 remarks=1' --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,BF16
// RUN: kiln-opt %s --split-input-file --kiln-weight-precision='weights=int8 remarks=1' --verify-diagnostics | FileCheck %s --check-prefixes=CHECK,INT8
// The global flag gives the same remarks; without either, the pass says nothing.
// RUN: kiln-opt %s --split-input-file --kiln-fusion-remarks --kiln-weight-precision=weights=int8 --verify-diagnostics -o /dev/null
// RUN: kiln-opt %s --split-input-file --kiln-weight-precision=weights=int8 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark
// f32 changes nothing, not even the module's attributes.
// RUN: kiln-opt %s --split-input-file --kiln-weight-precision=weights=f32 | FileCheck %s --check-prefix=F32
// F32-NOT: kiln.weights
// F32-NOT: conversion
// F32-NOT: quantized_linear
// The weights and slices that only converted products read are gone.
// RUN: kiln-opt %s --split-input-file --kiln-weight-precision=weights=int8 | FileCheck %s --check-prefix=GONE
// GONE-NOT: kiln.parameter "self.in_proj_weight" :
// GONE-NOT: kiln.parameter "cross.in_proj_weight" :
// GONE-NOT: (tensor<24x8xf32>) ->
// RUN: not kiln-opt %s --split-input-file --kiln-weight-precision=weights=fp8 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: kiln-weight-precision: unknown weights 'fp8' (expected f32, bf16 or int8)

// A linear over a whole parameter that nothing else reads: the converted weight takes
// the parameter's name, and the f32 one goes.
// CHECK-LABEL: module attributes
// BF16-SAME: {kiln.weights = "bf16"}
// INT8-SAME: {kiln.weights = "int8"}
// CHECK-LABEL: func @linear
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xf32>
// CHECK-NOT: kiln.parameter "w" :
// BF16: %[[W:.+]] = kiln.parameter "w" {conversion = "bf16", source = "w"} : tensor<16x8xbf16>
// BF16: kiln.linear %[[X]], %[[W]], %{{.+}} : (tensor<?x8xf32>, tensor<16x8xbf16>, tensor<16xf32>) -> tensor<?x16xf32>
// INT8: %[[W:.+]] = kiln.parameter "w" {conversion = "int8", source = "w"} : tensor<16x8xi8>
// INT8-NEXT: %[[S:.+]] = kiln.parameter "w.scale" {conversion = "int8_scale", source = "w"} : tensor<16xf32>
// INT8-NEXT: %[[B:.+]] = kiln.parameter "b" : tensor<16xf32>
// INT8-NEXT: %[[Y:.+]] = kiln.quantized_linear %[[X]], %[[W]], %[[S]], %[[B]] : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
// INT8-NEXT: kiln.return %[[Y]]
func @linear(%x: tensor<?x8xf32>) -> tensor<?x16xf32> {
  %w = kiln.parameter "w" : tensor<16x8xf32>
  %b = kiln.parameter "b" : tensor<16xf32>
  %y = kiln.linear %x, %w, %b : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  kiln.return %y : tensor<?x16xf32>
}

// -----

// Packed self-attention (kiln-pack-projections' q/k/v over the whole in_proj_weight)
// and cross-attention's q and k/v over row ranges of another: the ranges are named by
// their rows, and their slices go.
// CHECK-LABEL: func @attention_projections
// BF16-DAG: %[[SELF:.+]] = kiln.parameter "self.in_proj_weight" {conversion = "bf16", source = "self.in_proj_weight"} : tensor<24x8xbf16>
// BF16-DAG: %[[CQ:.+]] = kiln.parameter "cross.in_proj_weight[0:8]" {conversion = "bf16", rows = [0, 8], source = "cross.in_proj_weight"} : tensor<8x8xbf16>
// BF16-DAG: %[[CKV:.+]] = kiln.parameter "cross.in_proj_weight[8:24]" {conversion = "bf16", rows = [8, 24], source = "cross.in_proj_weight"} : tensor<16x8xbf16>
// BF16-DAG: kiln.linear %{{.+}}, %[[SELF]], %{{.+}} : (tensor<?x?x8xf32>, tensor<24x8xbf16>
// BF16-DAG: kiln.linear %{{.+}}, %[[CQ]], %{{.+}} : (tensor<?x?x8xf32>, tensor<8x8xbf16>
// BF16-DAG: kiln.linear %{{.+}}, %[[CKV]], %{{.+}} : (tensor<?x?x8xf32>, tensor<16x8xbf16>
// INT8-DAG: %[[CQ:.+]] = kiln.parameter "cross.in_proj_weight[0:8]" {conversion = "int8", rows = [0, 8], source = "cross.in_proj_weight"} : tensor<8x8xi8>
// INT8-DAG: %[[CQS:.+]] = kiln.parameter "cross.in_proj_weight[0:8].scale" {conversion = "int8_scale", rows = [0, 8], source = "cross.in_proj_weight"} : tensor<8xf32>
// INT8-DAG: %[[CKV:.+]] = kiln.parameter "cross.in_proj_weight[8:24]" {conversion = "int8", rows = [8, 24], source = "cross.in_proj_weight"} : tensor<16x8xi8>
// INT8-DAG: %[[CKVS:.+]] = kiln.parameter "cross.in_proj_weight[8:24].scale" {conversion = "int8_scale", rows = [8, 24], source = "cross.in_proj_weight"} : tensor<16xf32>
// INT8-DAG: kiln.quantized_linear %{{.+}}, %[[CQ]], %[[CQS]], %{{.+}} :
// INT8-DAG: kiln.quantized_linear %{{.+}}, %[[CKV]], %[[CKVS]], %{{.+}} :
// INT8-DAG: %[[SELF:.+]] = kiln.parameter "self.in_proj_weight" {conversion = "int8", source = "self.in_proj_weight"} : tensor<24x8xi8>
// INT8-DAG: %[[SELFS:.+]] = kiln.parameter "self.in_proj_weight.scale" {conversion = "int8_scale", source = "self.in_proj_weight"} : tensor<24xf32>
// INT8-DAG: kiln.quantized_linear %{{.+}}, %[[SELF]], %[[SELFS]], %{{.+}} :
// CHECK: kiln.return
func @attention_projections(%x: tensor<?x?x8xf32>, %m: tensor<?x?x8xf32>)
    -> (tensor<?x?x24xf32>, tensor<?x?x8xf32>, tensor<?x?x16xf32>) {
  %w = kiln.parameter "self.in_proj_weight" : tensor<24x8xf32>
  %b = kiln.parameter "self.in_proj_bias" : tensor<24xf32>
  %qkv = kiln.linear %x, %w, %b : (tensor<?x?x8xf32>, tensor<24x8xf32>, tensor<24xf32>) -> tensor<?x?x24xf32>
  %cw = kiln.parameter "cross.in_proj_weight" : tensor<24x8xf32>
  %cb = kiln.parameter "cross.in_proj_bias" : tensor<24xf32>
  %wq = kiln.slice %cw {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bq = kiln.slice %cb {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %q = kiln.linear %x, %wq, %bq : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %wkv = kiln.slice %cw {axis = 0 : i64, start = 8 : i64, end = 24 : i64} : (tensor<24x8xf32>) -> tensor<16x8xf32>
  %bkv = kiln.slice %cb {axis = 0 : i64, start = 8 : i64, end = 24 : i64} : (tensor<24xf32>) -> tensor<16xf32>
  %kv = kiln.linear %m, %wkv, %bkv : (tensor<?x?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  kiln.return %qkv, %q, %kv : tensor<?x?x24xf32>, tensor<?x?x8xf32>, tensor<?x?x16xf32>
}

// -----

// Two linears over the same rows (of two slices of them) share one converted
// parameter.
// CHECK-LABEL: func @shared_rows
// CHECK-NOT: kiln.parameter "w" :
// BF16: kiln.parameter "w[0:8]" {conversion = "bf16", rows = [0, 8], source = "w"}
// INT8: kiln.parameter "w[0:8]" {conversion = "int8", rows = [0, 8], source = "w"}
// INT8-NEXT: kiln.parameter "w[0:8].scale" {conversion = "int8_scale", rows = [0, 8], source = "w"}
// CHECK-NOT: kiln.parameter "w
// CHECK: kiln.return
func @shared_rows(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = kiln.parameter "w" : tensor<16x8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  %w1 = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<16x8xf32>) -> tensor<8x8xf32>
  %a = kiln.linear %x, %w1, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %w2 = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<16x8xf32>) -> tensor<8x8xf32>
  %c = kiln.linear %y, %w2, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %a, %c : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// The tied output projection follows the weights' precision, bias-less; the embedding
// gather still reads the f32 table, so the converted table is named apart. The names
// are the module's: the entry that only projects names it the same way.
// CHECK-LABEL: func @tied_decode
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi32>)
// CHECK: %[[T:.+]] = kiln.parameter "embed.weight" : tensor<12x8xf32>
// BF16-NEXT: %[[C:.+]] = kiln.parameter "embed.weight.bf16" {conversion = "bf16", source = "embed.weight"} : tensor<12x8xbf16>
// INT8-NEXT: %[[C:.+]] = kiln.parameter "embed.weight.int8" {conversion = "int8", source = "embed.weight"} : tensor<12x8xi8>
// INT8-NEXT: %[[S:.+]] = kiln.parameter "embed.weight.int8.scale" {conversion = "int8_scale", source = "embed.weight"} : tensor<12xf32>
// CHECK-NEXT: %[[E:.+]] = kiln.embedding %[[T]], %[[IDS]]
// BF16-NEXT: kiln.matmul %[[E]], %[[C]] {transpose_rhs = true} : (tensor<?x?x8xf32>, tensor<12x8xbf16>) -> tensor<?x?x12xf32>
// INT8-NEXT: kiln.quantized_linear %[[E]], %[[C]], %[[S]] : (tensor<?x?x8xf32>, tensor<12x8xi8>, tensor<12xf32>) -> tensor<?x?x12xf32>
// CHECK-LABEL: func @tied_project
// CHECK-NOT: kiln.parameter "embed.weight" :
// BF16: kiln.parameter "embed.weight.bf16"
// INT8: kiln.parameter "embed.weight.int8"
func @tied_decode(%ids: tensor<?x?xi32>) -> tensor<?x?x12xf32> {
  %t = kiln.parameter "embed.weight" : tensor<12x8xf32>
  %e = kiln.embedding %t, %ids : (tensor<12x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %l = kiln.matmul %e, %t {transpose_rhs = true} : (tensor<?x?x8xf32>, tensor<12x8xf32>) -> tensor<?x?x12xf32>
  kiln.return %l : tensor<?x?x12xf32>
}
func @tied_project(%h: tensor<?x8xf32>) -> tensor<?x12xf32> {
  %t = kiln.parameter "embed.weight" : tensor<12x8xf32>
  %l = kiln.matmul %h, %t {transpose_rhs = true} : (tensor<?x8xf32>, tensor<12x8xf32>) -> tensor<?x12xf32>
  kiln.return %l : tensor<?x12xf32>
}

// -----

// Negative: products whose weight is not a parameter's rows keep f32, with a remark
// for each over a rank-2 weight; attention's [B, H, T, d] products get none.
// CHECK-LABEL: func @stays_f32
// CHECK-NOT: conversion
// CHECK-NOT: quantized_linear
// CHECK: kiln.return
func @stays_f32(%x: tensor<?x8xf32>, %y: tensor<8x8xf32>, %q: tensor<?x2x?x4xf32>, %k: tensor<?x2x?x4xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>, tensor<?x2x?x?xf32>) {
  %w = kiln.parameter "w" : tensor<8x8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  %wt = kiln.transpose %w {permutation = [1, 0]} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  // expected-remark @+1 {{kiln.linear keeps its f32 weight: its weight is computed (by kiln.transpose), not a parameter}}
  %a = kiln.linear %x, %wt, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{kiln.linear keeps its f32 weight: its weight is an input of the entry, not a parameter}}
  %c = kiln.linear %x, %y, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %v = kiln.parameter "v" : tensor<8x16xf32>
  %vs = kiln.slice %v {axis = 1 : i64, start = 0 : i64, end = 8 : i64} : (tensor<8x16xf32>) -> tensor<8x8xf32>
  // expected-remark @+1 {{kiln.linear keeps its f32 weight: its weight is a slice along axis 1, not a range of a parameter's rows}}
  %d = kiln.linear %x, %vs, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{kiln.matmul keeps its f32 weight: its rhs is not transposed: only weights stored [out, in] (nn.Linear's layout, transpose_rhs) are converted, a row per output channel}}
  %f = kiln.matmul %x, %w : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %yr = kiln.relu %y : tensor<8x8xf32>
  // expected-remark @+1 {{kiln.matmul keeps its f32 weight: its weight is computed (by kiln.relu), not a parameter}}
  %g = kiln.matmul %x, %yr {transpose_rhs = true} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{kiln.matmul keeps its f32 weight: its lhs is transposed, and only [..., in] x [out, in]^T is a linear}}
  %h = kiln.matmul %y, %w {transpose_lhs = true, transpose_rhs = true} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = kiln.matmul %q, %k {transpose_rhs = true} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x?xf32>
  kiln.return %a, %c, %d, %f, %g, %h, %s : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8x8xf32>, tensor<?x2x?x?xf32>
}
