//===- Tensor.h - Tensor handles of the Kiln DSL ----------------*- C++ -*-===//
//
// A Tensor is a handle on a value of the graph being built, with its symbolic shape.
// Every DSL call takes the caller's std::source_location so that the MLIR op, and any
// shape error, points at the user's model file rather than at Kiln.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_TENSOR_H
#define KILN_FRONTEND_TENSOR_H

#include "kiln/ir/ShapeRules.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

namespace kiln::dsl {

class ModelBuilder;

/// Element types. Bool (i1) is for masks built inside an entry point (true = masked);
/// inputs, outputs and weights are F32, I32 or I64, the dtypes a runtime buffer can
/// have. I64 is for the int64 token ids Hugging Face tokenizers give: cast them to I32
/// for embedding and the other ops that take ids.
enum class DType { F32, I32, Bool, I64 };

/// The MLIR element type of `dtype`: f32, i32, i1 or i64.
mlir::Type elementType(mlir::MLIRContext &context, DType dtype);
/// That type as MLIR spells it, for messages.
const char *dtypeName(DType dtype);

/// A dimension in a DSL declaration: a static size, or a named dynamic one (`dyn("B")`),
/// optionally with the largest size the model accepts (`dyn("T", 1024)`).
struct Dim {
  Dim(int64_t size) : size(size) {}
  Dim(int size) : size(size) {}
  static Dim named(std::string name, int64_t max = 0) {
    Dim d(SymDim::kDynamic);
    d.name = std::move(name);
    d.max = max;
    return d;
  }
  int64_t size;
  std::string name;
  /// The largest size of a named dimension, 0 for unbounded.
  int64_t max = 0;
};

/// A dynamic dimension bound when the model runs, e.g. the batch `dyn("B")`. With a
/// `max`, the runtime rejects a run where it is larger (naming the input, the dimension
/// and the bound), and the compiler may use the bound: positions of a `dyn("T", 32)`
/// index a 32-row table without a check. Every input that names the dimension shares
/// its bound; two different bounds of one name are an error.
inline Dim dyn(std::string name, int64_t max = 0) {
  return Dim::named(std::move(name), max);
}

class Tensor {
public:
  Tensor() = default;

  /// False for the result of an op that failed to build (the error is recorded once, at
  /// that op; later ops on an invalid tensor stay silent).
  bool valid() const { return builder_ && value_; }
  const SymShape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  /// Dimension `i`; negative counts from the end.
  const SymDim &dim(int64_t i) const { return shape_[i < 0 ? i + rank() : i]; }
  DType dtype() const { return dtype_; }
  mlir::Value value() const { return value_; }
  ModelBuilder *builder() const { return builder_; }

private:
  friend class ModelBuilder;
  Tensor(ModelBuilder *builder, mlir::Value value, SymShape shape, DType dtype)
      : builder_(builder), value_(value), shape_(std::move(shape)), dtype_(dtype) {}

  ModelBuilder *builder_ = nullptr;
  mlir::Value value_;
  SymShape shape_;
  DType dtype_ = DType::F32;
};

/// A declared weight. It becomes a Tensor of the entry point being built where it is
/// used, so one Parameter serves every entry (and every layer that shares it).
class Parameter {
public:
  Parameter() = default;
  const std::string &name() const { return name_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  /// This weight as a tensor of the entry point being built.
  Tensor get(std::source_location loc = std::source_location::current()) const;
  operator Tensor() const { return get(); }

private:
  friend class ModelBuilder;
  Parameter(ModelBuilder *builder, std::string name, std::vector<int64_t> shape,
            DType dtype)
      : builder_(builder), name_(std::move(name)), shape_(std::move(shape)),
        dtype_(dtype) {}

  ModelBuilder *builder_ = nullptr;
  std::string name_;
  std::vector<int64_t> shape_;
  DType dtype_ = DType::F32;
};

/// An operand that remembers where it was written: the implicit conversion at a call
/// site evaluates the default argument there, so operators (which cannot take a
/// source_location parameter of their own) still report the user's line.
struct Operand {
  Operand(const Tensor &tensor,
          std::source_location loc = std::source_location::current())
      : tensor(tensor), loc(loc) {}
  Operand(const Parameter &parameter,
          std::source_location loc = std::source_location::current())
      : tensor(parameter.get(loc)), loc(loc) {}
  Tensor tensor;
  std::source_location loc;
};

} // namespace kiln::dsl

#endif // KILN_FRONTEND_TENSOR_H
