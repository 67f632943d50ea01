//===- Models.h - The tiny models of the end-to-end tests -------*- C++ -*-===//
//
// Each model exercises one family of ops with dynamic dims. The same sources build the
// model compilers (kiln_add_model, at build time) and, linked into the test, the modules
// that the reference interpreter runs, so both sides see the very same graph.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_E2E_MODELS_H
#define KILN_TEST_E2E_MODELS_H

#include "kiln/frontend/ModelBuilder.h"

namespace kiln::e2e {

/// All four transpose combinations, a rank-2 rhs broadcast over the batch, 4-D x 3-D
/// batch broadcasting against a static 1, and a weight.
dsl::Model buildMatmulModel();
/// add / sub / mul: equal shapes, a trailing 1, a missing leading dim, a [1], a weight.
dsl::Model buildElementwiseModel();
/// scale, relu, and relu of a temporary.
dsl::Model buildUnaryModel();
/// The elementwise math ops (exp, log, tanh, sigmoid, sqrt, rsqrt, pow, silu,
/// gelu_tanh, neg), alone and in kernel groups; rotary of both styles.
dsl::Model buildMathModel();
/// softmax on the last, a middle and the first axis.
dsl::Model buildSoftmaxModel();
/// layer_norm with a dynamic normalised dim and with weights.
dsl::Model buildLayerNormModel();
dsl::Model buildReductionModel();
/// reshape (a view of an input and of a temporary, and back) and transpose.
dsl::Model buildDataMovementModel();
/// The same add and relu several times at the same types: 3 kernels for 5 steps.
dsl::Model buildDedupModel();
/// Two entry points that share a weight and a matmul kernel; an i32 input with bounds.
dsl::Model buildTwoEntriesModel();
/// where (f32, fused after a mul, i32), casts between f32, i32 and i64 (an i64 input and
/// outputs), and add / sub / mul on i32 and i64.
dsl::Model buildSelectModel();
/// Token and learned position embeddings (a 32-row table) with T unbounded and bounded.
dsl::Model buildPositionsModel();
/// The positions of buildTinyGptModel: its position table's rows and its caches'
/// capacity.
inline constexpr int64_t kTinyGptPositions = 16;
/// A tiny nn::DecoderOnlyLM in GPT-2's layout (vocabulary 23, 2 layers, 2 heads,
/// d_model 16) with the entries forward(ids [B, T]), prefill(ids [B, N]) and step(ids
/// [B, 1], position) of the decoder-only contract; T and N are bounded by, and the
/// key/value caches hold, kTinyGptPositions.
dsl::Model buildTinyGptModel();

} // namespace kiln::e2e

#endif // KILN_TEST_E2E_MODELS_H
