//===- PassDetail.h - Generated pass base classes ---------------*- C++ -*-===//

#ifndef KILN_PASSES_PASSDETAIL_H
#define KILN_PASSES_PASSDETAIL_H

#include "kiln/ir/KilnOps.h"
#include "kiln/passes/Passes.h"

namespace kiln {
#define GEN_PASS_CLASSES
#include "kiln/passes/Passes.h.inc"
} // namespace kiln

#endif // KILN_PASSES_PASSDETAIL_H
