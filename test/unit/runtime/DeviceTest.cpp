//===- DeviceTest.cpp - The device path's bookkeeping, with a counting fake -===//
//
// Session's device path (SessionDevice.cpp) driven by a fake device whose "device
// memory" is host memory the kernels are pointed at, so the CPU kernels of the fake and
// state models compute there and the session's host copies are stale until it downloads
// them. Asserts the results equal a CPU session's, and when each copy happens: weights
// once per weights handle, blocks allocated once and reused, outputs and states
// downloaded only when read, gathers moving rows on the device only.
//
//===----------------------------------------------------------------------===//

#include "FakeSession.h"

#include "Error.h"
#include "Model.h"

#include <cstdlib>
#include <cstring>
#include <map>

using namespace kiln::test;
using kiln::rt::DeviceAddress;

namespace {

struct Counts {
  int allocations = 0, releases = 0, uploads = 0, downloads = 0, copies = 0;
  uint64_t uploadedBytes = 0;
  uint64_t largestAllocation = UINT64_MAX; // what the fake device can give at once
};

class CountingDevice final : public kiln::rt::Device {
public:
  explicit CountingDevice(Counts &counts) : counts_(counts) {}
  const char *name() const override { return "fake"; }
  void probe() override {}
  DeviceAddress allocate(uint64_t bytes) override {
    if (bytes > counts_.largestAllocation)
      kiln::rt::fail(KILN_STATUS_RESOURCE_EXHAUSTED, "fake device: ", bytes, " bytes");
    ++counts_.allocations;
    return DeviceAddress(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64));
  }
  void release(DeviceAddress address, uint64_t) noexcept override {
    counts_.releases += address != 0;
    std::free(reinterpret_cast<void *>(address));
  }
  void upload(DeviceAddress to, const void *from, uint64_t bytes) override {
    ++counts_.uploads;
    counts_.uploadedBytes += bytes;
    std::memcpy(reinterpret_cast<void *>(to), from, bytes);
  }
  void download(void *to, DeviceAddress from, uint64_t bytes) override {
    ++counts_.downloads;
    std::memcpy(to, reinterpret_cast<void *>(from), bytes);
  }
  void copy(DeviceAddress to, DeviceAddress from, uint64_t bytes) override {
    ++counts_.copies;
    std::memmove(reinterpret_cast<void *>(to), reinterpret_cast<void *>(from), bytes);
  }
  // The kernels run on the host: they compute in the device memory by its address.
  void attach(halide_buffer_t &buffer, DeviceAddress address) override {
    hosts_[&buffer] = buffer.host;
    buffer.host = reinterpret_cast<uint8_t *>(address);
  }
  void detach(halide_buffer_t &buffer) noexcept override {
    buffer.host = hosts_[&buffer];
    buffer.flags = 0;
  }
  void copyToDevice(halide_buffer_t &) override {}

private:
  Counts &counts_;
  std::map<halide_buffer_t *, uint8_t *> hosts_;
};

void useCountingDevice(kiln_model *model, Counts &counts) {
  reinterpret_cast<kiln::rt::Model *>(model)->setDevice(
      std::make_unique<CountingDevice>(counts));
}

std::vector<float> outputOf(kiln_session *session, const char *name) {
  kiln_tensor t;
  Result r = take(kiln_session_get_output(session, name, &t));
  EXPECT_TRUE(r.ok()) << r;
  if (!r.ok())
    return {};
  size_t n = 1;
  for (int32_t d = 0; d < t.rank; ++d)
    n *= size_t(t.shape[d]);
  const float *data = static_cast<const float *>(t.data);
  return std::vector<float>(data, data + n);
}

struct DeviceSessions : FakeSessionFixture {
  Counts counts;
  kiln_model *deviceModel = nullptr;
  kiln_weights *deviceWeights = nullptr;

