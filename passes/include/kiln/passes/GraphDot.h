//===- GraphDot.h - Entry points as Graphviz pictures -----------*- C++ -*-===//
//
// Draws a kiln module as a person reads a model: inputs and outputs by their names,
// parameters by their full names, each op with its result shape and the model's line
// that wrote it, and each kernel group (kiln.fusion, kiln.attention) as a cluster.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_GRAPHDOT_H
#define KILN_PASSES_GRAPHDOT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// Writes `module` to `os` as one Graphviz digraph: only the entry point (function)
/// named `entry`, or every entry point, each in a cluster of its own, when `entry` is
/// empty. Fails, with an error at the module that lists its entry points, when `entry`
/// names none of them.
mlir::LogicalResult printGraphDot(mlir::ModuleOp module, llvm::raw_ostream &os,
                                  llvm::StringRef entry = "");

} // namespace kiln

#endif // KILN_PASSES_GRAPHDOT_H
