// HalideErrors.cpp - thread-local capture of Halide error messages.
#include "HalideErrors.h"

#include "kiln/abi/Manifest.h"

#include <atomic>
#include <mutex>

namespace kiln::rt {
namespace {

thread_local std::string threadMessage;
std::mutex globalMutex;
std::string globalMessage;
std::atomic<uint64_t> globalSeq{0};

std::string trimmed(const char *message) {
  std::string m = message ? message : "";
  while (!m.empty() && (m.back() == '\n' || m.back() == ' '))
    m.pop_back();
  if (m.rfind("Error: ", 0) == 0) // Halide's prefix; the status already says it failed
    m.erase(0, 7);
  return m;
}

} // namespace

void halideErrorHandler(void *, const char *message) {
  try { // called from generated code: nothing may propagate
    std::string m = trimmed(message);
    if (!threadMessage.empty())
      threadMessage += "; ";
    threadMessage += m;
    std::lock_guard<std::mutex> lock(globalMutex);
    globalMessage = std::move(m);
    globalSeq.fetch_add(1);
  } catch (...) {
  }
}

void halidePrintHandler(void *, const char *) {}

HalideErrorScope::HalideErrorScope() : globalSeq_(globalSeq.load()) {
  threadMessage.clear();
}

std::string HalideErrorScope::message() const {
  if (!threadMessage.empty())
    return threadMessage;
  std::lock_guard<std::mutex> lock(globalMutex);
  if (globalSeq.load() != globalSeq_)
    return globalMessage;
  return "";
}

std::string requirementMessage(const std::string &message) {
  size_t at = message.find(abi::kRequirementMarker);
  if (at == std::string::npos)
    return "";
  // Several threads may have failed: keep the first report.
  std::string user = message.substr(at + abi::kRequirementMarker.size());
  return user.substr(0, user.find("; "));
}

} // namespace kiln::rt
