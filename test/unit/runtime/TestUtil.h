//===- TestUtil.h - Shared helpers of the runtime tests ---------*- C++ -*-===//
//
// Shared helpers for the runtime tests: statuses, temp files, random data, and the fake
// model's reference computation.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_RUNTIME_TESTUTIL_H
#define KILN_TEST_UNIT_RUNTIME_TESTUTIL_H

#include "kiln/runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

namespace kiln::test {

// A status unpacked into values (and freed), so assertions can print it.
struct Result {
  kiln_status_code code = KILN_STATUS_OK;
  std::string message;
  bool ok() const { return code == KILN_STATUS_OK; }
};

inline Result take(kiln_status *status) {
  Result r{kiln_status_get_code(status), kiln_status_get_message(status)};
  kiln_status_free(status);
  return r;
}

inline std::ostream &operator<<(std::ostream &os, const Result &r) {
  return os << kiln_status_code_string(r.code) << ": " << r.message;
}

#define EXPECT_OK(expr)                                                                  \
  do {                                                                                   \
    ::kiln::test::Result r_ = ::kiln::test::take(expr);                                  \
    EXPECT_TRUE(r_.ok()) << r_;                                                          \
  } while (0)
#define ASSERT_OK(expr)                                                                  \
  do {                                                                                   \
    ::kiln::test::Result r_ = ::kiln::test::take(expr);                                  \
    ASSERT_TRUE(r_.ok()) << r_;                                                          \
  } while (0)

// The paths tempPath handed out, removed (files, or directories with what kiln-run
// wrote into them) when the test program ends, so that a run leaves nothing in /tmp
// whether or not a test got as far as cleaning up itself.
class TempPaths : public ::testing::Environment {
public:
  static std::vector<std::string> &paths() {
    static std::vector<std::string> list;
    return list;
  }
  void TearDown() override {
    for (const std::string &path : paths()) {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
    paths().clear();
  }
};

inline ::testing::Environment *const kTempPathsEnvironment =
    ::testing::AddGlobalTestEnvironment(new TempPaths);

// A fresh path in the test's temporary directory.
inline std::string tempPath(const std::string &name) {
  static int counter = 0;
  const ::testing::TestInfo *info =
      ::testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = ::testing::TempDir();
  if (dir.empty() || dir.back() != '/')
    dir += '/';
  std::string path = dir + "kiln_" + std::to_string(::getpid()) + "_" +
                     (info ? info->name() : "x") + "_" + std::to_string(counter++) + "_" +
                     name;
  TempPaths::paths().push_back(path);
  return path;
}

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

// Uniform in [-1, 1], never exactly zero: a zero can hide a missing term.
inline std::vector<float> randomFloats(size_t n, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v) {
    do
      x = dist(rng);
    while (x == 0.0f);
  }
  return v;
}

inline kiln_tensor tensor(const char *name, kiln_dtype dtype,
                          const std::vector<int64_t> &shape, const void *data) {
  return {name, dtype, int32_t(shape.size()), shape.data(), data};
}

// fake_model's parameters with random values, written to a safetensors file.
struct FakeWeights {
  std::vector<float> weight; // proj.weight [4]
  std::vector<float> bias;   // proj.bias [2, 2]
  std::string path;

  explicit FakeWeights(std::mt19937 &rng)
      : weight(randomFloats(4, rng)), bias(randomFloats(4, rng)),
        path(tempPath("fake.safetensors")) {
    std::vector<int64_t> ws{4}, bs{2, 2};
    kiln_tensor t[2] = {tensor("proj.weight", KILN_DTYPE_F32, ws, weight.data()),
                        tensor("proj.bias", KILN_DTYPE_F32, bs, bias.data())};
    Result r = take(kiln_safetensors_write(path.c_str(), t, 2));
    EXPECT_TRUE(r.ok()) << r;
  }
  ~FakeWeights() { std::remove(path.c_str()); }
};

// The fake model's forward entry, computed here: z = (x + y) * w + b (b broadcast over
// the last dim), in the same float operation order as the kernels.
inline std::vector<float> referenceForward(const std::vector<float> &x,
                                           const std::vector<float> &y,
                                           const FakeWeights &w) {
  std::vector<float> z(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    z[i] = (x[i] + y[i]) * w.weight[i % 4] + w.bias[i % 4];
  return z;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_RUNTIME_TESTUTIL_H
