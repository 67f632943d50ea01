//===- ModelMain.cpp - main() of a model compiler NAME-gen ----------------===//
//
// A model file registers its build function with KILN_MODEL; linked with this file it
// becomes NAME-gen, which builds the model, runs the pass pipeline and compiles
// OUTDIR/NAME.so. Like the Toy tutorial's driver, every stage can be printed instead
// (--emit=mlir|fused|manifest, or as a Graphviz picture with --emit=dot|dot-unfused),
// which is what makes each stage testable.
//
//===----------------------------------------------------------------------===//

#include "kiln/backends/halide/Compile.h"
#include "kiln/frontend/Registry.h"
#include "kiln/ir/SourceLocation.h"
#include "kiln/passes/GraphDot.h"
#include "kiln/passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

enum class Emit { Library, Mlir, Fused, Manifest, Stmt, Dot, DotUnfused };

llvm::cl::OptionCategory compilerCategory("Kiln model compiler options");

llvm::cl::opt<std::string>
    outputDir("o", llvm::cl::desc("Where NAME.so goes (created if missing)"),
              llvm::cl::value_desc("outdir"), llvm::cl::cat(compilerCategory));
llvm::cl::alias outputDirAlias("output", llvm::cl::desc("Alias for -o"),
                               llvm::cl::aliasopt(outputDir),
                               llvm::cl::cat(compilerCategory));
llvm::cl::opt<std::string>
    target("target",
           llvm::cl::desc("'host' (default), 'host-cuda' (PTX for compute capability "
                          "7.0 unless cuda_capability_NN is named), or a Halide "
                          "target string"),
           llvm::cl::value_desc("target"), llvm::cl::init("host"),
           llvm::cl::cat(compilerCategory));
llvm::cl::opt<Emit> emit(
    "emit", llvm::cl::desc("What to produce (default: the shared library)"),
    llvm::cl::init(Emit::Library),
    llvm::cl::values(
        clEnumValN(Emit::Mlir, "mlir",
                   "print the module as built by the model, then stop"),
        clEnumValN(Emit::Fused, "fused",
                   "print the module after the pass pipeline, then stop"),
        clEnumValN(Emit::Manifest, "manifest",
                   "print the manifest the library would embed, then stop"),
        clEnumValN(Emit::Stmt, "stmt",
                   "compile as usual and also write each kernel's Halide statement file "
                   "next to its object"),
        clEnumValN(Emit::Dot, "dot",
                   "print the graph after the pass pipeline as Graphviz DOT, then stop"),
        clEnumValN(Emit::DotUnfused, "dot-unfused",
                   "the same graph from the pipeline without attention or kernel "
                   "fusion")),
    llvm::cl::cat(compilerCategory));
llvm::cl::opt<std::string>
    dotEntry("entry",
             llvm::cl::desc("With --emit=dot or dot-unfused: draw only this entry point"),
             llvm::cl::value_desc("name"), llvm::cl::cat(compilerCategory));
llvm::cl::opt<bool> fusionRemarks(
    "fusion-remarks",
    llvm::cl::desc("Say on stderr, at its line of the model, why each softmax was not "
                   "fused into kiln.attention, each projection not packed, each slice "
                   "or transpose not made a view, and each op left outside a kernel "
                   "group (kiln.fusion)"),
    llvm::cl::cat(compilerCategory));
llvm::cl::opt<std::string> weights(
    "weights",
    llvm::cl::desc("The precision of the weights of linears and of a tied output "
                   "projection: f32 (default, as the checkpoint), bf16, or int8 (per-row "
                   "scales, activations quantized at run time); the runtime converts "
                   "the checkpoint's tensors at load time"),
    llvm::cl::value_desc("f32|bf16|int8"), llvm::cl::init("f32"),
    llvm::cl::cat(compilerCategory));
llvm::cl::opt<std::string>
    kernelsDir("kernels-dir",
               llvm::cl::desc("Where kernel objects go (default OUTDIR/NAME.kernels)"),
               llvm::cl::value_desc("dir"), llvm::cl::cat(compilerCategory));
