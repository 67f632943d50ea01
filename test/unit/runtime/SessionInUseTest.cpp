//===- SessionInUseTest.cpp - The in-use flag, deterministically -----------===//
//
// A call on a session while another is inside it, made certain rather than left to
// thread timing: the test holds the session's flag itself (Session::InUse) and calls
// every C function on it, as a second thread would.
//
//===----------------------------------------------------------------------===//

#include "FakeSession.h"
#include "Session.h"

using namespace kiln::test;

using SessionInUse = FakeSessionFixture;

TEST_F(SessionInUse, EveryCallOnABusySessionIsRefusedAndChangesNothing) {
  std::vector<int64_t> shape{1, 2, 4};
  std::vector<float> x = randomFloats(8, rng), y = randomFloats(8, rng);
  kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, x.data()),
                           tensor("y", KILN_DTYPE_F32, shape, y.data())};
  ASSERT_OK(kiln_session_run(session, "forward", inputs, 2));
  kiln_session_stats before;
  kiln_session_get_stats(session, &before);
  ASSERT_EQ(before.runs, 1u);

  const std::string busy = "session is running on another thread (a session takes one "
                           "call at a time; use one session per thread)";
  {
    kiln::rt::Session::InUse held(*reinterpret_cast<kiln::rt::Session *>(session));
    std::vector<Result> refused;
    refused.push_back(take(kiln_session_run(session, "forward", inputs, 2)));
    kiln_tensor t;
    refused.push_back(take(kiln_session_get_output(session, "z", &t)));
    refused.push_back(take(kiln_session_get_output_at(session, 0, &t)));
    float z[8];
    refused.push_back(take(kiln_session_copy_output(session, "z", z, sizeof z)));
    refused.push_back(take(kiln_session_get_state(session, "cache", &t)));
    int32_t rows[1] = {0};
    refused.push_back(take(kiln_session_gather_states(session, rows, 1)));
    for (const Result &r : refused) {
      EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
      EXPECT_EQ(r.message, busy);
    }
    EXPECT_EQ(kiln_session_output_count(session), 0u);
    kiln_session_stats stats;
    kiln_session_get_stats(session, &stats);
    EXPECT_EQ(stats.runs, 0u);
    kiln_session_clear_states(session); // does nothing
  }

  // Free again, the session has its outputs and counters as they were.
  EXPECT_EQ(kiln_session_output_count(session), 2u);
  kiln_session_stats after;
  kiln_session_get_stats(session, &after);
  EXPECT_EQ(after.runs, 1u);
  float z[8];
  EXPECT_OK(kiln_session_copy_output(session, "z", z, sizeof z));
  EXPECT_EQ(std::vector<float>(z, z + 8), referenceForward(x, y, *fake));
}
