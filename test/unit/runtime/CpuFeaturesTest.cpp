//===- CpuFeaturesTest.cpp - What a model's target needs of the CPU -------===//
//
// The features a Halide target string implies, the host's cpuid decoding against what
// Linux reports in /proc/cpuinfo, and models compiled for a CPU nobody has (Knights
// Landing's AVX-512 ER and PF) refused by name instead of dying of SIGILL.
//
//===----------------------------------------------------------------------===//

#include "CpuFeatures.h"
#include "TestUtil.h"

#include <algorithm>
#include <set>
#include <sstream>

using namespace kiln::test;
using kiln::rt::hostHasCpuFeature;
using kiln::rt::missingCpuFeatures;
using kiln::rt::requiredCpuFeatures;

namespace {

bool contains(const std::vector<std::string> &features, const std::string &f) {
  return std::find(features.begin(), features.end(), f) != features.end();
}

/// The "flags" of /proc/cpuinfo's first processor; empty where there is none.
std::set<std::string> cpuinfoFlags() {
  std::istringstream in(readFile("/proc/cpuinfo"));
  std::set<std::string> flags;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("flags", 0) == 0) {
      std::istringstream words(line.substr(line.find(':') + 1));
      for (std::string w; words >> w;)
        flags.insert(w);
      break;
    }
  return flags;
}

} // namespace

TEST(CpuFeatures, APortableAvx2TargetNeedsAvx2AndFmaButNoAvx512) {
  std::vector<std::string> f = requiredCpuFeatures("x86-64-linux-avx2-fma");
  for (const char *need : {"sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "bmi2"})
    EXPECT_TRUE(contains(f, need)) << need;
  for (const std::string &feature : f)
    EXPECT_EQ(feature.rfind("avx512", 0), std::string::npos) << feature;
}

TEST(CpuFeatures, SapphireRapidsImpliesEveryEarlierAvx512Level) {
  std::vector<std::string> f = requiredCpuFeatures(
      "x86-64-linux-avx512_sapphirerapids-no_runtime"); // no_runtime: not a CPU feature
  for (const char *need :
       {"avx512_bf16", "avx512_vnni", "avx512vbmi", "avx512ifma", "avx512bw", "avx512vl",
        "avx512dq", "avx512f", "avx512cd", "avx2", "avx", "sse4_1"})
    EXPECT_TRUE(contains(f, need)) << need;
  EXPECT_FALSE(contains(f, "avx512er"));
  EXPECT_EQ(std::set<std::string>(f.begin(), f.end()).size(), f.size()) << "repeats";
}

TEST(CpuFeatures, OtherArchitecturesAndNonCpuFeaturesNeedNothing) {
  EXPECT_TRUE(requiredCpuFeatures("arm-64-linux-arm_dot_prod").empty());
  EXPECT_TRUE(requiredCpuFeatures("x86-64-linux").empty());
  EXPECT_TRUE(requiredCpuFeatures("x86-64-linux-cuda-cuda_capability_86").empty());
  EXPECT_TRUE(requiredCpuFeatures("").empty());
}

TEST(CpuFeatures, TheHostPartOfACudaTargetIsStillRequired) {
  // A host-cuda model's host code (buffer handling, kernel launches) is compiled for the
  // host part of its target; the CUDA features ask nothing of the CPU.
  std::vector<std::string> f =
      requiredCpuFeatures("x86-64-linux-avx512_skylake-cuda-cuda_capability_70-fma");
  EXPECT_TRUE(contains(f, "avx512bw"));
  EXPECT_EQ(f, requiredCpuFeatures("x86-64-linux-avx512_skylake-fma"));
}

TEST(CpuFeatures, MissingNamesExactlyWhatTheCpuLacks) {
  auto noBf16 = [](std::string_view f) { return f != "avx512_bf16"; };
  EXPECT_EQ(missingCpuFeatures("x86-64-linux-avx512_sapphirerapids", noBf16),
            std::vector<std::string>{"avx512_bf16"});
  EXPECT_TRUE(missingCpuFeatures("x86-64-linux-avx2-fma", noBf16).empty());
}

TEST(CpuFeatures, CpuidAgreesWithProcCpuinfo) {
  std::set<std::string> flags = cpuinfoFlags();
  if (flags.empty())
    GTEST_SKIP() << "no flags in /proc/cpuinfo";
  std::vector<std::string> all = requiredCpuFeatures(
      "x86-64-linux-sse41-avx-avx2-fma-fma4-f16c-avx512_knl-avx512_sapphirerapids");
  ASSERT_EQ(all.size(), 24u);
  for (const std::string &feature : all)
    EXPECT_EQ(hostHasCpuFeature(feature), flags.count(feature) == 1) << feature;
}

TEST(CpuFeatures, AModelForACpuThisOneIsNotIsRefusedByName) {
  if (hostHasCpuFeature("avx512er"))
    GTEST_SKIP() << "this CPU has Knights Landing's AVX-512 ER";
  // fake_model_knl aborts when loaded: the section is read before dlopen. Without the
  // section, the manifest's target is checked once the library is loaded.
  for (const char *path : {FAKE_MODEL_KNL, FAKE_MODEL_KNL_MANIFEST}) {
    kiln_model *model = nullptr;
    Result r = take(kiln_model_open(path, &model));
    EXPECT_EQ(r.code, KILN_STATUS_FAILED_PRECONDITION) << r;
    EXPECT_EQ(model, nullptr);
    EXPECT_NE(r.message.find(std::string("model '") + path +
                             "' needs CPU features the machine lacks: avx512pf, "
                             "avx512er (it was compiled for x86-64-linux-avx512_knl;"),
              std::string::npos)
        << r;
  }
}
