//===- BuilderInternals.h - What the model builder's files share -*- C++ -*-===//
//
// The state the builder keeps per entry point, and the helpers that ModelBuilder.cpp,
// Entry.cpp and DimensionBindings.cpp all use. Private to frontend/lib.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_LIB_BUILDERINTERNALS_H
#define KILN_FRONTEND_LIB_BUILDERINTERNALS_H

#include "kiln/frontend/ModelBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include <map>
#include <source_location>
#include <string>
#include <vector>

namespace kiln::dsl {

struct ModelBuilder::EntryState {
  std::string name;
  mlir::FuncOp func;
  std::vector<std::string> inputNames;
  std::vector<mlir::Attribute> inputDims;
  /// `kiln.bounds` per input (null for none), with where it was declared and the dim
  /// names it uses, which finish() checks once every input is known.
  struct DeclaredBounds {
    mlir::ArrayAttr attr;
    std::source_location loc;
    std::vector<std::string> names;
  };
  std::vector<DeclaredBounds> inputBounds;
  /// Per input: the dim its value binds (valueInput), or "".
  std::vector<std::string> inputValueDims;
  /// Per input: where it was declared.
  std::vector<std::source_location> inputLocs;
  /// Per bounded dimension name: its largest size and the input that declared it.
  struct DeclaredMax {
    int64_t max;
    std::string input;
  };
  std::map<std::string, DeclaredMax> dimMax;
  /// Per input: its `kiln.dim_max` (null when none of its dims is bounded).
  std::vector<mlir::ArrayAttr> inputDimMax;
  /// Whether the entry creates or updates a state, which makes outputs optional.
  bool writesState = false;
  std::vector<std::string> outputNames;
  std::vector<mlir::Value> outputs;
  std::map<std::string, mlir::Value> parameterValues;
  /// Counts outputs declared even when their tensor failed to build, so that a failed op
  /// does not also produce a "no outputs" error.
  size_t declaredOutputs = 0;
};

/// Why a tensor of `dtype` cannot cross an entry's boundary, or "".
std::string boundaryProblem(DType dtype);

/// `kiln.dims` / a state op's `dims`: each dim's name, "" for static ones.
mlir::ArrayAttr dimsAttr(mlir::MLIRContext &ctx, const std::vector<Dim> &dims);

/// An error at `loc`, an op's location (the DSL call that built it).
BuildError buildErrorAt(mlir::Location loc, std::string message);

} // namespace kiln::dsl

#endif // KILN_FRONTEND_LIB_BUILDERINTERNALS_H
