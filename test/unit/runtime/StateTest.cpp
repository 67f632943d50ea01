// StateTest.cpp - session states, value dimensions and strided views, run end to end on
// state_model.c: creation, in-place writes at a position given by an input's value, row
// gathers (checked against a reference on random row lists), and every error a caller or
// a failing kernel can cause, with the states left as the API promises.
#include "TestUtil.h"

#include "kiln/runtime.hpp"

#include <algorithm>

using namespace kiln::test;

namespace {

class StateFixture : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_OK(kiln_model_open(STATE_MODEL, &model));
    ASSERT_OK(kiln_session_create(model, nullptr, nullptr, &session));
  }
  void TearDown() override {
    kiln_session_release(session);
    kiln_model_release(model);
  }

  // The helpers return the call's status, for ASSERT_OK or take().
  kiln_status *run(const char *entry, const std::vector<kiln_tensor> &inputs) {
    return kiln_session_run(session, entry, inputs.data(), inputs.size());
  }
  // start: creates cache [b, 3], zero-filled.
  kiln_status *start(int64_t b) {
    std::vector<int32_t> batch(size_t(b), 0);
    std::vector<int64_t> shape{b};
    return run("start", {tensor("batch", KILN_DTYPE_I32, shape, batch.data())});
  }
  // start_aux: creates aux [n, 2] holding `a`.
  kiln_status *startAux(const std::vector<float> &a) {
    std::vector<int64_t> shape{int64_t(a.size() / 2), 2};
    return run("start_aux", {tensor("a", KILN_DTYPE_F32, shape, a.data())});
  }
  // step: writes v[r] at position pos of row r; outputs prefix [B, pos+1]. limit (bounds
  // [0, pos]) is all `pos` unless given.
  kiln_status *step(const std::vector<float> &v, int32_t pos,
                    std::vector<int32_t> limit = {}) {
    if (limit.empty())
      limit.assign(v.size(), pos);
    std::vector<int64_t> vShape{int64_t(v.size()), 1}, scalar,
        limitShape{int64_t(limit.size())};
    return run("step", {tensor("v", KILN_DTYPE_F32, vShape, v.data()),
                        tensor("pos", KILN_DTYPE_I32, scalar, &pos),
                        tensor("limit", KILN_DTYPE_I32, limitShape, limit.data())});
  }
  kiln_status *peek(int64_t pos) {
    std::vector<int64_t> scalar;
    return run("peek", {tensor("pos", KILN_DTYPE_I64, scalar, &pos)});
  }
  kiln_status *gather(const std::vector<int32_t> &rows) {
    return kiln_session_gather_states(session, rows.data(), rows.size());
  }

  // A state or an output as (shape, values); shape {-1} when it cannot be read.
  struct Value {
    std::vector<int64_t> shape;
    std::vector<float> data;
    const void *address = nullptr;
    bool operator==(const Value &o) const { return shape == o.shape && data == o.data; }
  };
  static Value valueOf(const kiln_tensor &t) {
    Value v;
    v.shape.assign(t.shape, t.shape + t.rank);
    size_t n = 1;
    for (int64_t d : v.shape)
      n *= size_t(d);
    const float *f = static_cast<const float *>(t.data);
    v.data.assign(f, f + n);
    v.address = t.data;
    return v;
  }
  Value state(const char *name) {
    kiln_tensor t;
    Result r = take(kiln_session_get_state(session, name, &t));
    EXPECT_TRUE(r.ok()) << r;
    return r.ok() ? valueOf(t) : Value{{-1}, {}};
  }
  Value output(const char *name) {
    kiln_tensor t;
    Result r = take(kiln_session_get_output(session, name, &t));
    EXPECT_TRUE(r.ok()) << r;
    return r.ok() ? valueOf(t) : Value{{-1}, {}};
  }
  Result stateStatus(const char *name) {
    kiln_tensor t;
    return take(kiln_session_get_state(session, name, &t));
  }
  kiln_session_stats stats() {
    kiln_session_stats s;
    kiln_session_get_stats(session, &s);
    return s;
  }

  // Fills cache [b, 3] with 100 * r + p + 1 at row r, position p (nothing is zero).
  void fillCache(int64_t b) {
    ASSERT_OK(start(b));
    for (int32_t p = 0; p < 3; ++p) {
      std::vector<float> v(static_cast<size_t>(b));
      for (int64_t r = 0; r < b; ++r)
        v[size_t(r)] = float(100 * r + p + 1);
      ASSERT_OK(step(v, p));
    }
  }

  kiln_model *model = nullptr;
  kiln_session *session = nullptr;
};

