//===- Error.h - The runtime's internal exception ---------------*- C++ -*-===//
//
// The exception the runtime's internals throw; the C API turns it into a status.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ERROR_H
#define KILN_RUNTIME_ERROR_H

#include "kiln/runtime.h"

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kiln::rt {

// Internals report failures by throwing, which keeps validation code linear; every C
// entry point catches at the boundary (see guard), so nothing escapes to the caller.
class Error : public std::runtime_error {
public:
  Error(kiln_status_code code, std::string message)
      : std::runtime_error(std::move(message)), code_(code) {}
  kiln_status_code code() const { return code_; }

private:
  kiln_status_code code_;
};

// Builds a message from streamable pieces: fail(CODE, "input '", name, "' ...").
template <typename... Parts>
[[noreturn]] void fail(kiln_status_code code, const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  throw Error(code, os.str());
}

template <typename... Parts> std::string cat(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}

// Allocates a status; never fails (falls back to a static out-of-memory status).
kiln_status *makeStatus(kiln_status_code code, const std::string &message);

// Runs body and converts whatever it throws into a status.
template <typename Body> kiln_status *guard(Body &&body) noexcept {
  try {
    body();
    return nullptr;
  } catch (const Error &e) {
    return makeStatus(e.code(), e.what());
  } catch (const std::bad_alloc &) {
    return makeStatus(KILN_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception &e) {
    return makeStatus(KILN_STATUS_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return makeStatus(KILN_STATUS_INTERNAL, "internal error: unknown exception");
  }
}

// Joins items as "a, b, c" for messages.
template <typename Range, typename Fn>
std::string join(const Range &items, Fn &&toString, const char *sep = ", ") {
  std::string out;
  bool first = true;
  for (const auto &item : items) {
    if (!first)
      out += sep;
    out += toString(item);
    first = false;
  }
  return out;
}

} // namespace kiln::rt

#endif // KILN_RUNTIME_ERROR_H
