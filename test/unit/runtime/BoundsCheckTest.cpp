// BoundsCheckTest.cpp - the run-time check of input value bounds on its own: evaluation
// failures, bounds wider than the dtype, unaligned data, and both element types.
#include "Error.h"
#include "Inputs.h"
#include "Manifest.h"

#include <gtest/gtest.h>

#include <climits>
#include <cstring>

using namespace kiln::rt;

namespace {

// One entry: ids i32 [N] with bounds LO..HI (as JSON text) and n64 i64 [N] with [0, "N"].
std::unique_ptr<Manifest> manifestWithBounds(const std::string &bounds) {
  return parseManifest(R"({"abi_version": 4, "model": "m", "kernels": ["k"], "entries": [{
    "name": "e",
    "inputs": [{"name": "ids", "dtype": "i32", "shape": ["N"], "bounds": )" +
                       bounds + R"(,
                "buffer": 0},
               {"name": "n64", "dtype": "i64", "shape": ["N"], "bounds": [0, "N"]}],
    "outputs": [{"name": "y", "dtype": "i32", "shape": ["N"], "buffer": 1}],
    "buffers": [{"dtype": "i32", "shape": ["N"], "kind": "input", "input": 0},
                {"dtype": "i32", "shape": ["N"], "kind": "temp", "live": [0, 0]}],
    "steps": [{"kernel": 0, "args": [0, 1]}]}]})");
}

// Runs the input checks of entry 0 on `ids` (stored at `bytes`, possibly unaligned) and
// n64; returns "" or the error message.
std::string check(const Manifest &m, const void *bytes, int64_t n,
                  const std::vector<int64_t> &n64) {
  std::vector<int64_t> shape{n};
  kiln_tensor inputs[2] = {{"ids", KILN_DTYPE_I32, 1, shape.data(), bytes},
                           {"n64", KILN_DTYPE_I64, 1, shape.data(), n64.data()}};
  const EntryDesc &e = m.entries[0];
  try {
    std::vector<const kiln_tensor *> byInput = matchInputs(e, inputs, 2);
    std::vector<int64_t> dims;
    bindInputDims(e, byInput, dims);
    checkInputDims(e, byInput, dims);
    checkBounds(e, byInput, dims);
  } catch (const Error &error) {
    EXPECT_EQ(error.code(), KILN_STATUS_INVALID_ARGUMENT);
    return error.what();
  }
  return "";
}

std::string check(const Manifest &m, const std::vector<int32_t> &ids) {
  return check(m, ids.data(), int64_t(ids.size()), std::vector<int64_t>(ids.size(), 0));
}

} // namespace

TEST(BoundsCheck, FailedEvaluationIsAnError) {
  auto m = manifestWithBounds(R"([0, "10/N"])");
  EXPECT_EQ(check(*m, {0, 5}), "");
  EXPECT_EQ(check(*m, {1, 2, 3}), "");
  EXPECT_EQ(check(*m, {1, 2, 4, 3}),
            "entry 'e': input 'ids' element [2] is 4, outside its "
            "bounds [0, 10/N] = [0, 2]");
  EXPECT_EQ(check(*m, {}), "entry 'e': bounds of input 'ids': division by zero in '10/N' "
                           "(with N=0)");
}

TEST(BoundsCheck, BoundsBeyondTheDtypeRange) {
  // Wider than i32 on both sides: every i32 value passes.
  auto wide = manifestWithBounds("[-5000000000, 5000000000]");
  EXPECT_EQ(check(*wide, {INT32_MIN, -1, 0, INT32_MAX}), "");
  // Entirely above i32: nothing passes, and the message shows the evaluated bounds.
  auto above = manifestWithBounds(R"(["N*1000000000", "N*2000000000"])");
  EXPECT_EQ(check(*above, {INT32_MAX, 0, 0}),
            "entry 'e': input 'ids' element [0] is 2147483647, outside its bounds "
            "[N*1000000000, N*2000000000] = [3000000000, 6000000000]");
  // Reaching into i32 from above: clamped at INT32_MAX, inclusive.
  auto upper = manifestWithBounds(R"([2147483646, "N*2147483647"])");
  EXPECT_EQ(check(*upper, {INT32_MAX, INT32_MAX - 1}), "");
  EXPECT_EQ(check(*upper, {INT32_MAX, INT32_MAX - 2}),
            "entry 'e': input 'ids' element [1] is 2147483645, outside its bounds "
            "[2147483646, N*2147483647] = [2147483646, 4294967294]");
  // Constant bounds written as expressions still show their values.
  auto expr = manifestWithBounds(R"(["0-3", " 7 "])");
  EXPECT_EQ(
      check(*expr, {-3, 7, 8}),
      "entry 'e': input 'ids' element [2] is 8, outside its bounds [0-3,  7 ] = [-3, 7]");
}

TEST(BoundsCheck, UnalignedDataAndI64Inputs) {
  auto m = manifestWithBounds("[-10, 10]");
  const int64_t n = 9000;
  std::vector<unsigned char> storage(size_t(n) * 4 + 1);
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    ids[size_t(i)] = int32_t(i % 21) - 10;
  std::memcpy(storage.data() + 1, ids.data(), size_t(n) * 4);
  std::vector<int64_t> n64(size_t(n), n);
  EXPECT_EQ(check(*m, storage.data() + 1, n, n64), "");
  int32_t bad = 11;
  std::memcpy(storage.data() + 1 + 4 * 8191, &bad, 4);
  EXPECT_EQ(check(*m, storage.data() + 1, n, n64),
            "entry 'e': input 'ids' element [8191] is 11, outside its bounds [-10, 10]");
  std::memcpy(storage.data() + 1 + 4 * 8191, &ids[8191], 4);

  n64[4] = n + 1;
  n64[5] = -1;
  EXPECT_EQ(check(*m, storage.data() + 1, n, n64),
            "entry 'e': input 'n64' element [4] is 9001, outside its bounds [0, N] = [0, "
            "9000]");
  n64[4] = INT64_MAX;
  EXPECT_EQ(
      check(*m, storage.data() + 1, n, n64),
      "entry 'e': input 'n64' element [4] is 9223372036854775807, outside its bounds "
      "[0, N] = [0, 9000]");
}
