// kiln-fuse-kernels: each kind of group it forms, then each graph it must leave apart,
// with the remark that says why at every op left outside a group.
// RUN: kiln-opt %s --split-input-file --kiln-fuse-kernels=remarks=1 --verify-diagnostics | FileCheck %s
// The global flag gives the same remarks; without either, the pass says nothing.
// RUN: kiln-opt %s --split-input-file --kiln-fusion-remarks --kiln-fuse-kernels --verify-diagnostics -o /dev/null
// RUN: kiln-opt %s --split-input-file --kiln-fuse-kernels 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// QUIET-NOT: remark

//===----------------------------------------------------------------------===//
// Grouped
//===----------------------------------------------------------------------===//

// Epilogue: linear + ReLU, the first half of a feed-forward block.
// CHECK-LABEL: func @linear_relu
// CHECK-SAME: (%[[X:.+]]: tensor<?x8xf32>
// CHECK: %[[F:.+]] = kiln.fusion %[[X]], %{{.+}}, %{{.+}} : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT: ^bb0(%[[A:.+]]: tensor<?x8xf32>, %[[W:.+]]: tensor<16x8xf32>, %[[B:.+]]: tensor<16xf32>):
// CHECK-NEXT: %[[L:.+]] = kiln.linear %[[A]], %[[W]], %[[B]]
// CHECK-NEXT: %[[R:.+]] = kiln.relu %[[L]]
// CHECK-NEXT: kiln.yield %[[R]] : tensor<?x16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: kiln.return %[[F]]
func @linear_relu(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]}) -> tensor<?x16xf32> {
  %w = kiln.parameter "w" : tensor<16x8xf32>
  %b = kiln.parameter "b" : tensor<16xf32>
  %h = kiln.linear %x, %w, %b : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = kiln.relu %h : tensor<?x16xf32>
  kiln.return %r : tensor<?x16xf32>
}

// -----

// Epilogue chain: matmul, a broadcast bias, GELU, a residual add. The operands come
// in the order the group's ops first read them.
// CHECK-LABEL: func @matmul_bias_gelu_residual
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3x8xf32>, %[[Y:[^:]+]]: tensor<2x3x8xf32>)
// CHECK: %[[F:.+]] = kiln.fusion %[[X]], %{{.+}}, %{{.+}}, %[[Y]] : (tensor<2x3x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK: kiln.matmul
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.gelu
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.fusion
// CHECK: kiln.return %[[F]]
func @matmul_bias_gelu_residual(%x: tensor<2x3x8xf32>, %y: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %w = kiln.parameter "w" : tensor<8x8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  %m = kiln.matmul %x, %w {transpose_rhs = true} : (tensor<2x3x8xf32>, tensor<8x8xf32>) -> tensor<2x3x8xf32>
  %a = kiln.add %m, %b : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %g = kiln.gelu %a : tensor<2x3x8xf32>
  %r = kiln.add %y, %g : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  kiln.return %r : tensor<2x3x8xf32>
}

// -----

// Prologue and first stage: the residual add goes into the LayerNorm after it, and the
// linear whose result only that add reads (a sublayer's output projection) is the
// group's first stage: linear, residual add and LayerNorm are one kernel.
// CHECK-LABEL: func @residual_layer_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xf32>
// CHECK-NOT: kiln.linear
// CHECK: %[[F:.+]] = kiln.fusion %[[X]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: tensor<?x8xf32>, %[[W:[^:]+]]: tensor<8x8xf32>, %[[B:[^:]+]]: tensor<8xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[BE:[^:]+]]: tensor<8xf32>):
// CHECK-NEXT: %[[O:.+]] = kiln.linear %[[A]], %[[W]], %[[B]]
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[A]], %[[O]]
// CHECK-NEXT: %[[N:.+]] = kiln.layer_norm %[[S]], %[[G]], %[[BE]]
// CHECK-NEXT: kiln.yield %[[N]]
func @residual_layer_norm(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]}) -> tensor<?x8xf32> {
  %w = kiln.parameter "w" : tensor<8x8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  %o = kiln.linear %x, %w, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %s = kiln.add %x, %o : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %n : tensor<?x8xf32>
}

// -----

