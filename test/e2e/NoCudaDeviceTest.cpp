//===- NoCudaDeviceTest.cpp - A CUDA model where no GPU is --------------------===//
//
// e2e_elementwise_cuda, compiled for host-cuda at build time: without a CUDA driver it
// still opens and lists, and every session on it is refused with "no CUDA device" and
// Halide's reason, never an abort. Where a driver is installed this path cannot be
// reached: the test skips, and tools' GPU tests run the model instead.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

TEST(NoCudaDevice, SessionIsRefusedWithTheReason) {
  if (void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
    dlclose(driver);
    GTEST_SKIP() << "a CUDA driver is installed: the no-device path cannot be reached";
  }
  kiln_model *model = nullptr;
  kiln_status *status = kiln_model_open(KILN_CUDA_LIBRARY, &model);
  ASSERT_EQ(kiln_status_get_code(status), KILN_STATUS_OK)
      << kiln_status_get_message(status);
  kiln_status_free(status);
  EXPECT_NE(std::string(kiln_model_target(model)).find("-cuda"), std::string::npos)
      << kiln_model_target(model);
  EXPECT_EQ(kiln_model_entry_count(model), 1u);

  // Its one parameter, so that the session gets as far as the device.
  ASSERT_EQ(kiln_model_parameter_count(model), 1u);
  kiln_tensor_info info;
  kiln_status_free(kiln_model_parameter_info(model, 0, &info));
  size_t count = 1;
  for (int32_t d = 0; d < info.rank; ++d)
    count *= size_t(info.shape[d]);
  std::vector<float> values(count, 0.5f);
  kiln_tensor parameter = {info.name, info.dtype, info.rank, info.shape, values.data()};
  std::string path = testing::TempDir() + "/no_cuda_device.safetensors";
  kiln_status_free(kiln_safetensors_write(path.c_str(), &parameter, 1));
  kiln_weights *weights = nullptr;
  status = kiln_weights_open(model, path.c_str(), &weights);
  ASSERT_EQ(kiln_status_get_code(status), KILN_STATUS_OK)
      << kiln_status_get_message(status);
  kiln_status_free(status);

  // Twice: a failed probe leaves Halide's CUDA runtime able to try again.
  for (int attempt = 0; attempt < 2; ++attempt) {
    kiln_session *session = nullptr;
    status = kiln_session_create(model, weights, nullptr, &session);
    EXPECT_EQ(kiln_status_get_code(status), KILN_STATUS_FAILED_PRECONDITION);
    std::string message = kiln_status_get_message(status);
    kiln_status_free(status);
    EXPECT_EQ(session, nullptr);
    EXPECT_EQ(message.rfind("no CUDA device: ", 0), 0u) << message;
    // Halide's reason, not only ours: the driver library it could not load.
    EXPECT_NE(message.find("Could not find cuda system libraries"), std::string::npos)
        << message;
  }
  kiln_weights_release(weights);
  kiln_model_release(model);
  std::remove(path.c_str());
}

} // namespace
