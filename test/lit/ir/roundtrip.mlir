// Every kiln op parses, prints and re-parses to the same text.
// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s > %t.1 && kiln-opt %t.1 > %t.2 && diff %t.1 %t.2
// One module, not --split-input-file: a split prints a trailing separator, which the
// next parse reads as one more (empty) module.

// CHECK-LABEL: func @parameter_and_return
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32> {kiln.dims = ["B", "S", ""], kiln.name = "src"})
// CHECK-SAME: -> (tensor<2048x512xf32> {kiln.name = "w"}, tensor<?x?x512xf32>)
// CHECK: %[[W:.+]] = kiln.parameter "encoder.layers.0.linear1.weight" : tensor<2048x512xf32>
// CHECK: kiln.return %[[W]], %[[X]] : tensor<2048x512xf32>, tensor<?x?x512xf32>
func @parameter_and_return(%x: tensor<?x?x512xf32> {kiln.name = "src", kiln.dims = ["B", "S", ""]})
    -> (tensor<2048x512xf32> {kiln.name = "w"}, tensor<?x?x512xf32>) {
  %w = kiln.parameter "encoder.layers.0.linear1.weight" : tensor<2048x512xf32>
  kiln.return %w, %x : tensor<2048x512xf32>, tensor<?x?x512xf32>
}

// CHECK-LABEL: func @return_nothing
// CHECK: kiln.return{{$}}
func @return_nothing() {
  kiln.return
}

// CHECK-LABEL: func @matmul
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>, %[[W:.+]]: tensor<2048x512xf32>, %[[Q:.+]]: tensor<?x8x?x64xf32>, %[[K:.+]]: tensor<?x8x?x64xf32>)
// CHECK: %[[Y:.+]] = kiln.matmul %[[X]], %[[W]] {transpose_rhs = true} : (tensor<?x?x512xf32>, tensor<2048x512xf32>) -> tensor<?x?x2048xf32>
// CHECK: %[[S:.+]] = kiln.matmul %[[Q]], %[[K]] {transpose_lhs = false, transpose_rhs = true} : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x?xf32>
// CHECK: kiln.matmul %[[W]], %[[W]] {transpose_lhs = true} : (tensor<2048x512xf32>, tensor<2048x512xf32>) -> tensor<512x512xf32>
// CHECK: kiln.matmul %[[X]], %[[X]] {transpose_lhs = true, transpose_rhs = false}
func @matmul(%x: tensor<?x?x512xf32>, %w: tensor<2048x512xf32>,
             %q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>) -> tensor<?x8x?x?xf32> {
  %y = kiln.matmul %x, %w {transpose_rhs = true}
      : (tensor<?x?x512xf32>, tensor<2048x512xf32>) -> tensor<?x?x2048xf32>
  %s = kiln.matmul %q, %k {transpose_lhs = false, transpose_rhs = true}
      : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>) -> tensor<?x8x?x?xf32>
  %g = kiln.matmul %w, %w {transpose_lhs = true}
      : (tensor<2048x512xf32>, tensor<2048x512xf32>) -> tensor<512x512xf32>
  %c = kiln.matmul %x, %x {transpose_lhs = true, transpose_rhs = false}
      : (tensor<?x?x512xf32>, tensor<?x?x512xf32>) -> tensor<?x512x512xf32>
  kiln.return %s : tensor<?x8x?x?xf32>
}

// CHECK-LABEL: func @elementwise
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>, %[[B:.+]]: tensor<512xf32>)
// CHECK: %[[A:.+]] = kiln.add %[[X]], %[[B]] : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[A]], %[[B]] : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
// CHECK: %[[D:.+]] = kiln.sub %[[B]], %[[M]] : (tensor<512xf32>, tensor<?x?x512xf32>) -> tensor<?x?x512xf32>
// CHECK: %[[S:.+]] = kiln.scale %[[D]] {factor = 1.250000e-01 : f32} : tensor<?x?x512xf32>
// CHECK: %[[R:.+]] = kiln.relu %[[S]] : tensor<?x?x512xf32>
// CHECK: kiln.return %[[R]]
func @elementwise(%x: tensor<?x?x512xf32>, %b: tensor<512xf32>) -> tensor<?x?x512xf32> {
  %a = kiln.add %x, %b : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
  %m = kiln.mul %a, %b : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
  %d = kiln.sub %b, %m : (tensor<512xf32>, tensor<?x?x512xf32>) -> tensor<?x?x512xf32>
  %s = kiln.scale %d {factor = 0.125 : f32} : tensor<?x?x512xf32>
  %r = kiln.relu %s : tensor<?x?x512xf32>
  kiln.return %r : tensor<?x?x512xf32>
}

