//===- Module.h - What an nn module needs to name itself --------*- C++ -*-===//
//
// Every call into an nn module (operator(), encode, step, ...) takes its caller's
// std::source_location and opens a ModelBuilder::Scope named after the module and its
// parameter prefix, so that the ops it builds point at the user's line, with the chain of
// module calls under it (kiln/ir/SourceLocation.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_NN_MODULE_H
#define KILN_FRONTEND_NN_MODULE_H

#include "kiln/frontend/ModelBuilder.h"

#include <source_location>
#include <string>

namespace kiln::dsl::nn {

class Module {
public:
  /// `kind` is the class ("nn::Linear"); `prefix` the parameters' prefix, with or
  /// without its trailing dot.
  Module(ModelBuilder &m, const std::string &kind, const std::string &prefix);

  /// The scope of one call of the module from `callSite`.
  [[nodiscard]] ModelBuilder::Scope enter(std::source_location callSite) const {
    return ModelBuilder::Scope(*builder_, this, name_, callSite);
  }

  /// "nn::Linear 'transformer.encoder.layers.0.linear1'".
  const std::string &name() const { return name_; }

private:
  ModelBuilder *builder_;
  std::string name_;
};

} // namespace kiln::dsl::nn

#endif // KILN_FRONTEND_NN_MODULE_H
