//===- EmitObject.h - A kernel's object file from its Halide module -*- C++ -*-===//
//
// Halide's Module::compile, with one change to the code it emits: see EmitObject.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_HALIDE_EMITOBJECT_H
#define KILN_BACKENDS_HALIDE_EMITOBJECT_H

#include "Schedules.h"

#include "Halide.h"

#include <map>
#include <string>

namespace kiln::halide_backend {

/// Writes `outputs` of `module` as Module::compile does, except that the software
/// prefetches of its object and assembly fill `prefetchLevel` (EmitObject.cpp says
/// why).
void emitKernelFiles(const Halide::Module &module,
                     const std::map<Halide::OutputFileType, std::string> &outputs,
                     PrefetchLevel prefetchLevel);

} // namespace kiln::halide_backend

#endif // KILN_BACKENDS_HALIDE_EMITOBJECT_H
