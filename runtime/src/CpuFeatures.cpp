//===- CpuFeatures.cpp - The CPU features a model's target needs ----------===//
//
// What each Halide 14 x86 target feature lets the code use follows Halide's CodeGen_X86:
// its LLVM CPU (mcpu: penryn, corei7-avx, haswell, knl, skylake-avx512, cannonlake,
// sapphirerapids) and attributes (mattrs), with the implications Halide completes a
// target with (sapphirerapids > cannonlake > skylake > avx512 > avx2 > avx > sse41).
// Halide also passes +amx-int8 and +amx-bf16 with avx512_sapphirerapids, but only its
// tile lowering of int8/bf16 matrix products emits AMX, which no Kiln kernel (all f32)
// reaches, so AMX is not required.
//
//===----------------------------------------------------------------------===//

#include "CpuFeatures.h"

#include "Error.h"

#include <algorithm>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace kiln::rt {

namespace {

struct TargetFeature {
  const char *halide;  // the target string's feature
  const char *implies; // a feature it implies, or null
  std::vector<const char *> cpu;
};

const std::vector<TargetFeature> &targetFeatures() {
  static const std::vector<TargetFeature> table = {
      {"sse41", nullptr, {"ssse3", "sse4_1"}},
      {"avx", "sse41", {"sse4_2", "popcnt", "avx"}},
      {"avx2", "avx", {"avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe"}},
      {"fma", nullptr, {"fma"}},
      {"fma4", nullptr, {"fma4"}},
      {"f16c", nullptr, {"f16c"}},
      {"avx512", "avx2", {"avx512f", "avx512cd"}},
      {"avx512_knl", "avx512", {"avx512pf", "avx512er"}},
      {"avx512_skylake", "avx512", {"avx512vl", "avx512bw", "avx512dq"}},
      {"avx512_cannonlake", "avx512_skylake", {"avx512ifma", "avx512vbmi"}},
      {"avx512_sapphirerapids", "avx512_cannonlake", {"avx512_bf16", "avx512_vnni"}},
  };
  return table;
}

void addFeature(std::string_view halide, std::vector<std::string> &out) {
  for (const TargetFeature &f : targetFeatures()) {
    if (halide != f.halide)
      continue;
    if (f.implies)
      addFeature(f.implies, out);
    for (const char *cpu : f.cpu)
      if (std::find(out.begin(), out.end(), cpu) == out.end())
        out.push_back(cpu);
  }
}

#if defined(__x86_64__)
enum class Reg { Eax, Ebx, Ecx, Edx };
enum class OsState { None, Avx, Avx512 };

struct CpuidBit {
  const char *name;
  unsigned leaf, subleaf;
  Reg reg;
  unsigned bit;
  OsState state;
};

// Intel SDM vol. 2A, CPUID; AMD APM vol. 3, appendix E.
constexpr CpuidBit kCpuidBits[] = {
    {"ssse3", 1, 0, Reg::Ecx, 9, OsState::None},
    {"fma", 1, 0, Reg::Ecx, 12, OsState::Avx},
    {"sse4_1", 1, 0, Reg::Ecx, 19, OsState::None},
    {"sse4_2", 1, 0, Reg::Ecx, 20, OsState::None},
    {"movbe", 1, 0, Reg::Ecx, 22, OsState::None},
    {"popcnt", 1, 0, Reg::Ecx, 23, OsState::None},
    {"avx", 1, 0, Reg::Ecx, 28, OsState::Avx},
    {"f16c", 1, 0, Reg::Ecx, 29, OsState::Avx},
    {"bmi1", 7, 0, Reg::Ebx, 3, OsState::None},
    {"avx2", 7, 0, Reg::Ebx, 5, OsState::Avx},
    {"bmi2", 7, 0, Reg::Ebx, 8, OsState::None},
    {"avx512f", 7, 0, Reg::Ebx, 16, OsState::Avx512},
    {"avx512dq", 7, 0, Reg::Ebx, 17, OsState::Avx512},
    {"avx512ifma", 7, 0, Reg::Ebx, 21, OsState::Avx512},
    {"avx512pf", 7, 0, Reg::Ebx, 26, OsState::Avx512},
    {"avx512er", 7, 0, Reg::Ebx, 27, OsState::Avx512},
    {"avx512cd", 7, 0, Reg::Ebx, 28, OsState::Avx512},
    {"avx512bw", 7, 0, Reg::Ebx, 30, OsState::Avx512},
    {"avx512vl", 7, 0, Reg::Ebx, 31, OsState::Avx512},
    {"avx512vbmi", 7, 0, Reg::Ecx, 1, OsState::Avx512},
    {"avx512_vnni", 7, 0, Reg::Ecx, 11, OsState::Avx512},
    {"avx512_bf16", 7, 1, Reg::Eax, 5, OsState::Avx512},
    {"abm", 0x80000001, 0, Reg::Ecx, 5, OsState::None},
    {"fma4", 0x80000001, 0, Reg::Ecx, 16, OsState::Avx},
};

bool cpuid(unsigned leaf, unsigned subleaf, unsigned regs[4]) {
  return __get_cpuid_count(leaf, subleaf, &regs[0], &regs[1], &regs[2], &regs[3]) != 0;
}

// The register state the OS saves on a context switch (XCR0), or 0 without OSXSAVE.
uint64_t osSavedState() {
  unsigned regs[4];
  if (!cpuid(1, 0, regs) || !(regs[2] & (1u << 27)))
    return 0;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

bool osSaves(OsState state) {
  constexpr uint64_t kAvx = 0x6;            // XMM and YMM
  constexpr uint64_t kAvx512 = kAvx | 0xe0; // and opmask, ZMM_Hi256, Hi16_ZMM
  static const uint64_t saved = osSavedState();
  switch (state) {
  case OsState::None:
    return true;
  case OsState::Avx:
    return (saved & kAvx) == kAvx;
  case OsState::Avx512:
    return (saved & kAvx512) == kAvx512;
  }
  return false;
}
#endif

} // namespace

std::vector<std::string> requiredCpuFeatures(std::string_view target) {
  std::vector<std::string> features;
  // "ARCH-BITS-OS-FEATURE-...": only x86 features concern the CPU.
  if (target.substr(0, target.find('-')) != "x86")
    return features;
  size_t start = 0;
  while (start <= target.size()) {
    size_t end = std::min(target.find('-', start), target.size());
    addFeature(target.substr(start, end - start), features);
    start = end + 1;
  }
  return features;
}

bool hostHasCpuFeature(std::string_view feature) {
#if defined(__x86_64__)
  for (const CpuidBit &b : kCpuidBits) {
    if (feature != b.name)
      continue;
    unsigned regs[4];
    return cpuid(b.leaf, b.subleaf, regs) && (regs[int(b.reg)] >> b.bit & 1) &&
           osSaves(b.state);
  }
#endif
  (void)feature;
  return false;
}

std::vector<std::string>
missingCpuFeatures(std::string_view target,
                   const std::function<bool(std::string_view)> &has) {
  std::vector<std::string> missing = requiredCpuFeatures(target);
  missing.erase(std::remove_if(missing.begin(), missing.end(),
                               [&](const std::string &f) { return has(f); }),
                missing.end());
  return missing;
}

void checkCpuFeatures(const std::string &path, std::string_view target) {
  std::vector<std::string> missing = missingCpuFeatures(target);
  if (!missing.empty())
    fail(KILN_STATUS_FAILED_PRECONDITION, "model '", path,
         "' needs CPU features the machine lacks: ",
         join(missing, [](const std::string &f) { return f; }), " (it was compiled for ",
         target,
         "; compile it for this machine's target, e.g. --target=host on it, or for a "
         "portable one such as x86-64-linux-avx2-fma)");
}

} // namespace kiln::rt
