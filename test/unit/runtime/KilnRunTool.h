//===- KilnRunTool.h - Running the kiln-run binary in a test ----*- C++ -*-===//
//
// kiln-run is tested as users run it: the real binary (KILN_RUN), its exit status, and
// what it printed on stdout and stderr.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_RUNTIME_KILNRUNTOOL_H
#define KILN_TEST_UNIT_RUNTIME_KILNRUNTOOL_H

#include <string>
#include <vector>

namespace kiln::test {

struct ToolRun {
  int exitCode = -1;
  bool crashed = false;
  std::string out, err;
};

/// Runs KILN_RUN with `args` and waits for it.
ToolRun kilnRun(const std::vector<std::string> &args);

} // namespace kiln::test

#endif // KILN_TEST_UNIT_RUNTIME_KILNRUNTOOL_H
