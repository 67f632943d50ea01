//===- SourceLocation.h - Reading an op's place in the user's model -*- C++ -*-===//
//
// The DSL gives every op the location of the call that built it. An op built inside an
// nn module (nn::MultiHeadAttention, ...) carries the whole call chain, as MLIR spells a
// call stack:
//
//   CallSiteLoc(callee = NameLoc("nn::MultiHeadAttention 'enc.0.self_attn'",
//                                FileLineColLoc(Attention.cpp:37)),
//               caller = CallSiteLoc(NameLoc("nn::EncoderLayer ...", ...),
//                                    ... FileLineColLoc(model.cpp:32)))
//
// so that the outermost caller is the user's own line; an op the user built directly has
// a plain FileLineColLoc, and an op that passes merged (attention, packed projections,
// fusion groups) a FusedLoc of its parts. Everything that shows a location (the
// manifest's "loc", the graph pictures, remarks, build errors) reads it here, so they all
// agree.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_IR_SOURCELOCATION_H
#define KILN_IR_SOURCELOCATION_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace kiln {

/// One line of a call chain.
struct SourceFrame {
  std::string file; ///< As the C++ compiler named it (absolute, or build-relative).
  unsigned line = 0;
  unsigned column = 0;
  /// The nn module this line is inside ("nn::Linear 'enc.0.linear1'"); "" for the
  /// user's own line.
  std::string module;

  bool operator==(const SourceFrame &other) const {
    return file == other.file && line == other.line && column == other.column &&
           module == other.module;
  }
};

/// The frames of `loc`, outermost (the user's line) first; empty for a location that
/// names no file. A fused location gives its first part's frames.
std::vector<SourceFrame> sourceFrames(mlir::Location loc);

/// Every call chain in `loc`: one for a plain or call-site location, one per distinct
/// part (in order) for a fused one.
std::vector<std::vector<SourceFrame>> sourceChains(mlir::Location loc);

/// A chain as one line: "FILE:LINE" of the user's call (the file as the compiler named
/// it), then " > Module.cpp:LINE" for each module frame, with the file's base name
/// (Kiln's own sources), e.g. "../models/translator.cpp:32 > Transformer.cpp:180 >
/// Attention.cpp:37". The lines alone, not the modules' names, so that the same line of
/// every layer reads the same.
std::string chainText(llvm::ArrayRef<SourceFrame> frames);

/// chainText of each of sourceChains(loc), without repeats.
std::vector<std::string> chainTexts(mlir::Location loc);

/// The file name without its directories.
std::string baseName(llvm::StringRef file);

} // namespace kiln

#endif // KILN_IR_SOURCELOCATION_H