// CHECK-LABEL: func @normalization
// CHECK-SAME: (%[[X:.+]]: tensor<?x8x?x?xf32>, %[[H:.+]]: tensor<?x?x512xf32>, %[[G:.+]]: tensor<512xf32>, %[[B:.+]]: tensor<512xf32>)
// CHECK: kiln.softmax %[[X]] {axis = 3 : i64} : tensor<?x8x?x?xf32>
// CHECK: kiln.layer_norm %[[H]], %[[G]], %[[B]] {epsilon = 9.99999974E-6 : f32} : (tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
func @normalization(%x: tensor<?x8x?x?xf32>, %h: tensor<?x?x512xf32>, %g: tensor<512xf32>,
                    %b: tensor<512xf32>) -> (tensor<?x8x?x?xf32>, tensor<?x?x512xf32>) {
  %p = kiln.softmax %x {axis = 3 : i64} : tensor<?x8x?x?xf32>
  %n = kiln.layer_norm %h, %g, %b {epsilon = 1.0e-05 : f32}
      : (tensor<?x?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
  kiln.return %p, %n : tensor<?x8x?x?xf32>, tensor<?x?x512xf32>
}

// CHECK-LABEL: func @reductions
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>, %[[G:.+]]: tensor<512xf32>, %[[I:.+]]: tensor<4x?xi32>)
// CHECK: kiln.rms_norm %[[X]], %[[G]] {epsilon = 9.99999997E-7 : f32} : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
// CHECK: kiln.reduce_sum %[[X]] {axes = [-1], keep_dim = true} : (tensor<?x?x512xf32>) -> tensor<?x?x1xf32>
// CHECK: kiln.reduce_mean %[[X]] {axes = [0, 1]} : (tensor<?x?x512xf32>) -> tensor<512xf32>
// CHECK: kiln.reduce_max %[[X]] {axes = [2, 0, 1]} : (tensor<?x?x512xf32>) -> tensor<f32>
// CHECK: kiln.reduce_max %[[I]] {axes = [0]} : (tensor<4x?xi32>) -> tensor<?xi32>
func @reductions(%x: tensor<?x?x512xf32>, %g: tensor<512xf32>, %i: tensor<4x?xi32>)
    -> (tensor<?x?x512xf32>, tensor<?x?x1xf32>, tensor<512xf32>, tensor<f32>, tensor<?xi32>) {
  %n = kiln.rms_norm %x, %g {epsilon = 1.0e-06 : f32}
      : (tensor<?x?x512xf32>, tensor<512xf32>) -> tensor<?x?x512xf32>
  %s = kiln.reduce_sum %x {axes = [-1], keep_dim = true} : (tensor<?x?x512xf32>) -> tensor<?x?x1xf32>
  %m = kiln.reduce_mean %x {axes = [0, 1]} : (tensor<?x?x512xf32>) -> tensor<512xf32>
  %a = kiln.reduce_max %x {axes = [2, 0, 1]} : (tensor<?x?x512xf32>) -> tensor<f32>
  %b = kiln.reduce_max %i {axes = [0]} : (tensor<4x?xi32>) -> tensor<?xi32>
  kiln.return %n, %s, %m, %a, %b
      : tensor<?x?x512xf32>, tensor<?x?x1xf32>, tensor<512xf32>, tensor<f32>, tensor<?xi32>
}

// CHECK-LABEL: func @data_movement
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>, %[[IDS:.+]]: tensor<?x?xi32>)
// CHECK: %[[H:.+]] = kiln.reshape %[[X]] {shape = [0, 0, 8, 64]} : (tensor<?x?x512xf32>) -> tensor<?x?x8x64xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[H]] {permutation = [0, 2, 1, 3]} : (tensor<?x?x8x64xf32>) -> tensor<?x8x?x64xf32>
// CHECK: kiln.reshape %[[X]] {shape = [-1, 512]} : (tensor<?x?x512xf32>) -> tensor<?x512xf32>
// CHECK: kiln.reshape %[[IDS]] {shape = [-1]} : (tensor<?x?xi32>) -> tensor<?xi32>
// CHECK: kiln.transpose %[[IDS]] {permutation = [1, 0]} : (tensor<?x?xi32>) -> tensor<?x?xi32>
func @data_movement(%x: tensor<?x?x512xf32>, %ids: tensor<?x?xi32>) -> tensor<?x8x?x64xf32> {
  %h = kiln.reshape %x {shape = [0, 0, 8, 64]} : (tensor<?x?x512xf32>) -> tensor<?x?x8x64xf32>
  %t = kiln.transpose %h {permutation = [0, 2, 1, 3]}
      : (tensor<?x?x8x64xf32>) -> tensor<?x8x?x64xf32>
  %f = kiln.reshape %x {shape = [-1, 512]} : (tensor<?x?x512xf32>) -> tensor<?x512xf32>
  %i = kiln.reshape %ids {shape = [-1]} : (tensor<?x?xi32>) -> tensor<?xi32>
  %j = kiln.transpose %ids {permutation = [1, 0]} : (tensor<?x?xi32>) -> tensor<?x?xi32>
  kiln.return %t : tensor<?x8x?x64xf32>
}

