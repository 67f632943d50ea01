//===- HalideGuard.h - Turning Halide's errors into messages ----*- C++ -*-===//
//
// Halide reports a failed compilation by throwing (when built with exceptions, as
// Debian's package is) or through a reporter that must not return. Every call into
// Halide goes through guardHalide so that either way the user learns which op failed,
// and with exceptions the compiler goes on to report failure instead of dying.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_HALIDEGUARD_H
#define KILN_BACKENDS_HALIDE_HALIDEGUARD_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln::halide_backend {

/// Runs `fn`, which calls into Halide, on this thread. Returns Halide's message when it
/// fails. `context` ("compiling kernel X for 'kiln.matmul' at model.cpp:12:3") is what
/// a Halide built without exceptions prints before it has to exit the process.
llvm::Optional<std::string> guardHalide(llvm::StringRef context,
                                        llvm::function_ref<void()> fn);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_HALIDEGUARD_H
