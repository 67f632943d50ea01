//===- GpuMain.cpp - The GPU tests' main: the bundle and the device probe -===//
//
// The GPU tests run from a bundle directory (tools/make-gpu-bundle.sh; test/gpu/README.md
// gives its layout), which is their working directory, so that they read the same
// relative paths on the build machine and on the device. Before any test, one CUDA
// kernel is run: where there is no GPU or no driver, every test is skipped with the
// runtime's reason, so CI (no GPU) passes in a second.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace {

/// Why `message` (a failed status's) says there is no usable CUDA device, or "" when it
/// is another error. The runtime says "no CUDA device: ..." itself; before it did, the
/// Halide runtime's own errors for a missing driver or device were what came back.
std::string noDeviceReason(const std::string &message) {
  if (message.find("no CUDA device") != std::string::npos)
    return message.substr(message.find("no CUDA device"));
  for (const char *halide : {"Could not find cuda system libraries",
                             "CUDA_ERROR_NO_DEVICE", "No CUDA devices"})
    if (message.find(halide) != std::string::npos)
      return std::string("no CUDA device: ") + halide;
  return "";
}

/// Opens the probe model and runs it on one element; the error message, or "".
std::string runProbe(const char *library) {
  kiln_model *model = nullptr;
  kiln_session *session = nullptr;
  kiln_status *status = kiln_model_open(library, &model);
  if (!status)
    status = kiln_session_create(model, nullptr, nullptr, &session);
  kiln_tensor_info info;
  if (!status)
    status = kiln_model_input_info(model, 0, 0, &info);
  if (!status) {
    float x = 0.5f;
    int64_t shape[] = {1, 1, 1};
    kiln_tensor input = {info.name, KILN_DTYPE_F32, 3, shape, &x};
    status = kiln_session_run(session, kiln_model_entry_name(model, 0), &input, 1);
  }
  std::string message = status ? kiln_status_get_message(status) : "";
  kiln_status_free(status);
  kiln_session_release(session);
  kiln_model_release(model);
  return message;
}

/// Skips every test where no CUDA kernel can run.
class DeviceProbe : public ::testing::Environment {
public:
  void SetUp() override {
    // e2e_unary (test/e2e/models/Unary.cpp) for host-cuda: its pointwise kernels were the
    // first to have a CUDA schedule.
    std::string error = runProbe("models/e2e_unary_cuda.so");
    if (error.empty())
      return;
    std::string reason = noDeviceReason(error);
    if (!reason.empty()) {
      // A skip in the global set-up runs no test, and gtest's summary counts them as
      // passed; this line is what ctest reads (SKIP_REGULAR_EXPRESSION) to report each
      // as skipped.
      std::printf("[  SKIPPED ] every GPU test: %s\n", reason.c_str());
      GTEST_SKIP() << reason;
    }
    FAIL() << "the probe kernel (models/e2e_unary_cuda.so) failed: " << error;
  }
};

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char *bundle = std::getenv("KILN_GPU_BUNDLE");
  if (!bundle)
    bundle = KILN_GPU_DEFAULT_BUNDLE;
  if (::testing::GTEST_FLAG(list_tests))
    return RUN_ALL_TESTS();
  if (chdir(bundle) != 0) {
    std::fprintf(stderr, "KilnGpuTests: cannot enter the bundle '%s': %s\n", bundle,
                 std::strerror(errno));
    return 2;
  }
  ::testing::AddGlobalTestEnvironment(new DeviceProbe);
  return RUN_ALL_TESTS();
}
