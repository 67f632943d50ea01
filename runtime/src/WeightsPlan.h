//===- WeightsPlan.h - Which file tensor feeds each parameter ---*- C++ -*-===//
//
// Matching a safetensors file to a model's parameters (docs/precision.md, "Loading and
// converting weights"): a tensor under the parameter's own name with its dtype and shape
// is used as it is; otherwise the parameter is converted from its source (its own name
// for a plain f32 parameter) held as F32, F16 or BF16. Every tensor of the file must be
// used one way or the other.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_WEIGHTSPLAN_H
#define KILN_RUNTIME_WEIGHTSPLAN_H

#include "Manifest.h"
#include "Safetensors.h"

#include <vector>

namespace kiln::rt {

/// How one parameter is obtained: exactly one of the two is set.
struct ParameterPlan {
  const SafetensorsTensor *stored = nullptr; // the parameter as it is: mapped
  const SafetensorsTensor *source = nullptr; // the tensor it is converted from
};

/// One plan per parameter of `manifest`. Throws Error (INVALID_WEIGHTS) naming the file
/// and listing every missing, unexpected, mis-typed or mis-shaped tensor at once, since
/// fixing an export one error per run is miserable.
std::vector<ParameterPlan> planWeights(const Manifest &manifest,
                                       const SafetensorsFile &file);

} // namespace kiln::rt

#endif // KILN_RUNTIME_WEIGHTSPLAN_H