llvm::cl::opt<std::string>
    libraryName("name", llvm::cl::desc("The library's name (default: the model's name)"),
                llvm::cl::value_desc("name"), llvm::cl::cat(compilerCategory));

llvm::cl::OptionCategory
    mlirCategory("MLIR options (the pass pipeline's printing and timing)");

/// Shows MLIR's pass-manager, timing and printing switches in --help beside Kiln's own,
/// and hides the hundreds of LLVM code-generation switches that the shared libLLVM
/// registers (still reachable through --help-hidden). MLIR 14 spells the IR printing
/// switches --print-ir-*; later releases spell them --mlir-print-ir-*, so both work.
void exposeMlirOptions() {
  llvm::StringMap<llvm::cl::Option *> &options = llvm::cl::getRegisteredOptions();
  for (llvm::StringMapEntry<llvm::cl::Option *> &entry : options) {
    llvm::StringRef key = entry.getKey();
    if (key.startswith("mlir-") || key.startswith("print-ir-") || key.startswith("pass-"))
      entry.getValue()->addCategory(mlirCategory);
  }
  // cl::alias keeps the StringRefs it is given: literals, not built strings.
  static const struct {
    const char *alias, *target, *description;
  } spellings[] = {
      {"mlir-print-ir-before-all", "print-ir-before-all",
       "Alias for --print-ir-before-all"},
      {"mlir-print-ir-after-all", "print-ir-after-all", "Alias for --print-ir-after-all"},
      {"mlir-print-ir-after-change", "print-ir-after-change",
       "Alias for --print-ir-after-change"},
      {"mlir-print-ir-after-failure", "print-ir-after-failure",
       "Alias for --print-ir-after-failure"},
      {"mlir-print-ir-module-scope", "print-ir-module-scope",
       "Alias for --print-ir-module-scope"},
  };
  for (const auto &spelling : spellings) {
    auto target = options.find(spelling.target);
    if (target != options.end() && !options.count(spelling.alias))
      new llvm::cl::alias(
          llvm::StringRef(spelling.alias), llvm::cl::desc(spelling.description),
          llvm::cl::aliasopt(*target->getValue()), llvm::cl::cat(mlirCategory));
  }
  llvm::cl::HideUnrelatedOptions({&compilerCategory, &mlirCategory});
}

/// Prints diagnostics as compilers do: "model.cpp:12:5: error: ...", then any notes. The
/// position is the user's line; an op built inside an nn module names the module and its
/// line after the message ("[in nn::Linear 'enc.linear1', Layers.cpp:17]"). A fused
/// location is read at its first part.
void printDiagnostic(llvm::raw_ostream &os, llvm::StringRef program, Diagnostic &diag) {
  auto print = [&](Location loc, llvm::StringRef severity, llvm::StringRef message) {
    std::vector<kiln::SourceFrame> frames = kiln::sourceFrames(loc);
    if (!frames.empty())
      os << frames.front().file << ":" << frames.front().line << ":"
         << frames.front().column;
    else if (auto nameLoc = loc.dyn_cast<NameLoc>())
      os << nameLoc.getName();
    else
      os << program;
    os << ": " << severity << ": " << message;
    if (frames.size() > 1)
      os << " [in " << frames.back().module << ", " << kiln::baseName(frames.back().file)
         << ":" << frames.back().line << "]";
    os << "\n";
  };
  const char *severity = diag.getSeverity() == DiagnosticSeverity::Error     ? "error"
                         : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning"
                         : diag.getSeverity() == DiagnosticSeverity::Remark  ? "remark"
                                                                             : "note";
  print(diag.getLocation(), severity, diag.str());
  for (Diagnostic &note : diag.getNotes())
    print(note.getLocation(), "note", note.str());
}

} // namespace

