//===- WeightsReplacedTest.cpp - Weight files changed under an open handle ===//
//
// A server that updates weights with `cp new live` rewrites the mapped file in place;
// the next run used to read the new bytes or, past a shrunk end, die of SIGBUS. Now the
// run fails first with FAILED_PRECONDITION, and replacing the file by rename keeps the
// open handle on the old file, working.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>

using namespace kiln::test;

namespace {

struct WeightsReplaced : ::testing::Test {
  std::mt19937 rng{11};
  FakeWeights fake{rng};
  kiln_model *model = nullptr;
  kiln_weights *weights = nullptr;
  kiln_session *session = nullptr;
  std::vector<float> x = randomFloats(8, rng), y = randomFloats(8, rng);

  void SetUp() override {
    ASSERT_OK(kiln_model_open(FAKE_MODEL, &model));
    ASSERT_OK(kiln_weights_open(model, fake.path.c_str(), &weights));
    ASSERT_OK(kiln_session_create(model, weights, nullptr, &session));
  }
  void TearDown() override {
    kiln_session_release(session);
    kiln_weights_release(weights);
    kiln_model_release(model);
  }

  /// Runs forward on x, y ([1, 2, 4]); on success `z` holds the output.
  kiln_status *run(std::vector<float> &z) {
    std::vector<int64_t> shape{1, 2, 4};
    kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, x.data()),
                             tensor("y", KILN_DTYPE_F32, shape, y.data())};
    kiln_status *status = kiln_session_run(session, "forward", inputs, 2);
    kiln_tensor out;
    if (!status && take(kiln_session_get_output(session, "z", &out)).ok())
      z.assign(static_cast<const float *>(out.data),
               static_cast<const float *>(out.data) + 8);
    return status;
  }

  std::string changedMessage(const std::string &change) const {
    return "weights file '" + fake.path + "' changed on disk since it was opened (" +
           change + "); replace weights files by rename, not in place";
  }
};

} // namespace

TEST_F(WeightsReplaced, TruncatedInPlaceIsAnErrorNotASignal) {
  std::vector<float> z;
  ASSERT_OK(run(z));
  size_t size = readFile(fake.path).size();
  writeFile(fake.path, ""); // what `cp` does first: O_TRUNC
  for (int attempt = 0; attempt < 2; ++attempt) {
    Result r = take(run(z));
    EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
    EXPECT_EQ(r.message.rfind(
                  changedMessage("size " + std::to_string(size) + " -> 0 bytes"), 0),
              0u)
        << r;
  }
}

TEST_F(WeightsReplaced, RewrittenInPlaceAtTheSameSizeIsAnError) {
  std::vector<float> z;
  ASSERT_OK(run(z));
  std::string bytes = readFile(fake.path);
  bytes.back() ^= 0x40; // another bias value, same layout
  writeFile(fake.path, bytes);
  // Timestamps are as coarse as the kernel's clock tick; a rewrite within the tick of the
  // open cannot be told apart by its metadata, so the test dates the rewrite later.
  struct stat st;
  ASSERT_EQ(::stat(fake.path.c_str(), &st), 0);
  timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 10;
  ASSERT_EQ(::utimensat(AT_FDCWD, fake.path.c_str(), times, 0), 0);
  Result r = take(run(z));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(r.message.rfind(changedMessage("same size, modification time changed"), 0),
            0u)
      << r;
}

TEST_F(WeightsReplaced, ReplacedByRenameKeepsTheOpenHandleOnTheOldFile) {
  std::vector<float> before, after;
  ASSERT_OK(run(before));
  EXPECT_EQ(before, referenceForward(x, y, fake));
  std::mt19937 other(12);
  FakeWeights replacement(other);
  ASSERT_EQ(std::rename(replacement.path.c_str(), fake.path.c_str()), 0);
  ASSERT_OK(run(after));
  EXPECT_EQ(after, before);

  // A handle opened now reads the new file.
  kiln_weights *reopened = nullptr;
  ASSERT_OK(kiln_weights_open(model, fake.path.c_str(), &reopened));
  kiln_session_release(session);
  ASSERT_OK(kiln_session_create(model, reopened, nullptr, &session));
  kiln_weights_release(reopened);
  ASSERT_OK(run(after));
  EXPECT_EQ(after, referenceForward(x, y, replacement));
}