// Row i of the result is row rows[i] of `before` (rows of `width` floats).
std::vector<float> gathered(const std::vector<float> &before, size_t width,
                            const std::vector<int32_t> &rows) {
  std::vector<float> out;
  for (int32_t r : rows)
    out.insert(out.end(), before.begin() + ptrdiff_t(size_t(r) * width),
               before.begin() + ptrdiff_t(size_t(r + 1) * width));
  return out;
}

// Rows a gather must copy: those whose source is not already in place.
uint64_t movedRows(const std::vector<int32_t> &rows, int64_t batch) {
  uint64_t n = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    n += int64_t(i) >= batch || rows[i] != int32_t(i);
  return n;
}

} // namespace

TEST_F(StateFixture, ModelListsItsStatesAndDims) {
  ASSERT_EQ(kiln_model_state_count(model), 2u);
  EXPECT_STREQ(kiln_model_state_name(model, 0), "cache");
  EXPECT_STREQ(kiln_model_state_name(model, 1), "aux");
  EXPECT_EQ(kiln_model_state_name(model, 2), nullptr);
  EXPECT_EQ(kiln_model_state_count(nullptr), 0u);
  // Dims bound by inputs' shapes, then by states, then by value_dim inputs.
  size_t e = 0;
  ASSERT_OK(kiln_model_find_entry(model, "peek", &e));
  ASSERT_EQ(kiln_model_dim_count(model, e), 3u);
  EXPECT_STREQ(kiln_model_dim_name(model, e, 0), "B");
  EXPECT_STREQ(kiln_model_dim_name(model, e, 1), "W");
  EXPECT_STREQ(kiln_model_dim_name(model, e, 2), "P");
  // The output's shape can be evaluated from them ahead of a run.
  const char *names[] = {"B", "P"};
  const int64_t values[] = {4, 1};
  int64_t shape[2];
  ASSERT_OK(kiln_model_output_shape(model, e, 0, names, values, 2, shape));
  EXPECT_EQ(shape[0], 4);
  EXPECT_EQ(shape[1], 2);
}

