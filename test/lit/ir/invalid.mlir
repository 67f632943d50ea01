// Every verifier message of the kiln dialect, each at the op that triggers it.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func @matmul_contraction_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'kiln.matmul' op contraction dimensions differ: lhs [2, 3] contracts 3, rhs [4, 5] contracts 4}}
  %0 = kiln.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  kiln.return %0 : tensor<2x5xf32>
}

// -----

func @matmul_transposed_contraction_mismatch(%a: tensor<3x2xf32>, %b: tensor<5x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{lhs [3, 2] contracts 3, rhs [5, 4] contracts 4}}
  %0 = kiln.matmul %a, %b {transpose_lhs = true, transpose_rhs = true}
      : (tensor<3x2xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  kiln.return %0 : tensor<2x5xf32>
}

// -----

func @matmul_rank_1(%a: tensor<3xf32>, %b: tensor<3x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operands need rank >= 2, got lhs [3] and rhs [3, 4]}}
  %0 = kiln.matmul %a, %b : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}

// -----

func @matmul_batch_mismatch(%a: tensor<2x3x4xf32>, %b: tensor<5x4x6xf32>) -> tensor<2x3x6xf32> {
  // expected-error @+1 {{batch dimensions: shapes [2] and [5] do not broadcast: 2 vs 5}}
  %0 = kiln.matmul %a, %b : (tensor<2x3x4xf32>, tensor<5x4x6xf32>) -> tensor<2x3x6xf32>
  kiln.return %0 : tensor<2x3x6xf32>
}

// -----

func @add_broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.add' op shapes [2, 3] and [4] do not broadcast: 3 vs 4}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @mul_broadcast_mismatch(%a: tensor<2x1x3xf32>, %b: tensor<4x2xf32>) -> tensor<2x4x3xf32> {
  // expected-error @+1 {{'kiln.mul' op shapes [2, 1, 3] and [4, 2] do not broadcast: 3 vs 2}}
  %0 = kiln.mul %a, %b : (tensor<2x1x3xf32>, tensor<4x2xf32>) -> tensor<2x4x3xf32>
  kiln.return %0 : tensor<2x4x3xf32>
}

// -----

func @sub_broadcast_mismatch(%a: tensor<?x3xf32>, %b: tensor<2x4xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'kiln.sub' op shapes [?, 3] and [2, 4] do not broadcast: 3 vs 4}}
  %0 = kiln.sub %a, %b : (tensor<?x3xf32>, tensor<2x4xf32>) -> tensor<?x3xf32>
  kiln.return %0 : tensor<?x3xf32>
}

// -----

func @div_i32(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.div' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<2xi32>'}}
  %0 = kiln.div %a, %a : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
  kiln.return %0 : tensor<2xi32>
}

// -----

func @add_i1(%a: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error @+1 {{'kiln.add' op operand #0 must be ranked tensor of 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xi1>'}}
  %0 = kiln.add %a, %a : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  kiln.return
}

// -----

func @add_i32_and_i64(%a: tensor<2xi32>, %b: tensor<2xi64>) -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.add' op requires the same element type for all operands and results}}
  %0 = kiln.add %a, %b : (tensor<2xi32>, tensor<2xi64>) -> tensor<2xi32>
  kiln.return %0 : tensor<2xi32>
}

// -----

func @where_condition_not_bool(%c: tensor<2xi32>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.where' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<2xi32>'}}
  %0 = kiln.where %c, %a, %a : (tensor<2xi32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  kiln.return %0 : tensor<2xf32>
}

// -----

func @where_values_differ(%c: tensor<2xi1>, %a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.where' op on_false has element type 'i32' but on_true 'f32'; cast one to the other}}
  %0 = kiln.where %c, %a, %b : (tensor<2xi1>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  kiln.return %0 : tensor<2xf32>
}

// -----

func @where_result_type(%c: tensor<2xi1>, %a: tensor<2xi32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.where' op result element type 'f32' must be 'i32'}}
  %0 = kiln.where %c, %a, %a : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xf32>
  kiln.return %0 : tensor<2xf32>
}

// -----

func @where_condition_does_not_broadcast(%c: tensor<3xi1>, %a: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'kiln.where' op condition [3] does not broadcast against the values [2, 4]: shapes [3] and [2, 4] do not broadcast: 3 vs 4}}
  %0 = kiln.where %c, %a, %a : (tensor<3xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  kiln.return %0 : tensor<2x4xf32>
}

// -----

func @cast_to_i1(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.cast' op result #0 must be ranked tensor of 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xi1>'}}
  %0 = kiln.cast %a : (tensor<2xf32>) -> tensor<2xi1>
  kiln.return %a : tensor<2xf32>
}

// -----

func @cast_shape(%a: tensor<2x3xf32>) -> tensor<3x2xi32> {
  // expected-error @+1 {{'kiln.cast' op result type 'tensor<3x2xi32>' does not match the inferred shape [2, 3]}}
  %0 = kiln.cast %a : (tensor<2x3xf32>) -> tensor<3x2xi32>
  kiln.return %0 : tensor<3x2xi32>
}

// -----

func @relu_unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'kiln.relu' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<*xf32>'}}
  %0 = kiln.relu %a : tensor<*xf32>
  kiln.return %0 : tensor<*xf32>
}

// -----

func @add_unranked_result(%a: tensor<2xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'kiln.add' op result #0 must be ranked tensor of 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<*xf32>'}}
  %0 = kiln.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<*xf32>
  kiln.return %0 : tensor<*xf32>
}

// -----

