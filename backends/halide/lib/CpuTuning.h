//===- CpuTuning.h - Schedule choices that differ between x86 cores -*- C++ -*-===//
//
// A Halide target says which instructions a kernel may use, not which core will run it:
// Halide 14's host target is the same avx512_sapphirerapids on Zen 4 and Zen 5. Where
// cores of one instruction set want different loop orders or copies, and it was
// measured, the schedules ask here which core to tune for: the one of the machine that
// compiles the model, as -mtune=native does, unless KILN_CPU_TUNE names another. The
// choice changes how operands are read (loop orders, prefetch distances, whether a
// register tile's rows are staged), never the target's instruction set or the order of
// a sum, so a library tuned for one core computes the same on any core of its target.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_CPUTUNING_H
#define KILN_BACKENDS_HALIDE_CPUTUNING_H

#include <optional>
#include <string>

namespace kiln::halide_backend::cpu {

/// The cores whose schedules differ.
enum class CoreTuning {
  /// Every core not named below: the schedules as measured on Intel Cascade Lake and
  /// Zen 5.
  Generic,
  /// AMD Zen 4: family 25 with AVX-512 (Zen 3 shares the family, without AVX-512).
  Zen4,
};

/// The core that a CPU's cpuid describes: its vendor string, family (base plus
/// extended) and whether it has AVX512F.
CoreTuning coreFromCpuid(const char *vendor, unsigned family, bool avx512f);

/// KILN_CPU_TUNE's core ("zen4" or "generic") when it is set, else the compiling
/// machine's.
CoreTuning coreTuning();

/// Why KILN_CPU_TUNE cannot be used (it names no core above), or none.
std::optional<std::string> coreTuningError();

} // namespace kiln::halide_backend::cpu

#endif // KILN_BACKENDS_HALIDE_CPUTUNING_H