// A feed-forward block: the first linear and its ReLU are computed whole before the
// second linear, which is the group's stage before the residual add and LayerNorm.
// CHECK-LABEL: func @feed_forward_layer_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xf32>
// CHECK-NOT: kiln.linear
// CHECK: %[[F:.+]] = kiln.fusion %[[X]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>, tensor<8x16xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: tensor<?x8xf32>, %[[W1:[^:]+]]: tensor<16x8xf32>, %[[B1:[^:]+]]: tensor<16xf32>, %[[W2:[^:]+]]: tensor<8x16xf32>, %[[B2:[^:]+]]: tensor<8xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[BE:[^:]+]]: tensor<8xf32>):
// CHECK-NEXT: %[[H:.+]] = kiln.linear %[[A]], %[[W1]], %[[B1]]
// CHECK-NEXT: %[[R:.+]] = kiln.relu %[[H]]
// CHECK-NEXT: %[[O:.+]] = kiln.linear %[[R]], %[[W2]], %[[B2]]
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[A]], %[[O]]
// CHECK-NEXT: %[[N:.+]] = kiln.layer_norm %[[S]], %[[G]], %[[BE]]
// CHECK-NEXT: kiln.yield %[[N]]
// CHECK-NEXT: }
// CHECK-NEXT: kiln.return %[[F]]
func @feed_forward_layer_norm(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]}) -> tensor<?x8xf32> {
  %w1 = kiln.parameter "w1" : tensor<16x8xf32>
  %b1 = kiln.parameter "b1" : tensor<16xf32>
  %w2 = kiln.parameter "w2" : tensor<8x16xf32>
  %b2 = kiln.parameter "b2" : tensor<8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  %h = kiln.linear %x, %w1, %b1 : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = kiln.relu %h : tensor<?x16xf32>
  %o = kiln.linear %r, %w2, %b2 : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %s = kiln.add %x, %o : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %n : tensor<?x8xf32>
}

// -----

// A quantized_linear (int8 weights, kiln-weight-precision's) anchors an epilogue as a
// linear does: GELU and the residual add.
// CHECK-LABEL: func @quantized_linear_gelu_residual
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xf32>
// CHECK: %[[F:.+]] = kiln.fusion %[[X]], %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32>, tensor<8x8xi8>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: tensor<?x8xf32>, %[[W:[^:]+]]: tensor<8x8xi8>, %[[S:[^:]+]]: tensor<8xf32>, %[[B:[^:]+]]: tensor<8xf32>):
// CHECK-NEXT: %[[Q:.+]] = kiln.quantized_linear %[[A]], %[[W]], %[[S]], %[[B]]
// CHECK-NEXT: %[[G:.+]] = kiln.gelu %[[Q]]
// CHECK-NEXT: %[[R:.+]] = kiln.add %[[G]], %[[A]]
// CHECK-NEXT: kiln.yield %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: kiln.return %[[F]]
func @quantized_linear_gelu_residual(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]}) -> tensor<?x8xf32> {
  %w = kiln.parameter "w" {source = "w", conversion = "int8"} : tensor<8x8xi8>
  %s = kiln.parameter "w.scale" {source = "w", conversion = "int8_scale"} : tensor<8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  %q = kiln.quantized_linear %x, %w, %s, %b : (tensor<?x8xf32>, tensor<8x8xi8>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %g = kiln.gelu %q : tensor<?x8xf32>
  %r = kiln.add %g, %x : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  kiln.return %r : tensor<?x8xf32>
}

// -----

// ... and is a normalisation group's first stage as a linear is: the output projection
// without a bias (a tied one), the residual add and the LayerNorm are one kernel.
// CHECK-LABEL: func @quantized_residual_layer_norm
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x8xf32>
// CHECK-NOT: kiln.quantized_linear
// CHECK: %[[F:.+]] = kiln.fusion %[[X]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32>, tensor<8x8xi8>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: tensor<?x8xf32>, %[[W:[^:]+]]: tensor<8x8xi8>, %[[S:[^:]+]]: tensor<8xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[BE:[^:]+]]: tensor<8xf32>):
// CHECK-NEXT: %[[O:.+]] = kiln.quantized_linear %[[A]], %[[W]], %[[S]] :
// CHECK-NEXT: %[[R:.+]] = kiln.add %[[A]], %[[O]]
// CHECK-NEXT: %[[N:.+]] = kiln.layer_norm %[[R]], %[[G]], %[[BE]]
// CHECK-NEXT: kiln.yield %[[N]]
func @quantized_residual_layer_norm(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]}) -> tensor<?x8xf32> {
  %w = kiln.parameter "w" {source = "w", conversion = "int8"} : tensor<8x8xi8>
  %s = kiln.parameter "w.scale" {source = "w", conversion = "int8_scale"} : tensor<8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  %o = kiln.quantized_linear %x, %w, %s : (tensor<?x8xf32>, tensor<8x8xi8>, tensor<8xf32>) -> tensor<?x8xf32>
  %r = kiln.add %x, %o : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %n = kiln.layer_norm %r, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %n : tensor<?x8xf32>
}