func @softmax_axis_too_large(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.softmax' op axis 2 is out of range for shape [2, 3]}}
  %0 = kiln.softmax %a {axis = 2 : i64} : tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @softmax_axis_negative(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.softmax' op axis -1 is out of range for shape [2, 3]}}
  %0 = kiln.softmax %a {axis = -1 : i64} : tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @layer_norm_gamma_shape(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kiln.layer_norm' op gamma has shape [4], expected [8] to match the last dimension of [2, 8]}}
  %0 = kiln.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32}
      : (tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  kiln.return %0 : tensor<2x8xf32>
}

// -----

func @layer_norm_beta_rank(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<1x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kiln.layer_norm' op beta has shape [1, 8], expected [8] to match the last dimension of [2, 8]}}
  %0 = kiln.layer_norm %x, %g, %b {epsilon = 1.0e-05 : f32}
      : (tensor<2x8xf32>, tensor<8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  kiln.return %0 : tensor<2x8xf32>
}

// -----

func @layer_norm_scalar(%x: tensor<f32>, %g: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.layer_norm' op needs an input of rank >= 1}}
  %0 = kiln.layer_norm %x, %g, %g {epsilon = 1.0e-05 : f32}
      : (tensor<f32>, tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
  kiln.return %0 : tensor<f32>
}

// -----

func @rms_norm_gamma_shape(%x: tensor<2x8xf32>, %g: tensor<4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kiln.rms_norm' op gamma has shape [4], expected [8] to match the last dimension of [2, 8]}}
  %0 = kiln.rms_norm %x, %g {epsilon = 1.0e-06 : f32}
      : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  kiln.return %0 : tensor<2x8xf32>
}

// -----

func @rms_norm_scalar(%x: tensor<f32>, %g: tensor<1xf32>) -> tensor<f32> {
  // expected-error @+1 {{'kiln.rms_norm' op needs an input of rank >= 1}}
  %0 = kiln.rms_norm %x, %g {epsilon = 1.0e-06 : f32} : (tensor<f32>, tensor<1xf32>) -> tensor<f32>
  kiln.return %0 : tensor<f32>
}

// -----

func @reduce_axis_out_of_range(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.reduce_sum' op axis 2 is out of range for shape [2, 8] (expected -2 to 1)}}
  %0 = kiln.reduce_sum %x {axes = [2]} : (tensor<2x8xf32>) -> tensor<2xf32>
  kiln.return %0 : tensor<2xf32>
}

// -----

func @reduce_axis_twice(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.reduce_max' op axes [1, -1] name dimension 1 twice}}
  %0 = kiln.reduce_max %x {axes = [1, -1]} : (tensor<2x8xf32>) -> tensor<2xf32>
  kiln.return %0 : tensor<2xf32>
}

// -----

func @reduce_no_axes(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kiln.reduce_mean' op needs at least one axis}}
  %0 = kiln.reduce_mean %x {axes = []} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  kiln.return %0 : tensor<2x8xf32>
}

// -----

func @reduce_keep_dim_shape(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.reduce_sum' op result type 'tensor<2xf32>' does not match the inferred shape [2, 1]}}
  %0 = kiln.reduce_sum %x {axes = [1], keep_dim = true} : (tensor<2x8xf32>) -> tensor<2xf32>
  kiln.return %0 : tensor<2xf32>
}

// -----

func @reduce_mean_of_integers(%x: tensor<2x8xi32>) -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.reduce_mean' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<2x8xi32>'}}
  %0 = kiln.reduce_mean %x {axes = [1]} : (tensor<2x8xi32>) -> tensor<2xi32>
  kiln.return %0 : tensor<2xi32>
}

// -----

func @reshape_element_count(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'kiln.reshape' op from [2, 3] to [4, 2] changes the element count}}
  %0 = kiln.reshape %x {shape = [4, 2]} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  kiln.return %0 : tensor<4x2xf32>
}

// -----

func @reshape_not_divisible(%x: tensor<2x3xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'kiln.reshape' op from [2, 3] to [?, 4]: the element count is not divisible}}
  %0 = kiln.reshape %x {shape = [-1, 4]} : (tensor<2x3xf32>) -> tensor<?x4xf32>
  kiln.return %0 : tensor<?x4xf32>
}

// -----

func @reshape_bad_entry(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.reshape' op size -2 is invalid (use > 0, 0 to keep or -1 to infer)}}
  %0 = kiln.reshape %x {shape = [-2]} : (tensor<2x3xf32>) -> tensor<6xf32>
  kiln.return %0 : tensor<6xf32>
}

// -----

func @reshape_keep_missing_dim(%x: tensor<6xf32>) -> tensor<6x1xf32> {
  // expected-error @+1 {{'kiln.reshape' op entry 0 at position 1 copies a dimension that input [6] does not have}}
  %0 = kiln.reshape %x {shape = [6, 0]} : (tensor<6xf32>) -> tensor<6x1xf32>
  kiln.return %0 : tensor<6x1xf32>
}

// -----

func @reshape_two_inferred(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'kiln.reshape' op may infer only one dimension (-1)}}
  %0 = kiln.reshape %x {shape = [-1, -1]} : (tensor<2x3xf32>) -> tensor<?x?xf32>
  kiln.return %0 : tensor<?x?xf32>
}

// -----

func @transpose_wrong_length(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'kiln.transpose' op permutation has 3 entries for an input of rank 2}}
  %0 = kiln.transpose %x {permutation = [1, 0, 2]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  kiln.return %0 : tensor<3x2xf32>
}

// -----

func @transpose_repeated_entry(%x: tensor<2x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'kiln.transpose' op permutation is not a permutation of 0..1}}
  %0 = kiln.transpose %x {permutation = [1, 1]} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  kiln.return %0 : tensor<3x3xf32>
}

// -----

func @transpose_out_of_range(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'kiln.transpose' op permutation is not a permutation of 0..1}}
  %0 = kiln.transpose %x {permutation = [2, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  kiln.return %0 : tensor<3x2xf32>
}

// -----

func @result_static_dim_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'kiln.matmul' op result type 'tensor<2x5xf32>' does not match the inferred shape [2, 4]}}
  %0 = kiln.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32>
  kiln.return %0 : tensor<2x5xf32>
}

// -----

func @result_rank_mismatch(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'kiln.transpose' op result type 'tensor<6xf32>' does not match the inferred shape [3, 2]}}
  %0 = kiln.transpose %x {permutation = [1, 0]} : (tensor<2x3xf32>) -> tensor<6xf32>
  kiln.return %0 : tensor<6xf32>
}

// -----

func @result_dynamic_vs_inferred_is_fine_static_vs_static_is_not(%x: tensor<?x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'kiln.add' op result type 'tensor<4x4xf32>' does not match the inferred shape [?, 3]}}
  %0 = kiln.add %x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<4x4xf32>
  kiln.return %0 : tensor<4x4xf32>
}

// -----

func @reshape_element_type(%x: tensor<2x3xf32>) -> tensor<6xi32> {
  // expected-error @+1 {{'kiln.reshape' op result element type 'i32' differs from the input's 'f32'}}
  %0 = kiln.reshape %x {shape = [6]} : (tensor<2x3xf32>) -> tensor<6xi32>
  kiln.return %0 : tensor<6xi32>
}

// -----

func @transpose_element_type(%x: tensor<2x3xi32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'kiln.transpose' op result element type 'f32' differs from the input's 'i32'}}
  %0 = kiln.transpose %x {permutation = [1, 0]} : (tensor<2x3xi32>) -> tensor<3x2xf32>
  kiln.return %0 : tensor<3x2xf32>
}

// -----

func @parameter_dynamic() -> tensor<?x4xf32> {
  // expected-error @+1 {{'kiln.parameter' op parameter 'w' must have a static shape, got 'tensor<?x4xf32>'}}
  %w = kiln.parameter "w" : tensor<?x4xf32>
  kiln.return %w : tensor<?x4xf32>
}

// -----

func @parameter_unnamed() -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.parameter' op needs a non-empty name}}
  %w = kiln.parameter "" : tensor<4xf32>
  kiln.return %w : tensor<4xf32>
}

// -----

func @return_count(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'kiln.return' op returns 1 value but 'return_count' declares 2}}
  kiln.return %x : tensor<4xf32>
}

// -----

func @return_type(%x: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'kiln.return' op result #0 has type 'tensor<4xf32>' but 'return_type' declares 'tensor<?xf32>'}}
  kiln.return %x : tensor<4xf32>
}

// -----

func @return_scalar(%x: f32) -> f32 {
  // expected-error @+1 {{'kiln.return' op operand #0 must be ranked tensor of 32-bit float or 32-bit signless integer or 64-bit signless integer values, but got 'f32'}}
  kiln.return %x : f32
}

// -----

module {
  // expected-error @+1 {{'kiln.return' op expects parent op 'builtin.func'}}
  kiln.return
}

// -----

func @return_none(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.return' op returns 0 values but 'return_none' declares 1}}
  kiln.return
}

// -----

