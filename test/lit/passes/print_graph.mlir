// kiln-print-graph (what NAME-gen --emit=dot prints): names instead of SSA numbers, each
// op's shape and model line, kernel groups as clusters, only the entry asked for.
// RUN: kiln-opt %s --kiln-print-graph=entry=encode -o /dev/null | FileCheck %s
// RUN: kiln-opt %s --kiln-print-graph -o /dev/null | FileCheck %s --check-prefix=ALL
// RUN: not kiln-opt %s --kiln-print-graph=entry=decode -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: kiln-opt %s --kiln-print-graph -o /dev/null | %python %S/../check_dot.py
// The printer leaves the module as it was.
// RUN: kiln-opt %s --kiln-print-graph=entry=encode | FileCheck %s --check-prefix=MODULE
// MODULE: func @encode
// MODULE: func @step

// CHECK: digraph "tiny" {
// CHECK-NEXT: label = "tiny: encode";
// Inputs by their names and symbolic shapes, not arg0.
// CHECK: [[IDS:n[0-9]+]] [label = "src_ids\n[B, S] i32", shape = ellipse
// CHECK: [[MASK:n[0-9]+]] [label = "src_mask\n[B, 1, 1, S] f32", shape = ellipse
// Parameters by their full names.
// CHECK: [[TABLE:n[0-9]+]] [label = "encoder.embed_tokens.weight\n[50, 8] f32"
// CHECK: [[EMB:n[0-9]+]] [label = "kiln.embedding\n[B, S, 8] f32\nmodel.cpp:11"]
// CHECK: [[W:n[0-9]+]] [label = "encoder.layers.0.self_attn.in_proj_weight\n[8, 8] f32"
// CHECK: [[B:n[0-9]+]] [label = "encoder.layers.0.self_attn.in_proj_bias\n[8] f32"
// A kiln.fusion: a cluster named after its anchor, holding the body's ops.
// CHECK: subgraph cluster_{{[0-9]+}} {
// CHECK-NEXT: label = "kiln.fusion: kiln.linear";
// CHECK: [[LIN:n[0-9]+]] [label = "kiln.linear\n[B, S, 8] f32\nmodel.cpp:12"]
// CHECK-NEXT: [[RELU:n[0-9]+]] [label = "kiln.relu\n[B, S, 8] f32\nmodel.cpp:13"]
// CHECK-NEXT: }
// CHECK: [[Q:n[0-9]+]] [label = "kiln.transpose\n[B, 2, S, 4] f32\nmodel.cpp:15"]
// kiln.attention: a cluster too; its node shows every line the fusion took.
// CHECK: subgraph cluster_{{[0-9]+}} {
// CHECK-NEXT: label = "kiln.attention";
// CHECK: [[ATT:n[0-9]+]] [label = "kiln.attention\n[B, 2, S, 4] f32\nmodel.cpp:20, 21, 22"]
// CHECK-NEXT: }
// Outputs by their names.
// CHECK: [[OUT:n[0-9]+]] [label = "memory\n[B, 2, S, 4] f32", shape = ellipse
// Edges last, from the nodes outside a group straight to the ops in it that read them;
// only attention's are labelled.
// CHECK: [[TABLE]] -> [[EMB]];
// CHECK-NEXT: [[IDS]] -> [[EMB]];
// CHECK-NEXT: [[EMB]] -> [[LIN]];
// CHECK-NEXT: [[W]] -> [[LIN]];
// CHECK-NEXT: [[B]] -> [[LIN]];
// CHECK-NEXT: [[LIN]] -> [[RELU]];
// CHECK-NEXT: [[RELU]] -> {{n[0-9]+}};
// CHECK-NEXT: {{n[0-9]+}} -> [[Q]];
// CHECK-NEXT: [[Q]] -> [[ATT]] [label = "q"];
// CHECK-NEXT: [[Q]] -> [[ATT]] [label = "k"];
// CHECK-NEXT: [[Q]] -> [[ATT]] [label = "v"];
// CHECK-NEXT: [[MASK]] -> [[ATT]] [label = "mask"];
// CHECK-NEXT: [[ATT]] -> [[OUT]];
// CHECK-NEXT: }
// The other entry is not drawn.
// CHECK-NOT: kiln.state_read

