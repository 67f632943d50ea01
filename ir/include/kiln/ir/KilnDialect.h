//===- KilnDialect.h - The kiln dialect -------------------------*- C++ -*-===//

#ifndef KILN_IR_KILNDIALECT_H
#define KILN_IR_KILNDIALECT_H

#include "mlir/IR/Dialect.h"

#include "kiln/ir/KilnDialect.h.inc"

#endif // KILN_IR_KILNDIALECT_H
