//===- KilnDialect.cpp - The kiln dialect ---------------------------------===//

#include "kiln/ir/KilnDialect.h"
#include "kiln/ir/KilnOps.h"

using namespace kiln;

#include "kiln/ir/KilnDialect.cpp.inc"

void KilnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "kiln/ir/KilnOps.cpp.inc"
      >();
}