func @linear_scalar_input(%x: tensor<f32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.linear' op needs an input of rank >= 1}}
  %0 = kiln.linear %x, %w, %b : (tensor<f32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}

// -----

func @linear_weight_rank(%x: tensor<2x3xf32>, %w: tensor<4x3x1xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'kiln.linear' op weight must have rank 2 ([out, in]), got [4, 3, 1]}}
  %0 = kiln.linear %x, %w, %b : (tensor<2x3xf32>, tensor<4x3x1xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  kiln.return %0 : tensor<2x4xf32>
}

// -----

func @linear_features(%x: tensor<?x?x256xf32>, %w: tensor<2048x512xf32>, %b: tensor<2048xf32>) -> tensor<?x?x2048xf32> {
  // expected-error @+1 {{'kiln.linear' op input [?, ?, 256] has 256 features but weight [2048, 512] takes 512}}
  %0 = kiln.linear %x, %w, %b
      : (tensor<?x?x256xf32>, tensor<2048x512xf32>, tensor<2048xf32>) -> tensor<?x?x2048xf32>
  kiln.return %0 : tensor<?x?x2048xf32>
}

// -----

func @linear_bias(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'kiln.linear' op bias has shape [3], expected [4] to match the output dimension of weight [4, 3]}}
  %0 = kiln.linear %x, %w, %b : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  kiln.return %0 : tensor<2x4xf32>
}

// -----

func @linear_result(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.linear' op result type 'tensor<2x3xf32>' does not match the inferred shape [2, 4]}}
  %0 = kiln.linear %x, %w, %b : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @gelu_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'kiln.gelu' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<4xi32>'}}
  %0 = kiln.gelu %x : tensor<4xi32>
  kiln.return %0 : tensor<4xi32>
}

// -----

func @tanh_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'kiln.tanh' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<4xi32>'}}
  %0 = kiln.tanh %x : tensor<4xi32>
  kiln.return %0 : tensor<4xi32>
}

// -----

func @exp_result_shape(%x: tensor<4x3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{'kiln.exp' op requires the same type for all operands and results}}
  %0 = "kiln.exp"(%x) : (tensor<4x3xf32>) -> tensor<3x4xf32>
  kiln.return %0 : tensor<3x4xf32>
}

// -----

func @pow_without_exponent(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.pow' op requires attribute 'exponent'}}
  %0 = kiln.pow %x : tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}

// -----

func @pow_integer_exponent(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.pow' op attribute 'exponent' failed to satisfy constraint: 32-bit float attribute}}
  %0 = kiln.pow %x {exponent = 2 : i64} : tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}

// -----

func @log_softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.log_softmax' op axis 2 is out of range for shape [2, 3]}}
  %0 = kiln.log_softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @argmax_axis(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.argmax' op axis -1 is out of range for shape [2, 3]}}
  %0 = kiln.argmax %x {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2xi32>
  kiln.return %0 : tensor<2xi32>
}

// -----

func @argmax_keeps_axis(%x: tensor<2x3xf32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{'kiln.argmax' op result type 'tensor<2x3xi32>' does not match the inferred shape [2]}}
  %0 = kiln.argmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  kiln.return %0 : tensor<2x3xi32>
}

// -----

func @argmax_float_result(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.argmax' op result element type 'f32' must be 'i32'}}
  %0 = kiln.argmax %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  kiln.return %0 : tensor<2xf32>
}

// -----

func @slice_axis(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'kiln.slice' op axis 2 is out of range for shape [2, 3]}}
  %0 = kiln.slice %x {axis = 2 : i64, start = 0 : i64, end = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  kiln.return %0 : tensor<2x1xf32>
}

// -----

func @slice_empty(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'kiln.slice' op needs 0 <= start < end, got start 2 and end 2}}
  %0 = kiln.slice %x {axis = 1 : i64, start = 2 : i64, end = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  kiln.return %0 : tensor<2x1xf32>
}

// -----

func @slice_negative_start(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'kiln.slice' op needs 0 <= start < end, got start -1 and end 0}}
  %0 = kiln.slice %x {axis = 1 : i64, start = -1 : i64, end = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  kiln.return %0 : tensor<2x1xf32>
}

// -----

func @slice_past_end(%x: tensor<?x64xf32>) -> tensor<?x6xf32> {
  // expected-error @+1 {{'kiln.slice' op end 70 exceeds dimension 1 of [?, 64]}}
  %0 = kiln.slice %x {axis = 1 : i64, start = 64 : i64, end = 70 : i64} : (tensor<?x64xf32>) -> tensor<?x6xf32>
  kiln.return %0 : tensor<?x6xf32>
}

// -----

func @slice_result(%x: tensor<2x8xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.slice' op result type 'tensor<2x3xf32>' does not match the inferred shape [2, 4]}}
  %0 = kiln.slice %x {axis = 1 : i64, start = 2 : i64, end = 6 : i64} : (tensor<2x8xf32>) -> tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @concat_nothing() -> tensor<2xf32> {
  // expected-error @+1 {{'kiln.concat' op expected 1 or more operands, but found 0}}
  %0 = kiln.concat {axis = 0 : i64} : () -> tensor<2xf32>
  kiln.return %0 : tensor<2xf32>
}

// -----

func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{'kiln.concat' op operands need the same rank, got operand #0 [2, 3] and operand #1 [3]}}
  %0 = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  kiln.return %0 : tensor<5x3xf32>
}

// -----

func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'kiln.concat' op operand #1 [2, 4] differs from operand #0 [2, 3] in dimension 1: 4 vs 3}}
  %0 = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  kiln.return %0 : tensor<4x3xf32>
}

// -----

func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.concat' op axis 2 is out of range for shape [2, 3]}}
  %0 = kiln.concat %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @concat_result(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kiln.concat' op result type 'tensor<2x8xf32>' does not match the inferred shape [2, 7]}}
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  kiln.return %0 : tensor<2x8xf32>
}

// -----

func @concat_element_types(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.concat' op requires the same element type for all operands and results}}
  %0 = kiln.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi32>) -> tensor<4xf32>
  kiln.return %0 : tensor<4xf32>
}

// -----

func @embedding_table_rank(%t: tensor<100xf32>, %ids: tensor<?xi32>) -> tensor<?x1xf32> {
  // expected-error @+1 {{'kiln.embedding' op table must have rank 2 ([vocabulary, features]), got [100]}}
  %0 = kiln.embedding %t, %ids : (tensor<100xf32>, tensor<?xi32>) -> tensor<?x1xf32>
  kiln.return %0 : tensor<?x1xf32>
}

// -----

func @embedding_float_ids(%t: tensor<100x8xf32>, %ids: tensor<?xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'kiln.embedding' op operand #1 must be ranked tensor of 32-bit signless integer values, but got 'tensor<?xf32>'}}
  %0 = kiln.embedding %t, %ids : (tensor<100x8xf32>, tensor<?xf32>) -> tensor<?x8xf32>
  kiln.return %0 : tensor<?x8xf32>
}

// -----

func @embedding_result(%t: tensor<100x8xf32>, %ids: tensor<?x?xi32>) -> tensor<?x?x16xf32> {
  // expected-error @+1 {{'kiln.embedding' op result type 'tensor<?x?x16xf32>' does not match the inferred shape [?, ?, 8]}}
  %0 = kiln.embedding %t, %ids : (tensor<100x8xf32>, tensor<?x?xi32>) -> tensor<?x?x16xf32>
  kiln.return %0 : tensor<?x?x16xf32>
}

// -----

