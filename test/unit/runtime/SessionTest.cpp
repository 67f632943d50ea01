// SessionTest.cpp - running the fake model: numerics against a reference computed here,
// dimension binding, views, temporaries, outputs, and every input mistake.
#include "FakeSession.h"

#include <climits>
#include <cmath>
#include <cstring>
#include <thread>

using namespace kiln::test;

namespace {

struct SessionFixture : FakeSessionFixture {
  // Runs forward on random x, y of [B, S, 4] and checks both outputs.
  void runForward(int64_t b, int64_t s) {
    std::vector<int64_t> shape{b, s, 4};
    std::vector<float> x = randomFloats(size_t(b * s * 4), rng);
    std::vector<float> y = randomFloats(size_t(b * s * 4), rng);
    kiln_tensor inputs[2] = {tensor("y", KILN_DTYPE_F32, shape, y.data()),
                             tensor("x", KILN_DTYPE_F32, shape, x.data())};
    ASSERT_OK(kiln_session_run(session, "forward", inputs, 2));
    ASSERT_EQ(kiln_session_output_count(session), 2u);

    kiln_tensor z;
    ASSERT_OK(kiln_session_get_output(session, "z", &z));
    EXPECT_STREQ(z.name, "z");
    EXPECT_EQ(z.dtype, KILN_DTYPE_F32);
    ASSERT_EQ(z.rank, 2);
    EXPECT_EQ(z.shape[0], b * s);
    EXPECT_EQ(z.shape[1], 4);
    std::vector<float> want = referenceForward(x, y, *fake);
    const float *got = static_cast<const float *>(z.data);
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_FLOAT_EQ(got[i], want[i]) << "z[" << i << "] with B=" << b << ", S=" << s;

    kiln_tensor sum;
    ASSERT_OK(kiln_session_get_output_at(session, 1, &sum));
    EXPECT_STREQ(sum.name, "s");
    ASSERT_EQ(sum.rank, 3);
    EXPECT_EQ(std::vector<int64_t>(sum.shape, sum.shape + 3), shape);
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_FLOAT_EQ(static_cast<const float *>(sum.data)[i], x[i] + y[i]);
  }

  Result runForwardWith(const std::vector<int64_t> &xShape,
                        const std::vector<int64_t> &yShape,
                        kiln_dtype xType = KILN_DTYPE_F32) {
    std::vector<float> x(64, 0.5f), y(64, -0.25f);
    kiln_tensor inputs[2] = {tensor("x", xType, xShape, x.data()),
                             tensor("y", KILN_DTYPE_F32, yShape, y.data())};
    return take(kiln_session_run(session, "forward", inputs, 2));
  }
};

#define EXPECT_MESSAGE_HAS(result, text)                                                 \
  EXPECT_NE((result).message.find(text), std::string::npos) << (result)

} // namespace

TEST_F(SessionFixture, ForwardMatchesReference) { runForward(3, 5); }

TEST_F(SessionFixture, TempsAreReusedAcrossRunsWithDifferentBatch) {
  runForward(4, 3);
  kiln_session_stats first;
  kiln_session_get_stats(session, &first);
  EXPECT_EQ(first.runs, 1u);
  EXPECT_EQ(first.temp_allocations, 3u); // the arena and the blocks of the 2 outputs
  EXPECT_GE(first.temp_bytes, 3u * 4 * 3 * 4 * sizeof(float));

  runForward(2, 3); // smaller: fits in what is held
  runForward(1, 1);
  kiln_session_stats after;
  kiln_session_get_stats(session, &after);
  EXPECT_EQ(after.runs, 3u);
  EXPECT_EQ(after.temp_allocations, first.temp_allocations);
  EXPECT_EQ(after.temp_bytes, first.temp_bytes);

  runForward(8, 3); // larger: grows
  kiln_session_get_stats(session, &after);
  EXPECT_EQ(after.temp_allocations, first.temp_allocations + 3);
  EXPECT_GT(after.temp_bytes, first.temp_bytes);
}