int main(int argc, char **argv) {
  std::string program = llvm::sys::path::filename(argv[0]).str();
  // MLIR's own switches (--mlir-print-ir-after-all, --mlir-timing, ...) apply to the
  // pass pipeline below, as in mlir-opt and the Toy tutorial's toyc.
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  exposeMlirOptions();
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "Kiln model compiler: builds the model of this program (its KILN_MODEL line), runs "
      "the pass pipeline and compiles OUTDIR/NAME.so\n");

  const std::vector<kiln::dsl::RegisteredModel> &models = kiln::dsl::registeredModels();
  if (models.size() != 1) {
    llvm::errs() << program
                 << ": error: a model compiler needs exactly one KILN_MODEL(...) "
                 << "line among its sources, found " << models.size() << "\n";
    for (const kiln::dsl::RegisteredModel &m : models)
      llvm::errs() << m.file << ": note: KILN_MODEL(" << m.function << ")\n";
    return 1;
  }
  if (!dotEntry.empty() && emit != Emit::Dot && emit != Emit::DotUnfused) {
    llvm::errs() << program
                 << ": error: --entry needs --emit=dot or --emit=dot-unfused\n";
    return 1;
  }
  if (!kiln::isWeightPrecision(weights)) {
    llvm::errs() << program << ": error: --weights=" << weights << ": expected "
                 << kiln::kWeightPrecisionChoices << "\n";
    return 1;
  }
  if ((emit == Emit::Library || emit == Emit::Stmt) && outputDir.empty()) {
    llvm::errs() << program << ": error: missing -o OUTDIR (see --help)\n";
    return 1;
  }

  kiln::dsl::Model model = models.front().build();
  if (!model.ok()) {
    model.printErrors(llvm::errs());
    return 1;
  }
  ModuleOp module = model.module();
  // The location already points at the user's line; the op's generic form only adds
  // noise.
  model.context().printOpOnDiagnostic(false);
  ScopedDiagnosticHandler handler(&model.context(), [&](Diagnostic &diag) {
    printDiagnostic(llvm::errs(), program, diag);
    return success();
  });

  if (emit == Emit::Mlir) {
    module.print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  PassManager pm(&model.context());
  applyPassManagerCLOptions(pm);
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope timingScope = timing.getRootScope();
  pm.enableTiming(timingScope);
  kiln::PipelineOptions pipelineOptions;
  pipelineOptions.fuseAttention = emit != Emit::DotUnfused;
  pipelineOptions.fuseKernels = emit != Emit::DotUnfused;
  pipelineOptions.fusionRemarks = fusionRemarks;
  pipelineOptions.weights = weights;
  kiln::buildDefaultPipeline(pm, pipelineOptions);
  if (failed(pm.run(module)))
    return 1;
  if (emit == Emit::Fused) {
    module.print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  if (emit == Emit::Dot || emit == Emit::DotUnfused)
    return failed(kiln::printGraphDot(module, llvm::outs(), dotEntry)) ? 1 : 0;

  namespace hb = kiln::halide_backend;
  std::string name = libraryName.empty() ? model.name() : libraryName.getValue();
  hb::CompileOptions compileOptions;
  compileOptions.target = target;
  compileOptions.outputDir = outputDir.empty() ? "." : outputDir.getValue();
  compileOptions.kernelsDir = kernelsDir;
  compileOptions.emitStmt = emit == Emit::Stmt;
  compileOptions.layoutRemarks = fusionRemarks;
  if (emit == Emit::Manifest) {
    FailureOr<std::string> manifest = hb::emitManifest(module, name, compileOptions);
    if (failed(manifest))
      return 1;
    llvm::outs() << *manifest;
    return 0;
  }

  hb::CompileStats stats;
  FailureOr<std::string> library = hb::compileModel(module, name, compileOptions, &stats);
  if (failed(library))
    return 1;
  unsigned reused = stats.steps - stats.kernels;
  llvm::outs() << program << ": compiled " << *library << " for " << target << ": "
               << stats.steps << " op" << (stats.steps == 1 ? "" : "s") << ", "
               << stats.kernels << " kernel" << (stats.kernels == 1 ? "" : "s")
               << " compiled, " << reused << " reused, in "
               << llvm::format("%.1f", stats.seconds) << " s\n";
  return 0;
}
