//===- CpuTuning.cpp - Schedule choices that differ between x86 cores ----===//

#include "CpuTuning.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace kiln::halide_backend::cpu {

namespace {

constexpr const char *kVariable = "KILN_CPU_TUNE";

/// The core named `name`, or none.
std::optional<CoreTuning> parseCore(const char *name) {
  if (std::strcmp(name, "zen4") == 0)
    return CoreTuning::Zen4;
  if (std::strcmp(name, "generic") == 0)
    return CoreTuning::Generic;
  return std::nullopt;
}

CoreTuning hostCore() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
    return CoreTuning::Generic;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    return CoreTuning::Generic;
  // The family is the base field (bits 8-11) plus, where that is 15, the extended one
  // (bits 20-27).
  unsigned family = (eax >> 8) & 0xf;
  if (family == 0xf)
    family += (eax >> 20) & 0xff;
  unsigned a7, b7, c7, d7;
  bool avx512f = __get_cpuid_count(7, 0, &a7, &b7, &c7, &d7) && (b7 >> 16 & 1);
  return coreFromCpuid(vendor, family, avx512f);
#else
  return CoreTuning::Generic;
#endif
}

} // namespace

CoreTuning coreFromCpuid(const char *vendor, unsigned family, bool avx512f) {
  if (std::strcmp(vendor, "AuthenticAMD") == 0 && family == 25 && avx512f)
    return CoreTuning::Zen4;
  return CoreTuning::Generic;
}

CoreTuning coreTuning() {
  if (const char *name = std::getenv(kVariable))
    if (std::optional<CoreTuning> core = parseCore(name))
      return *core;
  return hostCore();
}

std::optional<std::string> coreTuningError() {
  const char *name = std::getenv(kVariable);
  if (!name || parseCore(name))
    return std::nullopt;
  return std::string(kVariable) + " is '" + name + "'; expected zen4 or generic";
}

} // namespace kiln::halide_backend::cpu
