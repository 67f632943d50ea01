//===- Tensor.cpp - Tensor handles and dtypes of the Kiln DSL ---------------===//

#include "kiln/frontend/ModelBuilder.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace kiln::dsl;

Type kiln::dsl::elementType(MLIRContext &context, DType dtype) {
  switch (dtype) {
  case DType::I32:
    return IntegerType::get(&context, 32);
  case DType::I64:
    return IntegerType::get(&context, 64);
  case DType::Bool:
    return IntegerType::get(&context, 1);
  case DType::F32:
    break;
  }
  return Float32Type::get(&context);
}

const char *kiln::dsl::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "i1";
  case DType::F32:
    break;
  }
  return "f32";
}

Tensor Parameter::get(std::source_location loc) const {
  if (!builder_)
    return {};
  return builder_->materialize(*this, loc);
}
