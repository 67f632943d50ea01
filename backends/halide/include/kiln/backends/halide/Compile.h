//===- Compile.h - Compiling a kiln module to a shared library ---*- C++ -*-===//
//
// The Halide backend's entry point: every op of every entry point becomes a Halide
// pipeline with the schedule its target's family has for it (CPU targets only, for
// now), compiled ahead of time; identical kernels are compiled once; the objects, one
// copy of the Halide runtime and the model manifest (docs/manifest.md) are linked into
// NAME.so.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_COMPILE_H
#define KILN_BACKENDS_HALIDE_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include <string>
#include <vector>

namespace kiln::halide_backend {

struct CompileOptions {
  /// A Halide target string; "host" is this machine's CPU.
  std::string target = "host";
  /// Where NAME.so (and intermediate objects) go.
  std::string outputDir = ".";
  /// Also write each kernel's Halide statement file (NAME.kernels/*.stmt) for inspection.
  bool emitStmt = false;
  /// Where the kernel objects, the runtime object, the generated C file and the linker's
  /// log are kept; empty means OUTPUTDIR/NAME.kernels.
  std::string kernelsDir;
  /// Kernels compiled at once; 0 means one per hardware thread. The environment
  /// variable KILN_COMPILE_THREADS overrides it.
  unsigned threads = 0;
  /// The C compiler that links the library (a name on PATH, or a path).
  std::string cCompiler = "cc";
  /// Extra arguments for the link command.
  std::vector<std::string> extraLinkArgs;
  /// A remark at each slice and transpose that stays a kernel instead of a view of its
  /// operand, saying why (NAME-gen --fusion-remarks).
  bool layoutRemarks = false;
};

/// What compileModel did, for the one-line summary of the model compiler.
struct CompileStats {
  /// Unique kernels compiled.
  unsigned kernels = 0;
  /// Steps (op instances) over all entry points; steps - kernels reuse a kernel.
  unsigned steps = 0;
  double seconds = 0;
};

/// Compiles `module` (already through the pass pipeline) into OUTPUTDIR/NAME.so. Errors
/// are emitted as MLIR diagnostics at the offending op. Returns the path of the library.
mlir::FailureOr<std::string> compileModel(mlir::ModuleOp module, llvm::StringRef name,
                                          const CompileOptions &options,
                                          CompileStats *stats = nullptr);

/// The manifest (docs/manifest.md) that compileModel would embed, without compiling any
/// kernel: for --emit=manifest and for tests.
mlir::FailureOr<std::string> emitManifest(mlir::ModuleOp module, llvm::StringRef name,
                                          const CompileOptions &options);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_COMPILE_H
