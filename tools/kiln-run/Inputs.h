//===- Inputs.h - The tensors a run takes -----------------------*- C++ -*-===//
//
// Turning --input specs, --dim and --random into the tensors an entry takes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_INPUTS_H
#define KILN_TOOLS_KILN_RUN_INPUTS_H

#include "HostTensor.h"
#include "Options.h"

#include "kiln/runtime.hpp"

#include <map>
#include <string>
#include <vector>

namespace kiln::driver {

// Parses an inline literal "2x3:1,2,3,4,5,6" (":7" is a scalar) as `dtype`. Returns false
// when `spec` is not literal syntax (then it names a file). Throws DriverError.
bool parseLiteral(const std::string &spec, kiln_dtype dtype, HostTensor &out);

// Builds every input of `entry` (in the entry's order) from the options.
std::vector<HostTensor> buildInputs(const kiln::Model &model, const std::string &entry,
                                    const Options &options);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_INPUTS_H