TEST_F(SessionFixture, TempsAreNotReusedWhenDisabled) {
  kiln_session_options options;
  kiln_session_options_initialize(&options);
  EXPECT_EQ(options.reuse_temps, 1);
  options.reuse_temps = 0;
  kiln_session_release(session);
  ASSERT_OK(kiln_session_create(model, weights, &options, &session));
  runForward(2, 2);
  runForward(2, 2);
  kiln_session_stats stats;
  kiln_session_get_stats(session, &stats);
  EXPECT_EQ(stats.temp_allocations, 6u);
}

TEST_F(SessionFixture, TempLimitIsEnforcedBeforeRunning) {
  kiln_session_options options;
  kiln_session_options_initialize(&options);
  options.max_temp_bytes = 500;
  kiln_session_release(session);
  ASSERT_OK(kiln_session_create(model, weights, &options, &session));
  runForward(2, 2); // 3 temps x 64 bytes
  Result r = runForwardWith({4, 4, 4}, {4, 4, 4});
  EXPECT_EQ(r.code, KILN_STATUS_RESOURCE_EXHAUSTED) << r;
  EXPECT_MESSAGE_HAS(r,
                     "needs 768 bytes of temporaries with B=4, S=4, over the session's "
                     "limit of 500 bytes");
}

TEST_F(SessionFixture, EmptyBatchRuns) {
  runForward(0, 3);
  kiln_tensor z;
  ASSERT_OK(kiln_session_get_output(session, "z", &z));
  EXPECT_EQ(z.shape[0], 0);
  EXPECT_NE(z.data, nullptr);
}

TEST_F(SessionFixture, IntegerEntryWithExpressionDims) {
  // widen: tok [B, T] binds T; pos must be [B, T+1]; out = 2 * pos as i64.
  std::uniform_int_distribution<int32_t> dist(-1000, 1000);
  std::vector<int32_t> tok(2 * 3), pos(2 * 4);
  for (auto &v : tok)
    v = dist(rng);
  for (auto &v : pos)
    do
      v = dist(rng);
    while (v == 0);
  std::vector<int64_t> tokShape{2, 3}, posShape{2, 4};
  kiln_tensor inputs[2] = {tensor("pos", KILN_DTYPE_I32, posShape, pos.data()),
                           tensor("tok", KILN_DTYPE_I32, tokShape, tok.data())};
  ASSERT_OK(kiln_session_run(session, "widen", inputs, 2));
  kiln_tensor out;
  ASSERT_OK(kiln_session_get_output(session, "out", &out));
  EXPECT_EQ(out.dtype, KILN_DTYPE_I64);
  ASSERT_EQ(out.rank, 2);
  EXPECT_EQ(out.shape[1], 4);
  for (size_t i = 0; i < pos.size(); ++i)
    EXPECT_EQ(static_cast<const int64_t *>(out.data)[i], 2 * int64_t(pos[i]));

  std::vector<int64_t> copy(pos.size());
  ASSERT_OK(kiln_session_copy_output(session, "out", copy.data(), copy.size() * 8));
  EXPECT_EQ(copy[3], 2 * int64_t(pos[3]));
  Result r = take(kiln_session_copy_output(session, "out", copy.data(), 8));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(r, "output 'out' needs 64 bytes, the destination has 8");

  posShape = {2, 5};
  inputs[0] = tensor("pos", KILN_DTYPE_I32, posShape, pos.data());
  r = take(kiln_session_run(session, "widen", inputs, 2));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(r, "entry 'widen': input 'pos' has shape [2, 5], expected [B, T+1]: "
                        "dim 1 is 5, expected T+1 = 4 with B=2, T=3");
}

TEST_F(SessionFixture, DimensionBoundTwiceMustAgree) {
  Result r = runForwardWith({2, 3, 4}, {3, 3, 4});
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(
      r, "entry 'forward': dimension 'B' is 2 in input 'x' (dim 0 of [2, 3, 4]) "
         "but 3 in input 'y' (dim 0 of [3, 3, 4])");
}

TEST_F(SessionFixture, StaticDimensionMismatch) {
  Result r = runForwardWith({2, 3, 5}, {2, 3, 4});
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(
      r, "entry 'forward': input 'x' has shape [2, 3, 5], expected [B, S, 4]: "
         "dim 2 is 5, expected 4");
}

TEST_F(SessionFixture, WrongRank) {
  Result r = runForwardWith({6, 4}, {2, 3, 4});
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(r, "entry 'forward': input 'x' has rank 2, expected 3 [B, S, 4]");
}

