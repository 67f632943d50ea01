//===- Kernels.h - The reference interpreter's op kernels -------*- C++ -*-===//
//
// One function per kiln op, over host tensors and the op's attributes only, so that a
// kernel can be read (and checked) without knowing MLIR. Boolean (i1) values, the masks
// that never leave an entry point, are held as i32 tensors of 0 and 1. Operands have
// already been matched against the op's declared types; what a kernel still checks is
// what only the run-time sizes of dynamic dimensions can break (broadcasting,
// contraction sizes, element counts). Errors say what is wrong; the interpreter adds
// which op it was.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_REFERENCE_KERNELS_H
#define KILN_BACKENDS_REFERENCE_KERNELS_H

#include "kiln/backends/reference/Interpreter.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <functional>

namespace kiln::reference {

using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Shape helpers (Shapes.cpp)
//===----------------------------------------------------------------------===//

/// "[2, 3, 4]".
std::string shapeToString(llvm::ArrayRef<int64_t> shape);
/// The number of elements of `shape` (1 for a scalar).
int64_t product(llvm::ArrayRef<int64_t> shape);
/// Row-major strides, in elements.
Shape rowMajorStrides(llvm::ArrayRef<int64_t> shape);
/// The NumPy broadcast of two shapes, or an error naming both.
llvm::Expected<Shape> broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                                      llvm::ArrayRef<int64_t> rhs);
/// Strides that read `shape` as if it had been broadcast to rank `rank`: 0 for missing
/// leading dimensions and for dimensions of size 1.
Shape broadcastStrides(llvm::ArrayRef<int64_t> shape, size_t rank);
/// Calls `body` with every multi-index of `shape`, in row-major order.
void forEachIndex(llvm::ArrayRef<int64_t> shape,
                  const std::function<void(llvm::ArrayRef<int64_t>)> &body);
/// The multi-index of row-major element `flat` of `shape`, for messages.
Shape unravelIndex(int64_t flat, llvm::ArrayRef<int64_t> shape);
/// sum_i index[i] * strides[i].
int64_t dot(llvm::ArrayRef<int64_t> index, llvm::ArrayRef<int64_t> strides);
/// A tensor of `shape`, with no data yet, of `t`'s element type.
HostTensor emptyLike(const HostTensor &t, Shape shape);
/// Appends element `offset` of `in` to `out`, of the same element type.
void appendElement(HostTensor &out, const HostTensor &in, int64_t offset);
/// A tensor of `shape` whose element i is `input`'s element `source[i]`, of any
/// element type: the one loop behind every data-movement op.
HostTensor gather(const HostTensor &input, Shape shape, llvm::ArrayRef<int64_t> source);
/// An llvm::Error holding `message`.
llvm::Error makeError(const llvm::Twine &message);

/// A row-major tensor seen as [outer, length, inner] around one axis: element j of line
/// (o, i) along the axis is at `at(o, i, j)`. What every per-axis kernel loops over.
struct AxisLines {
  int64_t outer = 1, length = 1, inner = 1;
  int64_t at(int64_t o, int64_t i, int64_t j) const {
    return (o * length + j) * inner + i;
  }
};
/// The lines of `shape` along `axis`, or an error when the axis is out of range.
llvm::Expected<AxisLines> axisLines(llvm::ArrayRef<int64_t> shape, int64_t axis,
                                    llvm::StringRef opName);

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

// Elementwise.cpp
/// `combine` applied to `lhs` and `rhs` broadcast against each other, NumPy style: the
/// kernel of every elementwise binary op (add, sub, mul, div). Integer operands (i32,
/// i64: add, sub and mul) go through `combineInts` on their two's-complement bits, so
/// that overflow wraps instead of being undefined.
llvm::Expected<HostTensor>
binary(const HostTensor &lhs, const HostTensor &rhs,
       llvm::function_ref<float(float, float)> combine,
       llvm::function_ref<uint64_t(uint64_t, uint64_t)> combineInts = nullptr);
/// `value` where the boolean `mask` (broadcast to the input, never enlarging it) is 1.
llvm::Expected<HostTensor> maskedFill(const HostTensor &input, const HostTensor &mask,
                                      float value);
/// `onTrue` where the boolean `condition` is 1, `onFalse` elsewhere; all three broadcast.
llvm::Expected<HostTensor> where(const HostTensor &condition, const HostTensor &onTrue,
                                 const HostTensor &onFalse);
/// The element types of numbers, what kiln.cast converts between.
enum class NumericType { F32, I32, I64 };
/// Each element converted to `to` as kiln.cast defines it. A NaN or a float outside the
/// integer type's range, which kiln.cast leaves undefined, gives the type's minimum
/// (x86's cvttss2si, and so PyTorch on x86, gives that too).
HostTensor cast(const HostTensor &input, NumericType to);
HostTensor scale(const HostTensor &input, float factor);
HostTensor relu(const HostTensor &input);
HostTensor gelu(const HostTensor &input);
/// `f` of every element, evaluated in double and rounded to f32 once: the kernel of the
/// elementwise math ops (exp, log, tanh, sigmoid, sqrt, rsqrt, pow, silu, gelu_tanh).
HostTensor unary(const HostTensor &input, llvm::function_ref<double(double)> f);
/// 1 / (1 + e^-x), with no overflow for any x.
double sigmoid(double x);
/// x sigmoid(x).
double silu(double x);
/// The tanh form of GELU, 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))): GPT-2's
/// gelu_new, PyTorch's gelu(approximate="tanh").
double geluTanh(double x);

// Matmul.cpp
llvm::Expected<HostTensor> matmul(const HostTensor &lhs, const HostTensor &rhs,
                                  bool transposeLhs, bool transposeRhs);
