//===- Ops.h - Tensor operations of the Kiln DSL ----------------*- C++ -*-===//
//
// Plain ops, as a model author writes them; fusing them is the compiler's job. Shapes are
// checked here, symbolically, so a mismatch is reported at the author's line.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_OPS_H
#define KILN_FRONTEND_OPS_H

#include "kiln/frontend/Tensor.h"

namespace kiln {

using SourceLoc = std::source_location;

/// Batched matrix product; leading dims broadcast (a rank-2 weight applies to every row).
Tensor matmul(Operand lhs, Operand rhs, bool transposeLhs = false,
              bool transposeRhs = false, SourceLoc loc = SourceLoc::current());
Tensor add(Operand lhs, Operand rhs, SourceLoc loc = SourceLoc::current());
Tensor mul(Operand lhs, Operand rhs, SourceLoc loc = SourceLoc::current());
Tensor scale(Operand input, float factor, SourceLoc loc = SourceLoc::current());
Tensor relu(Operand input, SourceLoc loc = SourceLoc::current());
/// Softmax along `axis`; negative counts from the end.
Tensor softmax(Operand input, int64_t axis = -1, SourceLoc loc = SourceLoc::current());
/// LayerNorm over the last dimension.
Tensor layerNorm(Operand input, Operand gamma, Operand beta, float epsilon = 1e-5f,
                 SourceLoc loc = SourceLoc::current());
/// `shape` entries: a size, 0 to keep the input's dim at that position, -1 to infer.
Tensor reshape(Operand input, std::vector<int64_t> shape,
               SourceLoc loc = SourceLoc::current());
/// Result dim i is input dim permutation[i]; negative entries count from the end.
Tensor transpose(Operand input, std::vector<int64_t> permutation,
                 SourceLoc loc = SourceLoc::current());

// Operators record the line of the expression through Operand's conversion.
Tensor operator+(Operand lhs, const Tensor &rhs);
Tensor operator*(Operand lhs, const Tensor &rhs);
Tensor operator*(Operand lhs, float factor);
Tensor operator/(Operand lhs, float divisor);

} // namespace kiln

#endif // KILN_FRONTEND_OPS_H
