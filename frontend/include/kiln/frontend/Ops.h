//===- Ops.h - Tensor operations of the Kiln DSL ----------------*- C++ -*-===//
//
// Plain ops, as a model author writes them; fusing them is the compiler's job. Shapes are
// checked here, symbolically, so a mismatch is reported at the author's line.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_OPS_H
#define KILN_FRONTEND_OPS_H

#include "kiln/frontend/Tensor.h"

#include <string>

namespace kiln::dsl {

using SourceLoc = std::source_location;

/// Batched matrix product; leading dims broadcast (a rank-2 weight applies to every row).
Tensor matmul(Operand lhs, Operand rhs, bool transposeLhs = false,
              bool transposeRhs = false, SourceLoc loc = SourceLoc::current());
Tensor add(Operand lhs, Operand rhs, SourceLoc loc = SourceLoc::current());
Tensor sub(Operand lhs, Operand rhs, SourceLoc loc = SourceLoc::current());
Tensor mul(Operand lhs, Operand rhs, SourceLoc loc = SourceLoc::current());
Tensor div(Operand lhs, Operand rhs, SourceLoc loc = SourceLoc::current());
/// A scalar f32 constant (rank 0, broadcasting against anything), e.g. the sqrt(d_k)
/// that scores are divided by. An op without operands goes into the entry declared last.
Tensor constant(ModelBuilder &m, float value, SourceLoc loc = SourceLoc::current());
/// An f32 constant of static `shape`: one value per element (row-major), or a single
/// value for every element.
Tensor constant(ModelBuilder &m, std::vector<int64_t> shape, std::vector<float> values,
                SourceLoc loc = SourceLoc::current());
Tensor scale(Operand input, float factor, SourceLoc loc = SourceLoc::current());
Tensor relu(Operand input, SourceLoc loc = SourceLoc::current());

// -- Elementwise math --

Tensor neg(Operand input, SourceLoc loc = SourceLoc::current());
Tensor exp(Operand input, SourceLoc loc = SourceLoc::current());
/// Natural logarithm: -inf at 0, NaN below.
Tensor log(Operand input, SourceLoc loc = SourceLoc::current());
Tensor tanh(Operand input, SourceLoc loc = SourceLoc::current());
/// 1 / (1 + e^-x).
Tensor sigmoid(Operand input, SourceLoc loc = SourceLoc::current());
Tensor sqrt(Operand input, SourceLoc loc = SourceLoc::current());
/// 1 / sqrt(x).
Tensor rsqrt(Operand input, SourceLoc loc = SourceLoc::current());
/// x^exponent, elementwise, as PyTorch's pow with a float exponent.
Tensor pow(Operand input, float exponent, SourceLoc loc = SourceLoc::current());
/// x sigmoid(x) (SiLU, LLaMA's SwiGLU gate).
Tensor silu(Operand input, SourceLoc loc = SourceLoc::current());
/// GELU in its tanh form, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): GPT-2's
/// gelu_new, PyTorch's gelu(approximate="tanh"). gelu() is the exact (erf) form.
Tensor geluTanh(Operand input, SourceLoc loc = SourceLoc::current());
/// Softmax along `axis`; negative counts from the end.
Tensor softmax(Operand input, int64_t axis = -1, SourceLoc loc = SourceLoc::current());
/// LayerNorm over the last dimension.
Tensor layerNorm(Operand input, Operand gamma, Operand beta, float epsilon = 1e-5f,
                 SourceLoc loc = SourceLoc::current());

// -- Reductions and normalization --

/// RMSNorm over the last dimension, as LLaMA's: x * rsqrt(mean(x^2) + epsilon) * gamma,
/// with gamma [D]; no centring, no bias.
Tensor rmsNorm(Operand input, Operand gamma, float epsilon = 1e-6f,
               SourceLoc loc = SourceLoc::current());
/// The sum (f32 or i32) over `axes` (distinct; negative ones count from the end). The
/// result drops the axes, or with `keepDim` keeps each as a dimension of size 1.
Tensor reduceSum(Operand input, std::vector<int64_t> axes, bool keepDim = false,
                 SourceLoc loc = SourceLoc::current());
/// The f32 mean over `axes` (as reduceSum): the sum divided by the product of the
/// reduced sizes at run time.
Tensor reduceMean(Operand input, std::vector<int64_t> axes, bool keepDim = false,
                  SourceLoc loc = SourceLoc::current());
/// The maximum (f32 or i32) over `axes` (as reduceSum); a NaN makes it NaN.
Tensor reduceMax(Operand input, std::vector<int64_t> axes, bool keepDim = false,
                 SourceLoc loc = SourceLoc::current());

/// `shape` entries: a size, 0 to keep the input's dim at that position, -1 to infer.
Tensor reshape(Operand input, std::vector<int64_t> shape,
               SourceLoc loc = SourceLoc::current());
/// Result dim i is input dim permutation[i]; negative entries count from the end.
Tensor transpose(Operand input, std::vector<int64_t> permutation,
                 SourceLoc loc = SourceLoc::current());

// -- Layers around attention --

/// y = x . W^T + b with W stored [out, in] as in PyTorch: [..., in] -> [..., out].
Tensor linear(Operand input, Operand weight, Operand bias,
              SourceLoc loc = SourceLoc::current());
/// Exact GELU, 0.5 * x * (1 + erf(x / sqrt(2))).
Tensor gelu(Operand input, SourceLoc loc = SourceLoc::current());
/// log(softmax(x)) along `axis`, computed safely; a fully masked (-inf) row is -inf.
Tensor logSoftmax(Operand input, int64_t axis = -1, SourceLoc loc = SourceLoc::current());
/// The i32 index of the largest element along `axis` (first on ties); drops `axis`.
Tensor argmax(Operand input, int64_t axis = -1, SourceLoc loc = SourceLoc::current());
/// Elements [start, end) of `axis` (negative axis counts from the end; start and end do
/// not). A dynamic dim is checked against `end` when the model runs.
Tensor slice(Operand input, int64_t axis, int64_t start, int64_t end,
             SourceLoc loc = SourceLoc::current());
/// Joins `inputs` (same rank and dtype, equal other dims) along `axis`.
Tensor concat(const std::vector<Tensor> &inputs, int64_t axis,
              SourceLoc loc = SourceLoc::current());

// -- Embeddings, positions and masks --

/// How a mask says "masked": an additive f32 tensor (0 kept, -inf masked; add it to
/// the scores) or a boolean one (true masked; for maskedFill).
enum class MaskForm { Additive, Boolean };

/// Rows of `table` [V, D] for i32 `ids` [...]: [..., D].
Tensor embedding(Operand table, Operand ids, SourceLoc loc = SourceLoc::current());
/// The i32 positions 0..N-1 where N = like.dim(axis) (only the shape of `like` is read).
Tensor positions(Operand like, int64_t axis, SourceLoc loc = SourceLoc::current());
/// Sinusoidal encodings of i32 `positions` [...]: [..., dim]; `dim` must be even.
Tensor sinusoid(Operand positions, int64_t dim, SourceLoc loc = SourceLoc::current());
/// Which features rotary() rotates together: i and i + D/2 (LLaMA, GPT-NeoX) or 2i and
/// 2i + 1 (GPT-J).
enum class RotaryStyle { Half, Interleaved };
/// Rotary position embedding of `x` [..., T, D] (D even; for heads [B, H, T, Dh]) with
/// i32 `positions` [T], the position of each row: pair i of row t is rotated by the
/// angle positions[t] * base^(-2i/D).
Tensor rotary(Operand x, Operand positions, float base = 10000.f,
              RotaryStyle style = RotaryStyle::Half,
              SourceLoc loc = SourceLoc::current());
/// [B, N] mask from i32 `lengths` [B]: key j of sequence b is masked from lengths[b]
/// on; N = like.dim(axis).
Tensor paddingMask(Operand lengths, Operand like, int64_t axis,
                   MaskForm form = MaskForm::Additive,
                   SourceLoc loc = SourceLoc::current());
/// [N, N] mask of the keys j > query i (above the diagonal); N = like.dim(axis).
Tensor causalMask(Operand like, int64_t axis, MaskForm form = MaskForm::Additive,
                  SourceLoc loc = SourceLoc::current());
/// PyTorch's masked_fill: `value` where the boolean `mask` (broadcast to the input,
/// never enlarging it) is true, the input elsewhere. Fill attention scores with -inf
/// (not a finite -1e9) to mask them: only -inf fills fuse into kiln.attention.
Tensor maskedFill(Operand input, Operand mask, float value,
                  SourceLoc loc = SourceLoc::current());

// -- Session state (incremental decoding; Entry::stateAlloc and stateRead make and read
// states) --

/// (Re)creates session state `name` as a copy of the f32 `value` (rank >= 1, dimension 0
/// the batch), e.g. the cross-attention keys of the source, computed once and read by
/// every decoding step.
void stateWrite(const std::string &name, const Tensor &value,
                SourceLoc loc = SourceLoc::current());
/// Writes `value` (N >= 1 positions along `axis`, which is not 0: the batch; N static or
/// dynamic) at indices [P, P + N) of state `name`, a cache of `value`'s shape with
/// `capacity` positions along `axis` (made by Entry::stateAlloc), in place; returns the
/// cache's first P + N positions, every key or value up to these. `position` is P: a
/// dimension bound by an Entry::valueInput (a decoding step) or a static start such as
/// Dim(0) (a prefill). The runtime rejects a run with P + N > capacity.
Tensor kvAppend(const std::string &name, const Tensor &value, int64_t axis,
                const Dim &position, int64_t capacity,
                SourceLoc loc = SourceLoc::current());

// Operators record the line of the expression through Operand's conversion.
Tensor operator+(Operand lhs, const Tensor &rhs);
Tensor operator-(Operand lhs, const Tensor &rhs);
Tensor operator-(Operand input);
Tensor operator*(Operand lhs, const Tensor &rhs);
Tensor operator*(Operand lhs, float factor);
Tensor operator/(Operand lhs, float divisor);
Tensor operator/(Operand lhs, const Tensor &rhs);

} // namespace kiln::dsl

#endif // KILN_FRONTEND_OPS_H