TEST_F(SessionFixture, WrongDType) {
  Result r = runForwardWith({2, 3, 4}, {2, 3, 4}, KILN_DTYPE_I32);
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(r, "entry 'forward': input 'x' has dtype i32, expected f32");
  r = runForwardWith({2, 3, 4}, {2, 3, 4}, kiln_dtype(0));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
}

TEST_F(SessionFixture, NegativeSizeAndNullData) {
  Result r = runForwardWith({2, -3, 4}, {2, 3, 4});
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(r, "negative size -3 in dim 1");
  std::vector<int64_t> shape{1, 1, 4};
  float y[4] = {1, 2, 3, 4};
  kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, nullptr),
                           tensor("y", KILN_DTYPE_F32, shape, y)};
  r = take(kiln_session_run(session, "forward", inputs, 2));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(r, "input 'x' has shape [1, 1, 4] but its data is NULL");
}

TEST_F(SessionFixture, UnknownEntryListsAvailableOnes) {
  Result r = take(kiln_session_run(session, "decode_step", nullptr, 0));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_MESSAGE_HAS(
      r, "model 'fake' has no entry 'decode_step'; available entries: forward, "
         "widen, broken, encode");
}

TEST_F(SessionFixture, MissingUnknownAndDuplicateInputs) {
  std::vector<int64_t> shape{1, 1, 4};
  float data[4] = {1, 2, 3, 4};
  kiln_tensor onlyX = tensor("x", KILN_DTYPE_F32, shape, data);
  Result r = take(kiln_session_run(session, "forward", &onlyX, 1));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(r, "entry 'forward': missing input 'y' (it takes 'x', 'y')");

  r = take(kiln_session_run(session, "forward", nullptr, 0));
  EXPECT_MESSAGE_HAS(r, "missing inputs 'x', 'y'");

  kiln_tensor unknown[2] = {onlyX, tensor("q", KILN_DTYPE_F32, shape, data)};
  r = take(kiln_session_run(session, "forward", unknown, 2));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_MESSAGE_HAS(r, "entry 'forward' has no input 'q'; its inputs are 'x', 'y'");

  kiln_tensor twice[2] = {onlyX, onlyX};
  r = take(kiln_session_run(session, "forward", twice, 2));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_MESSAGE_HAS(r, "input 'x' is given more than once");
}

TEST_F(SessionFixture, KernelErrorCarriesHalideMessage) {
  std::vector<int64_t> shape{5};
  std::vector<float> x = randomFloats(5, rng);
  kiln_tensor input = tensor("x", KILN_DTYPE_F32, shape, x.data());
  Result r = take(kiln_session_run(session, "broken", &input, 1));
  EXPECT_EQ(r.code, KILN_STATUS_KERNEL_ERROR) << r;
  EXPECT_MESSAGE_HAS(
      r, "entry 'broken': kernel 'fake_fail' (step 0 of 1) failed with Halide "
         "error code -1: fake_fail: refusing to process x of 5 elements");
}

TEST_F(SessionFixture, OutputsNeedASuccessfulRun) {
  kiln_tensor out;
  Result r = take(kiln_session_get_output(session, "z", &out));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_MESSAGE_HAS(r, "has not run yet");

  runForward(1, 2);
  r = take(kiln_session_get_output(session, "w", &out));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;
  EXPECT_MESSAGE_HAS(r, "entry 'forward' has no output 'w'; its outputs are 'z', 's'");
  r = take(kiln_session_get_output_at(session, 2, &out));
  EXPECT_EQ(r.code, KILN_STATUS_NOT_FOUND) << r;

  Result failed = runForwardWith({6, 4}, {2, 3, 4});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(kiln_session_output_count(session), 0u);
  r = take(kiln_session_get_output(session, "z", &out));
  EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
  EXPECT_MESSAGE_HAS(r, "the last run failed");
}

TEST_F(SessionFixture, SessionNeedsWeightsForAModelWithParameters) {
  kiln_session *other = reinterpret_cast<kiln_session *>(0x1);
  Result r = take(kiln_session_create(model, nullptr, nullptr, &other));
  EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
  EXPECT_EQ(other, nullptr);
  EXPECT_MESSAGE_HAS(r, "model 'fake' has 2 parameters; the session needs weights");
}