// The generic form parses to the same custom form.
// CHECK-LABEL: func @generic_form
// CHECK: kiln.scale %{{.+}} {factor = 2.000000e+00 : f32} : tensor<4xf32>
func @generic_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "kiln.scale"(%x) {factor = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  "kiln.return"(%0) : (tensor<4xf32>) -> ()
}

// CHECK-LABEL: func @embeddings_positions_and_masks
// CHECK-SAME: (%[[TABLE:.+]]: tensor<100x16xf32>, %[[IDS:.+]]: tensor<?x?xi32> {kiln.bounds = ["0", "99"], kiln.dims = ["B", "S"], kiln.name = "src"}, %[[LEN:.+]]: tensor<?xi32> {kiln.bounds = ["1", "S"], kiln.dims = ["B"], kiln.name = "len"})
// CHECK: %[[E:.+]] = kiln.embedding %[[TABLE]], %[[IDS]] : (tensor<100x16xf32>, tensor<?x?xi32>) -> tensor<?x?x16xf32>
// CHECK: %[[POS:.+]] = kiln.range %[[IDS]] {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
// CHECK: %[[PE:.+]] = kiln.sinusoid %[[POS]] : (tensor<?xi32>) -> tensor<?x16xf32>
// CHECK: kiln.range %[[E]] {axis = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<16xi32>
// CHECK: kiln.padding_mask %[[LEN]], %[[IDS]] {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
// CHECK: kiln.causal_mask %[[E]] {axis = 1 : i64} : (tensor<?x?x16xf32>) -> tensor<?x?xf32>
func @embeddings_positions_and_masks(
    %table: tensor<100x16xf32>,
    %ids: tensor<?x?xi32> {kiln.name = "src", kiln.dims = ["B", "S"], kiln.bounds = ["0", "99"]},
    %len: tensor<?xi32> {kiln.name = "len", kiln.dims = ["B"], kiln.bounds = ["1", "S"]})
    -> tensor<?x?x16xf32> {
  %e = kiln.embedding %table, %ids : (tensor<100x16xf32>, tensor<?x?xi32>) -> tensor<?x?x16xf32>
  %pos = kiln.range %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
  %pe = kiln.sinusoid %pos : (tensor<?xi32>) -> tensor<?x16xf32>
  %f = kiln.range %e {axis = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<16xi32>
  %m = kiln.padding_mask %len, %ids {axis = 1 : i64}
      : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
  %c = kiln.causal_mask %e {axis = 1 : i64} : (tensor<?x?x16xf32>) -> tensor<?x?xf32>
  kiln.return %e : tensor<?x?x16xf32>
}

// CHECK-LABEL: func @weight_panels
// CHECK: %[[P:.+]] = kiln.parameter "w[2:9].panels" {conversion = "panels", rows = [2, 9], source = "w"} : tensor<2x8x4xf32>
// CHECK: %[[W:.+]] = kiln.unpack_panels %[[P]] : (tensor<2x8x4xf32>) -> tensor<7x8xf32>
// CHECK: kiln.linear %{{.+}}, %[[W]], %{{.+}}
func @weight_panels(%x: tensor<?x8xf32>, %b: tensor<7xf32>) -> tensor<?x7xf32> {
  %p = kiln.parameter "w[2:9].panels" {source = "w", conversion = "panels", rows = [2, 9]} : tensor<2x8x4xf32>
  %w = kiln.unpack_panels %p : (tensor<2x8x4xf32>) -> tensor<7x8xf32>
  %y = kiln.linear %x, %w, %b : (tensor<?x8xf32>, tensor<7x8xf32>, tensor<7xf32>) -> tensor<?x7xf32>
  kiln.return %y : tensor<?x7xf32>
}

// CHECK-LABEL: func @reduced_precision_weights
// CHECK: %[[WB:.+]] = kiln.parameter "w.bf16" {conversion = "bf16", source = "w"} : tensor<16x8xbf16>
// CHECK: %[[WQ:.+]] = kiln.parameter "v[4:20]" {conversion = "int8", rows = [4, 20], source = "v"} : tensor<16x8xi8>
// CHECK: %[[S:.+]] = kiln.parameter "v[4:20].scale" {conversion = "int8_scale", rows = [4, 20], source = "v"} : tensor<16xf32>
// CHECK: kiln.matmul %{{.+}}, %[[WB]] {transpose_rhs = true} : (tensor<?x8xf32>, tensor<16x8xbf16>) -> tensor<?x16xf32>
// CHECK: kiln.quantized_linear %{{.+}}, %[[WQ]], %[[S]] : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16xf32>) -> tensor<?x16xf32>
// CHECK: kiln.quantized_linear %{{.+}}, %[[WQ]], %[[S]], %{{.+}} : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
func @reduced_precision_weights(%x: tensor<?x8xf32>, %b: tensor<16xf32>)
    -> (tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %wb = kiln.parameter "w.bf16" {source = "w", conversion = "bf16"} : tensor<16x8xbf16>
  %wq = kiln.parameter "v[4:20]" {source = "v", conversion = "int8", rows = [4, 20]} : tensor<16x8xi8>
  %s = kiln.parameter "v[4:20].scale" {source = "v", conversion = "int8_scale", rows = [4, 20]} : tensor<16xf32>
  %0 = kiln.matmul %x, %wb {transpose_rhs = true} : (tensor<?x8xf32>, tensor<16x8xbf16>) -> tensor<?x16xf32>
  %1 = kiln.quantized_linear %x, %wq, %s : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = kiln.quantized_linear %x, %wq, %s, %b : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  kiln.return %0, %1, %2 : tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}

// CHECK-LABEL: func @layers_and_head
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>, %[[W:.+]]: tensor<2048x512xf32>, %[[B:.+]]: tensor<2048xf32>)
// CHECK: %[[Y:.+]] = kiln.linear %[[X]], %[[W]], %[[B]] : (tensor<?x?x512xf32>, tensor<2048x512xf32>, tensor<2048xf32>) -> tensor<?x?x2048xf32>
// CHECK: %[[G:.+]] = kiln.gelu %[[Y]] : tensor<?x?x2048xf32>
// CHECK: %[[L:.+]] = kiln.log_softmax %[[G]] {axis = 2 : i64} : tensor<?x?x2048xf32>
// CHECK: kiln.argmax %[[L]] {axis = 2 : i64} : (tensor<?x?x2048xf32>) -> tensor<?x?xi32>
func @layers_and_head(%x: tensor<?x?x512xf32>, %w: tensor<2048x512xf32>, %b: tensor<2048xf32>)
    -> tensor<?x?xi32> {
  %y = kiln.linear %x, %w, %b
      : (tensor<?x?x512xf32>, tensor<2048x512xf32>, tensor<2048xf32>) -> tensor<?x?x2048xf32>
  %g = kiln.gelu %y : tensor<?x?x2048xf32>
  %l = kiln.log_softmax %g {axis = 2 : i64} : tensor<?x?x2048xf32>
  %t = kiln.argmax %l {axis = 2 : i64} : (tensor<?x?x2048xf32>) -> tensor<?x?xi32>
  kiln.return %t : tensor<?x?xi32>
}

