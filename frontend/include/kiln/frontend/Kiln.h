//===- Kiln.h - Everything a model file includes ----------------*- C++ -*-===//

#ifndef KILN_FRONTEND_KILN_H
#define KILN_FRONTEND_KILN_H

#include "kiln/frontend/ModelBuilder.h"
#include "kiln/frontend/Ops.h"
#include "kiln/frontend/Tensor.h"

#endif // KILN_FRONTEND_KILN_H
