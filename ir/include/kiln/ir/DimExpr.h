//===- DimExpr.h - Integer expressions over named dimensions ----*- C++ -*-===//
//
// The dimension expressions of docs/manifest.md: integers, names
// ([A-Za-z_][A-Za-z0-9_]*), + - * / (integer division) and parentheses, e.g. "S",
// "B*S", "T+1". The IR uses them where a value depends on an entry's dynamic sizes: the
// `kiln.bounds` of an input ("S" for lengths in [1, S]). These are LLVM-flavoured
// wrappers, for the verifier, the DSL and the interpreter, over the parser the runtime
// uses (kiln/abi/DimExpr.h), so that the compiler and the runtime read every expression
// alike.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_DIMEXPR_H
#define KILN_IR_DIMEXPR_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// The names `expr` uses, in order of first use, or why it is not a dimension expression.
llvm::Expected<std::vector<std::string>> dimExprNames(llvm::StringRef expr);

/// Whether `text` is exactly one dimension name, [A-Za-z_][A-Za-z0-9_]*: what may name
/// a dynamic dimension ("B", "S") or an input's `kiln.value_dim` ("P").
bool isDimName(llvm::StringRef text);

/// The value of `text` when it is exactly a non-negative decimal integer of at most
/// 2^31 - 1 (a kv_append's static start, "0"); None otherwise.
llvm::Optional<int64_t> dimInteger(llvm::StringRef text);

/// The value of `expr` with each name's value from `lookup` (None: the name is unknown,
/// an error). Fails on syntax, unknown names, division by zero and int64 overflow, each
/// with kiln/abi/DimExpr.h's message.
llvm::Expected<int64_t>
evaluateDimExpr(llvm::StringRef expr,
                llvm::function_ref<llvm::Optional<int64_t>(llvm::StringRef)> lookup);

} // namespace kiln

#endif // KILN_IR_DIMEXPR_H