// CHECK-LABEL: func @elementwise_math
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x64xf32>)
// CHECK: %[[V0:.+]] = kiln.neg %[[X]] : tensor<?x?x64xf32>
// CHECK: %[[V1:.+]] = kiln.exp %[[V0]] : tensor<?x?x64xf32>
// CHECK: %[[V2:.+]] = kiln.log %[[V1]] : tensor<?x?x64xf32>
// CHECK: %[[V3:.+]] = kiln.tanh %[[V2]] : tensor<?x?x64xf32>
// CHECK: %[[V4:.+]] = kiln.sigmoid %[[V3]] : tensor<?x?x64xf32>
// CHECK: %[[V5:.+]] = kiln.sqrt %[[V4]] : tensor<?x?x64xf32>
// CHECK: %[[V6:.+]] = kiln.rsqrt %[[V5]] : tensor<?x?x64xf32>
// CHECK: %[[V7:.+]] = kiln.silu %[[V6]] : tensor<?x?x64xf32>
// CHECK: %[[V8:.+]] = kiln.gelu_tanh %[[V7]] : tensor<?x?x64xf32>
// CHECK: kiln.pow %[[V8]] {exponent = 3.000000e+00 : f32} : tensor<?x?x64xf32>
func @elementwise_math(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %v0 = kiln.neg %x : tensor<?x?x64xf32>
  %v1 = kiln.exp %v0 : tensor<?x?x64xf32>
  %v2 = kiln.log %v1 : tensor<?x?x64xf32>
  %v3 = kiln.tanh %v2 : tensor<?x?x64xf32>
  %v4 = kiln.sigmoid %v3 : tensor<?x?x64xf32>
  %v5 = kiln.sqrt %v4 : tensor<?x?x64xf32>
  %v6 = kiln.rsqrt %v5 : tensor<?x?x64xf32>
  %v7 = kiln.silu %v6 : tensor<?x?x64xf32>
  %v8 = kiln.gelu_tanh %v7 : tensor<?x?x64xf32>
  %p = kiln.pow %v8 {exponent = 3.0 : f32} : tensor<?x?x64xf32>
  kiln.return %p : tensor<?x?x64xf32>
}