// -----

// The same prologue for an RMSNorm, and its epilogue: the elementwise op reading it.
// CHECK-LABEL: func @residual_rms_norm
// CHECK: %[[F:.+]] = kiln.fusion %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: tensor<?x8xf32>, %[[B:[^:]+]]: tensor<?x8xf32>, %[[G:[^:]+]]: tensor<8xf32>):
// CHECK-NEXT: %[[S:.+]] = kiln.add %[[A]], %[[B]]
// CHECK-NEXT: %[[N:.+]] = kiln.rms_norm %[[S]], %[[G]]
// CHECK-NEXT: %[[R:.+]] = kiln.relu %[[N]]
// CHECK-NEXT: kiln.yield %[[R]]
func @residual_rms_norm(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]},
                        %y: tensor<?x8xf32> {kiln.name = "y", kiln.dims = ["N", ""]}) -> tensor<?x8xf32> {
  %g = kiln.parameter "g" : tensor<8xf32>
  %s = kiln.add %x, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %n = kiln.rms_norm %s, %g {epsilon = 1.0e-6 : f32} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %r = kiln.relu %n : tensor<?x8xf32>
  kiln.return %r : tensor<?x8xf32>
}

// -----

// A chain of elementwise ops with no anchor (embeddings scaled by sqrt(d), plus the
// positions' encoding) is one pointwise kernel; a boolean masked_fill joins it.
// CHECK-LABEL: func @elementwise_chain
// CHECK: %[[F:.+]] = kiln.fusion %{{.+}}, %{{.+}}, %{{.+}} : (tensor<2x5x8xf32>, tensor<5x8xf32>, tensor<2x5x8xi1>) -> tensor<2x5x8xf32>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.scale
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.masked_fill
// CHECK-NEXT: kiln.yield
func @elementwise_chain(%e: tensor<2x5x8xf32>, %p: tensor<5x8xf32>, %m: tensor<2x5x8xi1>) -> tensor<2x5x8xf32> {
  %s = kiln.scale %e {factor = 2.0 : f32} : tensor<2x5x8xf32>
  %a = kiln.add %s, %p : (tensor<2x5x8xf32>, tensor<5x8xf32>) -> tensor<2x5x8xf32>
  %f = kiln.masked_fill %a, %m {value = 0.0 : f32} : (tensor<2x5x8xf32>, tensor<2x5x8xi1>) -> tensor<2x5x8xf32>
  kiln.return %f : tensor<2x5x8xf32>
}

// -----

// A final LayerNorm whose result only the logits product reads (a matmul against the
// tied embedding, transposed) is that product's first stage: norm and logits are one
// kernel, the norm first.
// CHECK-LABEL: func @final_norm_logits
// CHECK-SAME: (%[[X:[^:]+]]: tensor<?x1x8xf32>
// CHECK-NOT: kiln.layer_norm
// CHECK: %[[F:.+]] = kiln.fusion %[[X]], %{{.+}}, %{{.+}}, %{{.+}} : (tensor<?x1x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<32x8xf32>) -> tensor<?x1x32xf32> {
// CHECK-NEXT: ^bb0(%[[A:[^:]+]]: tensor<?x1x8xf32>, %[[G:[^:]+]]: tensor<8xf32>, %[[BE:[^:]+]]: tensor<8xf32>, %[[E:[^:]+]]: tensor<32x8xf32>):
// CHECK-NEXT: %[[N:.+]] = kiln.layer_norm %[[A]], %[[G]], %[[BE]]
// CHECK-NEXT: %[[L:.+]] = kiln.matmul %[[N]], %[[E]] {transpose_rhs = true}
// CHECK-NEXT: kiln.yield %[[L]] : tensor<?x1x32xf32>
// CHECK-NEXT: }
// CHECK-NEXT: kiln.return %[[F]]
func @final_norm_logits(%x: tensor<?x1x8xf32> {kiln.name = "x", kiln.dims = ["B", "", ""]}) -> tensor<?x1x32xf32> {
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  %e = kiln.parameter "embedding" : tensor<32x8xf32>
  %n = kiln.layer_norm %x, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<?x1x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x1x8xf32>
  %l = kiln.matmul %n, %e {transpose_rhs = true} : (tensor<?x1x8xf32>, tensor<32x8xf32>) -> tensor<?x1x32xf32>
  kiln.return %l : tensor<?x1x32xf32>
}

