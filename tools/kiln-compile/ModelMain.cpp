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
#include "kiln/passes/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/ViewOpGraph.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;

namespace {

enum class Emit { Library, Mlir, Fused, Manifest, Stmt, Dot, DotUnfused };

struct Options {
  std::string outputDir;
  std::string target = "host";
  /// As written after --emit; parsed into `emit` once the command line is read.
  std::string emitText;
  Emit emit = Emit::Library;
  std::string kernelsDir;
  std::string name;
  bool fusionRemarks = false;
  bool help = false;
};

void printUsage(llvm::raw_ostream &os, llvm::StringRef program) {
  os << "usage: " << program
     << " -o OUTDIR [--target=host|host-cuda|<halide target>]\n"
        "       [--emit=mlir|fused|manifest|stmt|dot|dot-unfused] [--fusion-remarks]\n"
        "       [--kernels-dir DIR] [--name NAME]\n\n"
        "Compiles the model of this program to OUTDIR/NAME.so.\n\n"
        "  -o OUTDIR           where NAME.so goes (created if missing)\n"
        "  --target=T          'host' (default), 'host-cuda', or a Halide target string\n"
        "  --emit=mlir         print the module as built by the model, then stop\n"
        "  --emit=fused        print the module after the pass pipeline, then stop\n"
        "  --emit=manifest     print the manifest the library would embed, then stop\n"
        "  --emit=stmt         compile as usual and also write each kernel's Halide\n"
        "                      statement file next to its object\n"
        "  --emit=dot          print the graph after the pass pipeline as Graphviz DOT\n"
        "                      (| dot -Tsvg > NAME.svg), then stop\n"
        "  --emit=dot-unfused  the same graph from the pipeline without attention "
        "fusion\n"
        "  --fusion-remarks    say on stderr, at its line of the model, why each "
        "softmax\n"
        "                      was not fused into kiln.attention\n"
        "  --kernels-dir DIR   where kernel objects go (default OUTDIR/NAME.kernels)\n"
        "  --name NAME         the library's name (default: the model's name)\n";
}

/// Parses `--opt=value`, `--opt value` (one or two dashes); nullopt after printing why
/// when the command line is wrong.
std::optional<Options> parseArguments(int argc, char **argv, llvm::StringRef program) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "-help") {
      options.help = true;
      continue;
    }
    if (arg == "--fusion-remarks" || arg == "-fusion-remarks") {
      options.fusionRemarks = true;
      continue;
    }
    llvm::StringRef key = arg, value;
    bool hasValue = false;
    if (arg.startswith("-") && arg.contains('=')) {
      std::tie(key, value) = arg.split('=');
      hasValue = true;
    }
    llvm::StringRef bare = key.ltrim('-');
    std::string *slot = nullptr;
    if (bare == "o" || bare == "output")
      slot = &options.outputDir;
    else if (bare == "target")
      slot = &options.target;
    else if (bare == "kernels-dir")
      slot = &options.kernelsDir;
    else if (bare == "name")
      slot = &options.name;
    else if (bare == "emit")
      slot = &options.emitText;
    if (!slot || key == bare) {
      llvm::errs() << program << ": error: unknown argument '" << arg << "'\n";
      return std::nullopt;
    }
    if (!hasValue) {
      if (i + 1 >= argc) {
        llvm::errs() << program << ": error: " << key << " needs a value\n";
        return std::nullopt;
      }
      value = argv[++i];
    }
    *slot = value.str();
  }
  llvm::StringRef emit = options.emitText;
  if (emit == "mlir")
    options.emit = Emit::Mlir;
  else if (emit == "fused")
    options.emit = Emit::Fused;
  else if (emit == "manifest")
    options.emit = Emit::Manifest;
  else if (emit == "stmt")
    options.emit = Emit::Stmt;
  else if (emit == "dot")
    options.emit = Emit::Dot;
  else if (emit == "dot-unfused")
    options.emit = Emit::DotUnfused;
  else if (!emit.empty()) {
    llvm::errs() << program << ": error: unknown --emit value '" << emit
                 << "' (expected mlir, fused, manifest, stmt, dot or dot-unfused)\n";
    return std::nullopt;
  }
  return options;
}

