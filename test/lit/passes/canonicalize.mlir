// Folders of kiln ops, run through the canonicalizer.
// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s

// CHECK-LABEL: func @scale_of_scale_merges
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[S:.+]] = kiln.scale %[[X]] {factor = 1.250000e-01 : f32} : tensor<4xf32>
// CHECK-NEXT: kiln.return %[[S]]
func @scale_of_scale_merges(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.scale %x {factor = 0.5 : f32} : tensor<4xf32>
  %1 = kiln.scale %0 {factor = 0.25 : f32} : tensor<4xf32>
  kiln.return %1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @scale_by_one_disappears
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: kiln.return %[[X]]
func @scale_by_one_disappears(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.scale %x {factor = 1.0 : f32} : tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}

// -----

// Merged to a factor of 1, then removed.
// CHECK-LABEL: func @scales_that_cancel
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: kiln.return %[[X]]
func @scales_that_cancel(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.scale %x {factor = 2.0 : f32} : tensor<4xf32>
  %1 = kiln.scale %0 {factor = 0.5 : f32} : tensor<4xf32>
  kiln.return %1 : tensor<4xf32>
}

// -----

// The inner scale has another user, so it stays; the outer still reads %x directly.
// CHECK-LABEL: func @shared_inner_scale
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-DAG: %[[A:.+]] = kiln.scale %[[X]] {factor = 5.000000e-01 : f32}
// CHECK-DAG: %[[B:.+]] = kiln.scale %[[X]] {factor = 1.500000e+00 : f32}
// CHECK: kiln.return %[[A]], %[[B]]
func @shared_inner_scale(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.scale %x {factor = 0.5 : f32} : tensor<4xf32>
  %1 = kiln.scale %0 {factor = 3.0 : f32} : tensor<4xf32>
  kiln.return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Negative: 1e30 * 1e30 overflows f32. Folding would turn (0 * 1e30) * 1e30 = 0 into
// 0 * inf = NaN, so both scales stay; likewise for a product that underflows to 0.
// CHECK-LABEL: func @scale_product_overflows
// CHECK: kiln.scale %{{.+}} {factor = 1.000000e+30 : f32}
// CHECK: kiln.scale %{{.+}} {factor = 1.000000e+30 : f32}
// CHECK-LABEL: func @scale_product_underflows
// CHECK: kiln.scale %{{.+}} {factor = 1.000000e-30 : f32}
// CHECK: kiln.scale %{{.+}} {factor = 1.000000e-30 : f32}
func @scale_product_overflows(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.scale %x {factor = 1.0e+30 : f32} : tensor<4xf32>
  %1 = kiln.scale %0 {factor = 1.0e+30 : f32} : tensor<4xf32>
  kiln.return %1 : tensor<4xf32>
}
func @scale_product_underflows(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.scale %x {factor = 1.0e-30 : f32} : tensor<4xf32>
  %1 = kiln.scale %0 {factor = 1.0e-30 : f32} : tensor<4xf32>
  kiln.return %1 : tensor<4xf32>
}

// -----

// splitHeads then mergeHeads' transpose: the pair cancels.
// CHECK-LABEL: func @transposes_cancel
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x8x64xf32>)
// CHECK-NEXT: kiln.return %[[X]]
func @transposes_cancel(%x: tensor<?x?x8x64xf32>) -> tensor<?x?x8x64xf32> {
  %0 = kiln.transpose %x {permutation = [0, 2, 1, 3]} : (tensor<?x?x8x64xf32>) -> tensor<?x8x?x64xf32>
  %1 = kiln.transpose %0 {permutation = [0, 2, 1, 3]} : (tensor<?x8x?x64xf32>) -> tensor<?x?x8x64xf32>
  kiln.return %1 : tensor<?x?x8x64xf32>
}

// -----

// Result dim i of the pair is input dim p[q[i]]: [1, 2, 0] twice is [2, 0, 1].
// CHECK-LABEL: func @transposes_compose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[X]] {permutation = [2, 0, 1]} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NEXT: kiln.return %[[T]]
func @transposes_compose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = kiln.transpose %x {permutation = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = kiln.transpose %0 {permutation = [1, 2, 0]} : (tensor<3x4x2xf32>) -> tensor<4x2x3xf32>
  kiln.return %1 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func @identity_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: kiln.return %[[X]]
func @identity_transpose(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.transpose %x {permutation = [0, 1, 2]} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  kiln.return %0 : tensor<2x3x4xf32>
}

// -----

// Negative: a transpose that is not its own inverse stays.
// CHECK-LABEL: func @single_transpose_stays
// CHECK: kiln.transpose %{{.+}} {permutation = [1, 0]}
func @single_transpose_stays(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = kiln.transpose %x {permutation = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  kiln.return %0 : tensor<3x2xf32>
}

// -----

// Negative: an identity transpose that refines `?` to 3 must not be replaced by its
// input, whose type differs.
// CHECK-LABEL: func @identity_transpose_refining_type
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[X]] {permutation = [0, 1]} : (tensor<?x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: kiln.return %[[T]] : tensor<3x4xf32>
func @identity_transpose_refining_type(%x: tensor<?x4xf32>) -> tensor<3x4xf32> {
  %0 = kiln.transpose %x {permutation = [0, 1]} : (tensor<?x4xf32>) -> tensor<3x4xf32>
  kiln.return %0 : tensor<3x4xf32>
}

// -----

// Negative: the pair cancels, but the inner result refined `?` to 3, so one transpose
// (now the identity) keeps the refined type.
// CHECK-LABEL: func @cancelling_transposes_refining_type
// CHECK-SAME: (%[[X:.+]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[T:.+]] = kiln.transpose %[[X]] {permutation = [0, 1]} : (tensor<?x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: kiln.return %[[T]] : tensor<3x4xf32>
func @cancelling_transposes_refining_type(%x: tensor<?x4xf32>) -> tensor<3x4xf32> {
  %0 = kiln.transpose %x {permutation = [1, 0]} : (tensor<?x4xf32>) -> tensor<4x3xf32>
  %1 = kiln.transpose %0 {permutation = [1, 0]} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  kiln.return %1 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func @reshapes_merge
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[X]] {shape = [4, 6]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: kiln.return %[[R]]
func @reshapes_merge(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = kiln.reshape %x {shape = [6, 4]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = kiln.reshape %0 {shape = [4, 6]} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  kiln.return %1 : tensor<4x6xf32>
}

// -----

// Merged into a reshape to the input's own static shape, which then disappears.
// CHECK-LABEL: func @reshapes_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: kiln.return %[[X]]
func @reshapes_round_trip(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = kiln.reshape %x {shape = [6, 4]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = kiln.reshape %0 {shape = [2, 3, 4]} : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
  kiln.return %1 : tensor<2x3x4xf32>
}

// -----

// With -1 the outer reshape infers from the element count, which the inner one kept.
// CHECK-LABEL: func @reshapes_merge_inferred
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>)
// CHECK-NEXT: %[[R:.+]] = kiln.reshape %[[X]] {shape = [-1, 512]} : (tensor<?x?x512xf32>) -> tensor<?x512xf32>
// CHECK-NEXT: kiln.return %[[R]]
func @reshapes_merge_inferred(%x: tensor<?x?x512xf32>) -> tensor<?x512xf32> {
  %0 = kiln.reshape %x {shape = [0, 0, 8, 64]} : (tensor<?x?x512xf32>) -> tensor<?x?x8x64xf32>
  %1 = kiln.reshape %0 {shape = [-1, 512]} : (tensor<?x?x8x64xf32>) -> tensor<?x512xf32>
  kiln.return %1 : tensor<?x512xf32>
}

// -----

// Negative: the outer 0 entries copy dims of the inner result by position; against %x
// they would copy different dims ([B, S*8, 64] -> [B, S*8, ...] not [B, S, ...]).
// CHECK-LABEL: func @reshape_keeping_dims_stays
// CHECK: %[[A:.+]] = kiln.reshape %{{.+}} {shape = [0, -1, 64]}
// CHECK: kiln.reshape %[[A]] {shape = [0, 0, 512]}
func @reshape_keeping_dims_stays(%x: tensor<?x?x512xf32>) -> tensor<?x?x512xf32> {
  %0 = kiln.reshape %x {shape = [0, -1, 64]} : (tensor<?x?x512xf32>) -> tensor<?x?x64xf32>
  %1 = kiln.reshape %0 {shape = [0, 0, 512]} : (tensor<?x?x64xf32>) -> tensor<?x?x512xf32>
  kiln.return %1 : tensor<?x?x512xf32>
}

// -----

// Negative: the same dynamic type in and out is not the identity ([2, 6] -> [3, 4]).
// CHECK-LABEL: func @dynamic_reshape_stays
// CHECK: kiln.reshape %{{.+}} {shape = [-1, 4]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
func @dynamic_reshape_stays(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = kiln.reshape %x {shape = [-1, 4]} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  kiln.return %0 : tensor<?x?xf32>
}

// -----

// kiln.constant folds to its value, so equal constants merge (the dialect materializes
// the kept one) and an unused one goes.
// CHECK-LABEL: func @equal_constants_merge
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NEXT: %[[C:.+]] = kiln.constant dense<8.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[A:.+]] = kiln.div %[[X]], %[[C]]
// CHECK-NEXT: %[[B:.+]] = kiln.div %[[A]], %[[C]]
// CHECK-NEXT: kiln.return %[[B]]
func @equal_constants_merge(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = kiln.constant dense<8.0> : tensor<f32>
  %c2 = kiln.constant dense<8.0> : tensor<f32>
  %unused = kiln.constant dense<1.0> : tensor<2xf32>
  %a = kiln.div %x, %c1 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %b = kiln.div %a, %c2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  kiln.return %b : tensor<4xf32>
}