TEST_F(StateFixture, CreateZeroFillsAndReusesMemory) {
  Result r = stateStatus("cache");
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(r.message,
            "state 'cache' is not set: no run has created it; run 'start' first");
  r = stateStatus("nope");
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_EQ(r.message,
            "model 'stateful' has no state 'nope'; its states are 'cache', 'aux'");
  EXPECT_EQ(stats().state_bytes, 0u);

  ASSERT_OK(start(2));
  EXPECT_EQ(kiln_session_output_count(session), 0u); // an entry that only creates a state
  Value cache = state("cache");
  EXPECT_EQ(cache.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(cache.data, std::vector<float>(6, 0.0f));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(cache.address) % 64, 0u);
  EXPECT_EQ(stats().state_bytes, 64u); // 24 bytes, in a 64-byte aligned block

  // Written, then created again with a smaller batch: zeros again, in the same memory.
  // (Position 0: a first write at 1 would skip it, an error since issue 10.)
  ASSERT_OK(step({5, 6}, 0));
  EXPECT_EQ(state("cache").data, (std::vector<float>{5, 0, 0, 6, 0, 0}));
  ASSERT_OK(start(1));
  Value again = state("cache");
  EXPECT_EQ(again.shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(again.data, std::vector<float>(3, 0.0f));
  EXPECT_EQ(again.address, cache.address);
  EXPECT_EQ(stats().state_bytes, 64u);
}

// A step that skips positions once returned OK and the prefix held the zeros (or stale
// values) of the positions no run wrote.
TEST_F(StateFixture, StepsMayNotSkipPositions) {
  auto expectSkip = [&](int32_t pos, const std::string &message) {
    Result r = take(step({7, 8}, pos));
    EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
    EXPECT_EQ(r.message, message);
  };
  ASSERT_OK(start(2));
  expectSkip(1, "entry 'step': state 'cache' has 0 positions written along dim 1; "
                "writing position 1 would leave position 0 unwritten (write positions in "
                "order; rewriting one is allowed)");
  expectSkip(2, "entry 'step': state 'cache' has 0 positions written along dim 1; "
                "writing position 2 would leave positions 0 to 1 unwritten (write "
                "positions in order; rewriting one is allowed)");
  ASSERT_OK(step({10, 20}, 0));
  ASSERT_OK(step({11, 21}, 0)); // a rewrite
  expectSkip(2,
             "entry 'step': state 'cache' has 1 position written along dim 1 (0 to "
             "0); writing position 2 would leave position 1 unwritten (write positions "
             "in order; rewriting one is allowed)");
  // A refused step changed nothing.
  EXPECT_EQ(state("cache"), (Value{{2, 3}, {11, 0, 0, 21, 0, 0}}));
  ASSERT_OK(step({12, 22}, 1));
  // A gather keeps the positions written (every row has them); creating again resets.
  ASSERT_OK(gather({1, 0, 1}));
  ASSERT_OK(step({13, 23, 33}, 2));
  EXPECT_EQ(output("prefix"), (Value{{3, 3}, {21, 22, 13, 11, 12, 23, 21, 22, 33}}));
  ASSERT_OK(start(2));
  expectSkip(1, "entry 'step': state 'cache' has 0 positions written along dim 1; "
                "writing position 1 would leave position 0 unwritten (write positions in "
                "order; rewriting one is allowed)");
}

TEST_F(StateFixture, StepWritesInPlaceAtTheValueDimPosition) {
  ASSERT_OK(start(2));
  const void *memory = state("cache").address;
  ASSERT_OK(step({10, 20}, 0));
  EXPECT_EQ(output("prefix"), (Value{{2, 1}, {10, 20}}));
  ASSERT_OK(step({11, 21}, 1));
  EXPECT_EQ(output("prefix"), (Value{{2, 2}, {10, 11, 20, 21}}));
  EXPECT_EQ(state("cache"), (Value{{2, 3}, {10, 11, 0, 20, 21, 0}}));
  ASSERT_OK(step({12, 22}, 2));
  EXPECT_EQ(output("prefix"), (Value{{2, 3}, {10, 11, 12, 20, 21, 22}}));
  EXPECT_EQ(state("cache").address, memory); // never copied or moved

  // peek binds B and W from the cache's shape alone; its strides are ["W", 1].
  ASSERT_OK(peek(1));
  EXPECT_EQ(output("prefix"), (Value{{2, 2}, {10, 11, 20, 21}}));
  ASSERT_OK(peek(0));
  EXPECT_EQ(output("prefix"), (Value{{2, 1}, {10, 20}}));
}

TEST_F(StateFixture, ReadingAStateNoRunCreatedNamesTheCreator) {
  Result r = take(step({1, 2}, 0));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(
      r.message,
      "entry 'step' reads state 'cache', which no run has created; run 'start' first");
  r = take(run("whole", {}));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  // Creating another state does not help.
  ASSERT_OK(startAux({1, 2}));
  r = take(peek(0));
  EXPECT_EQ(
      r.message,
      "entry 'peek' reads state 'cache', which no run has created; run 'start' first");
}

TEST_F(StateFixture, BatchMismatchWithTheStateIsAnInvalidArgument) {
  ASSERT_OK(start(2));
  ASSERT_OK(step({1, 2}, 0));
  Result r = take(step({1, 2, 3}, 1));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message, "entry 'step': state 'cache' has shape [2, 3] but the entry needs "
                       "[B, 3] with B = 3 (from input 'v')");
  // Rejected before anything ran: the state is as it was, and still usable.
  EXPECT_EQ(state("cache"), (Value{{2, 3}, {1, 0, 0, 2, 0, 0}}));
  ASSERT_OK(step({3, 4}, 1));
}

TEST_F(StateFixture, ValueDimIsCheckedAgainstItsBoundsFirst) {
  ASSERT_OK(start(2));
  ASSERT_OK(step({1, 2}, 0));
  Result r = take(step({7, 8}, 3));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message, "entry 'step': input 'pos' is 3, outside its bounds [0, 2]");
  r = take(step({7, 8}, -1));
  EXPECT_EQ(r.message, "entry 'step': input 'pos' is -1, outside its bounds [0, 2]");
  // Other inputs' bounds may use the value_dim: limit must lie in [0, P].
  r = take(step({7, 8}, 1, {1, 2}));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message, "entry 'step': input 'limit' element [1] is 2, outside its bounds "
                       "[0, P] = [0, 1]");
  // A run rejected before its first kernel changes no state (nor forgets it).
  EXPECT_EQ(state("cache"), (Value{{2, 3}, {1, 0, 0, 2, 0, 0}}));
  ASSERT_OK(step({7, 8}, 1, {1, 0}));
  EXPECT_EQ(state("cache"), (Value{{2, 3}, {1, 7, 0, 2, 8, 0}}));
  // Without bounds, a negative value is still no dimension.
  r = take(peek(-1));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message, "entry 'peek': input 'pos' is -1, but its value is dimension 'P', "
                       "which cannot be negative");
}