func @range_axis(%x: tensor<?x?xi32>) -> tensor<?xi32> {
  // expected-error @+1 {{'kiln.range' op axis 2 is out of range for shape [?, ?]}}
  %0 = kiln.range %x {axis = 2 : i64} : (tensor<?x?xi32>) -> tensor<?xi32>
  kiln.return %0 : tensor<?xi32>
}

// -----

func @range_float_result(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'kiln.range' op result element type 'f32' must be 'i32'}}
  %0 = kiln.range %x {axis = 1 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
  kiln.return %0 : tensor<?xf32>
}

// -----

func @sinusoid_odd(%p: tensor<?xi32>) -> tensor<?x7xf32> {
  // expected-error @+1 {{'kiln.sinusoid' op feature size must be static, positive and even, got 7}}
  %0 = kiln.sinusoid %p : (tensor<?xi32>) -> tensor<?x7xf32>
  kiln.return %0 : tensor<?x7xf32>
}

// -----

func @sinusoid_dynamic(%p: tensor<?xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'kiln.sinusoid' op feature size must be static, positive and even, got ?}}
  %0 = kiln.sinusoid %p : (tensor<?xi32>) -> tensor<?x?xf32>
  kiln.return %0 : tensor<?x?xf32>
}

// -----

func @sinusoid_rank(%p: tensor<?x?xi32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'kiln.sinusoid' op result type 'tensor<?x8xf32>' does not match the inferred shape [?, ?, 8]}}
  %0 = kiln.sinusoid %p : (tensor<?x?xi32>) -> tensor<?x8xf32>
  kiln.return %0 : tensor<?x8xf32>
}

// -----

func @sinusoid_float_positions(%p: tensor<?xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'kiln.sinusoid' op operand #0 must be ranked tensor of 32-bit signless integer values, but got 'tensor<?xf32>'}}
  %0 = kiln.sinusoid %p : (tensor<?xf32>) -> tensor<?x8xf32>
  kiln.return %0 : tensor<?x8xf32>
}

// -----

func @rotary_odd_features(%q: tensor<?x?x7xf32>, %p: tensor<?xi32>) -> tensor<?x?x7xf32> {
  // expected-error @+1 {{'kiln.rotary' op rotary feature size D must be static, positive and even (pairs of features rotate), got [?, ?, 7]}}
  %0 = kiln.rotary %q, %p {base = 1.0e4 : f32, style = "half"} : (tensor<?x?x7xf32>, tensor<?xi32>) -> tensor<?x?x7xf32>
  kiln.return %0 : tensor<?x?x7xf32>
}

// -----

func @rotary_dynamic_features(%q: tensor<?x?x?xf32>, %p: tensor<?xi32>) -> tensor<?x?x?xf32> {
  // expected-error @+1 {{'kiln.rotary' op rotary feature size D must be static, positive and even (pairs of features rotate), got [?, ?, ?]}}
  %0 = kiln.rotary %q, %p {base = 1.0e4 : f32, style = "half"} : (tensor<?x?x?xf32>, tensor<?xi32>) -> tensor<?x?x?xf32>
  kiln.return %0 : tensor<?x?x?xf32>
}

// -----

func @rotary_rank_1(%q: tensor<8xf32>, %p: tensor<8xi32>) -> tensor<8xf32> {
  // expected-error @+1 {{'kiln.rotary' op rotary input must be [..., T, D], got [8]}}
  %0 = kiln.rotary %q, %p {base = 1.0e4 : f32, style = "half"} : (tensor<8xf32>, tensor<8xi32>) -> tensor<8xf32>
  kiln.return %0 : tensor<8xf32>
}

// -----

func @rotary_float_positions(%q: tensor<?x?x8xf32>, %p: tensor<?xf32>) -> tensor<?x?x8xf32> {
  // expected-error @+1 {{'kiln.rotary' op operand #1 must be ranked tensor of 32-bit signless integer values, but got 'tensor<?xf32>'}}
  %0 = kiln.rotary %q, %p {base = 1.0e4 : f32, style = "half"} : (tensor<?x?x8xf32>, tensor<?xf32>) -> tensor<?x?x8xf32>
  kiln.return %0 : tensor<?x?x8xf32>
}

// -----

func @rotary_positions_length(%q: tensor<2x5x8xf32>, %p: tensor<4xi32>) -> tensor<2x5x8xf32> {
  // expected-error @+1 {{'kiln.rotary' op rotary positions must be [5], one per row of the input [2, 5, 8], got [4]}}
  %0 = kiln.rotary %q, %p {base = 1.0e4 : f32, style = "half"} : (tensor<2x5x8xf32>, tensor<4xi32>) -> tensor<2x5x8xf32>
  kiln.return %0 : tensor<2x5x8xf32>
}

// -----

func @rotary_positions_rank(%q: tensor<?x?x8xf32>, %p: tensor<?x?xi32>) -> tensor<?x?x8xf32> {
  // expected-error @+1 {{'kiln.rotary' op rotary positions must be [?], one per row of the input [?, ?, 8], got [?, ?]}}
  %0 = kiln.rotary %q, %p {base = 1.0e4 : f32, style = "half"} : (tensor<?x?x8xf32>, tensor<?x?xi32>) -> tensor<?x?x8xf32>
  kiln.return %0 : tensor<?x?x8xf32>
}

// -----

func @rotary_style(%q: tensor<?x?x8xf32>, %p: tensor<?xi32>) -> tensor<?x?x8xf32> {
  // expected-error @+1 {{'kiln.rotary' op attribute 'style' failed to satisfy constraint: "half" or "interleaved"}}
  %0 = kiln.rotary %q, %p {base = 1.0e4 : f32, style = "neox"} : (tensor<?x?x8xf32>, tensor<?xi32>) -> tensor<?x?x8xf32>
  kiln.return %0 : tensor<?x?x8xf32>
}

// -----

func @padding_mask_lengths_rank(%l: tensor<?x1xi32>, %x: tensor<?x?xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'kiln.padding_mask' op lengths must have rank 1 ([batch]), got [?, 1]}}
  %0 = kiln.padding_mask %l, %x {axis = 1 : i64} : (tensor<?x1xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
  kiln.return %0 : tensor<?x?xf32>
}

// -----

func @padding_mask_axis(%l: tensor<?xi32>, %x: tensor<?x?xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'kiln.padding_mask' op axis 2 is out of range for shape [?, ?]}}
  %0 = kiln.padding_mask %l, %x {axis = 2 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xf32>
  kiln.return %0 : tensor<?x?xf32>
}

// -----

