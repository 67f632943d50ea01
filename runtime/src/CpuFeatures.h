//===- CpuFeatures.h - The CPU features a model's target needs --*- C++ -*-===//
//
// A model compiled for `host` on one machine holds instructions another CPU may lack,
// and Halide's ahead-of-time code does not check: it would die of SIGILL mid-run. The
// runtime compares what the model's Halide target string asks for with what this CPU
// (and its OS) provide before it loads the model. Features carry the names Linux's
// /proc/cpuinfo gives them ("avx512_bf16"), so a message can be checked against it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CPUFEATURES_H
#define KILN_RUNTIME_CPUFEATURES_H

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

/// The CPU features code compiled for the Halide target `target` (e.g.
/// "x86-64-linux-avx2-fma", "x86-64-linux-avx512_sapphirerapids") may use, each once, in
/// a fixed order. Empty for a target of another architecture (the ELF check stops it).
std::vector<std::string> requiredCpuFeatures(std::string_view target);

/// Whether this CPU has `feature` (a name requiredCpuFeatures gives) and, for AVX and
/// AVX-512 features, whether the OS saves the registers they use.
bool hostHasCpuFeature(std::string_view feature);

/// The features of requiredCpuFeatures(target) that `has` says are missing.
std::vector<std::string>
missingCpuFeatures(std::string_view target,
                   const std::function<bool(std::string_view)> &has = hostHasCpuFeature);

/// Throws Error (FAILED_PRECONDITION) naming the model, its target and every feature
/// it needs that this machine lacks.
void checkCpuFeatures(const std::string &path, std::string_view target);

} // namespace kiln::rt

#endif // KILN_RUNTIME_CPUFEATURES_H
