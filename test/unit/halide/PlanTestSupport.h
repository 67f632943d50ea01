//===- PlanTestSupport.h - The fixture of the plan and manifest tests -*- C++ -*-===//
//
// Shared by PlanStatesTest.cpp and PlanParametersTest.cpp: a test plans a hand-written
// module with planModel, writes its manifest and reads back the JSON the runtime
// receives; the diagnostics of a failed plan are collected.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_HALIDE_PLANTESTSUPPORT_H
#define KILN_TEST_UNIT_HALIDE_PLANTESTSUPPORT_H

#include "Manifest.h"
#include "Plan.h"

#include "kiln/ir/KilnDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser.h"
#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

namespace kiln::halide_backend::test {

class PlanTest : public ::testing::Test {
protected:
  PlanTest() { context.loadDialect<kiln::KilnDialect>(); }

  /// Plans `text` as model "m"; the manifest is parsed into `manifest` on success, the
  /// diagnostics collected in `errors` either way.
  bool plan(const std::string &text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module) {
      ADD_FAILURE() << "cannot parse:\n" << text;
      return false;
    }
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      errors += d.str() + "\n";
      return mlir::success();
    });
    mlir::FailureOr<ModelPlan> planned =
        planModel(*module, "m", layoutRemarks, collapseRows);
    if (mlir::failed(planned))
      return false;
    text_ = writeManifest(*planned, "host");
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(text_);
    if (!json) {
      ADD_FAILURE() << llvm::toString(json.takeError()) << "\n" << text_;
      return false;
    }
    manifest = std::move(*json);
    return true;
  }

  const llvm::json::Object &root() { return *manifest.getAsObject(); }
  const llvm::json::Object &entry(const std::string &name) {
    for (const llvm::json::Value &e : *root().getArray("entries"))
      if (e.getAsObject()->getString("name") == llvm::StringRef(name))
        return *e.getAsObject();
    ADD_FAILURE() << "no entry '" << name << "' in\n" << text_;
    static llvm::json::Object none;
    return none;
  }
  const llvm::json::Value &buffer(const llvm::json::Object &entry, int64_t index) {
    return (*entry.getArray("buffers"))[index];
  }
  /// The manifest's JSON text of `value`, for compact comparisons.
  static std::string str(const llvm::json::Value *value) {
    if (!value)
      return "(missing)";
    std::string s;
    llvm::raw_string_ostream os(s);
    os << *value;
    return os.str();
  }
  std::string kernelName(int64_t index) {
    return (*root().getArray("kernels"))[index].getAsString().getValueOr("").str();
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// planModel's: a remark (collected in `errors`) at each slice or transpose kernel.
  bool layoutRemarks = false;
  /// planModel's: product kernels over [B*S, D] views of their rows (CPU targets).
  bool collapseRows = false;
  llvm::json::Value manifest = nullptr;
  std::string errors;
  std::string text_;
};

} // namespace kiln::halide_backend::test

#endif // KILN_TEST_UNIT_HALIDE_PLANTESTSUPPORT_H
