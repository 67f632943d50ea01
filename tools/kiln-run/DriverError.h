//===- DriverError.h - kiln-run's own failures ------------------*- C++ -*-===//
//
// Bad files and bad input specs: what kiln-run itself rejects, as opposed to the
// runtime's kiln::Error. main() prints the message and exits with status 1.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_DRIVERERROR_H
#define KILN_TOOLS_KILN_RUN_DRIVERERROR_H

#include <stdexcept>

namespace kiln::driver {

struct DriverError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_DRIVERERROR_H
