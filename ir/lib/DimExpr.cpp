//===- DimExpr.cpp - Integer expressions over named dimensions ------------===//
//
// Adapts kiln/abi/DimExpr.h, the runtime's parser, to llvm::Expected and StringRef.
//
//===----------------------------------------------------------------------===//

#include "kiln/ir/DimExpr.h"

#include "kiln/abi/DimExpr.h"

#include "llvm/ADT/StringExtras.h"

using namespace kiln;

static std::string_view view(llvm::StringRef text) { return {text.data(), text.size()}; }

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// `expr` parsed, or an error: `invalid dimension expression "EXPR": PROBLEM`.
static llvm::Expected<abi::DimExpr> parse(llvm::StringRef expr) {
  std::string error;
  std::optional<abi::DimExpr> parsed = abi::DimExpr::parse(view(expr), error);
  if (!parsed)
    return makeError("invalid dimension expression \"" + expr + "\": " + error);
  return std::move(*parsed);
}

llvm::Expected<std::vector<std::string>> kiln::dimExprNames(llvm::StringRef expr) {
  llvm::Expected<abi::DimExpr> parsed = parse(expr);
  if (!parsed)
    return parsed.takeError();
  return parsed->names();
}

bool kiln::isDimName(llvm::StringRef text) { return abi::isDimName(view(text)); }

llvm::Optional<int64_t> kiln::dimInteger(llvm::StringRef text) {
  uint64_t value;
  if (text.empty() || !llvm::all_of(text, llvm::isDigit) ||
      text.getAsInteger(10, value) || value > static_cast<uint64_t>(INT32_MAX))
    return llvm::None;
  return static_cast<int64_t>(value);
}

llvm::Expected<int64_t> kiln::evaluateDimExpr(
    llvm::StringRef expr,
    llvm::function_ref<llvm::Optional<int64_t>(llvm::StringRef)> lookup) {
  llvm::Expected<abi::DimExpr> parsed = parse(expr);
  if (!parsed)
    return parsed.takeError();
  auto valueOf = [&](const std::string &name) -> std::optional<int64_t> {
    if (llvm::Optional<int64_t> value = lookup(name))
      return *value;
    return std::nullopt;
  };
  int64_t value = 0;
  std::string error;
  if (!parsed->evaluateWith(valueOf, value, error))
    return makeError(error);
  return value;
}
