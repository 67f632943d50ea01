//===- SessionMisuseTest.cpp - What a caller breaking the API's rules gets ----===//
//
// runtime.h's thread-safety promise checked as stated (one session hammered from two
// threads: every call succeeds or gets "session is running on another thread", and what
// a successful copy returns is one whole run's result), and inputs at the edges of
// integer arithmetic: an out-of-range dtype, element counts past 2^63.
//
//===----------------------------------------------------------------------===//

#include "FakeSession.h"

#include <atomic>
#include <climits>
#include <cstring>
#include <thread>

using namespace kiln::test;

namespace {

const char kBusy[] = "session is running on another thread";

using MisuseFixture = FakeSessionFixture;

// A call that overlapped another thread's: exactly the documented error.
bool isBusy(const Result &r) {
  return r.code == KILN_STATUS_FAILED_PRECONDITION && r.message.find(kBusy) == 0;
}

} // namespace

TEST_F(MisuseFixture, OneSessionHammeredFromTwoThreads) {
  constexpr int kThreads = 2, kIterations = 400;
  const std::vector<int64_t> shape{32, 16, 4};
  const size_t n = 32 * 16 * 4;
  std::vector<std::vector<float>> xs, ys, wants;
  for (int t = 0; t < kThreads; ++t) {
    xs.push_back(randomFloats(n, rng));
    ys.push_back(randomFloats(n, rng));
    wants.push_back(referenceForward(xs[t], ys[t], *fake));
  }
  std::atomic<int> unexpected{0}, torn{0}, busy{0}, copied{0};
  std::vector<std::string> firstUnexpected(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto note = [&](const Result &r) {
        if (r.ok())
          return true;
        if (isBusy(r)) {
          ++busy;
        } else {
          ++unexpected;
          if (firstUnexpected[t].empty())
            firstUnexpected[t] = r.message;
        }
        return false;
      };
      kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, xs[t].data()),
                               tensor("y", KILN_DTYPE_F32, shape, ys[t].data())};
      std::vector<float> z(n);
      for (int i = 0; i < kIterations; ++i) {
        note(take(kiln_session_run(session, "forward", inputs, 2)));
        // The last successful run may be either thread's, but never a mix of two.
        if (!note(take(kiln_session_copy_output(session, "z", z.data(),
                                                z.size() * sizeof(float)))))
          continue;
        ++copied;
        bool whole = false;
        for (const std::vector<float> &want : wants)
          whole |= std::memcmp(z.data(), want.data(), n * sizeof(float)) == 0;
        torn += !whole;
      }
    });
  for (std::thread &th : threads)
    th.join();
  EXPECT_EQ(unexpected.load(), 0) << firstUnexpected[0] << firstUnexpected[1];
  EXPECT_EQ(torn.load(), 0) << "of " << copied.load() << " copies";
  EXPECT_GT(copied.load(), 0);
  // The session is intact afterwards.
  kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, xs[0].data()),
                           tensor("y", KILN_DTYPE_F32, shape, ys[0].data())};
  ASSERT_OK(kiln_session_run(session, "forward", inputs, 2));
  std::vector<float> z(n);
  ASSERT_OK(kiln_session_copy_output(session, "z", z.data(), n * sizeof(float)));
  EXPECT_EQ(z, wants[0]);
  std::cout << "calls refused as busy: " << busy.load() << "\n";
}

TEST_F(MisuseFixture, OutOfRangeDTypeIsReadAsAnInteger) {
  std::vector<int64_t> shape{1, 1, 4};
  float x[4] = {1, 2, 3, 4};
  kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, x),
                           tensor("y", KILN_DTYPE_F32, shape, x)};
  // 1000 is no kiln_dtype value; loading it as one would be undefined behaviour.
  int raw = 1000;
  std::memcpy(&inputs[0].dtype, &raw, sizeof raw);
  Result r = take(kiln_session_run(session, "forward", inputs, 2));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message, "entry 'forward': input 'x' has invalid dtype value 1000");
}

// 3 * 2^62 elements fit in uint64_t but not in the int64_t the bounds check counts in.
TEST_F(MisuseFixture, ElementCountPastInt64IsRejected) {
  const int64_t b = int64_t(1) << 62;
  std::vector<int64_t> idsShape{b, 3}, batchShape{b};
  int32_t ids[3] = {1, 2, 3}, lengths[1] = {1};
  int64_t start[1] = {0};
  kiln_tensor inputs[3] = {tensor("src_lengths", KILN_DTYPE_I32, batchShape, lengths),
                           tensor("start", KILN_DTYPE_I64, batchShape, start),
                           tensor("src_ids", KILN_DTYPE_I32, idsShape, ids)};
  Result r = take(kiln_session_run(session, "encode", inputs, 3));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message, "entry 'encode': input 'src_ids' has an impossibly large shape "
                       "[4611686018427387904, 3]");
}