// -----

// The same for an RMSNorm before a linear (a pre-norm layer's projection), whose
// epilogue the group takes after the product.
// CHECK-LABEL: func @rms_norm_linear_relu
// CHECK: kiln.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.rms_norm
// CHECK-NEXT: kiln.linear
// CHECK-NEXT: kiln.relu
// CHECK-NEXT: kiln.yield
// CHECK-NOT: kiln.fusion
func @rms_norm_linear_relu(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]}) -> tensor<?x16xf32> {
  %g = kiln.parameter "g" : tensor<8xf32>
  %w = kiln.parameter "w" : tensor<16x8xf32>
  %b = kiln.parameter "b" : tensor<16xf32>
  %n = kiln.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %h = kiln.linear %n, %w, %b : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = kiln.relu %h : tensor<?x16xf32>
  kiln.return %r : tensor<?x16xf32>
}

// -----

// A model's input layer: gathered rows scaled by sqrt(d), plus the sinusoids of a range
// of positions, is one kernel. The gather, the range and the sinusoid are expressions
// of the element's index, which the chain computes where it reads them.
// CHECK-LABEL: func @input_layer
// CHECK-SAME: (%[[IDS:[^:]+]]: tensor<?x?xi32>
// CHECK: %[[F:.+]] = kiln.fusion %{{.+}}, %[[IDS]] : (tensor<16x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32> {
// CHECK-NEXT: ^bb0(%[[T:.+]]: tensor<16x8xf32>, %[[I:.+]]: tensor<?x?xi32>):
// CHECK-NEXT: %[[E:.+]] = kiln.embedding %[[T]], %[[I]]
// CHECK-NEXT: %[[R:.+]] = kiln.range %[[I]]
// CHECK-NEXT: %[[P:.+]] = kiln.sinusoid %[[R]]
// CHECK-NEXT: %[[S:.+]] = kiln.scale %[[E]]
// CHECK-NEXT: %[[A:.+]] = kiln.add %[[S]], %[[P]]
// CHECK-NEXT: kiln.yield %[[A]] : tensor<?x?x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: kiln.return %[[F]]
func @input_layer(%ids: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %t = kiln.parameter "embed.weight" : tensor<16x8xf32>
  %e = kiln.embedding %t, %ids : (tensor<16x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %r = kiln.range %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
  %p = kiln.sinusoid %r : (tensor<?xi32>) -> tensor<?x8xf32>
  %s = kiln.scale %e {factor = 2.828427 : f32} : tensor<?x?x8xf32>
  %a = kiln.add %s, %p : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> tensor<?x?x8xf32>
  kiln.return %a : tensor<?x?x8xf32>
}

// -----

// Learned positions: both tables' gathers join the add (the positions' rows broadcast
// over the batch, a copy per element), but the range stays a kernel: a gather reads
// its ids from memory.
// CHECK-LABEL: func @learned_positions
// CHECK: kiln.range
// CHECK: kiln.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.embedding
// CHECK-NEXT: kiln.embedding
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.yield
func @learned_positions(%ids: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %t = kiln.parameter "wte" : tensor<16x8xf32>
  %q = kiln.parameter "wpe" : tensor<32x8xf32>
  %e = kiln.embedding %t, %ids : (tensor<16x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  // expected-remark @+1 {{kiln.range not fused into a kernel group: no group of elementwise ops computes it where it reads it: its reader is an embedding, which gathers rows by stored ids}}
  %r = kiln.range %ids {axis = 1 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
  %p = kiln.embedding %q, %r : (tensor<32x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  %a = kiln.add %e, %p : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> tensor<?x?x8xf32>
  kiln.return %a : tensor<?x?x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Left apart, each op with its reason
//===----------------------------------------------------------------------===//

// A value with two readers is stored once: neither reader takes the linear.
// CHECK-LABEL: func @two_readers
// CHECK-NOT: kiln.fusion
func @two_readers(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %w = kiln.parameter "w" : tensor<8x8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  // expected-remark @+1 {{kiln.linear not fused into a kernel group: no elementwise op can join it as its epilogue: its result has 2 uses, and a value with several readers is stored once, not recomputed}}
  %h = kiln.linear %x, %w, %b : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{kiln.relu not fused into a kernel group: it can join neither its producers (its operand from kiln.linear: its result has 2 uses}}
  %r = kiln.relu %h : tensor<4x8xf32>
  // expected-remark @+1 {{kiln.gelu not fused into a kernel group: it can join neither its producers (its operand from kiln.linear: its result has 2 uses, and a value with several readers is stored once, not recomputed) nor its consumer (its result is an output of the entry)}}
  %g = kiln.gelu %h : tensor<4x8xf32>
  kiln.return %r, %g : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// A reader that broadcasts the value to a larger shape would recompute it per element.
// CHECK-LABEL: func @broadcast_reader
// CHECK-NOT: kiln.fusion
func @broadcast_reader(%x: tensor<4x8xf32>, %y: tensor<3x4x16xf32>) -> tensor<3x4x16xf32> {
  %w = kiln.parameter "w" : tensor<16x8xf32>
  %b = kiln.parameter "b" : tensor<16xf32>
  // expected-remark @+1 {{kiln.linear not fused into a kernel group: no elementwise op can join it as its epilogue: its reader kiln.add broadcasts it to a larger shape, which would recompute it per element}}
  %h = kiln.linear %x, %w, %b : (tensor<4x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{kiln.add not fused into a kernel group: it can join neither its producers (its operand from kiln.linear: its reader kiln.add broadcasts it to a larger shape, which would recompute it per element) nor its consumer (its result is an output of the entry)}}
  %a = kiln.add %h, %y : (tensor<4x16xf32>, tensor<3x4x16xf32>) -> tensor<3x4x16xf32>
  kiln.return %a : tensor<3x4x16xf32>
}

// -----

// Attention, softmax and the other ops that are neither elementwise nor anchors stay
// their own kernels; so does a linear whose reader is one of them.
// CHECK-LABEL: func @not_elementwise
// CHECK-NOT: kiln.fusion
func @not_elementwise(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-remark @+1 {{kiln.attention not fused into a kernel group: attention is its own kernel (kiln-fuse-attention's), which groups leave alone}}
  %o = kiln.attention %q, %k, %v {scale = 0.5 : f32} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{kiln.matmul not fused into a kernel group: no elementwise op can join it as its epilogue: its only reader, kiln.softmax, is not elementwise}}
  %m = kiln.matmul %o, %v {transpose_rhs = true} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  // expected-remark @+1 {{kiln.softmax not fused into a kernel group: only elementwise ops join groups, and only linear, matmul, layer_norm and rms_norm anchor them}}
  %p = kiln.softmax %m {axis = 2 : i64} : tensor<2x4x4xf32>
  // expected-remark @+1 {{kiln.matmul not fused into a kernel group: no elementwise op can join it as its epilogue: its result is an output of the entry}}
  %r = kiln.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  kiln.return %r : tensor<2x4x8xf32>
}

// -----

// A cache append is a copy into a state, not a group member; the plan pairs appends.
// CHECK-LABEL: func @kv_append
// CHECK-NOT: kiln.fusion
func @kv_append(%x: tensor<2x4x1x8xf32>, %p: tensor<i32> {kiln.name = "step", kiln.value_dim = "P"}) -> tensor<2x4x?x8xf32> {
  // expected-remark @+1 {{kiln.kv_append not fused into a kernel group: it writes a session state in place; the backend's plan makes consecutive kv_appends of one shape one kernel call (docs/manifest.md)}}
  %k = kiln.kv_append "k", %x {axis = 2 : i64, capacity = 8 : i64, position = "P"} : (tensor<2x4x1x8xf32>) -> tensor<2x4x?x8xf32>
  kiln.return %k : tensor<2x4x?x8xf32>
}

// -----

// An elementwise op alone between two ops that cannot take it.
// CHECK-LABEL: func @lone_elementwise
// CHECK-NOT: kiln.fusion
func @lone_elementwise(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-remark @+1 {{kiln.relu not fused into a kernel group: it can join neither its producers (no operand comes from a linear, matmul, layer_norm, rms_norm or elementwise op) nor its consumer (its only reader, kiln.softmax, is not elementwise)}}
  %r = kiln.relu %x : tensor<4x8xf32>
  // expected-remark @+1 {{kiln.softmax not fused into a kernel group}}
  %p = kiln.softmax %r {axis = 1 : i64} : tensor<4x8xf32>
  kiln.return %p : tensor<4x8xf32>
}

// -----

// A linear whose result the residual add and the entry both read is stored once: the
// LayerNorm takes the add alone, and the linear says why it is not its first stage.
// CHECK-LABEL: func @stage_with_two_readers
// CHECK: %[[O:.+]] = kiln.linear
// CHECK: kiln.fusion %{{.+}}, %[[O]], %{{.+}}, %{{.+}} :
// CHECK-NOT: kiln.linear
// CHECK: kiln.yield
func @stage_with_two_readers(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]}) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %w = kiln.parameter "w" : tensor<8x8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  // expected-remark @+1 {{kiln.linear not fused into a kernel group: no elementwise op can join it as its epilogue: its result has 2 uses, and a value with several readers is stored once, not recomputed}}
  %o = kiln.linear %x, %w, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %s = kiln.add %x, %o : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %n, %o : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A prologue that reads nothing of the row's shape besides the linear (ReLU of it) has
// no input to give the kernel its extents: the linear stays its own kernel.
// CHECK-LABEL: func @stage_without_row_input
// CHECK: %[[O:.+]] = kiln.linear
// CHECK: kiln.fusion %[[O]], %{{.+}}, %{{.+}} :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.relu
// CHECK-NEXT: kiln.layer_norm
func @stage_without_row_input(%x: tensor<?x8xf32> {kiln.name = "x", kiln.dims = ["N", ""]}) -> tensor<?x8xf32> {
  %w = kiln.parameter "w" : tensor<8x8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  // expected-remark @+1 {{kiln.linear not fused into a kernel group: no elementwise op can join it as its epilogue: its reader kiln.relu is already in another group (a normalisation's prologue or another op's epilogue); nor is it the first stage of the normalisation that reads it: the prologue reads no other value of the row's shape, which the kernel takes its extents from}}
  %o = kiln.linear %x, %w, %b : (tensor<?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %r = kiln.relu %o : tensor<?x8xf32>
  %n = kiln.layer_norm %r, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %n : tensor<?x8xf32>
}

// -----

// Only a linear is a first stage: a matmul before the residual add keeps its own
// kernel.
// CHECK-LABEL: func @matmul_before_norm
// CHECK: %[[M:.+]] = kiln.matmul
// CHECK: kiln.fusion %{{.+}}, %[[M]], %{{.+}}, %{{.+}} :
func @matmul_before_norm(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = kiln.parameter "w" : tensor<8x8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  // expected-remark @+1 {{kiln.matmul not fused into a kernel group: no elementwise op can join it as its epilogue: its reader kiln.add is already in another group}}
  %m = kiln.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = kiln.add %x, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  kiln.return %n : tensor<4x8xf32>
}

// -----

// A sinusoid with two readers is stored once; its range, read by no group, stays too.
// CHECK-LABEL: func @shared_positions
// CHECK-NOT: kiln.fusion
func @shared_positions(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  // expected-remark @+1 {{kiln.range not fused into a kernel group: no group of elementwise ops computes it where it reads it: its only reader, kiln.sinusoid, is in no kernel group}}
  %r = kiln.range %x {axis = 0 : i64} : (tensor<?x8xf32>) -> tensor<?xi32>
  // expected-remark @+1 {{kiln.sinusoid not fused into a kernel group: no group of elementwise ops computes it where it reads it: its result has 2 uses, and a value with several readers is stored once, not recomputed}}
  %p = kiln.sinusoid %r : (tensor<?xi32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{kiln.add not fused into a kernel group}}
  %a = kiln.add %x, %p : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{kiln.sub not fused into a kernel group}}
  %b = kiln.sub %x, %p : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  kiln.return %a, %b : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Embeddings summed before a LayerNorm (BERT's input layer): the add is the norm's
// prologue, and a group with an anchor computes no gathers.
// CHECK-LABEL: func @embeddings_into_layer_norm
// CHECK: kiln.embedding
// CHECK: kiln.embedding
// CHECK: kiln.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.layer_norm
func @embeddings_into_layer_norm(%ids: tensor<?x?xi32>, %types: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  %t = kiln.parameter "word" : tensor<16x8xf32>
  %u = kiln.parameter "type" : tensor<2x8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %b = kiln.parameter "b" : tensor<8xf32>
  // expected-remark @+1 {{kiln.embedding not fused into a kernel group: no group of elementwise ops computes it where it reads it: its reader kiln.add is in the group of kiln.layer_norm, and only a group of elementwise ops computes sources}}
  %e = kiln.embedding %t, %ids : (tensor<16x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  // expected-remark @+1 {{kiln.embedding not fused into a kernel group: no group of elementwise ops computes it where it reads it: its reader kiln.add is in the group of kiln.layer_norm}}
  %f = kiln.embedding %u, %types : (tensor<2x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  %s = kiln.add %e, %f : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %n = kiln.layer_norm %s, %g, %b {epsilon = 1.0e-5 : f32} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  kiln.return %n : tensor<?x?x8xf32>
}

// -----

// At int8 the feed-forward's second linear is a quantized_linear, which quantizes its
// input rows from memory: the first linear and its ReLU stay their own kernel.
// CHECK-LABEL: func @quantized_feed_forward
// CHECK: kiln.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.quantized_linear
// CHECK-NEXT: kiln.relu
// CHECK-NEXT: kiln.yield
// CHECK: kiln.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.quantized_linear
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.layer_norm
func @quantized_feed_forward(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w1 = kiln.parameter "w1" {source = "w1", conversion = "int8"} : tensor<16x8xi8>
  %s1 = kiln.parameter "w1.scale" {source = "w1", conversion = "int8_scale"} : tensor<16xf32>
  %b1 = kiln.parameter "b1" : tensor<16xf32>
  %w2 = kiln.parameter "w2" {source = "w2", conversion = "int8"} : tensor<8x16xi8>
  %s2 = kiln.parameter "w2.scale" {source = "w2", conversion = "int8_scale"} : tensor<8xf32>
  %b2 = kiln.parameter "b2" : tensor<8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  // expected-remark @+1 {{kiln.quantized_linear not computed inside the normalisation group of the linear that reads it: the linear that reads it is a kiln.quantized_linear, which reads its input from memory}}
  %h = kiln.quantized_linear %x, %w1, %s1, %b1 : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = kiln.relu %h : tensor<?x16xf32>
  %o = kiln.quantized_linear %r, %w2, %s2, %b2 : (tensor<?x16xf32>, tensor<8x16xi8>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %s = kiln.add %x, %o : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %n : tensor<?x8xf32>
}

// -----

// A hidden value that is also an output is stored: the block's first linear stays its
// own kernel.
// CHECK-LABEL: func @feed_forward_hidden_read_twice
func @feed_forward_hidden_read_twice(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x16xf32>) {
  %w1 = kiln.parameter "w1" : tensor<16x8xf32>
  %b1 = kiln.parameter "b1" : tensor<16xf32>
  %w2 = kiln.parameter "w2" : tensor<8x16xf32>
  %b2 = kiln.parameter "b2" : tensor<8xf32>
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  // expected-remark @+1 {{kiln.linear not computed inside the normalisation group of the linear that reads it: its value reaches kiln.linear through a value with 2 uses, which is stored once, not recomputed}}
  %h = kiln.linear %x, %w1, %b1 : (tensor<?x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %r = kiln.relu %h : tensor<?x16xf32>
  %o = kiln.linear %r, %w2, %b2 : (tensor<?x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %s = kiln.add %x, %o : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  kiln.return %n, %r : tensor<?x8xf32>, tensor<?x16xf32>
}

// -----

// A normalised value that a second op also reads is stored once: the product does not
// compute it.
// CHECK-LABEL: func @norm_with_two_readers
// CHECK-NOT: kiln.fusion
func @norm_with_two_readers(%x: tensor<4x8xf32>) -> (tensor<4x32xf32>, tensor<4x8xf32>) {
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  %e = kiln.parameter "embedding" : tensor<32x8xf32>
  // expected-remark @+1 {{kiln.layer_norm not fused into a kernel group: no elementwise op can join it as its epilogue: its result has 2 uses, and a value with several readers is stored once, not recomputed}}
  %n = kiln.layer_norm %x, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{kiln.matmul not fused into a kernel group: no elementwise op can join it as its epilogue: its result is an output of the entry}}
  %l = kiln.matmul %n, %e {transpose_rhs = true} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
  kiln.return %l, %n : tensor<4x32xf32>, tensor<4x8xf32>
}

// -----

// A product that reads the normalised value as its rhs: a stage is only ever an lhs.
// CHECK-LABEL: func @norm_as_rhs
// CHECK-NOT: kiln.fusion
func @norm_as_rhs(%x: tensor<8x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  // expected-remark @+1 {{kiln.layer_norm not fused into a kernel group: no elementwise op can join it as its epilogue: its only reader, kiln.matmul, is not elementwise; nor is it the first stage of the product that reads it: the product (kiln.matmul) reads the normalised value as its right-hand side, and a stage computes only the left-hand side}}
  %n = kiln.layer_norm %x, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  // expected-remark @+1 {{kiln.matmul not fused into a kernel group: no elementwise op can join it as its epilogue: its result is an output of the entry; nor does it compute the normalisation that it reads as its first stage: the product (kiln.matmul) reads the normalised value as its right-hand side}}
  %l = kiln.matmul %y, %n : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  kiln.return %l : tensor<4x8xf32>
}

// -----

// A norm with its own prologue (a residual add) keeps its group: the product after it
// says why it does not compute it.
// CHECK-LABEL: func @norm_with_prologue_before_product
// CHECK: kiln.fusion
// CHECK-NEXT: ^bb0
// CHECK-NEXT: kiln.add
// CHECK-NEXT: kiln.layer_norm
// CHECK-NEXT: kiln.yield
// CHECK: kiln.matmul
func @norm_with_prologue_before_product(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x32xf32> {
  %g = kiln.parameter "g" : tensor<8xf32>
  %be = kiln.parameter "be" : tensor<8xf32>
  %e = kiln.parameter "embedding" : tensor<32x8xf32>
  %s = kiln.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %n = kiln.layer_norm %s, %g, %be {epsilon = 1.0e-5 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{kiln.matmul not fused into a kernel group: no elementwise op can join it as its epilogue: its result is an output of the entry; nor does it compute the normalisation that it reads as its first stage: the normalisation anchors the group of its prologue, which a first stage cannot take}}
  %l = kiln.matmul %n, %e {transpose_rhs = true} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
  kiln.return %l : tensor<4x32xf32>
}

// -----

// A quantized_linear reads its input rows from memory: the norm before it stays apart.
// CHECK-LABEL: func @norm_before_quantized_linear
// CHECK-NOT: kiln.fusion
func @norm_before_quantized_linear(%x: tensor<?x8xf32>) -> tensor<?x16xf32> {
  %g = kiln.parameter "g" : tensor<8xf32>
  %w = kiln.parameter "w" {source = "w", conversion = "int8"} : tensor<16x8xi8>
  %s = kiln.parameter "w.scale" {source = "w", conversion = "int8_scale"} : tensor<16xf32>
  %b = kiln.parameter "b" : tensor<16xf32>
  // expected-remark @+1 {{kiln.rms_norm not fused into a kernel group: no elementwise op can join it as its epilogue: its only reader, kiln.quantized_linear, is not elementwise; nor is it the first stage of the product that reads it: the product is a kiln.quantized_linear, which reads its input from memory}}
  %n = kiln.rms_norm %x, %g {epsilon = 1.0e-6 : f32} : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  // expected-remark @+1 {{kiln.quantized_linear not fused into a kernel group: no elementwise op can join it as its epilogue: its result is an output of the entry; nor does it compute the normalisation that it reads as its first stage: the product is a kiln.quantized_linear}}
  %q = kiln.quantized_linear %n, %w, %s, %b : (tensor<?x8xf32>, tensor<16x8xi8>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  kiln.return %q : tensor<?x16xf32>
}
