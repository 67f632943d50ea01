// The pipeline every model goes through: shape checks, then folding, CSE and DCE.
// RUN: kiln-opt %s --split-input-file --kiln-default-pipeline --verify-diagnostics | FileCheck %s

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