// CHECK-LABEL: func @rotary
// CHECK-SAME: (%[[Q:.+]]: tensor<?x8x?x64xf32>, %[[P:.+]]: tensor<?xi32>)
// CHECK: %[[H:.+]] = kiln.rotary %[[Q]], %[[P]] {base = 1.000000e+04 : f32, style = "half"} : (tensor<?x8x?x64xf32>, tensor<?xi32>) -> tensor<?x8x?x64xf32>
// CHECK: kiln.rotary %[[H]], %[[P]] {base = 5.000000e+02 : f32, style = "interleaved"} : (tensor<?x8x?x64xf32>, tensor<?xi32>) -> tensor<?x8x?x64xf32>
func @rotary(%q: tensor<?x8x?x64xf32>, %pos: tensor<?xi32>) -> tensor<?x8x?x64xf32> {
  %h = kiln.rotary %q, %pos {base = 1.0e4 : f32, style = "half"}
      : (tensor<?x8x?x64xf32>, tensor<?xi32>) -> tensor<?x8x?x64xf32>
  %i = kiln.rotary %h, %pos {base = 500.0 : f32, style = "interleaved"}
      : (tensor<?x8x?x64xf32>, tensor<?xi32>) -> tensor<?x8x?x64xf32>
  kiln.return %i : tensor<?x8x?x64xf32>
}

