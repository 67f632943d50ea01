//===- Profiler.cpp - Timing a session's kernel calls ---------------------===//
//
// A record per call while the session runs (two clock reads and a push); the names, the
// aggregate and the trace are made only when asked for.
//
//===----------------------------------------------------------------------===//

#include "Profiler.h"

#include "AtomicWrite.h"
#include "Error.h"
#include "Json.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace kiln::rt {

Profiler::Profiler(const Manifest &manifest) : manifest_(manifest), epoch_(Clock::now()) {
  for (const EntryDesc &e : manifest.entries) {
    joinedLocs_.emplace_back();
    for (const StepDesc &step : e.steps)
      joinedLocs_.back().push_back(
          join(step.locs, [](const std::string &loc) { return loc; }));
  }
}

const std::vector<kiln_profile_call> &Profiler::calls() {
  calls_.clear();
  calls_.reserve(records_.size());
  for (const Record &r : records_) {
    const StepDesc &step = stepOf(r);
    calls_.push_back({manifest_.entries[size_t(r.entry)].name.c_str(),
                      manifest_.kernels[size_t(step.kernel)].c_str(), step.loc.c_str(),
                      joinedLocs_[size_t(r.entry)][r.step].c_str(), r.step, r.run,
                      r.startNs, r.durationNs});
  }
  return calls_;
}

const std::vector<kiln_profile_row> &Profiler::summary(int32_t by) {
  if (by != KILN_PROFILE_BY_KERNEL && by != KILN_PROFILE_BY_LOC)
    fail(KILN_STATUS_INVALID_ARGUMENT, "kiln_session_profile_summary: unknown key ", by,
         " (expected KILN_PROFILE_BY_KERNEL or KILN_PROFILE_BY_LOC)");
  std::map<std::string_view, kiln_profile_row> rows;
  for (const Record &r : records_) {
    const StepDesc &step = stepOf(r);
    const std::string &name =
        by == KILN_PROFILE_BY_KERNEL ? manifest_.kernels[size_t(step.kernel)] : step.loc;
    auto [it, added] =
        rows.try_emplace(name, kiln_profile_row{name.c_str(), 0, 0, r.durationNs, 0});
    kiln_profile_row &row = it->second;
    ++row.calls;
    row.total_ns += r.durationNs;
    row.min_ns = std::min(row.min_ns, r.durationNs);
    row.max_ns = std::max(row.max_ns, r.durationNs);
  }
  rows_.clear();
  for (const auto &[name, row] : rows)
    rows_.push_back(row);
  // The map gave name order; a stable sort keeps it among equal totals.
  std::stable_sort(rows_.begin(), rows_.end(),
                   [](const kiln_profile_row &a, const kiln_profile_row &b) {
                     return a.total_ns > b.total_ns;
                   });
  return rows_;
}

namespace {

/// Nanoseconds as the microseconds a trace counts, to the nanosecond.
std::string micros(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%llu.%03llu", (unsigned long long)(ns / 1000),
                (unsigned long long)(ns % 1000));
  return text;
}

} // namespace

void Profiler::writeTrace(const std::string &path) {
  // One process (the model), one thread (the session); Perfetto names them.
  std::string json = cat("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n",
                         "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,"
                         "\"args\":{\"name\":",
                         quoteJson("kiln model " + manifest_.model), "}},\n",
                         "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":1,"
                         "\"args\":{\"name\":\"session\"}}");
  for (const Record &r : records_) {
    const StepDesc &step = stepOf(r);
    json +=
        cat(",\n{\"name\":", quoteJson(manifest_.kernels[size_t(step.kernel)]),
            ",\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":", micros(r.startNs),
            ",\"dur\":", micros(r.durationNs), ",\"pid\":1,\"tid\":1,\"args\":{",
            "\"entry\":", quoteJson(manifest_.entries[size_t(r.entry)].name),
            ",\"step\":", r.step, ",\"run\":", r.run, ",\"loc\":", quoteJson(step.loc),
            step.locs.empty() ? std::string()
                              : cat(",\"locs\":[", join(step.locs, quoteJson, ","), "]"),
            "}}");
  }
  json += "\n]}\n";
  writeFileAtomically(path, {{json.data(), json.size()}});
}

void Profiler::reset() {
  records_.clear();
  runs_ = 0;
}

} // namespace kiln::rt
