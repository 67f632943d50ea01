//===- HalideGuard.cpp - Turning Halide's errors into messages ------------===//

#include "HalideGuard.h"

#include "Halide.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

namespace kiln::halide_backend {

namespace {

thread_local std::string currentContext;

/// Used only with a Halide built without exceptions, whose error reporter must not
/// return: the best it can do is name the op before exiting.
class ExitingReporter : public Halide::CompileTimeErrorReporter {
public:
  void warning(const char *message) override { llvm::errs() << message; }
  void error(const char *message) override {
    llvm::errs() << "error: Halide failed"
                 << (currentContext.empty() ? "" : " while " + currentContext) << ": "
                 << message << "\n";
    llvm::errs().flush();
    std::_Exit(1);
  }
};

std::string cleanMessage(llvm::StringRef message) {
  message = message.trim();
  // Halide starts every message with "Error:"; the diagnostic already says so.
  if (message.consume_front("Error:"))
    message = message.ltrim();
  return message.empty() ? "unknown Halide error" : message.str();
}

} // namespace

llvm::Optional<std::string> guardHalide(llvm::StringRef context,
                                        llvm::function_ref<void()> fn) {
  static const bool installed = [] {
    if (!Halide::exceptions_enabled()) {
      static ExitingReporter reporter;
      Halide::set_custom_compile_time_error_reporter(&reporter);
    }
    return true;
  }();
  (void)installed;
  currentContext = context.str();
  try {
    fn();
  } catch (const Halide::Error &error) {
    return cleanMessage(error.what());
  } catch (const std::exception &error) {
    return cleanMessage(error.what());
  }
  currentContext.clear();
  return llvm::None;
}

} // namespace kiln::halide_backend
