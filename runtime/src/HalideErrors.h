//===- HalideErrors.h - Messages of a model's Halide runtime ----*- C++ -*-===//
//
// Captures what a model's Halide runtime reports, instead of letting it print to stderr,
// so a failing kernel's message ends up in the run's status.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_HALIDEERRORS_H
#define KILN_RUNTIME_HALIDEERRORS_H

#include <cstdint>
#include <string>

namespace kiln::rt {

// Installed into every loaded model with its halide_set_error_handler. Messages go to the
// reporting thread's buffer, and to a process-wide "latest" slot for errors raised on a
// Halide worker thread (parallel loops), which the calling thread's buffer never sees.
void halideErrorHandler(void *userContext, const char *message);
// Installed with halide_set_custom_print: the runtime never prints.
void halidePrintHandler(void *userContext, const char *message);

// Brackets one kernel call: construct before, message() after a failure.
class HalideErrorScope {
public:
  HalideErrorScope();
  // What Halide reported since construction; "" if nothing.
  std::string message() const;

private:
  uint64_t globalSeq_;
};

// The user's part of a failed requirement of a kernel (abi::kRequirementMarker onwards,
// without the marker): "embedding of 'wpe.weight' (32 rows): index 39 out of range".
// "" for any other message.
std::string requirementMessage(const std::string &message);

} // namespace kiln::rt

#endif // KILN_RUNTIME_HALIDEERRORS_H