TEST_F(StateFixture, StridedViewMustFitInTheState) {
  fillCache(2);
  ASSERT_OK(peek(2)); // the whole cache: last element 5 of 6
  EXPECT_EQ(output("prefix"), (Value{{2, 3}, {1, 2, 3, 101, 102, 103}}));
  Result r = take(peek(3));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message, "entry 'peek': buffers[1] (view) [2, 4] with strides [3, 1] from "
                       "offset 0 reaches element 6 but buffers[0] it views is [2, 3] (6 "
                       "elements) with B=2, W=3, P=3");
  EXPECT_EQ(state("cache").data, (std::vector<float>{1, 2, 3, 101, 102, 103}));
}

TEST_F(StateFixture, FailedRunForgetsTheStatesItWrites) {
  ASSERT_OK(start(2));
  ASSERT_OK(startAux({1, 2, 3, 4}));
  ASSERT_OK(step({10, 20}, 0));
  // broken writes position 0 of the cache, then its second kernel fails.
  std::vector<float> v{7, 8}, w{1, 2};
  std::vector<int64_t> vShape{2, 1}, wShape{2, 1};
  Result r = take(run("broken", {tensor("v", KILN_DTYPE_F32, vShape, v.data()),
                                 tensor("w", KILN_DTYPE_F32, wShape, w.data())}));
  EXPECT_EQ(r.code, KILN_STATUS_KERNEL_ERROR) << r;
  EXPECT_NE(r.message.find("entry 'broken': kernel 'real_copy' (step 1 of 2) failed"),
            std::string::npos)
      << r;
  EXPECT_NE(
      r.message.find("Input buffer src is accessed at 1, which is beyond the max (0) "
                     "in dimension 0"),
      std::string::npos)
      << r;

  r = stateStatus("cache");
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(r.message,
            "state 'cache' is not set: it was forgotten when a run of 'broken' "
            "failed; run 'start' first");
  r = take(step({1, 2}, 1));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(r.message,
            "entry 'step' reads state 'cache', which was forgotten when a run of "
            "'broken' failed; run 'start' first");
  // A state the failed entry does not touch survives.
  EXPECT_EQ(state("aux"), (Value{{2, 2}, {1, 2, 3, 4}}));

  // Created again, the same entry succeeds when w is wide enough.
  ASSERT_OK(start(2));
  std::vector<float> wide{1, 2, 3, 4};
  std::vector<int64_t> wideShape{2, 2};
  ASSERT_OK(run("broken", {tensor("v", KILN_DTYPE_F32, vShape, v.data()),
                           tensor("w", KILN_DTYPE_F32, wideShape, wide.data())}));
  EXPECT_EQ(output("out"), (Value{{2, 2}, {1, 2, 3, 4}}));
  EXPECT_EQ(state("cache").data, (std::vector<float>{7, 0, 0, 8, 0, 0}));
}

TEST_F(StateFixture, OutputThatIsAStateCannotBeDetached) {
  kiln_buffer *buffer = nullptr;
  fillCache(2);
  ASSERT_OK(run("whole", {}));
  Result r = take(kiln_session_detach_output(session, "cache", &buffer));
  EXPECT_EQ(buffer, nullptr);
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(r.message,
            "output 'cache' cannot be detached: it is a view of state 'cache', "
            "whose memory the session keeps; copy it instead "
            "(kiln_session_copy_output)");
  EXPECT_EQ(output("cache"), state("cache")); // still the session's, still readable
}

TEST_F(StateFixture, OutputThatIsAStateIsUnreadableAfterAGather) {
  fillCache(2);
  ASSERT_OK(run("whole", {}));
  Value cache = output("cache");
  EXPECT_EQ(cache, state("cache"));
  EXPECT_EQ(cache.address, state("cache").address); // the state's memory, not a copy
  ASSERT_OK(gather({1, 0}));
  kiln_tensor t;
  Result r = take(kiln_session_get_output(session, "cache", &t));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(r.message,
            "output 'cache' is a view of state 'cache', which changed after the "
            "run (kiln_session_gather_states or kiln_session_clear_states); read "
            "it before changing the states");
  r = take(kiln_session_get_output_at(session, 0, &t));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;

  // An output in a temp stays readable after a gather.
  ASSERT_OK(peek(0));
  ASSERT_OK(gather({1, 0}));
  EXPECT_EQ(output("prefix"), (Value{{2, 1}, {101, 1}}));
  EXPECT_EQ(state("cache").data, (std::vector<float>{1, 2, 3, 101, 102, 103}));
}