llvm::Expected<HostTensor> linear(const HostTensor &input, const HostTensor &weight,
                                  const HostTensor &bias);

// Quantization.cpp: int8 and bf16 weights (kiln.parameter's conversions).
/// kiln.quantized_linear by the op's formula: each input row quantized to [-127, 127]
/// with its max|row|, exact int32 sums against `weight` (i8 values held as i32), then
/// f32(acc) * ((amax / 127) * scale[o]) + bias[o]; `bias` may be null.
llvm::Expected<HostTensor> quantizedLinear(const HostTensor &input,
                                           const HostTensor &weight,
                                           const HostTensor &scale,
                                           const HostTensor *bias);
/// `x` rounded to the nearest bf16 value (ties to even), held as the f32 it equals.
float roundToBf16(float x);
/// Whether `x` is a bf16 value: its low 16 bits are zero.
bool isBf16Value(float x);
/// Rows [start, end) of the f32 `source` (rows: its first dimension) converted as a
/// kiln.parameter's `conversion` says: "bf16" (f32 data), "int8" (i32 data, each row
/// quantized symmetrically to [-127, 127]), "int8_scale" (those rows' max|row| / 127)
/// or "panels" (a rank-2 source's rows as [P, K, panelWidth] column panels, the last
/// one's missing rows zero; see kiln.unpack_panels).
llvm::Expected<HostTensor> convertWeight(const HostTensor &source,
                                         llvm::StringRef conversion, int64_t start,
                                         int64_t end, int64_t panelWidth = 0);

// Normalization.cpp
llvm::Expected<HostTensor> softmax(const HostTensor &input, int64_t axis);
llvm::Expected<HostTensor> logSoftmax(const HostTensor &input, int64_t axis);
llvm::Expected<HostTensor> argmax(const HostTensor &input, int64_t axis);
llvm::Expected<HostTensor> layerNorm(const HostTensor &input, const HostTensor &gamma,
                                     const HostTensor &beta, float epsilon);
llvm::Expected<HostTensor> rmsNorm(const HostTensor &input, const HostTensor &gamma,
                                   float epsilon);

// Reduction.cpp
/// What a kiln.reduce_* op computes over its axes.
enum class ReduceKind { Sum, Mean, Max };
/// The `kind` of `input` (f32, or i32 for Sum and Max) over `axes` (distinct, in
/// [0, rank)), dropping them or, with `keepDim`, keeping them as size 1.
llvm::Expected<HostTensor> reduce(const HostTensor &input, llvm::ArrayRef<int64_t> axes,
                                  bool keepDim, ReduceKind kind);

// DataMovement.cpp
llvm::Expected<HostTensor> reshape(const HostTensor &input,
                                   llvm::ArrayRef<int64_t> newShape);
llvm::Expected<HostTensor> transpose(const HostTensor &input,
                                     llvm::ArrayRef<int64_t> permutation);
llvm::Expected<HostTensor> slice(const HostTensor &input, int64_t axis, int64_t start,
                                 int64_t end);
llvm::Expected<HostTensor> concat(llvm::ArrayRef<const HostTensor *> inputs,
                                  int64_t axis);
/// The first `rows` rows of the matrix that [P, K, W] `panels` holds
/// (kiln.unpack_panels).
llvm::Expected<HostTensor> unpackPanels(const HostTensor &panels, int64_t rows);

// Embedding.cpp: token and position inputs of the model, and its masks.
/// An id outside the table is an error naming `tableName`, the row count and the id.
llvm::Expected<HostTensor> embedding(const HostTensor &table, const HostTensor &ids,
                                     const std::string &tableName);
llvm::Expected<HostTensor> range(const HostTensor &like, int64_t axis);
llvm::Expected<HostTensor> sinusoid(const HostTensor &positions, int64_t dim);
/// Rotary position embedding (Rotary.cpp): input [..., T, D], pair i of row t rotated
/// by positions[t] * base^(-2i/D); pairs (i, i + D/2), or (2i, 2i + 1) if `interleaved`.
llvm::Expected<HostTensor> rotary(const HostTensor &input, const HostTensor &positions,
                                  double base, bool interleaved);
/// Additive (0 / -inf) masks, or boolean ones (1 = masked) when `boolean` is set.
llvm::Expected<HostTensor> paddingMask(const HostTensor &lengths, const HostTensor &like,
                                       int64_t axis, bool boolean = false);
llvm::Expected<HostTensor> causalMask(const HostTensor &like, int64_t axis,
                                      bool boolean = false);

// Attention.cpp
/// kiln.attention's attributes.
struct AttentionAttributes {
  float scale = 1.0f;
  bool causal = false;
  float maskedRowValue = 0.0f;
};
/// softmax(scale * q kT + mask + causal) v, by its definition, row by row; `mask` may
/// be null.
llvm::Expected<HostTensor> attention(const HostTensor &query, const HostTensor &key,
                                     const HostTensor &value, const HostTensor *mask,
                                     const AttentionAttributes &attributes);

// States.cpp
/// kv_append: writes `value` (N >= 1 positions along `axis`) into `cache` at indices
/// [position, position + N) along `axis`, in place, and returns the cache's first
/// position + N entries along it. `cache` must have the value's shape with `capacity` at
/// `axis`, and position + N may not exceed the capacity.
llvm::Expected<HostTensor> kvAppend(HostTensor &cache, const HostTensor &value,
                                    int64_t axis, int64_t capacity, int64_t position);

} // namespace kiln::reference

#endif // KILN_BACKENDS_REFERENCE_KERNELS_H