// CHECK-LABEL: func @slice_and_concat
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x512xf32>, %[[P:.+]]: tensor<?x?xi32>, %[[N:.+]]: tensor<?x1xi32>)
// CHECK: %[[H:.+]] = kiln.slice %[[X]] {axis = 2 : i64, end = 128 : i64, start = 64 : i64} : (tensor<?x?x512xf32>) -> tensor<?x?x64xf32>
// CHECK: kiln.slice %[[X]] {axis = 1 : i64, end = 1 : i64, start = 0 : i64} : (tensor<?x?x512xf32>) -> tensor<?x1x512xf32>
// CHECK: kiln.concat %[[P]], %[[N]] {axis = 1 : i64} : (tensor<?x?xi32>, tensor<?x1xi32>) -> tensor<?x?xi32>
// CHECK: kiln.concat %[[H]], %[[H]], %[[H]] {axis = 2 : i64} : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x192xf32>
// CHECK: kiln.concat %[[N]] {axis = 0 : i64} : (tensor<?x1xi32>) -> tensor<?x1xi32>
func @slice_and_concat(%x: tensor<?x?x512xf32>, %prefix: tensor<?x?xi32>, %next: tensor<?x1xi32>)
    -> tensor<?x?xi32> {
  %h = kiln.slice %x {axis = 2 : i64, start = 64 : i64, end = 128 : i64}
      : (tensor<?x?x512xf32>) -> tensor<?x?x64xf32>
  %first = kiln.slice %x {axis = 1 : i64, start = 0 : i64, end = 1 : i64}
      : (tensor<?x?x512xf32>) -> tensor<?x1x512xf32>
  %ys = kiln.concat %prefix, %next {axis = 1 : i64}
      : (tensor<?x?xi32>, tensor<?x1xi32>) -> tensor<?x?xi32>
  %three = kiln.concat %h, %h, %h {axis = 2 : i64}
      : (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x192xf32>
  %one = kiln.concat %next {axis = 0 : i64} : (tensor<?x1xi32>) -> tensor<?x1xi32>
  kiln.return %ys : tensor<?x?xi32>
}

// CHECK-LABEL: func @div_constant_and_masked_fill
// CHECK-SAME: (%[[X:.+]]: tensor<?x8x?x?xf32>, %[[LEN:.+]]: tensor<?xi32>, %[[IDS:.+]]: tensor<?x?xi32>)
// CHECK: %[[C:.+]] = kiln.constant dense<8.000000e+00> : tensor<f32>
// CHECK: kiln.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// CHECK: %[[D:.+]] = kiln.div %[[X]], %[[C]] : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
// CHECK: %[[PM:.+]] = kiln.padding_mask %[[LEN]], %[[IDS]] {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
// CHECK: %[[M:.+]] = kiln.reshape %[[PM]] {shape = [0, 1, 1, -1]} : (tensor<?x?xi1>) -> tensor<?x1x1x?xi1>
// CHECK: %[[CM:.+]] = kiln.causal_mask %[[IDS]] {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xi1>
// CHECK: kiln.transpose %[[CM]] {permutation = [1, 0]} : (tensor<?x?xi1>) -> tensor<?x?xi1>
// CHECK: %[[F:.+]] = kiln.masked_fill %[[D]], %[[M]] {value = 0xFF800000 : f32} : (tensor<?x8x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x8x?x?xf32>
// CHECK: kiln.masked_fill %[[F]], %[[CM]] {value = -1.000000e+09 : f32} : (tensor<?x8x?x?xf32>, tensor<?x?xi1>) -> tensor<?x8x?x?xf32>
func @div_constant_and_masked_fill(%x: tensor<?x8x?x?xf32>, %len: tensor<?xi32>, %ids: tensor<?x?xi32>)
    -> tensor<?x8x?x?xf32> {
  %c = kiln.constant dense<8.0> : tensor<f32>
  %w = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %d = kiln.div %x, %c : (tensor<?x8x?x?xf32>, tensor<f32>) -> tensor<?x8x?x?xf32>
  %pm = kiln.padding_mask %len, %ids {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
  %m = kiln.reshape %pm {shape = [0, 1, 1, -1]} : (tensor<?x?xi1>) -> tensor<?x1x1x?xi1>
  %cm = kiln.causal_mask %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xi1>
  %t = kiln.transpose %cm {permutation = [1, 0]} : (tensor<?x?xi1>) -> tensor<?x?xi1>
  %f = kiln.masked_fill %d, %m {value = 0xFF800000 : f32}
      : (tensor<?x8x?x?xf32>, tensor<?x1x1x?xi1>) -> tensor<?x8x?x?xf32>
  %g = kiln.masked_fill %f, %cm {value = -1.0e9 : f32}
      : (tensor<?x8x?x?xf32>, tensor<?x?xi1>) -> tensor<?x8x?x?xf32>
  kiln.return %g : tensor<?x8x?x?xf32>
}

// CHECK-LABEL: func @attention
// CHECK-SAME: (%[[Q:.+]]: tensor<?x8x?x64xf32>, %[[K:.+]]: tensor<?x8x?x64xf32>, %[[V:.+]]: tensor<?x8x?x32xf32>, %[[M:.+]]: tensor<?x1x1x?xf32>, %[[X:.+]]: tensor<?x?x16xf32>)
// CHECK: kiln.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.250000e-01 : f32} : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x32xf32>, tensor<?x1x1x?xf32>) -> tensor<?x8x?x32xf32>
// CHECK: kiln.attention %[[Q]], %[[K]], %[[V]] {causal = true, masked_row_value = 0x7FC00000 : f32, scale = 1.250000e-01 : f32} : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x32xf32>) -> tensor<?x8x?x32xf32>
// CHECK: kiln.attention %[[X]], %[[X]], %[[X]] {scale = 2.500000e-01 : f32} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
func @attention(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x32xf32>,
                %m: tensor<?x1x1x?xf32>, %x: tensor<?x?x16xf32>) -> tensor<?x8x?x32xf32> {
  %0 = kiln.attention %q, %k, %v, %m {scale = 0.125 : f32}
      : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x32xf32>, tensor<?x1x1x?xf32>)
      -> tensor<?x8x?x32xf32>
  %1 = kiln.attention %q, %k, %v {scale = 0.125 : f32, causal = true, masked_row_value = 0x7FC00000 : f32}
      : (tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x32xf32>) -> tensor<?x8x?x32xf32>
  %2 = kiln.attention %x, %x, %x {scale = 0.25 : f32}
      : (tensor<?x?x16xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  kiln.return %0 : tensor<?x8x?x32xf32>
}

// The session-state ops of incremental decoding, and an input whose value binds P.
// CHECK-LABEL: func @decode_start
// CHECK-SAME: (%[[MEM:.+]]: tensor<?x?x128xf32> {kiln.dims = ["B", "S", ""], kiln.name = "memory"})
// CHECK-NEXT: %[[K:.+]] = kiln.reshape %[[MEM]] {shape = [0, 0, 4, 32]} : (tensor<?x?x128xf32>) -> tensor<?x?x4x32xf32>
// CHECK-NEXT: kiln.state_write "decoder.layers.0.multihead_attn.memory_k", %[[K]] : tensor<?x?x4x32xf32>
// CHECK-NEXT: kiln.state_alloc "decoder.layers.0.self_attn.k_cache" {dims = ["B", "", "", ""]} : tensor<?x4x64x32xf32>
// CHECK-NEXT: kiln.return{{$}}
func @decode_start(%memory: tensor<?x?x128xf32> {kiln.name = "memory", kiln.dims = ["B", "S", ""]}) {
  %k = kiln.reshape %memory {shape = [0, 0, 4, 32]} : (tensor<?x?x128xf32>) -> tensor<?x?x4x32xf32>
  kiln.state_write "decoder.layers.0.multihead_attn.memory_k", %k : tensor<?x?x4x32xf32>
  kiln.state_alloc "decoder.layers.0.self_attn.k_cache" {dims = ["B", "", "", ""]} : tensor<?x4x64x32xf32>
  kiln.return
}

// CHECK-LABEL: func @decode_step
// CHECK-SAME: (%[[IDS:.+]]: tensor<?x1xi32> {kiln.bounds = ["0", "44"], kiln.dims = ["B", ""], kiln.name = "tgt_ids"}, %[[STEP:.+]]: tensor<i32> {kiln.bounds = ["0", "63"], kiln.dims = [], kiln.name = "step", kiln.value_dim = "P"}, %[[LEN:.+]]: tensor<?xi32> {kiln.bounds = ["1", "S"], kiln.dims = ["B"], kiln.name = "src_lengths"})
// CHECK-NEXT: %[[MK:.+]] = kiln.state_read "decoder.layers.0.multihead_attn.memory_k" {dims = ["B", "S", "", ""]} : tensor<?x?x4x32xf32>
// CHECK-NEXT: %[[NEW:.+]] = kiln.slice %[[MK]] {axis = 1 : i64, end = 1 : i64, start = 0 : i64} : (tensor<?x?x4x32xf32>) -> tensor<?x1x4x32xf32>
// CHECK-NEXT: %[[KS:.+]] = kiln.kv_append "decoder.layers.0.self_attn.k_cache", %[[NEW]] {axis = 1 : i64, capacity = 64 : i64, position = "P"} : (tensor<?x1x4x32xf32>) -> tensor<?x?x4x32xf32>
// CHECK-NEXT: kiln.return %[[KS]] : tensor<?x?x4x32xf32>
func @decode_step(%ids: tensor<?x1xi32> {kiln.name = "tgt_ids", kiln.dims = ["B", ""], kiln.bounds = ["0", "44"]},
                  %step: tensor<i32> {kiln.name = "step", kiln.dims = [], kiln.value_dim = "P", kiln.bounds = ["0", "63"]},
                  %len: tensor<?xi32> {kiln.name = "src_lengths", kiln.dims = ["B"], kiln.bounds = ["1", "S"]})
    -> tensor<?x?x4x32xf32> {
  %mk = kiln.state_read "decoder.layers.0.multihead_attn.memory_k" {dims = ["B", "S", "", ""]} : tensor<?x?x4x32xf32>
  %new = kiln.slice %mk {axis = 1 : i64, start = 0 : i64, end = 1 : i64} : (tensor<?x?x4x32xf32>) -> tensor<?x1x4x32xf32>
  %ks = kiln.kv_append "decoder.layers.0.self_attn.k_cache", %new {axis = 1 : i64, capacity = 64 : i64, position = "P"}
      : (tensor<?x1x4x32xf32>) -> tensor<?x?x4x32xf32>
  kiln.return %ks : tensor<?x?x4x32xf32>
}

// A prefill writes a block of N positions from the static start 0; a step may append a
// block at P too.
// CHECK-LABEL: func @prefill_block
// CHECK-NEXT: kiln.state_alloc "c" {dims = ["B", "", "", ""]} : tensor<?x4x64x32xf32>
// CHECK-NEXT: %[[K:.+]] = kiln.kv_append "c", %{{.+}} {axis = 2 : i64, capacity = 64 : i64, position = "0"} : (tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
// CHECK-NEXT: kiln.return %[[K]] : tensor<?x4x?x32xf32>
func @prefill_block(%v: tensor<?x4x?x32xf32> {kiln.name = "v", kiln.dims = ["B", "", "N", ""]})
    -> tensor<?x4x?x32xf32> {
  kiln.state_alloc "c" {dims = ["B", "", "", ""]} : tensor<?x4x64x32xf32>
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 64 : i64, position = "0"}
      : (tensor<?x4x?x32xf32>) -> tensor<?x4x?x32xf32>
  kiln.return %k : tensor<?x4x?x32xf32>
}

// CHECK-LABEL: func @append_block
// CHECK: kiln.kv_append "c", %{{.+}} {axis = 2 : i64, capacity = 64 : i64, position = "P"} : (tensor<?x4x3x32xf32>) -> tensor<?x4x?x32xf32>
func @append_block(%v: tensor<?x4x3x32xf32> {kiln.name = "v", kiln.dims = ["B", "", "", ""]},
                   %step: tensor<i32> {kiln.name = "step", kiln.dims = [], kiln.value_dim = "P", kiln.bounds = ["0", "61"]})
    -> tensor<?x4x?x32xf32> {
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 64 : i64, position = "P"}
      : (tensor<?x4x3x32xf32>) -> tensor<?x4x?x32xf32>
  kiln.return %k : tensor<?x4x?x32xf32>
}

