//===- Registry.h - Registering a model with its generator program -*- C++ -*-===//
//
// A model file ends with `KILN_MODEL(buildFn);`, where `kiln::dsl::Model buildFn()`
// builds the model. Linked with the kiln_model_main library (cmake: kiln_add_model), the
// file becomes the program NAME-gen, which compiles the model to NAME.so. Header-only:
// the registry is an inline function-local static, so registration works from any
// translation unit without a library of its own.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_REGISTRY_H
#define KILN_FRONTEND_REGISTRY_H

#include "kiln/frontend/ModelBuilder.h"

#include <vector>

namespace kiln::dsl {

/// A model's build function, as the user wrote it.
using ModelBuildFn = Model (*)();

/// One KILN_MODEL(...) line.
struct RegisteredModel {
  /// The build function's name as written, e.g. "buildDemo".
  const char *function;
  ModelBuildFn build;
  /// The model file, for messages.
  const char *file;
};

/// Every model registered in this program, in static-initialisation order.
inline std::vector<RegisteredModel> &registeredModels() {
  static std::vector<RegisteredModel> models;
  return models;
}

/// Registers a model at static-initialisation time (what KILN_MODEL expands to).
struct ModelRegistration {
  ModelRegistration(const char *function, ModelBuildFn build, const char *file) {
    registeredModels().push_back({function, build, file});
  }
};

} // namespace kiln::dsl

#define KILN_MODEL_CONCAT_IMPL(a, b) a##b
#define KILN_MODEL_CONCAT(a, b) KILN_MODEL_CONCAT_IMPL(a, b)

/// Registers `buildFn` (a `kiln::dsl::Model()` function, possibly namespace-qualified) as
/// the model of this program. The line number makes the variable's name unique even for a
/// qualified function name, which cannot be pasted into an identifier.
#define KILN_MODEL(buildFn)                                                              \
  static ::kiln::dsl::ModelRegistration KILN_MODEL_CONCAT(                               \
      kilnModelRegistration_, __LINE__)(#buildFn, &(buildFn), __FILE__)

#endif // KILN_FRONTEND_REGISTRY_H
