//===- Manifest.h - The model manifest as JSON ------------------*- C++ -*-===//
//
// Writes a ModelPlan as the JSON manifest that the runtime reads (docs/manifest.md).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_MANIFEST_H
#define KILN_BACKENDS_HALIDE_MANIFEST_H

#include "Plan.h"

#include <string>

namespace kiln::halide_backend {

/// The ABI version written to the manifest and returned by kiln_model_abi_version().
inline constexpr int kModelAbiVersion = 1;

/// The manifest of `plan`, compiled for the Halide target string `target`.
std::string writeManifest(const ModelPlan &plan, llvm::StringRef target);

/// `text` as a JSON string literal, quotes included.
std::string jsonString(llvm::StringRef text);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_MANIFEST_H
