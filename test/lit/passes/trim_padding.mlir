// kiln-trim-padding: an entry whose lengths input bounds a padded dimension S is marked
// when no position before the longest sequence can read the padding after it (ops
// position by position, attention over S keys with a padding mask of those lengths);
// any op that mixes positions otherwise keeps it whole, with a remark saying which.
// RUN: kiln-opt %s --split-input-file --kiln-trim-padding=remarks=1 --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-trim-padding 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark

// An encoder layer: embedding, positions, projections, masked attention, LayerNorm.
// CHECK-LABEL: func @encoder
// CHECK-SAME: kiln.trim = {dim = "S", lengths = 1 : i64}
func @encoder(%ids: tensor<?x?xi32> {kiln.name = "ids", kiln.dims = ["B", "S"], kiln.bounds = ["0", "9"]},
              %lengths: tensor<?xi32> {kiln.name = "lengths", kiln.dims = ["B"], kiln.bounds = ["1", "S"]})
    -> (tensor<?x?x8xf32> {kiln.name = "memory"}) {
  %table = kiln.parameter "table" : tensor<10x8xf32>
  %w = kiln.parameter "w" : tensor<8x8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %e = kiln.embedding %table, %ids : (tensor<10x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %x = kiln.linear %e, %w, %b : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %q = kiln.reshape %x {shape = [0, 0, 2, 4]} : (tensor<?x?x8xf32>) -> tensor<?x?x2x4xf32>
  %h = kiln.transpose %q {permutation = [0, 2, 1, 3]} : (tensor<?x?x2x4xf32>) -> tensor<?x2x?x4xf32>
  %m = kiln.padding_mask %lengths, %ids {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
  %m4 = kiln.reshape %m {shape = [0, 1, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x1x?xf32>
  %a = kiln.attention %h, %h, %h, %m4 {scale = 0.5 : f32} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x4xf32>
  %t = kiln.transpose %a {permutation = [0, 2, 1, 3]} : (tensor<?x2x?x4xf32>) -> tensor<?x?x2x4xf32>
  %y = kiln.reshape %t {shape = [0, 0, 8]} : (tensor<?x?x2x4xf32>) -> tensor<?x?x8xf32>
  %r = kiln.add %y, %x : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %n = kiln.layer_norm %r, %g, %b {epsilon = 1.0e-5 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  kiln.return %n : tensor<?x?x8xf32>
}

// -----

// Attention over S keys without a mask: every key counts, the padding too.
// CHECK-LABEL: func @unmasked
// CHECK-NOT: kiln.trim
func @unmasked(%x: tensor<?x?x4xf32> {kiln.name = "x", kiln.dims = ["B", "S"]},
               %lengths: tensor<?xi32> {kiln.name = "lengths", kiln.dims = ["B"], kiln.bounds = ["1", "S"]})
    -> (tensor<?x?x4xf32> {kiln.name = "y"}) {
  // expected-remark @+1 {{entry 'unmasked' runs over all its padding: it attends over keys along S without a padding mask of the lengths}}
  %a = kiln.attention %x, %x, %x {scale = 0.5 : f32} : (tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
  kiln.return %a : tensor<?x?x4xf32>
}

// -----

// A mean over the positions reads the padding.
// CHECK-LABEL: func @pooled
// CHECK-NOT: kiln.trim
func @pooled(%x: tensor<?x?x4xf32> {kiln.name = "x", kiln.dims = ["B", "S"]},
             %lengths: tensor<?xi32> {kiln.name = "lengths", kiln.dims = ["B"], kiln.bounds = ["1", "S"]})
    -> (tensor<?x4xf32> {kiln.name = "y"}) {
  // expected-remark @+1 {{entry 'pooled' runs over all its padding: it reduces along S}}
  %m = kiln.reduce_mean %x {axes = [1]} : (tensor<?x?x4xf32>) -> tensor<?x4xf32>
  kiln.return %m : tensor<?x4xf32>
}

// -----

// A mask of other lengths than the input's, or none of the entry's.
// CHECK-LABEL: func @other_lengths
// CHECK-NOT: kiln.trim
func @other_lengths(%x: tensor<?x?x4xf32> {kiln.name = "x", kiln.dims = ["B", "S"]},
                    %lengths: tensor<?xi32> {kiln.name = "lengths", kiln.dims = ["B"], kiln.bounds = ["1", "S"]},
                    %other: tensor<?xi32> {kiln.name = "other", kiln.dims = ["B"]})
    -> (tensor<?x?x4xf32> {kiln.name = "y"}) {
  %m = kiln.padding_mask %other, %x {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?x4xf32>) -> tensor<?x?xf32>
  %m3 = kiln.reshape %m {shape = [0, 1, -1]} : (tensor<?x?xf32>) -> tensor<?x1x?xf32>
  // expected-remark @+1 {{entry 'other_lengths' runs over all its padding: it attends over keys along S without a padding mask of the lengths}}
  %a = kiln.attention %x, %x, %x, %m3 {scale = 0.5 : f32} : (tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x1x?xf32>) -> tensor<?x?x4xf32>
  kiln.return %a : tensor<?x?x4xf32>
}

// -----

// Positions merged with another dimension: the runtime cuts whole positions only.
// CHECK-LABEL: func @merged
// CHECK-NOT: kiln.trim
func @merged(%x: tensor<?x?x4xf32> {kiln.name = "x", kiln.dims = ["B", "S"]},
             %lengths: tensor<?xi32> {kiln.name = "lengths", kiln.dims = ["B"], kiln.bounds = ["1", "S"]})
    -> (tensor<?x4xf32> {kiln.name = "y"}) {
  // expected-remark @+1 {{entry 'merged' runs over all its padding: it merges or splits the positions along S}}
  %r = kiln.reshape %x {shape = [-1, 4]} : (tensor<?x?x4xf32>) -> tensor<?x4xf32>
  kiln.return %r : tensor<?x4xf32>
}