TEST_F(SessionFixture, SessionKeepsModelAndWeightsAlive) {
  kiln_weights_release(weights);
  kiln_model_release(model);
  weights = nullptr;
  model = nullptr;
  runForward(2, 2);
}

TEST_F(SessionFixture, SessionsOnSeveralThreadsShareModelAndWeights) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      kiln_session *own = nullptr;
      if (!take(kiln_session_create(model, weights, nullptr, &own)).ok()) {
        failures[t] = 1;
        return;
      }
      std::mt19937 local(unsigned(100 + t));
      for (int iter = 0; iter < 20; ++iter) {
        int64_t b = 1 + iter % 3;
        std::vector<int64_t> shape{b, 2, 4};
        std::vector<float> x = randomFloats(size_t(b * 8), local);
        std::vector<float> y = randomFloats(size_t(b * 8), local);
        kiln_tensor inputs[2] = {tensor("x", KILN_DTYPE_F32, shape, x.data()),
                                 tensor("y", KILN_DTYPE_F32, shape, y.data())};
        kiln_tensor z;
        if (!take(kiln_session_run(own, "forward", inputs, 2)).ok() ||
            !take(kiln_session_get_output(own, "z", &z)).ok()) {
          ++failures[t];
          continue;
        }
        std::vector<float> want = referenceForward(x, y, *fake);
        const float *got = static_cast<const float *>(z.data);
        for (size_t i = 0; i < want.size(); ++i)
          if (std::fabs(got[i] - want[i]) > 1e-6f * (1 + std::fabs(want[i])))
            ++failures[t];
      }
      kiln_session_release(own);
    });
  }
  for (auto &th : threads)
    th.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST_F(SessionFixture, MisalignedTensorsInTheFileAreRealigned) {
  // Writers may pack tensors at any byte offset; a 13-byte header puts the data at offset
  // 21, so neither tensor is 4-byte aligned in the mapping.
  std::string header =
      "{\"proj.weight\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]},"
      "\"proj.bias\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[16,32]}}";
  header.append((13 - header.size() % 8 + 8) % 8, ' ');
  ASSERT_EQ((8 + header.size()) % 4, 1u);
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = char(uint64_t(header.size()) >> (8 * i));
  bytes += header;
  bytes.append(reinterpret_cast<const char *>(fake->weight.data()), 16);
  bytes.append(reinterpret_cast<const char *>(fake->bias.data()), 16);
  std::string path = tempPath("misaligned.safetensors");
  writeFile(path, bytes);

  kiln_weights *misaligned = nullptr;
  ASSERT_OK(kiln_weights_open(model, path.c_str(), &misaligned));
  kiln_session_release(session);
  ASSERT_OK(kiln_session_create(model, misaligned, nullptr, &session));
  kiln_weights_release(misaligned);
  runForward(2, 3);
  std::remove(path.c_str());
}

// Input value bounds (the encode entry): src_ids in [0, 49], src_lengths in [1, S], start
// (i64) in [-1, S-1]. A value outside fails the run before any kernel, naming the first
// offending element.

namespace {

struct EncodeFixture : SessionFixture {
  std::vector<int32_t> ids, lengths;
  std::vector<int64_t> start;
  int64_t b = 0, s = 0;

  // In-bounds inputs of [B, S], [B], [B] using the edges of every range.
  void fill(int64_t batch, int64_t seq) {
    b = batch;
    s = seq;
    ids.assign(size_t(b * s), 0);
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = int32_t(i * 7 % 50);
    if (!ids.empty())
      ids.back() = 49;
    lengths.assign(size_t(b), int32_t(s));
    start.assign(size_t(b), -1);
    if (b > 1) {
      lengths[0] = 1;
      start[1] = s - 1;
    }
  }

  Result run() {
    std::vector<int64_t> idsShape{b, s}, batchShape{b};
    kiln_tensor inputs[3] = {
        tensor("src_lengths", KILN_DTYPE_I32, batchShape, lengths.data()),
        tensor("start", KILN_DTYPE_I64, batchShape, start.data()),
        tensor("src_ids", KILN_DTYPE_I32, idsShape, ids.data())};
    return take(kiln_session_run(session, "encode", inputs, 3));
  }

