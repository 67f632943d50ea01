//===- SessionFlags.h - kiln-run's options for its sessions -----*- C++ -*-===//
//
// --threads, --profile and --trace mean the same in every mode of kiln-run (running an
// entry, translate), so they are declared, turned into kiln_session_options and reported
// in one place.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_SESSIONFLAGS_H
#define KILN_TOOLS_KILN_RUN_SESSIONFLAGS_H

#include "kiln/runtime.hpp"

#include <cstdio>
#include <string>

namespace CLI {
class App;
} // namespace CLI

namespace kiln::driver {

struct SessionFlags {
  int threads = 0; // kernel threads; 0: the default (all cores)
  bool profile = false;
  std::string trace; // --trace OUT.json, or empty

  kiln_session_options toOptions() const;
};

/// Declares --threads, --profile and --trace on `app`, bound to `flags`.
void addSessionFlags(CLI::App &app, SessionFlags &flags);

/// After the runs: --profile's tables on `out` and --trace's file.
void reportProfile(std::FILE *out, const kiln::Session &session,
                   const SessionFlags &flags);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_SESSIONFLAGS_H
