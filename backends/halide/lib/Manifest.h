//===- Manifest.h - The model manifest as JSON ------------------*- C++ -*-===//
//
// Writes a ModelPlan as the JSON manifest that the runtime reads (docs/manifest.md);
// the format's names and version are kiln/abi/Manifest.h's.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_MANIFEST_H
#define KILN_BACKENDS_HALIDE_MANIFEST_H

#include "Plan.h"

#include <string>

namespace kiln::halide_backend {

/// The manifest of `plan`, compiled for the Halide target string `target`.
std::string writeManifest(const ModelPlan &plan, llvm::StringRef target);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_MANIFEST_H
