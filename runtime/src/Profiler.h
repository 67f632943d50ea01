//===- Profiler.h - Timing a session's kernel calls -------------*- C++ -*-===//
//
// What kiln_session_options.profile turns on: the time of every kernel call, kept as a
// compact record until a caller asks for the calls, their aggregate or a Chrome trace.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PROFILER_H
#define KILN_RUNTIME_PROFILER_H

#include "Manifest.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::rt {

class Profiler {
public:
  using Clock = std::chrono::steady_clock;

  explicit Profiler(const Manifest &manifest);

  /// Marks the start of a run: the calls recorded next belong to it.
  void beginRun() { ++runs_; }

  /// Runs `kernel` on `argv`, recording how long it took; returns its result.
  template <typename Kernel>
  int time(int entry, size_t step, Kernel kernel, void **argv) {
    Clock::time_point start = Clock::now();
    int rc = kernel(argv);
    Clock::time_point end = Clock::now();
    records_.push_back(
        {entry, uint32_t(step), runs_ - 1, nanos(start - epoch_), nanos(end - start)});
    return rc;
  }

  const std::vector<kiln_profile_call> &calls();
  /// Throws INVALID_ARGUMENT unless `by` is a kiln_profile_key.
  const std::vector<kiln_profile_row> &summary(int32_t by);
  /// Writes the Chrome trace (runtime.h) to `path`, through a temporary file renamed
  /// into place.
  void writeTrace(const std::string &path);
  void reset();

private:
  struct Record {
    int32_t entry;
    uint32_t step;
    uint32_t run;
    uint64_t startNs;
    uint64_t durationNs;
  };
  static uint64_t nanos(Clock::duration d) {
    return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  }
  const StepDesc &stepOf(const Record &r) const {
    return manifest_.entries[size_t(r.entry)].steps[r.step];
  }
  const Manifest &manifest_;
  Clock::time_point epoch_;
  uint32_t runs_ = 0;
  std::vector<Record> records_;
  // What the last calls() or summary() handed out.
  std::vector<kiln_profile_call> calls_;
  std::vector<kiln_profile_row> rows_;
  std::vector<std::vector<std::string>> joinedLocs_; // per entry and step: locs, ", "
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_PROFILER_H