func @padding_mask_int_result(%l: tensor<?xi32>, %x: tensor<?x?xi32>) -> tensor<?x?xi32> {
  // expected-error @+1 {{'kiln.padding_mask' op result element type 'i32' must be 'f32'}}
  %0 = kiln.padding_mask %l, %x {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xi32>
  kiln.return %0 : tensor<?x?xi32>
}

// -----

func @causal_mask_axis(%x: tensor<?x?xi32>) -> tensor<?x?xf32> {
  // expected-error @+1 {{'kiln.causal_mask' op axis -1 is out of range for shape [?, ?]}}
  %0 = kiln.causal_mask %x {axis = -1 : i64} : (tensor<?x?xi32>) -> tensor<?x?xf32>
  kiln.return %0 : tensor<?x?xf32>
}

// -----

func @causal_mask_not_square(%x: tensor<2x4xi32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'kiln.causal_mask' op result type 'tensor<4x5xf32>' does not match the inferred shape [4, 4]}}
  %0 = kiln.causal_mask %x {axis = 1 : i64} : (tensor<2x4xi32>) -> tensor<4x5xf32>
  kiln.return %0 : tensor<4x5xf32>
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.bounds' of input #0 needs an i32 tensor, got 'tensor<?xf32>'}}
func @bounds_on_floats(%x: tensor<?xf32> {kiln.dims = ["B"], kiln.bounds = ["0", "1"]}) -> tensor<?xf32> {
  kiln.return %x : tensor<?xf32>
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.bounds' of input #0 must be an array of two strings ["lo", "hi"], got [0, 49]}}
func @bounds_not_strings(%x: tensor<?xi32> {kiln.dims = ["B"], kiln.bounds = [0, 49]}) -> tensor<?xi32> {
  kiln.return %x : tensor<?xi32>
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.bounds' of input #0 must be an array of two strings ["lo", "hi"], got ["0"]}}
func @bounds_one_end(%x: tensor<?xi32> {kiln.dims = ["B"], kiln.bounds = ["0"]}) -> tensor<?xi32> {
  kiln.return %x : tensor<?xi32>
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.bounds' of input #0 invalid dimension expression "S+": unexpected end}}
func @bounds_syntax(%x: tensor<?x?xi32> {kiln.dims = ["B", "S"], kiln.bounds = ["0", "S+"]}) -> tensor<?x?xi32> {
  kiln.return %x : tensor<?x?xi32>
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.bounds' of input #1 uses dimension 'T', which the entry does not bind (no input's 'kiln.dims' or 'kiln.value_dim', nor a kiln.state_read, names it)}}
func @bounds_unknown_name(%x: tensor<?x?xi32> {kiln.dims = ["B", "S"]},
                          %len: tensor<?xi32> {kiln.dims = ["B"], kiln.bounds = ["1", "T"]}) -> tensor<?xi32> {
  kiln.return %len : tensor<?xi32>
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.bounds' of input #0 is empty: 5 > 4}}
func @bounds_empty(%x: tensor<?xi32> {kiln.dims = ["B"], kiln.bounds = ["5", "4"]}) -> tensor<?xi32> {
  kiln.return %x : tensor<?xi32>
}

// -----

// The step's own value binds P after the bounds are checked: they cannot use it.
// expected-error @+1 {{'builtin.func' op 'kiln.bounds' of input #0 uses dimension 'P', which this input's own value binds ('kiln.value_dim')}}
func @bounds_use_own_value_dim(%step: tensor<i32> {kiln.dims = [], kiln.value_dim = "P", kiln.bounds = ["0", "P"]}) {
  kiln.return
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.value_dim' of input #0 needs a rank-0 i32 tensor (the value is the size), got 'tensor<1xi32>'}}
func @value_dim_not_scalar(%step: tensor<1xi32> {kiln.dims = [""], kiln.value_dim = "P"}) {
  kiln.return
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.value_dim' of input #0 needs a rank-0 i32 tensor (the value is the size), got 'tensor<f32>'}}
func @value_dim_f32(%step: tensor<f32> {kiln.dims = [], kiln.value_dim = "P"}) {
  kiln.return
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.value_dim' of input #0 must be one dimension name, got 3 : i64}}
func @value_dim_not_a_string(%step: tensor<i32> {kiln.dims = [], kiln.value_dim = 3}) {
  kiln.return
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.value_dim' of input #0 must be one dimension name, got "P+1"}}
func @value_dim_expression(%step: tensor<i32> {kiln.dims = [], kiln.value_dim = "P+1"}) {
  kiln.return
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.value_dim' of input #0 must be one dimension name, got ""}}
func @value_dim_empty(%step: tensor<i32> {kiln.dims = [], kiln.value_dim = ""}) {
  kiln.return
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.value_dim' of input #1 names 'T', which input #0 also binds by its shape ('kiln.dims')}}
func @value_dim_also_a_shape(%ids: tensor<?x?xi32> {kiln.dims = ["B", "T"]},
                             %step: tensor<i32> {kiln.dims = [], kiln.value_dim = "T"}) {
  kiln.return
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.value_dim' of input #0 names 'P', which input #1 also binds by its value ('kiln.value_dim')}}
func @value_dim_twice(%a: tensor<i32> {kiln.dims = [], kiln.value_dim = "P"},
                      %b: tensor<i32> {kiln.dims = [], kiln.value_dim = "P"}) {
  kiln.return
}

// -----

// expected-error @+1 {{'builtin.func' op 'kiln.value_dim' of input #0 names 'S', which a kiln.state_read also binds by its shape}}
func @value_dim_also_a_state_dim(%step: tensor<i32> {kiln.dims = [], kiln.value_dim = "S"}) -> tensor<?x4xf32> {
  %s = kiln.state_read "s" {dims = ["S", ""]} : tensor<?x4xf32>
  kiln.return %s : tensor<?x4xf32>
}

// -----

func @state_alloc_unnamed() {
  // expected-error @+1 {{'kiln.state_alloc' op needs a non-empty state name}}
  kiln.state_alloc "" {dims = ["B"]} : tensor<?xf32>
  kiln.return
}

// -----

func @state_alloc_i32() {
  // expected-error @+1 {{'kiln.state_alloc' op states are ranked f32 tensors, got 'tensor<?xi32>'}}
  kiln.state_alloc "s" {dims = ["B"]} : tensor<?xi32>
  kiln.return
}

// -----

func @state_alloc_unranked() {
  // expected-error @+1 {{'kiln.state_alloc' op states are ranked f32 tensors, got 'tensor<*xf32>'}}
  kiln.state_alloc "s" {dims = []} : tensor<*xf32>
  kiln.return
}

// -----

func @state_alloc_scalar() {
  // expected-error @+1 {{'kiln.state_alloc' op states have rank >= 1 (dimension 0 is the batch), got 'tensor<f32>'}}
  kiln.state_alloc "s" {dims = []} : tensor<f32>
  kiln.return
}

// -----

func @state_alloc_dims_count() {
  // expected-error @+1 {{'kiln.state_alloc' op 'dims' has 1 entries but the type 'tensor<?x4xf32>' has rank 2}}
  kiln.state_alloc "s" {dims = ["B"]} : tensor<?x4xf32>
  kiln.return
}

// -----

func @state_alloc_static_dim_named() {
  // expected-error @+1 {{'kiln.state_alloc' op dimension 1 of 'tensor<?x4xf32>' is static; its 'dims' entry must be "", got "H"}}
  kiln.state_alloc "s" {dims = ["B", "H"]} : tensor<?x4xf32>
  kiln.return
}

// -----

func @state_alloc_dynamic_dim_unnamed() {
  // expected-error @+1 {{'kiln.state_alloc' op dynamic dimension 0 of 'tensor<?x4xf32>' needs a dimension name in 'dims', got ""}}
  kiln.state_alloc "s" {dims = ["", ""]} : tensor<?x4xf32>
  kiln.return
}

// -----

// A state's dims bind single names, as an input's do: no expressions.
func @state_alloc_dim_expression() {
  // expected-error @+1 {{'kiln.state_alloc' op dynamic dimension 0 of 'tensor<?x4xf32>' needs a dimension name in 'dims', got "B*2"}}
  kiln.state_alloc "s" {dims = ["B*2", ""]} : tensor<?x4xf32>
  kiln.return
}

// -----

func @state_alloc_dims_not_strings() {
  // expected-error @+1 {{'kiln.state_alloc' op attribute 'dims' failed to satisfy constraint: string array attribute}}
  kiln.state_alloc "s" {dims = [1]} : tensor<4xf32>
  kiln.return
}

// -----

func @state_write_unnamed(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{'kiln.state_write' op needs a non-empty state name}}
  kiln.state_write "", %x : tensor<?x4xf32>
  kiln.return
}

// -----

func @state_write_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'kiln.state_write' op states have rank >= 1 (dimension 0 is the batch), got 'tensor<f32>'}}
  kiln.state_write "s", %x : tensor<f32>
  kiln.return
}

// -----

func @state_write_i32(%x: tensor<?xi32>) {
  // expected-error @+1 {{'kiln.state_write' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<?xi32>'}}
  kiln.state_write "s", %x : tensor<?xi32>
  kiln.return
}

// -----

func @state_read_unnamed() -> tensor<?xf32> {
  // expected-error @+1 {{'kiln.state_read' op needs a non-empty state name}}
  %s = kiln.state_read "" {dims = ["B"]} : tensor<?xf32>
  kiln.return %s : tensor<?xf32>
}

// -----

func @state_read_scalar() -> tensor<f32> {
  // expected-error @+1 {{'kiln.state_read' op states have rank >= 1 (dimension 0 is the batch), got 'tensor<f32>'}}
  %s = kiln.state_read "s" {dims = []} : tensor<f32>
  kiln.return %s : tensor<f32>
}

// -----

func @state_read_i32() -> tensor<?xi32> {
  // expected-error @+1 {{'kiln.state_read' op result #0 must be ranked tensor of 32-bit float values, but got 'tensor<?xi32>'}}
  %s = kiln.state_read "s" {dims = ["B"]} : tensor<?xi32>
  kiln.return %s : tensor<?xi32>
}

// -----

func @state_read_dims_count() -> tensor<?x?xf32> {
  // expected-error @+1 {{'kiln.state_read' op 'dims' has 3 entries but the type 'tensor<?x?xf32>' has rank 2}}
  %s = kiln.state_read "s" {dims = ["B", "S", ""]} : tensor<?x?xf32>
  kiln.return %s : tensor<?x?xf32>
}

// -----

func @state_read_static_dim_named() -> tensor<?x4xf32> {
  // expected-error @+1 {{'kiln.state_read' op dimension 1 of 'tensor<?x4xf32>' is static; its 'dims' entry must be "", got "D"}}
  %s = kiln.state_read "s" {dims = ["B", "D"]} : tensor<?x4xf32>
  kiln.return %s : tensor<?x4xf32>
}

// -----

func @state_read_dynamic_dim_unnamed() -> tensor<?x?xf32> {
  // expected-error @+1 {{'kiln.state_read' op dynamic dimension 1 of 'tensor<?x?xf32>' needs a dimension name in 'dims', got ""}}
  %s = kiln.state_read "s" {dims = ["B", ""]} : tensor<?x?xf32>
  kiln.return %s : tensor<?x?xf32>
}

// -----

func @kv_append_unnamed(%v: tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op needs a non-empty state name}}
  %k = kiln.kv_append "", %v {axis = 2 : i64, capacity = 16 : i64, position = "P"} : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  kiln.return %k : tensor<?x4x?x8xf32>
}

// -----

func @kv_append_axis_0(%v: tensor<1x4x8xf32>) -> tensor<?x4x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append axis must not be 0: dimension 0 of a state is its batch}}
  %k = kiln.kv_append "c", %v {axis = 0 : i64, capacity = 16 : i64, position = "P"} : (tensor<1x4x8xf32>) -> tensor<?x4x8xf32>
  kiln.return %k : tensor<?x4x8xf32>
}

