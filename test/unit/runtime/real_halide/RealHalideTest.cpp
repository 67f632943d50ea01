// RealHalideTest.cpp - the runtime driving a genuine Halide AOT kernel: numerics on
// random data across shapes (vector tails included) and Halide's own error reaching the
// status.
#include "../TestUtil.h"

#include "kiln/runtime.hpp"

using namespace kiln::test;

TEST(RealHalide, ScaleMatchesReferenceAcrossShapes) {
  std::mt19937 rng(11);
  std::vector<float> scale = randomFloats(16, rng);
  std::string path = tempPath("real.safetensors");
  kiln::writeSafetensors(path, {kiln::TensorArg::of("scale", {16}, scale.data())});
  kiln::Model model = kiln::Model::open(REAL_MODEL);
  kiln::Session session(model, kiln::Weights::open(model, path));
  for (auto [b, s] : {std::pair<int64_t, int64_t>{1, 1}, {3, 7}, {2, 33}, {0, 5}}) {
    std::vector<float> x = randomFloats(size_t(b * s * 16), rng);
    session.run("forward", {kiln::TensorArg::of("x", {b, s, 16}, x.data())});
    std::vector<float> y = session.outputData<float>("y");
    ASSERT_EQ(y.size(), x.size());
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_FLOAT_EQ(y[i], x[i] * scale[i % 16])
          << "B=" << b << " S=" << s << " i=" << i;
  }
  std::remove(path.c_str());
}

TEST(RealHalide, HalideErrorsReachTheStatus) {
  kiln::Model model = kiln::Model::open(REAL_MODEL);
  kiln_model *raw = model.get();
  kiln_session *session = nullptr;
  // The model has a parameter; the mismatch entry does not use it, but a session needs
  // weights all the same.
  std::vector<float> scale(16, 0.5f);
  std::string path = tempPath("real.safetensors");
  kiln::writeSafetensors(path, {kiln::TensorArg::of("scale", {16}, scale.data())});
  kiln::Weights weights = kiln::Weights::open(model, path);
  ASSERT_OK(kiln_session_create(raw, weights.get(), nullptr, &session));
  std::mt19937 rng(12);
  std::vector<float> x = randomFloats(2 * 3 * 8, rng), w = randomFloats(5, rng);
  std::vector<int64_t> xs{2, 3, 8}, ws{5};
  kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, xs, x.data()),
                           tensor("w", KILN_DTYPE_F32, ws, w.data())};
  Result r = take(kiln_session_run(session, "mismatch", inputs, 2));
  EXPECT_EQ(r.code, KILN_STATUS_KERNEL_ERROR) << r;
  EXPECT_NE(
      r.message.find("kernel 'real_scale' (step 0 of 1) failed with Halide error code"),
      std::string::npos)
      << r;
  EXPECT_NE(
      r.message.find("Input buffer w is accessed at 7, which is beyond the max (4)"),
      std::string::npos)
      << r;
  kiln_session_release(session);
  std::remove(path.c_str());
}
