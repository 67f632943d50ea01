//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reading and writing NumPy .npy files (little-endian, C order).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_NPY_H
#define KILN_TOOLS_KILN_RUN_NPY_H

#include "HostTensor.h"

#include <string>

namespace kiln::driver {

// Reads float32/float64/int32/int64 and converts to `want`: floats narrow to f32,
// integers convert with a range check; floats never silently become integers. Throws
// DriverError.
HostTensor readNpy(const std::string &path, kiln_dtype want);
void writeNpy(const std::string &path, const kiln_tensor &tensor);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_NPY_H