  void expectRejected(const std::string &message) {
    Result r = run();
    EXPECT_EQ(r.code, KILN_STATUS_INVALID_ARGUMENT) << r;
    EXPECT_EQ(r.message, message);
    EXPECT_EQ(kiln_session_output_count(session), 0u);
  }
};

} // namespace

TEST_F(EncodeFixture, InBoundsInputsRun) {
  for (auto [batch, seq] :
       {std::pair<int64_t, int64_t>{2, 9}, {1, 1}, {3, 2000}, {0, 4}}) {
    fill(batch, seq);
    Result r = run();
    ASSERT_TRUE(r.ok()) << r << " with B=" << batch << ", S=" << seq;
    kiln_tensor out;
    ASSERT_OK(kiln_session_get_output(session, "out", &out));
    ASSERT_EQ(out.rank, 2);
    EXPECT_EQ(out.shape[0], batch);
    EXPECT_EQ(out.shape[1], seq);
    for (size_t i = 0; i < ids.size(); ++i)
      ASSERT_EQ(static_cast<const int64_t *>(out.data)[i], 2 * int64_t(ids[i])) << i;
  }
  // S = 0 makes [1, S] empty, which is fine while there are no lengths to check.
  fill(0, 0);
  Result r = run();
  EXPECT_TRUE(r.ok()) << r;
}

TEST_F(EncodeFixture, StaticBoundsNameTheFirstElementOutside) {
  fill(2, 9);
  ids[1 * 9 + 3] = 57;
  expectRejected(
      "entry 'encode': input 'src_ids' element [1, 3] is 57, outside its bounds "
      "[0, 49]");
  ids[0 * 9 + 5] = -1; // earlier in memory: reported first
  expectRejected(
      "entry 'encode': input 'src_ids' element [0, 5] is -1, outside its bounds "
      "[0, 49]");
  fill(2, 9);
  ids[9] = 50;
  expectRejected(
      "entry 'encode': input 'src_ids' element [1, 0] is 50, outside its bounds "
      "[0, 49]");
  fill(2, 9);
  ids[0] = INT32_MIN;
  expectRejected(
      "entry 'encode': input 'src_ids' element [0, 0] is -2147483648, outside its "
      "bounds [0, 49]");
  // The session recovers: a good run after failed ones.
  fill(2, 9);
  EXPECT_TRUE(run().ok());
}

TEST_F(EncodeFixture, ExpressionBoundsShowTheirValues) {
  fill(2, 9);
  lengths[0] = 12;
  expectRejected(
      "entry 'encode': input 'src_lengths' element [0] is 12, outside its bounds "
      "[1, S] = [1, 9]");
  lengths[0] = 9;
  lengths[1] = 0;
  expectRejected(
      "entry 'encode': input 'src_lengths' element [1] is 0, outside its bounds "
      "[1, S] = [1, 9]");
  fill(2, 9);
  start[1] = 9;
  expectRejected("entry 'encode': input 'start' element [1] is 9, outside its bounds "
                 "[-1, S-1] = [-1, 8]");
  start[1] = INT64_MIN;
  expectRejected(
      "entry 'encode': input 'start' element [1] is -9223372036854775808, outside "
      "its bounds [-1, S-1] = [-1, 8]");
  // An empty range rejects any element: with S = 0, no length is valid.
  fill(2, 0);
  lengths = {0, 1};
  expectRejected(
      "entry 'encode': input 'src_lengths' element [0] is 0, outside its bounds "
      "[1, S] = [1, 0]");
}

TEST_F(EncodeFixture, LargeInputsAreCheckedToTheLastElement) {
  // Several of the check's 4096-element blocks; culprits at and around a block boundary.
  for (int64_t at : {int64_t(4095), int64_t(4096), int64_t(3 * 5000 - 1)}) {
    fill(3, 5000);
    ids[size_t(at)] = 50;
    expectRejected("entry 'encode': input 'src_ids' element [" +
                   std::to_string(at / 5000) + ", " + std::to_string(at % 5000) +
                   "] is 50, outside its bounds [0, 49]");
  }
}