TEST_F(StateFixture, GatherReordersDuplicatesDropsAndGrows) {
  fillCache(4);
  std::vector<float> aux{0, 1, 10, 11, 20, 21, 30, 31};
  ASSERT_OK(startAux(aux));
  std::vector<float> cache = state("cache").data;
  int64_t batch = 4;
  uint64_t copied = 0;
  auto check = [&](const std::vector<int32_t> &rows, const char *what) {
    SCOPED_TRACE(what);
    ASSERT_OK(gather(rows));
    cache = gathered(cache, 3, rows);
    aux = gathered(aux, 2, rows);
    copied += movedRows(rows, batch);
    batch = int64_t(rows.size());
    EXPECT_EQ(state("cache"), (Value{{batch, 3}, cache}));
    EXPECT_EQ(state("aux"), (Value{{batch, 2}, aux}));
    EXPECT_EQ(stats().state_rows_copied, copied);
  };
  check({0, 1, 2, 3}, "identity: nothing moves");
  EXPECT_EQ(stats().state_rows_copied, 0u);
  check({1, 2, 3, 0}, "one 4-cycle");
  EXPECT_EQ(stats().state_rows_copied, 4u);
  check({1, 0, 3, 2}, "two swaps");
  check({0, 0, 3, 3}, "duplicates");
  EXPECT_EQ(stats().state_rows_copied, 10u);
  check({3, 1}, "drop rows 0 and 2");
  EXPECT_EQ(stats().state_rows_copied, 11u);
  // Back to 4 rows: the memory of 4 is still there, so nothing is allocated.
  uint64_t bytes = stats().state_bytes;
  check({0, 1, 1, 0}, "grow within the memory held");
  EXPECT_EQ(stats().state_bytes, bytes);
  // Beam search: 2 sources expanded to 4 beams each, past the memory held.
  check({0, 0, 0, 0, 1, 1, 1, 1}, "grow past the memory held");
  EXPECT_GT(stats().state_bytes, bytes);
  EXPECT_EQ(stats().state_rows_copied, 11u + 2u + 7u);
  check({}, "no rows at all");
  EXPECT_EQ(state("cache").shape, (std::vector<int64_t>{0, 3}));

  // An empty batch still runs.
  ASSERT_OK(peek(1));
  EXPECT_EQ(output("prefix").shape, (std::vector<int64_t>{0, 2}));
  ASSERT_OK(step({}, 2));
}

TEST_F(StateFixture, GatherMatchesTheReferenceOnRandomRows) {
  std::mt19937 rng(7);
  int64_t batch = 0;
  std::vector<float> cache;
  uint64_t copied = 0;
  for (int iteration = 0; iteration < 300; ++iteration) {
    if (batch == 0) {
      batch = 1 + int64_t(rng() % 7);
      fillCache(batch);
      cache = state("cache").data;
    }
    // Lengths from 0 to twice the batch; rows drawn from a few values to force
    // duplicates, or a permutation to force long cycles.
    size_t count = rng() % size_t(2 * batch + 1);
    std::vector<int32_t> rows(count);
    if (rng() % 3 == 0 && count == size_t(batch)) {
      for (size_t i = 0; i < count; ++i)
        rows[i] = int32_t(i);
      std::shuffle(rows.begin(), rows.end(), rng);
    } else {
      for (int32_t &r : rows)
        r = int32_t(rng() % uint64_t(batch));
    }
    SCOPED_TRACE(::testing::Message() << "iteration " << iteration);
    ASSERT_OK(gather(rows));
    cache = gathered(cache, 3, rows);
    copied += movedRows(rows, batch);
    batch = int64_t(count);
    ASSERT_EQ(state("cache"), (Value{{batch, 3}, cache}));
    ASSERT_EQ(stats().state_rows_copied, copied);
  }
}

