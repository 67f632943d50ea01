//===- Compile.h - Compiling a kiln module to a shared library ---*- C++ -*-===//
//
// The Halide backend's entry point: every op of every entry point becomes a Halide
// pipeline with a CPU (or CUDA) schedule, compiled ahead of time; identical kernels are
// compiled once; the objects, one copy of the Halide runtime and the model manifest
// (docs/manifest.md) are linked into NAME.so.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_COMPILE_H
#define KILN_BACKENDS_HALIDE_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>

namespace kiln::halide_backend {

struct CompileOptions {
  /// A Halide target string; "host" is this machine's CPU.
  std::string target = "host";
  /// Where NAME.so (and intermediate objects) go.
  std::string outputDir = ".";
  /// Also write each kernel's Halide statement file (NAME.kernels/*.stmt) for inspection.
  bool emitStmt = false;
};

/// Compiles `module` (already through the pass pipeline) into OUTPUTDIR/NAME.so. Errors
/// are emitted as MLIR diagnostics at the offending op. Returns the path of the library.
mlir::FailureOr<std::string> compileModel(mlir::ModuleOp module, llvm::StringRef name,
                                          const CompileOptions &options);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_COMPILE_H
