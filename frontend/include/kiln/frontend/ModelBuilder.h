//===- ModelBuilder.h - Declaring a model in the Kiln DSL -------*- C++ -*-===//
//
// A model is a set of named parameters and named entry points (encode, decode, ...), each
// with named inputs and outputs whose batch and sequence dims may be dynamic. The builder
// emits a `kiln` MLIR module, one func per entry point; errors in the user's model are
// collected with the file and line of the DSL call and returned by finish().
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTEND_MODELBUILDER_H
#define KILN_FRONTEND_MODELBUILDER_H

#include "kiln/frontend/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

namespace kiln::dsl {

/// An error in a user's model, at the DSL call that caused it: the user's own line
/// when the error arose inside an nn module, with the chain of module calls as notes.
struct BuildError {
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
  /// Where the error arose, outermost first: "in nn::Encoder 'transformer.encoder'" at
  /// the line that called that module, and so on inward to "raised here" at the line
  /// of the innermost module. Empty for an error of the user's own line.
  std::vector<BuildError> notes;
  /// "model.cpp:12:5: error: ...", as compilers print, then a line per note
  /// ("Transformer.cpp:80:5: note: in nn::Encoder 'transformer.encoder'").
  std::string str() const;
};

/// The result of building: a verified module, or the errors that prevented it.
class Model {
public:
  bool ok() const { return static_cast<bool>(module_); }
  const std::string &name() const { return name_; }
  const std::vector<BuildError> &errors() const { return errors_; }
  void printErrors(llvm::raw_ostream &os) const;
  mlir::ModuleOp module() const { return module_.get(); }
  mlir::MLIRContext &context() const { return *context_; }

private:
  friend class ModelBuilder;
  std::string name_;
  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::vector<BuildError> errors_;
};

class ModelBuilder;

/// One end of an input's value range: an integer, or a dimension expression over the
/// entry's named dims ("S", "S-1"; docs/manifest.md gives the grammar).
struct Bound {
  /// A negative value is written "0-N": the manifest's grammar has no unary minus.
  Bound(int64_t value)
      : expr(value < 0 ? "0-" + std::to_string(0 - static_cast<uint64_t>(value))
                       : std::to_string(value)) {}
  Bound(int value) : Bound(static_cast<int64_t>(value)) {}
  Bound(const char *expr) : expr(expr) {}
  Bound(std::string expr) : expr(std::move(expr)) {}
  /// `dyn("S")` reads as the expression "S".
  Bound(const Dim &dim) : Bound(dim.name.empty() ? Bound(dim.size) : Bound(dim.name)) {}
  std::string expr;
};

/// The inclusive range [min, max] every value of an i32 input must lie in, e.g. token
/// ids in {0, vocabulary - 1} or lengths in {1, "S"}. The runtime rejects inputs
/// outside it before running the model (so a bad id never indexes out of a table).
struct Bounds {
  Bound min, max;
};

/// An entry point being declared. Ops on its inputs go into its function.
///
/// Besides inputs and outputs, an entry may keep f32 tensors in the runtime's session
/// between runs, as states named model-wide (Ops.h has stateWrite() and kvAppend()):
/// incremental decoding writes the cross-attention keys of the source once and appends
/// one position per step to each self-attention cache. Dimension 0 of a state is its
/// batch. An entry that writes a state needs no output.
class Entry {
public:
  Tensor input(const std::string &name, DType dtype, std::vector<Dim> dims,
               std::source_location loc = std::source_location::current());
  /// An i32 input whose values must lie in `bounds` (stored as `kiln.bounds`); names in
  /// the bounds must be dims the entry binds: dynamic dims of its inputs or of the
  /// states it reads, or value dims (valueInput()).
  Tensor input(const std::string &name, DType dtype, std::vector<Dim> dims, Bounds bounds,
               std::source_location loc = std::source_location::current());
  /// A rank-0 i32 input whose *value* is the size of the named dimension `dim` (e.g.
  /// `dyn("P")`, the position of a decoding step), so that shapes can follow it: the
  /// result of kvAppend() at `dim` has P+1 positions. The runtime checks the value
  /// against `bounds` (which may not use `dim` itself) before it binds `dim`; no input
  /// shape or state may bind the same name. The tensor is usable as data too
  /// (positional encodings of the step).
  Tensor valueInput(const std::string &name, const Dim &dim, Bounds bounds,
                    std::source_location loc = std::source_location::current());
  void output(const std::string &name, const Tensor &value,
              std::source_location loc = std::source_location::current());
  const std::string &name() const;

  /// (Re)creates session state `name` as zeros of f32 shape `dims` (static sizes, or
  /// dynamic dims the entry binds), forgetting what it held: a key/value cache at its
  /// full capacity, which kvAppend() then fills one position per step.
  void stateAlloc(const std::string &name, std::vector<Dim> dims,
                  std::source_location loc = std::source_location::current());
  /// The current value of session state `name`, created by an earlier run (of any
  /// entry). Its shape is `dims`; as an input's, its dynamic dims are bound by the
  /// state's actual shape when the entry runs (and checked against the same names
  /// elsewhere in the entry).
  Tensor stateRead(const std::string &name, std::vector<Dim> dims,
                   std::source_location loc = std::source_location::current());

private:
  friend class ModelBuilder;
  Entry(ModelBuilder *builder, size_t index) : builder_(builder), index_(index) {}
  /// The symbolic shape of `dims`, or nothing (with an error) for a bad one; `what` names
  /// the declaration in messages ("input 'x'"). Only inputs (`allowMax`) bound dims.
  std::optional<SymShape> declaredShape(const std::vector<Dim> &dims,
                                        const std::string &what, std::source_location loc,
                                        bool allowMax = false);
  /// Points the op builder at the end of this entry's body.
  void insertAtEnd();
  ModelBuilder *builder_;
  size_t index_;
};

class ModelBuilder {
public:
  explicit ModelBuilder(std::string name);
  ~ModelBuilder();
  ModelBuilder(const ModelBuilder &) = delete;
  ModelBuilder &operator=(const ModelBuilder &) = delete;