  void SetUp() override {
    FakeSessionFixture::SetUp(); // the CPU session: the reference
    ASSERT_OK(kiln_model_open(FAKE_MODEL, &deviceModel));
    useCountingDevice(deviceModel, counts);
    ASSERT_OK(kiln_weights_open(deviceModel, fake->path.c_str(), &deviceWeights));
  }
  void TearDown() override {
    kiln_weights_release(deviceWeights);
    kiln_model_release(deviceModel);
    FakeSessionFixture::TearDown();
  }
  // Runs forward on fresh random inputs of [b, 2, 4] in `s` and in the CPU session.
  void forward(kiln_session *s, int64_t b, std::vector<float> &expected) {
    std::vector<int64_t> shape{b, 2, 4};
    std::vector<float> x = randomFloats(size_t(b) * 8, rng),
                       y = randomFloats(size_t(b) * 8, rng);
    kiln_tensor in[2] = {tensor("x", KILN_DTYPE_F32, shape, x.data()),
                         tensor("y", KILN_DTYPE_F32, shape, y.data())};
    ASSERT_OK(kiln_session_run(s, "forward", in, 2));
    ASSERT_OK(kiln_session_run(session, "forward", in, 2));
    expected = outputOf(session, "z");
  }
};

TEST_F(DeviceSessions, WeightsOnceBlocksReusedOutputsDownloadedWhenRead) {
  kiln_session *a = nullptr, *b = nullptr;
  ASSERT_OK(kiln_session_create(deviceModel, deviceWeights, nullptr, &a));
  EXPECT_EQ(counts.allocations, 1); // one block for every parameter
  EXPECT_EQ(counts.uploads, 2);     // proj.weight and proj.bias
  ASSERT_OK(kiln_session_create(deviceModel, deviceWeights, nullptr, &b));
  EXPECT_EQ(counts.uploads, 2) << "a second session uploaded the weights again";

  std::vector<float> expected;
  forward(a, 3, expected);
  int allocationsAfterFirstRun = counts.allocations;
  EXPECT_EQ(counts.uploads, 4); // x and y
  EXPECT_EQ(counts.downloads, 0) << "a run downloaded an output nobody read";
  EXPECT_EQ(outputOf(a, "z"), expected);
  EXPECT_EQ(counts.downloads, 1);
  outputOf(a, "z");
  EXPECT_EQ(counts.downloads, 1) << "an output read twice was downloaded twice";

  for (kiln_session *s : {a, b, a}) {
    forward(s, 3, expected);
    EXPECT_EQ(outputOf(s, "z"), expected);
  }
  // Session b's first run allocates its own blocks; a's runs reuse theirs.
  int perSession = allocationsAfterFirstRun - 1;
  EXPECT_EQ(counts.allocations, 1 + 2 * perSession);
  EXPECT_EQ(counts.uploads, 2 + 2 * 4) << "weights uploaded again by a run";

  // A detached output is downloaded first, into the block the caller gets.
  forward(b, 3, expected);
  kiln_buffer *detached = nullptr;
  ASSERT_OK(kiln_session_detach_output(b, "z", &detached));
  kiln_tensor t = kiln_buffer_tensor(detached);
  const float *z = static_cast<const float *>(t.data);
  EXPECT_EQ(std::vector<float>(z, z + expected.size()), expected);
  kiln_buffer_release(detached);

  kiln_session_release(a);
  kiln_session_release(b);
  int released = counts.releases;
  EXPECT_EQ(released, counts.allocations - 1) << "the weights' block outlives sessions";
  kiln_weights_release(deviceWeights);
  deviceWeights = nullptr;
  EXPECT_EQ(counts.releases, counts.allocations);
}

// Device memory running out is the run's status, raised before any kernel: the session
// stays usable for runs that fit.
TEST_F(DeviceSessions, ExhaustedDeviceMemoryFailsTheRunOnly) {
  kiln_session *s = nullptr;
  ASSERT_OK(kiln_session_create(deviceModel, deviceWeights, nullptr, &s));
  counts.largestAllocation = 4096;
  std::vector<int64_t> shape{32, 2, 4}; // 1 KiB per input, temporary and output: fits
  std::vector<float> x = randomFloats(256, rng), y = randomFloats(256, rng);
  kiln_tensor in[2] = {tensor("x", KILN_DTYPE_F32, shape, x.data()),
                       tensor("y", KILN_DTYPE_F32, shape, y.data())};
  std::vector<int64_t> bigShape{1024, 2, 4}; // 32 KiB each: over the fake's limit
  std::vector<float> bigX = randomFloats(8192, rng), bigY = randomFloats(8192, rng);
  kiln_tensor big[2] = {tensor("x", KILN_DTYPE_F32, bigShape, bigX.data()),
                        tensor("y", KILN_DTYPE_F32, bigShape, bigY.data())};
  Result r = take(kiln_session_run(s, "forward", big, 2));
  EXPECT_EQ(r.code, KILN_STATUS_RESOURCE_EXHAUSTED) << r;
  EXPECT_NE(r.message.find("32768 bytes"), std::string::npos) << r;
  ASSERT_OK(kiln_session_run(s, "forward", in, 2));
  ASSERT_OK(kiln_session_run(session, "forward", in, 2));
  EXPECT_EQ(outputOf(s, "z"), outputOf(session, "z"));
  kiln_session_release(s);
}