TEST_F(StateFixture, GatherErrorsLeaveTheStatesUnchanged) {
  Result r = take(gather({0}));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(
      r.message,
      "kiln_session_gather_states: no state is set; run 'start' or 'start_aux' first");

  fillCache(2);
  ASSERT_OK(startAux({1, 2, 3, 4, 5, 6}));
  r = take(gather({1, 0}));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(r.message,
            "kiln_session_gather_states: the states have different batch sizes: "
            "'cache' [2, 3], 'aux' [3, 2]");

  ASSERT_OK(startAux({1, 2, 3, 4}));
  Value cache = state("cache"), aux = state("aux");
  r = take(gather({1, 2}));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(
      r.message,
      "kiln_session_gather_states: rows[1] is 2, outside the batch of 2 rows (0 to 1)");
  // Growing (past the memory held) fails on a bad row before anything moves.
  r = take(gather({1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, -1}));
  EXPECT_EQ(
      r.message,
      "kiln_session_gather_states: rows[14] is -1, outside the batch of 2 rows (0 to 1)");
  r = take(kiln_session_gather_states(session, nullptr, 1));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  r = take(kiln_session_gather_states(nullptr, nullptr, 0));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(state("cache"), cache);
  EXPECT_EQ(state("aux"), aux);
  EXPECT_EQ(stats().state_rows_copied, 0u);

  // A state that is not set is not gathered (and does not count for the batch).
  ASSERT_OK(start(5));
  kiln_session_clear_states(session);
  ASSERT_OK(startAux({1, 2, 3, 4}));
  ASSERT_OK(gather({1}));
  EXPECT_EQ(state("aux"), (Value{{1, 2}, {3, 4}}));
  EXPECT_EQ(stateStatus("cache").code, KILN_STATUS_FAILED_PRECONDITION);
}

TEST_F(StateFixture, ClearForgetsEveryStateButKeepsTheMemory) {
  fillCache(2);
  ASSERT_OK(startAux({1, 2, 3, 4}));
  uint64_t bytes = stats().state_bytes;
  const void *memory = state("cache").address;
  kiln_session_clear_states(session);
  kiln_session_clear_states(nullptr); // accepted
  EXPECT_EQ(stats().state_bytes, bytes);
  Result r = stateStatus("cache");
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_EQ(r.message,
            "state 'cache' is not set: kiln_session_clear_states cleared it; run "
            "'start' first");
  r = take(step({1, 2}, 0));
  EXPECT_EQ(r.message,
            "entry 'step' reads state 'cache', which kiln_session_clear_states "
            "cleared; run 'start' first");
  EXPECT_EQ(take(gather({0})).code, KILN_STATUS_FAILED_PRECONDITION);
  ASSERT_OK(start(2));
  EXPECT_EQ(state("cache").address, memory);
  EXPECT_EQ(stats().state_bytes, bytes);
}

TEST_F(StateFixture, NullArgumentsAreErrors) {
  kiln_tensor t;
  EXPECT_EQ(take(kiln_session_get_state(nullptr, "cache", &t)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_session_get_state(session, nullptr, &t)).code,
            KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(take(kiln_session_get_state(session, "cache", nullptr)).code,
            KILN_STATUS_INVALID_ARGUMENT);
}

TEST(StateCpp, WrapperGathersAndThrows) {
  kiln::Model model = kiln::Model::open(STATE_MODEL);
  kiln::Session session(model, kiln::Weights());
  std::vector<int32_t> batch(3, 0);
  session.run("start", {kiln::TensorArg::of("batch", {3}, batch.data())});
  std::vector<float> v{1, 2, 3};
  int32_t pos = 0;
  std::vector<int32_t> limit(3, 0);
  session.run("step", {kiln::TensorArg::of("v", {3, 1}, v.data()),
                       kiln::TensorArg::of("pos", {}, &pos),
                       kiln::TensorArg::of("limit", {3}, limit.data())});
  session.gatherStates({2, 2, 0});
  kiln::OutputView cache = session.state("cache");
  EXPECT_EQ(cache.shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(std::vector<float>(cache.as<float>(), cache.as<float>() + 9),
            (std::vector<float>{3, 0, 0, 3, 0, 0, 1, 0, 0}));
  EXPECT_EQ(session.stats().state_rows_copied, 3u); // every row changes
  try {
    session.gatherStates({3});
    ADD_FAILURE() << "gathering row 3 of 3 succeeded";
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_INVALID_ARGUMENT);
  }
  session.clearStates();
  try {
    session.state("cache");
    ADD_FAILURE() << "a cleared state was readable";
  } catch (const kiln::Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_FAILED_PRECONDITION);
  }
}