// Static states need no names; the generic form prints as the custom one.
// CHECK-LABEL: func @static_states
// CHECK-NEXT: kiln.state_alloc "s" {dims = ["", ""]} : tensor<2x3xf32>
// CHECK-NEXT: %[[R:.+]] = kiln.state_read "s" {dims = ["", ""]} : tensor<2x3xf32>
// CHECK-NEXT: kiln.state_write "t", %[[R]] : tensor<2x3xf32>
func @static_states() -> tensor<2x3xf32> {
  "kiln.state_alloc"() {name = "s", type = tensor<2x3xf32>, dims = ["", ""]} : () -> ()
  %r = kiln.state_read "s" {dims = ["", ""]} : tensor<2x3xf32>
  "kiln.state_write"(%r) {name = "t"} : (tensor<2x3xf32>) -> ()
  kiln.return %r : tensor<2x3xf32>
}

// CHECK-LABEL: func @where_cast_and_integer_arithmetic
// CHECK: %[[M:.+]] = kiln.causal_mask %{{.+}} {axis = 1 : i64} : (tensor<?x?xi64>) -> tensor<?x?xi1>
// CHECK: kiln.where %[[M]], %{{.+}}, %{{.+}} : (tensor<?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
// CHECK: %[[IDS:.+]] = kiln.cast %{{.+}} : (tensor<?x?xi64>) -> tensor<?x?xi32>
// CHECK: %[[P:.+]] = kiln.add %[[IDS]], %{{.+}} : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi32>
// CHECK: kiln.sub %{{.+}}, %{{.+}} : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
// CHECK: kiln.mul %[[P]], %[[P]] : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
// CHECK: kiln.cast %{{.+}} : (tensor<?x?xi32>) -> tensor<?x?xf32>
func @where_cast_and_integer_arithmetic(%s: tensor<?x4x?x?xf32>, %tokens: tensor<?x?xi64>,
                                        %p: tensor<i32>)
    -> (tensor<?x4x?x?xf32>, tensor<?x?xi64>, tensor<?x?xf32>) {
  %fill = kiln.constant dense<-1.0e9> : tensor<f32>
  %m = kiln.causal_mask %tokens {axis = 1 : i64} : (tensor<?x?xi64>) -> tensor<?x?xi1>
  %w = kiln.where %m, %fill, %s : (tensor<?x?xi1>, tensor<f32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %ids = kiln.cast %tokens : (tensor<?x?xi64>) -> tensor<?x?xi32>
  %pos = kiln.add %ids, %p : (tensor<?x?xi32>, tensor<i32>) -> tensor<?x?xi32>
  %d = kiln.sub %tokens, %tokens : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi64>
  %sq = kiln.mul %pos, %pos : (tensor<?x?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  %f = kiln.cast %sq : (tensor<?x?xi32>) -> tensor<?x?xf32>
  kiln.return %w, %d, %f : tensor<?x4x?x?xf32>, tensor<?x?xi64>, tensor<?x?xf32>
}
