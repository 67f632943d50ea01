//===- SourceLocation.cpp - Reading an op's place in the user's model -----===//

#include "kiln/ir/SourceLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Path.h"

using namespace mlir;

namespace kiln {

/// Appends the frames of `loc` to `frames`, outermost first; `module` is the module
/// whose code `loc` is a line of.
static void appendFrames(Location loc, llvm::StringRef module,
                         std::vector<SourceFrame> &frames) {
  if (auto callSite = loc.dyn_cast<CallSiteLoc>()) {
    appendFrames(callSite.getCaller(), "", frames);
    appendFrames(callSite.getCallee(), module, frames);
  } else if (auto name = loc.dyn_cast<NameLoc>()) {
    appendFrames(name.getChildLoc(), name.getName().getValue(), frames);
  } else if (auto file = loc.dyn_cast<FileLineColLoc>()) {
    frames.push_back(
        {file.getFilename().str(), file.getLine(), file.getColumn(), module.str()});
  } else if (auto fused = loc.dyn_cast<FusedLoc>()) {
    for (Location part : fused.getLocations()) {
      size_t before = frames.size();
      appendFrames(part, module, frames);
      if (frames.size() != before)
        return;
    }
  } else if (auto opaque = loc.dyn_cast<OpaqueLoc>()) {
    appendFrames(opaque.getFallbackLocation(), module, frames);
  }
}

std::vector<SourceFrame> sourceFrames(Location loc) {
  std::vector<SourceFrame> frames;
  appendFrames(loc, "", frames);
  return frames;
}

std::vector<std::vector<SourceFrame>> sourceChains(Location loc) {
  std::vector<std::vector<SourceFrame>> chains;
  auto add = [&](Location part) {
    std::vector<SourceFrame> frames = sourceFrames(part);
    if (!frames.empty() && !llvm::is_contained(chains, frames))
      chains.push_back(std::move(frames));
  };
  if (auto fused = loc.dyn_cast<FusedLoc>())
    for (Location part : fused.getLocations())
      add(part);
  else
    add(loc);
  return chains;
}

std::string baseName(llvm::StringRef file) {
  return llvm::sys::path::filename(file).str();
}

std::string chainText(llvm::ArrayRef<SourceFrame> frames) {
  std::string text;
  for (const SourceFrame &frame : frames) {
    if (!text.empty())
      text += " > " + baseName(frame.file);
    else
      text = frame.file;
    text += ":" + std::to_string(frame.line);
  }
  return text;
}

std::vector<std::string> chainTexts(Location loc) {
  std::vector<std::string> texts;
  for (const std::vector<SourceFrame> &chain : sourceChains(loc))
    if (std::string text = chainText(chain); !llvm::is_contained(texts, text))
      texts.push_back(std::move(text));
  return texts;
}

} // namespace kiln