// Every entry, each in a cluster of its own; a state op shows the state's name.
// ALL: digraph "tiny" {
// ALL-NEXT: label = "tiny";
// ALL: subgraph cluster_0 {
// ALL-NEXT: label = "entry encode";
// ALL: [[MEMORY:n[0-9]+]] [label = "memory\n
// ALL: -> [[MEMORY]];
// ALL-NEXT: }
// ALL-NEXT: subgraph cluster_{{[0-9]+}} {
// ALL-NEXT: label = "entry step";
// ALL: [label = "kiln.state_read\ndecoder.layers.0.self_attn.k_cache\n[B, 2, 4, 4] f32\nmodel.cpp:30"]
// A splat constant shows its value.
// ALL: [label = "kiln.constant\nsplat 0.125\n[] f32\nmodel.cpp:31"]
// An op built inside nn modules: the user's line, then the innermost module's.
// ALL: [label = "kiln.relu\n[B, 2, 4, 4] f32\nmodel.cpp:32\nAttention.cpp:37"]
// Names are escaped: a quote, a backslash and a control character.
// ALL: [label = "scale \"a\\b\" \\x01\n[B, 2, 4, 4] f32"

// UNKNOWN: error: unknown entry point 'decode'; the module's entry points are: encode, step

module @tiny {
  func @encode(%ids: tensor<?x?xi32> {kiln.name = "src_ids", kiln.dims = ["B", "S"]},
               %mask: tensor<?x1x1x?xf32> {kiln.name = "src_mask", kiln.dims = ["B", "", "", "S"]})
      -> (tensor<?x2x?x4xf32> {kiln.name = "memory"}) {
    %table = kiln.parameter "encoder.embed_tokens.weight" : tensor<50x8xf32> loc("model.cpp":10:3)
    %e = kiln.embedding %table, %ids : (tensor<50x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32> loc("/somewhere/model.cpp":11:5)
    %w = kiln.parameter "encoder.layers.0.self_attn.in_proj_weight" : tensor<8x8xf32>
    %b = kiln.parameter "encoder.layers.0.self_attn.in_proj_bias" : tensor<8xf32>
    %f = kiln.fusion %e, %w, %b : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32> {
    ^bb0(%a: tensor<?x?x8xf32>, %c: tensor<8x8xf32>, %d: tensor<8xf32>):
      %l = kiln.linear %a, %c, %d : (tensor<?x?x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32> loc("model.cpp":12:7)
      %r = kiln.relu %l : tensor<?x?x8xf32> loc("model.cpp":13:7)
      kiln.yield %r : tensor<?x?x8xf32>
    } loc(fused["model.cpp":12:7, "model.cpp":13:7])
    %h = kiln.reshape %f {shape = [0, 0, 2, 4]} : (tensor<?x?x8xf32>) -> tensor<?x?x2x4xf32> loc("model.cpp":14:3)
    %q = kiln.transpose %h {permutation = [0, 2, 1, 3]} : (tensor<?x?x2x4xf32>) -> tensor<?x2x?x4xf32> loc("model.cpp":15:3)
    %o = kiln.attention %q, %q, %q, %mask {scale = 0.5 : f32}
        : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x1x1x?xf32>) -> tensor<?x2x?x4xf32>
        loc(fused["model.cpp":22:1, "model.cpp":20:9, "model.cpp":21:4, "model.cpp":20:30])
    kiln.return %o : tensor<?x2x?x4xf32>
  }

  func @step(%x: tensor<?x2x4x4xf32> {kiln.name = "x", kiln.dims = ["B", "", "", ""]})
      -> (tensor<?x2x4x4xf32> {kiln.name = "scale \"a\\b\" \01"}) {
    %k = kiln.state_read "decoder.layers.0.self_attn.k_cache" {dims = ["B", "", "", ""]} : tensor<?x2x4x4xf32> loc("model.cpp":30:2)
    %s = kiln.add %x, %k : (tensor<?x2x4x4xf32>, tensor<?x2x4x4xf32>) -> tensor<?x2x4x4xf32>
    %c = kiln.constant dense<0.125> : tensor<f32> loc("model.cpp":31:2)
    %m = kiln.mul %s, %c : (tensor<?x2x4x4xf32>, tensor<f32>) -> tensor<?x2x4x4xf32> loc("model.cpp":31:2)
    %n = kiln.relu %m : tensor<?x2x4x4xf32> loc(callsite("nn::MultiHeadAttention 'dec.0.self_attn'"("/kiln/frontend/lib/nn/Attention.cpp":37:5) at callsite("nn::Decoder 'dec'"("/kiln/frontend/lib/nn/Transformer.cpp":120:7) at "model.cpp":32:2)))
    kiln.return %n : tensor<?x2x4x4xf32>
  }
}