// The state model's cache [B, 3] written position by position, gathered and peeked at,
// as a CPU session does it: rows move on the device, the host sees them when read.
TEST(DeviceStates, GatherMovesRowsOnTheDeviceAndStatesDownloadWhenRead) {
  Counts counts;
  kiln_model *cpuModel = nullptr, *deviceModel = nullptr;
  ASSERT_OK(kiln_model_open(STATE_MODEL, &cpuModel));
  ASSERT_OK(kiln_model_open(STATE_MODEL, &deviceModel));
  useCountingDevice(deviceModel, counts);
  kiln_session *cpu = nullptr, *dev = nullptr;
  ASSERT_OK(kiln_session_create(cpuModel, nullptr, nullptr, &cpu));
  ASSERT_OK(kiln_session_create(deviceModel, nullptr, nullptr, &dev));
  std::mt19937 rng(7);
  auto both = [&](const char *entry, const std::vector<kiln_tensor> &in) {
    ASSERT_OK(kiln_session_run(cpu, entry, in.data(), in.size()));
    ASSERT_OK(kiln_session_run(dev, entry, in.data(), in.size()));
  };
  std::vector<int32_t> batch(4, 0);
  std::vector<int64_t> b{4}, v{4, 1}, scalar;
  both("start", {tensor("batch", KILN_DTYPE_I32, b, batch.data())});
  for (int32_t pos = 0; pos < 3; ++pos) {
    std::vector<float> values = randomFloats(4, rng);
    std::vector<int32_t> limit(4, pos);
    both("step", {tensor("v", KILN_DTYPE_F32, v, values.data()),
                  tensor("pos", KILN_DTYPE_I32, scalar, &pos),
                  tensor("limit", KILN_DTYPE_I32, b, limit.data())});
  }
  int downloads = counts.downloads, uploads = counts.uploads;
  std::vector<int32_t> rows{2, 3, 0, 0, 1};
  ASSERT_OK(kiln_session_gather_states(cpu, rows.data(), rows.size()));
  ASSERT_OK(kiln_session_gather_states(dev, rows.data(), rows.size()));
  EXPECT_EQ(counts.downloads, downloads) << "the gather copied rows through the host";
  EXPECT_EQ(counts.uploads, uploads) << "the gather copied rows through the host";
  EXPECT_EQ(counts.copies, 3); // runs of consecutive rows: [2, 3], [0], [0, 1]
  kiln_tensor cpuCache, devCache;
  ASSERT_OK(kiln_session_get_state(cpu, "cache", &cpuCache));
  ASSERT_OK(kiln_session_get_state(dev, "cache", &devCache));
  EXPECT_EQ(counts.downloads, downloads + 1);
  ASSERT_EQ(devCache.shape[0], 5);
  const float *c = static_cast<const float *>(cpuCache.data),
              *d = static_cast<const float *>(devCache.data);
  EXPECT_EQ(std::vector<float>(d, d + 15), std::vector<float>(c, c + 15));

  int64_t pos = 2;
  both("peek", {tensor("pos", KILN_DTYPE_I64, scalar, &pos)});
  EXPECT_EQ(outputOf(dev, "prefix"), outputOf(cpu, "prefix"));
  kiln_session_release(dev);
  kiln_session_release(cpu);
  kiln_model_release(deviceModel);
  kiln_model_release(cpuModel);
  EXPECT_EQ(counts.releases, counts.allocations);
}

} // namespace