// -----

func @kv_append_axis_out_of_range(%v: tensor<?x4x1x8xf32>) -> tensor<?x4x1x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append axis 4 is out of range for a value of rank 4}}
  %k = kiln.kv_append "c", %v {axis = 4 : i64, capacity = 16 : i64, position = "P"} : (tensor<?x4x1x8xf32>) -> tensor<?x4x1x8xf32>
  kiln.return %k : tensor<?x4x1x8xf32>
}

// -----

func @kv_append_axis_negative(%v: tensor<?x4x1x8xf32>) -> tensor<?x4x1x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append axis -1 is out of range for a value of rank 4}}
  %k = kiln.kv_append "c", %v {axis = -1 : i64, capacity = 16 : i64, position = "P"} : (tensor<?x4x1x8xf32>) -> tensor<?x4x1x8xf32>
  kiln.return %k : tensor<?x4x1x8xf32>
}

// -----

func @kv_append_past_capacity(%v: tensor<?x4x17x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append writes 17 positions (dimension 2 of the value [?, 4, 17, 8]) from position P, but it needs 1 or more and the cache holds 16}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 16 : i64, position = "P"} : (tensor<?x4x17x8xf32>) -> tensor<?x4x?x8xf32>
  kiln.return %k : tensor<?x4x?x8xf32>
}

// -----

func @kv_append_static_start_past_capacity(%v: tensor<?x4x4x8xf32>) -> tensor<?x4x17x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append writes 4 positions (dimension 2 of the value [?, 4, 4, 8]) from position 13, but it needs 1 or more and the cache holds 16}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 16 : i64, position = "13"} : (tensor<?x4x4x8xf32>) -> tensor<?x4x17x8xf32>
  kiln.return %k : tensor<?x4x17x8xf32>
}

// -----

func @kv_append_no_positions(%v: tensor<?x4x0x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append writes 0 positions (dimension 2 of the value [?, 4, 0, 8]) from position P, but it needs 1 or more and the cache holds 16}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 16 : i64, position = "P"} : (tensor<?x4x0x8xf32>) -> tensor<?x4x?x8xf32>
  kiln.return %k : tensor<?x4x?x8xf32>
}

// -----

func @kv_append_capacity_0(%v: tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append capacity must be positive, got 0}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 0 : i64, position = "P"} : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  kiln.return %k : tensor<?x4x?x8xf32>
}

// -----