/// The model file's line in `loc`: itself, or the first of a fused location (a fused op
/// points at every line it came from).
FileLineColLoc fileLocation(Location loc) {
  if (auto fused = loc.dyn_cast<FusedLoc>()) {
    for (Location part : fused.getLocations())
      if (FileLineColLoc inner = fileLocation(part))
        return inner;
    return {};
  }
  return loc.dyn_cast<FileLineColLoc>();
}

/// Prints diagnostics as compilers do: "model.cpp:12:5: error: ...", then any notes.
void printDiagnostic(llvm::raw_ostream &os, llvm::StringRef program, Diagnostic &diag) {
  auto print = [&](Location loc, llvm::StringRef severity, llvm::StringRef message) {
    if (FileLineColLoc fileLoc = fileLocation(loc))
      os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
         << fileLoc.getColumn();
    else if (auto nameLoc = loc.dyn_cast<NameLoc>())
      os << nameLoc.getName();
    else
      os << program;
    os << ": " << severity << ": " << message << "\n";
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
  std::optional<Options> options = parseArguments(argc, argv, program);
  if (!options)
    return 1;
  if (options->help) {
    printUsage(llvm::outs(), program);
    return 0;
  }

  const std::vector<kiln::RegisteredModel> &models = kiln::registeredModels();
  if (models.size() != 1) {
    llvm::errs() << program
                 << ": error: a model compiler needs exactly one KILN_MODEL(...) "
                 << "line among its sources, found " << models.size() << "\n";
    for (const kiln::RegisteredModel &m : models)
      llvm::errs() << m.file << ": note: KILN_MODEL(" << m.function << ")\n";
    return 1;
  }
  if (options->emit == Emit::Library || options->emit == Emit::Stmt) {
    if (options->outputDir.empty()) {
      llvm::errs() << program << ": error: missing -o OUTDIR\n";
      printUsage(llvm::errs(), program);
      return 1;
    }
  }

  kiln::Model model = models.front().build();
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

  if (options->emit == Emit::Mlir) {
    module.print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  PassManager pm(&model.context());
  kiln::PipelineOptions pipelineOptions;
  pipelineOptions.fuseAttention = options->emit != Emit::DotUnfused;
  pipelineOptions.fusionRemarks = options->fusionRemarks;
  kiln::buildDefaultPipeline(pm, pipelineOptions);
  if (failed(pm.run(module)))
    return 1;
  if (options->emit == Emit::Fused) {
    module.print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  if (options->emit == Emit::Dot || options->emit == Emit::DotUnfused) {
    // MLIR's op-graph printer: one node per op, edges along the data flow.
    PassManager dot(&model.context());
    dot.addPass(createPrintOpGraphPass(llvm::outs()));
    return failed(dot.run(module)) ? 1 : 0;
  }

  namespace hb = kiln::halide_backend;
  std::string name = options->name.empty() ? model.name() : options->name;
  hb::CompileOptions compileOptions;
  compileOptions.target = options->target;
  compileOptions.outputDir = options->outputDir.empty() ? "." : options->outputDir;
  compileOptions.kernelsDir = options->kernelsDir;
  compileOptions.emitStmt = options->emit == Emit::Stmt;
  if (options->emit == Emit::Manifest) {
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
  llvm::outs() << program << ": compiled " << *library << " for " << options->target
               << ": " << stats.steps << " op" << (stats.steps == 1 ? "" : "s") << ", "
               << stats.kernels << " kernel" << (stats.kernels == 1 ? "" : "s")
               << " compiled, " << reused << " reused, in "
               << llvm::format("%.1f", stats.seconds) << " s\n";
  return 0;
}