  /// Declares a weight. Declaring the same name again with the same shape returns the
  /// same weight (tied embeddings); with another shape it is an error.
  Parameter parameter(const std::string &name, std::vector<int64_t> shape,
                      DType dtype = DType::F32,
                      std::source_location loc = std::source_location::current());

  /// Starts an entry point; ops built from now on that use parameters go into it.
  Entry entry(const std::string &name,
              std::source_location loc = std::source_location::current());

  /// Ends building: verifies the module and hands it over (or the errors).
  Model finish();

  // -- Used by the DSL's ops (Ops.cpp, nn modules); not needed to write a model. --

  mlir::MLIRContext &context() { return *context_; }

  /// A call into an nn module: while the scope lives, ops built at a line of the module
  /// get the whole call chain as their location (kiln/ir/SourceLocation.h), so that they
  /// point at the user's line. A call from inside the same module (a module's method
  /// using another of its methods) adds no frame.
  class Scope {
  public:
    Scope(ModelBuilder &builder, const void *module, std::string name,
          std::source_location callSite);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    /// Null when the scope added no frame.
    ModelBuilder *builder_ = nullptr;
  };

  /// `loc` in the chain of the open scopes: a FileLineColLoc outside any, otherwise a
  /// CallSiteLoc whose outermost caller is the user's line.
  mlir::Location location(std::source_location loc);
  /// Records an error at `loc` (in the chain of the open scopes), unless an error was
  /// already raised within the current call of an nn module.
  void error(std::source_location loc, const std::string &message);
  bool hasErrors() const { return !errors_.empty(); }
  /// Checks that all operands are valid tensors of one entry and points the op builder at
  /// the end of that entry's body (with no operands: the entry declared last). Returns
  /// false (recording an error only if the operands are valid but mixed, or there is no
  /// entry) when the op must not be built.
  bool prepareOperands(llvm::ArrayRef<Tensor> operands, std::source_location loc);
  mlir::OpBuilder &opBuilder() { return *opBuilder_; }
  /// Wraps the result of a built op.
  Tensor wrap(mlir::Value value, SymShape shape, DType dtype);
  Tensor materialize(const Parameter &parameter, std::source_location loc);
  /// How an op uses a session state: creates it (state_alloc, state_write), reads it,
  /// or updates it in place (kv_append).
  enum class StateUse { Create, Read, Update };
  /// Records that the op about to be built in the entry the op builder points at uses
  /// state `name`, of `shape`. False, with an error at `loc`, for an empty name or a
  /// shape whose rank or static sizes differ from an earlier use of the state; finish()
  /// also reports a state that is read or updated but that no entry creates.
  bool useState(const std::string &name, const SymShape &shape, StateUse use,
                std::source_location loc);
  /// Records that the entry the op builder points at creates or updates a state, so
  /// that it needs no outputs; called before the op's checks, so that a failed write
  /// is not also reported as an entry without outputs.
  void markStateWrite();

private:
  friend class Entry;
  struct EntryState;

  /// Sets each input's kiln.name, kiln.dims, kiln.dim_max, kiln.bounds and
  /// kiln.value_dim, and reports dimension names that the entry binds twice (a value dim
  /// also bound by a shape) or uses unbound (in bounds, a new state's dims, a cache's
  /// position).
  void bindDimensions(EntryState &state);
  /// Records an error at an op's location: at the user's line, with the chain of
  /// module calls as notes; only the first error within a call of an nn module.
  void error(mlir::Location loc, const std::string &message);
  /// "operand #1 [B, S, 8] is a tensor of entry 'encode'": the first of `operands` in
  /// the body `region` of an entry, for messages.
  std::string operandOf(llvm::ArrayRef<Tensor> operands, mlir::Region *region);

  std::string name_;
  std::unique_ptr<mlir::MLIRContext> context_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  std::unique_ptr<mlir::OpBuilder> opBuilder_;
  std::vector<std::unique_ptr<EntryState>> entries_;
  EntryState *current_ = nullptr;
  struct ParameterInfo {
    std::vector<int64_t> shape;
    DType dtype;
  };
  std::map<std::string, ParameterInfo> parameters_;
  /// Per state: the shape of its first use and where that was, whether any entry
  /// creates it, and where it is first read or updated.
  struct StateInfo {
    SymShape shape;
    mlir::Location firstUse;
    bool created = false;
    std::optional<mlir::Location> firstNeed;
  };
  std::map<std::string, StateInfo> states_;
  std::vector<BuildError> errors_;
  /// The open scopes, outermost first.
  struct Frame {
    const void *module;
    std::string name;
    std::source_location callSite;
    /// How many errors there were when the frame opened: an outermost frame reports
    /// only the first error raised within it.
    size_t errorsBefore;
  };
  std::vector<Frame> frames_;
};

} // namespace kiln::dsl

#endif // KILN_FRONTEND_MODELBUILDER_H
