//===- SessionFlags.cpp - kiln-run's options for its sessions --------------===//

#include "SessionFlags.h"

#include "OptionValidators.h"
#include "Print.h"

#include <CLI/CLI.hpp>

namespace kiln::driver {

kiln_session_options SessionFlags::toOptions() const {
  kiln_session_options options = kiln::defaultSessionOptions();
  options.num_threads = threads;
  options.profile = profile || !trace.empty();
  return options;
}

void addSessionFlags(CLI::App &app, SessionFlags &flags) {
  app.add_option("--threads", flags.threads,
                 "Run the kernels on N threads (default 0: HL_NUM_THREADS if set, else "
                 "every core)")
      ->transform(integerIn(0, 256))
      ->type_name("N");
  app.add_flag("--profile", flags.profile,
               "Time every kernel call; print the time by kernel and by source line");
  app.add_option("--trace", flags.trace,
                 "Time every kernel call and write them to OUT as a Chrome trace "
                 "(Perfetto opens it)")
      ->type_name("OUT");
}

void reportProfile(std::FILE *out, const kiln::Session &session,
                   const SessionFlags &flags) {
  if (flags.profile)
    printProfile(out, session);
  if (!flags.trace.empty()) {
    session.writeProfileTrace(flags.trace);
    std::fprintf(out, "trace: %zu kernel calls written to %s\n",
                 session.profileCalls().size(), flags.trace.c_str());
  }
}

} // namespace kiln::driver