func @kv_append_position_empty(%v: tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append position must name an entry dimension (an input's kiln.value_dim) or be a non-negative integer, got ""}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 16 : i64, position = ""} : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  kiln.return %k : tensor<?x4x?x8xf32>
}

// -----

func @kv_append_position_expression(%v: tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append position must name an entry dimension (an input's kiln.value_dim) or be a non-negative integer, got "P-1"}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 16 : i64, position = "P-1"} : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  kiln.return %k : tensor<?x4x?x8xf32>
}

// -----

func @kv_append_position_negative(%v: tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-error @+1 {{'kiln.kv_append' op kv_append position must name an entry dimension (an input's kiln.value_dim) or be a non-negative integer, got "-3"}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 16 : i64, position = "-3"} : (tensor<?x4x1x8xf32>) -> tensor<?x4x?x8xf32>
  kiln.return %k : tensor<?x4x?x8xf32>
}

// -----

func @kv_append_result_rank(%v: tensor<?x4x1x8xf32>) -> tensor<?x4x?xf32> {
  // expected-error @+1 {{'kiln.kv_append' op result type 'tensor<?x4x?xf32>' does not match the inferred shape [?, 4, P+1, 8]}}
  %k = kiln.kv_append "c", %v {axis = 2 : i64, capacity = 16 : i64, position = "P"} : (tensor<?x4x1x8xf32>) -> tensor<?x4x?xf32>
  kiln.return %k : tensor<?x4x?xf32>
}

// -----

func @kv_append_i32(%v: tensor<?x1xi32>) -> tensor<?x?xi32> {
  // expected-error @+1 {{'kiln.kv_append' op operand #0 must be ranked tensor of 32-bit float values, but got 'tensor<?x1xi32>'}}
  %k = kiln.kv_append "c", %v {axis = 1 : i64, capacity = 16 : i64, position = "P"} : (tensor<?x1xi32>) -> tensor<?x?xi32>
  kiln.return %k : tensor<?x?xi32>
}

// -----

func @div_broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.div' op shapes [2, 3] and [4] do not broadcast: 3 vs 4}}
  %0 = kiln.div %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @constant_of_ints() -> tensor<2xi32> {
  // expected-error @+1 {{'kiln.constant' op attribute 'value' failed to satisfy constraint: 32-bit float elements attribute}}
  %0 = kiln.constant dense<[1, 2]> : tensor<2xi32>
  kiln.return %0 : tensor<2xi32>
}

// -----

func @masked_fill_float_mask(%x: tensor<2x3xf32>, %m: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'kiln.masked_fill' op operand #1 must be ranked tensor of 1-bit signless integer values}}
  %0 = kiln.masked_fill %x, %m {value = 0xFF800000 : f32} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  kiln.return %0 : tensor<2x3xf32>
}

// -----

func @masked_fill_mask_enlarges(%x: tensor<1x3xf32>, %m: tensor<2x3xi1>) -> tensor<1x3xf32> {
  // expected-error @+1 {{'kiln.masked_fill' op mask [2, 3] does not broadcast to the input [1, 3]}}
  %0 = kiln.masked_fill %x, %m {value = 0.0 : f32} : (tensor<1x3xf32>, tensor<2x3xi1>) -> tensor<1x3xf32>
  kiln.return %0 : tensor<1x3xf32>
}

// -----

func @boolean_parameter() -> tensor<4xi1> {
  // expected-error @+1 {{'kiln.parameter' op result #0 must be ranked tensor of 32-bit float or 32-bit signless integer or 64-bit signless integer or bfloat16 type or 8-bit signless integer values}}
  %0 = kiln.parameter "m" : tensor<4xi1>
  kiln.return %0 : tensor<4xi1>
}

// -----

func @bf16_parameter_without_conversion() -> tensor<4x4xf32> {
  // expected-error @+1 {{'kiln.parameter' op parameter 'w' of type 'tensor<4x4xbf16>' needs a conversion: checkpoints hold f32, f16 or bf16}}
  %w = kiln.parameter "w" : tensor<4x4xbf16>
  %x = kiln.parameter "x" : tensor<4x4xf32>
  %0 = kiln.matmul %x, %w {transpose_rhs = true} : (tensor<4x4xf32>, tensor<4x4xbf16>) -> tensor<4x4xf32>
  kiln.return %0 : tensor<4x4xf32>
}

// -----

func @conversion_without_source() -> tensor<4x4xi8> {
  // expected-error @+1 {{'kiln.parameter' op parameter 'w' has conversion 'int8' but no source tensor}}
  %w = kiln.parameter "w" {conversion = "int8"} : tensor<4x4xi8>
  kiln.return %w : tensor<4x4xi8>
}

// -----

func @conversion_of_the_wrong_type() -> tensor<4x4xf32> {
  // expected-error @+1 {{'kiln.parameter' op parameter 'w.scale' has conversion 'int8_scale' but type 'tensor<4x4xf32>'}}
  %w = kiln.parameter "w.scale" {source = "w", conversion = "int8_scale"} : tensor<4x4xf32>
  kiln.return %w : tensor<4x4xf32>
}

// -----

func @unknown_conversion() -> tensor<4xf32> {
  // expected-error @+1 {{'kiln.parameter' op parameter 'w' has unknown conversion 'int4' (expected bf16, int8, int8_scale or panels)}}
  %w = kiln.parameter "w" {source = "v", conversion = "int4"} : tensor<4xf32>
  kiln.return %w : tensor<4xf32>
}

// -----

func @rows_that_do_not_fit_the_type() -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kiln.parameter' op parameter 'w[2:5]' has rows [2, 5], expected [start, start + 4)}}
  %w = kiln.parameter "w[2:5]" {source = "w", conversion = "bf16", rows = [2, 5]} : tensor<4x8xbf16>
  kiln.return %w : tensor<4x8xbf16>
}

// -----

func @panels_of_rank_2() -> tensor<4x8xf32> {
  // expected-error @+1 {{'kiln.parameter' op parameter 'w.panels' has conversion 'panels' but type 'tensor<4x8xf32>'}}
  %w = kiln.parameter "w.panels" {source = "w", conversion = "panels"} : tensor<4x8xf32>
  kiln.return %w : tensor<4x8xf32>
}

// -----

func @panels_that_do_not_hold_their_rows() -> tensor<3x8x4xf32> {
  // expected-error @+1 {{'kiln.parameter' op parameter 'w[2:6].panels' has rows [2, 6]: 4 rows fill 1 panels of 4, not 3}}
  %w = kiln.parameter "w[2:6].panels" {source = "w", conversion = "panels", rows = [2, 6]} : tensor<3x8x4xf32>
  kiln.return %w : tensor<3x8x4xf32>
}

// -----

func @unpack_panels_row_count() -> tensor<9x8xf32> {
  %p = kiln.parameter "w.panels" {source = "w", conversion = "panels"} : tensor<2x8x4xf32>
  // expected-error @+1 {{'kiln.unpack_panels' op 9 rows need 3 panels of 4, got 2}}
  %w = kiln.unpack_panels %p : (tensor<2x8x4xf32>) -> tensor<9x8xf32>
  kiln.return %w : tensor<9x8xf32>
}

// -----

func @unpack_panels_columns() -> tensor<7x6xf32> {
  %p = kiln.parameter "w.panels" {source = "w", conversion = "panels"} : tensor<2x8x4xf32>
  // expected-error @+1 {{'kiln.unpack_panels' op the result has 6 columns but the panels 8}}
  %w = kiln.unpack_panels %p : (tensor<2x8x4xf32>) -> tensor<7x6xf32>
  kiln.return %w : tensor<7x6xf32>
}

// -----

func @unpack_panels_rank() -> tensor<8x4xf32> {
  %p = kiln.parameter "w" : tensor<8x4xf32>
  // expected-error @+1 {{'kiln.unpack_panels' op expected static [P, K, W] panels and an [N, K] result, got 'tensor<8x4xf32>' -> 'tensor<8x4xf32>'}}
  %w = kiln.unpack_panels %p : (tensor<8x4xf32>) -> tensor<8x4xf32>
  kiln.return %w : tensor<8x4xf32>
}

// -----

func @quantized_linear_scale_per_channel(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = kiln.parameter "w" {source = "w", conversion = "int8"} : tensor<4x8xi8>
  %s = kiln.parameter "w.scale" {source = "w", conversion = "int8_scale"} : tensor<8xf32>
  // expected-error @+1 {{'kiln.quantized_linear' op weight_scale has shape [8], expected one scale per output channel of weight [4, 8]}}
  %0 = kiln.quantized_linear %x, %w, %s : (tensor<2x8xf32>, tensor<4x8xi8>, tensor<8xf32>) -> tensor<2x4xf32>
  kiln.return %0 : tensor<2x4xf32>
}

// -----

func @quantized_linear_bias_per_channel(%x: tensor<2x8xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  %w = kiln.parameter "w" {source = "w", conversion = "int8"} : tensor<4x8xi8>
  %s = kiln.parameter "w.scale" {source = "w", conversion = "int8_scale"} : tensor<4xf32>
  // expected-error @+1 {{'kiln.quantized_linear' op bias has shape [3], expected [4] to match the output dimension of weight [4, 8]}}
  %0 = kiln.quantized_linear %x, %w, %s, %b : (tensor<2x8xf32>, tensor<4x8xi8>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  kiln.return %0 : tensor<2x4xf32>
}

// -----

func @boolean_output(%l: tensor<?xi32>, %x: tensor<?x?xi32>) -> tensor<?x?xi1> {
  %0 = kiln.padding_mask %l, %x {axis = 1 : i64} : (tensor<?xi32>, tensor<?x?xi32>) -> tensor<?x?xi1>
  // expected-error @+1 {{'kiln.return' op operand #0 must be ranked tensor of 32-bit float or 32-bit signless integer or 64-bit signless integer values}}
  kiln.return %0 : tensor<?x?xi1>
}

// -----

func @attention_rank_two(%q: tensor<5x4xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{'kiln.attention' op needs q, k and v of one rank >= 3 ([..., T, d]), got q [5, 4], k [5, 4] and v [5, 4]}}
  %0 = kiln.attention %q, %q, %q {scale = 1.0 : f32} : (tensor<5x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<5x4xf32>
  kiln.return %0 : tensor<5x4xf32>
}

// -----

func @attention_ranks_differ(%q: tensor<2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<2x5x4xf32> {
  // expected-error @+1 {{needs q, k and v of one rank >= 3}}
  %0 = kiln.attention %q, %q, %v {scale = 1.0 : f32} : (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<1x2x5x4xf32>) -> tensor<2x5x4xf32>
  kiln.return %0 : tensor<2x5x4xf32>
}

// -----

func @attention_head_dims(%q: tensor<2x5x4xf32>, %k: tensor<2x7x8xf32>, %v: tensor<2x7x3xf32>) -> tensor<2x5x3xf32> {
  // expected-error @+1 {{'kiln.attention' op head dimensions differ: q [2, 5, 4] has 4, k [2, 7, 8] has 8}}
  %0 = kiln.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x5x4xf32>, tensor<2x7x8xf32>, tensor<2x7x3xf32>) -> tensor<2x5x3xf32>
  kiln.return %0 : tensor<2x5x3xf32>
}

// -----

func @attention_keys_and_values(%q: tensor<2x5x4xf32>, %k: tensor<2x7x4xf32>, %v: tensor<2x6x3xf32>) -> tensor<2x5x3xf32> {
  // expected-error @+1 {{'kiln.attention' op keys and values differ in number: k [2, 7, 4] has 7, v [2, 6, 3] has 6}}
  %0 = kiln.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x5x4xf32>, tensor<2x7x4xf32>, tensor<2x6x3xf32>) -> tensor<2x5x3xf32>
  kiln.return %0 : tensor<2x5x3xf32>
}

// -----

func @attention_batch(%q: tensor<2x5x4xf32>, %k: tensor<3x7x4xf32>, %v: tensor<3x7x4xf32>) -> tensor<2x5x4xf32> {
  // expected-error @+1 {{'kiln.attention' op batch dimensions: shapes [2] and [3] do not broadcast: 2 vs 3}}
  %0 = kiln.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x5x4xf32>, tensor<3x7x4xf32>, tensor<3x7x4xf32>) -> tensor<2x5x4xf32>
  kiln.return %0 : tensor<2x5x4xf32>
}

// -----

func @attention_mask_enlarges(%q: tensor<1x5x4xf32>, %m: tensor<3x1x5xf32>) -> tensor<1x5x4xf32> {
  // expected-error @+1 {{'kiln.attention' op mask [3, 1, 5] does not broadcast to the scores [1, 5, 5] ([..., Tq, Tk])}}
  %0 = kiln.attention %q, %q, %q, %m {scale = 1.0 : f32} : (tensor<1x5x4xf32>, tensor<1x5x4xf32>, tensor<1x5x4xf32>, tensor<3x1x5xf32>) -> tensor<1x5x4xf32>
  kiln.return %0 : tensor<1x5x4xf32>
}

// -----

func @attention_mask_keys(%q: tensor<2x5x4xf32>, %m: tensor<2x1x6xf32>) -> tensor<2x5x4xf32> {
  // expected-error @+1 {{mask [2, 1, 6] does not broadcast to the scores [2, 5, 5]}}
  %0 = kiln.attention %q, %q, %q, %m {scale = 1.0 : f32} : (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x1x6xf32>) -> tensor<2x5x4xf32>
  kiln.return %0 : tensor<2x5x4xf32>
}

// -----

func @attention_result_shape(%q: tensor<2x5x4xf32>, %v: tensor<2x5x3xf32>) -> tensor<2x5x4xf32> {
  // expected-error @+1 {{'kiln.attention' op result type 'tensor<2x5x4xf32>' does not match the inferred shape [2, 5, 3]}}
  %0 = kiln.attention %q, %q, %v {scale = 1.0 : f32} : (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x3xf32>) -> tensor<2x5x4xf32>
  kiln.return %0 : tensor<2x5x4xf32>
}

// -----

func @attention_int_operand(%q: tensor<2x5x4xf32>, %k: tensor<2x5x4xi32>) -> tensor<2x5x4xf32> {
  // expected-error @+1 {{'kiln.attention' op operand #1 must be ranked tensor of 32-bit float values}}
  %0 = kiln.attention %q, %k, %q {scale = 1.0 : f32} : (tensor<2x5x4xf32>, tensor<2x5x4xi32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  kiln.return %0 : tensor<2x5x4xf32>
}

// -----

func @attention_without_scale(%q: tensor<2x5x4xf32>) -> tensor<2x5x4xf32> {
  // expected-error @+1 {{'kiln.attention' op requires attribute 'scale'}}
  %0 = kiln.attention %q, %q, %q : (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>) -> tensor<2x5x4xf32>
  kiln.return %0 : tensor<2x5x4xf32>
}

// -----

// expected-error @+1 {{'kiln.dim_max' of input #1 bounds 'T' by 64, but another input of the entry bounds it by 32}}
func @dim_max_differs(%a: tensor<?xf32> {kiln.name = "a", kiln.dims = ["T"], kiln.dim_max = [32]},
                      %b: tensor<?xf32> {kiln.name = "b", kiln.dims = ["T"], kiln.dim_max = [64]}) {
  kiln.return
}

// -----

// expected-error @+1 {{'kiln.dim_max' of input #0 bounds a static dimension (4); only named dimensions take a bound}}
func @dim_max_static(%a: tensor<4x?xf32> {kiln.name = "a", kiln.dims = ["", "T"], kiln.dim_max = [4, 0]}) {
  kiln.return
}

// -----

// expected-error @+1 {{'kiln.dim_max' of input #0 must be an array of integers, one per entry of 'kiln.dims', got [32]}}
func @dim_max_rank(%a: tensor<?x?xf32> {kiln.name = "a", kiln.dims = ["B", "T"], kiln.dim_max = [32]}) {
  kiln.return
}
