// The default pipeline's `weights` option: kiln-weight-precision runs after the
// projections are packed (q, k and v convert as one weight, under its own name) and
// before the kernel groups, which form around the quantized products as they did
// around the linears. Without it, nothing changes.
// RUN: kiln-opt %s --kiln-default-pipeline='weights=int8' | FileCheck %s
// RUN: kiln-opt %s --kiln-default-pipeline | FileCheck %s --check-prefix=F32
// F32-NOT: kiln.weights
// F32-NOT: conversion
// F32: kiln.linear %{{.+}} : (tensor<?x8xf32>, tensor<24x8xf32>, tensor<24xf32>)
// F32: kiln.fusion
// F32-NEXT: ^bb0
// F32-NEXT: kiln.linear
// F32-NEXT: kiln.relu

// CHECK: module attributes {kiln.weights = "int8"}
// CHECK-LABEL: func @block
// CHECK-DAG: %[[W:.+]] = kiln.parameter "in_proj_weight" {conversion = "int8", source = "in_proj_weight"} : tensor<24x8xi8>
// CHECK-DAG: %[[S:.+]] = kiln.parameter "in_proj_weight.scale" {conversion = "int8_scale", source = "in_proj_weight"} : tensor<24xf32>
// CHECK-DAG: kiln.quantized_linear %{{.+}}, %[[W]], %[[S]], %{{.+}} : (tensor<?x8xf32>, tensor<24x8xi8>, tensor<24xf32>, tensor<24xf32>) -> tensor<?x24xf32>
// CHECK: kiln.fusion %{{.+}} : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.quantized_linear
// CHECK-NEXT: kiln.relu
// CHECK-NOT: kiln.linear
func @block(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]})
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x16xf32>) {
  %w = kiln.parameter "in_proj_weight" : tensor<24x8xf32>
  %b = kiln.parameter "in_proj_bias" : tensor<24xf32>
  %wq = kiln.slice %w {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bq = kiln.slice %b {axis = 0 : i64, start = 0 : i64, end = 8 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %q = kiln.linear %x, %wq, %bq : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wk = kiln.slice %w {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bk = kiln.slice %b {axis = 0 : i64, start = 8 : i64, end = 16 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %k = kiln.linear %x, %wk, %bk : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %wv = kiln.slice %w {axis = 0 : i64, start = 16 : i64, end = 24 : i64} : (tensor<24x8xf32>) -> tensor<8x8xf32>
  %bv = kiln.slice %b {axis = 0 : i64, start = 16 : i64, end = 24 : i64} : (tensor<24xf32>) -> tensor<8xf32>
  %v = kiln.linear %x, %wv, %bv : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %w1 = kiln.parameter "linear1.weight" : tensor<16x8xf32>
  %b1 = kiln.parameter "linear1.bias" : tensor<16xf32>
  %h = kiln.linear %x, %w1, %b1 : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = kiln.relu %h : tensor<?x16xf32>
  kiln.return %q, %k, %v, %r : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x16xf32>
}
