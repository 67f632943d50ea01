// Status.cpp - kiln_status objects: allocation that cannot fail, and the C accessors.
#include "Error.h"

#include <cstdlib>
#include <cstring>
#include <new>

struct kiln_status {
  kiln_status_code code;
  char *message; // owned (malloc); the static fallback below points at a literal
};

namespace {
// Returned when allocating a status itself fails; kiln_status_free ignores it.
kiln_status outOfMemoryStatus = {KILN_STATUS_RESOURCE_EXHAUSTED,
                                 const_cast<char *>("out of memory")};
} // namespace

namespace kiln::rt {

kiln_status *makeStatus(kiln_status_code code, const std::string &message) {
  auto *status = static_cast<kiln_status *>(std::malloc(sizeof(kiln_status)));
  char *text = static_cast<char *>(std::malloc(message.size() + 1));
  if (!status || !text) {
    std::free(status);
    std::free(text);
    return &outOfMemoryStatus;
  }
  std::memcpy(text, message.c_str(), message.size() + 1);
  status->code = code == KILN_STATUS_OK ? KILN_STATUS_INTERNAL : code;
  status->message = text;
  return status;
}

} // namespace kiln::rt

extern "C" {

KILN_API kiln_status_code kiln_status_get_code(const kiln_status *status) {
  return status ? status->code : KILN_STATUS_OK;
}

KILN_API const char *kiln_status_get_message(const kiln_status *status) {
  return status ? status->message : "";
}

KILN_API void kiln_status_free(kiln_status *status) {
  if (!status || status == &outOfMemoryStatus)
    return;
  std::free(status->message);
  std::free(status);
}

KILN_API const char *kiln_status_code_string(kiln_status_code code) {
  switch (code) {
  case KILN_STATUS_OK:
    return "OK";
  case KILN_STATUS_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case KILN_STATUS_NOT_FOUND:
    return "NOT_FOUND";
  case KILN_STATUS_IO_ERROR:
    return "IO_ERROR";
  case KILN_STATUS_INVALID_MODEL:
    return "INVALID_MODEL";
  case KILN_STATUS_INCOMPATIBLE:
    return "INCOMPATIBLE";
  case KILN_STATUS_INVALID_WEIGHTS:
    return "INVALID_WEIGHTS";
  case KILN_STATUS_RESOURCE_EXHAUSTED:
    return "RESOURCE_EXHAUSTED";
  case KILN_STATUS_KERNEL_ERROR:
    return "KERNEL_ERROR";
  case KILN_STATUS_FAILED_PRECONDITION:
    return "FAILED_PRECONDITION";
  case KILN_STATUS_INTERNAL:
    return "INTERNAL";
  }
  return "UNKNOWN";
}

} // extern "C"
