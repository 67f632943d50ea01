//===- Link.h - Linking a model's objects into NAME.so ----------*- C++ -*-===//
//
// The last step of compiling a model: a C file exporting the manifest, the kernel objects
// and the Halide runtime object become one shared library that needs only libc, libm,
// libpthread and libdl at load time, linked by the system C compiler.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_LINK_H
#define KILN_BACKENDS_HALIDE_LINK_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace kiln::halide_backend {

struct LinkJob {
  /// The library to write; replaced atomically, so a process that has the old one
  /// loaded keeps running.
  std::string output;
  /// Where the generated C file and the linker's log go.
  std::string workDir;
  /// Kernel objects and the Halide runtime object.
  std::vector<std::string> objects;
  /// The manifest JSON, exported by kiln_model_manifest().
  std::string manifest;
  /// The Halide target string, also in section abi::kTargetSection.
  std::string target;
  /// The C compiler that links, as findCCompiler found it.
  std::string cCompiler;
  /// Extra arguments for the link command, before the system libraries.
  std::vector<std::string> extraArgs;
};

/// The path of the C compiler `name` (looked up on PATH unless it contains a '/').
llvm::Expected<std::string> findCCompiler(llvm::StringRef name);

/// The C source that exports the manifest (embedded as bytes, so no escaping can go
/// wrong) and the ABI version, and puts `target` in section abi::kTargetSection.
std::string manifestSource(llvm::StringRef manifest, int abiVersion,
                           llvm::StringRef target);

/// Links `job.output`; on failure the error holds the command line and its output.
llvm::Error linkModel(const LinkJob &job);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_LINK_H
