//===- SchedulesCpuSupport.h - Pieces shared by the CPU schedules -*- C++ -*-===//
//
// Loop fusion, the parallel-task sizing and the vectorised row reductions that
// SchedulesCpu.cpp, SchedulesCpuMatmul*.cpp and SchedulesCpuQuantized.cpp share.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_SCHEDULESCPUSUPPORT_H
#define KILN_BACKENDS_HALIDE_SCHEDULESCPUSUPPORT_H

#include "Schedules.h"

#include <string>
#include <vector>

namespace kiln::halide_backend::cpu {

inline constexpr Halide::TailStrategy kGuard = Halide::TailStrategy::GuardWithIf;
inline constexpr Halide::TailStrategy kRoundUp = Halide::TailStrategy::RoundUp;

inline bool isStatic(int64_t extent) { return extent != kDynamicExtent; }

/// The product of the static extents in [from, to), with `dynamicGuess` for dynamic ones.
int64_t elementCount(const Extents &extents, size_t from, size_t to,
                     int64_t dynamicGuess = 128);

/// Fuses the pure loops `vars` of `stage` (innermost first) into one and returns it.
Halide::Var fuseLoops(Halide::Stage stage, const std::vector<Halide::Var> &vars,
                      const std::string &name);

/// Makes parallel tasks of the rows of `stage`: `rowVars` (innermost first) are the
/// loops around one row of `rowLength` elements, `innerRows` the static extent of
/// rowVars[0] or kDynamicExtent. Returns the loop that visits one row.
Halide::Var parallelRows(Halide::Stage stage, const std::vector<Halide::Var> &rowVars,
                         int64_t rowLength, int64_t innerRows);

/// Vectorises the reduction of `stats` (one update over `r`) along the contiguous
/// reduction dimension: `width` partial results, one per lane, then one horizontal
/// vector reduction per row; both computed `at`.
void vectorizeRowReduction(Halide::Func stats, Halide::RDom r, int width,
                           Halide::LoopLevel at);

} // namespace kiln::halide_backend::cpu

#endif // KILN_BACKENDS_HALIDE_SCHEDULESCPUSUPPORT_H
