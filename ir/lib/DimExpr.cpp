//===- DimExpr.cpp - Integer expressions over named dimensions ------------===//
//
// A recursive-descent parser that evaluates as it parses; with no lookup it only checks
// the syntax and collects the names, so that "S/(S-1)" is valid even though it divides
// by zero for S = 1.
//
//===----------------------------------------------------------------------===//

#include "kiln/ir/DimExpr.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace kiln;

namespace {
/// expr := term (('+' | '-') term)*; term := factor (('*' | '/') factor)*;
/// factor := integer | name | '(' expr ')'.
class Parser {
public:
  using Lookup = llvm::function_ref<llvm::Optional<int64_t>(llvm::StringRef)>;

  Parser(llvm::StringRef text, Lookup lookup, bool evaluate)
      : text(text), lookup(lookup), evaluate(evaluate) {}

  /// The value (0 when not evaluating), or an error naming the problem.
  llvm::Expected<int64_t> parseAll() {
    int64_t value = parseExpr();
    skipSpaces();
    if (error.empty() && pos != text.size())
      fail("unexpected '" + text.substr(pos, 1).str() + "'");
    if (!error.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "invalid dimension expression \"" + text.str() +
                                         "\": " + error);
    return value;
  }

  std::vector<std::string> names;

private:
  void skipSpaces() {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }
  /// Consumes `c` when it comes next.
  bool eat(char c) {
    skipSpaces();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  int64_t fail(const std::string &message) {
    if (error.empty())
      error = message;
    return 0;
  }

  int64_t parseExpr() {
    int64_t value = parseTerm();
    while (error.empty()) {
      bool add = eat('+');
      if (!add && !eat('-'))
        break;
      int64_t rhs = parseTerm(), out = 0;
      bool overflow =
          add ? llvm::AddOverflow(value, rhs, out) : llvm::SubOverflow(value, rhs, out);
      if (evaluate && overflow)
        return fail("overflow");
      value = out;
    }
    return value;
  }

  int64_t parseTerm() {
    int64_t value = parseFactor();
    while (error.empty()) {
      bool multiply = eat('*');
      if (!multiply && !eat('/'))
        break;
      int64_t rhs = parseFactor();
      if (!evaluate || !error.empty())
        continue;
      if (multiply) {
        if (llvm::MulOverflow(value, rhs, value))
          return fail("overflow");
      } else if (rhs == 0) {
        return fail("division by zero");
      } else {
        value /= rhs;
      }
    }
    return value;
  }

  int64_t parseFactor() {
    skipSpaces();
    if (eat('(')) {
      int64_t value = parseExpr();
      if (error.empty() && !eat(')'))
        return fail("missing ')'");
      return value;
    }
    size_t begin = pos;
    if (pos < text.size() && llvm::isDigit(text[pos])) {
      while (pos < text.size() && llvm::isDigit(text[pos]))
        ++pos;
      int64_t value;
      if (text.slice(begin, pos).getAsInteger(10, value))
        return fail("integer out of range");
      return value;
    }
    auto isNameChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
    if (pos < text.size() && (llvm::isAlpha(text[pos]) || text[pos] == '_')) {
      while (pos < text.size() && isNameChar(text[pos]))
        ++pos;
      llvm::StringRef name = text.slice(begin, pos);
      if (!llvm::is_contained(names, name.str()))
        names.push_back(name.str());
      if (!evaluate)
        return 0;
      llvm::Optional<int64_t> value = lookup(name);
      if (!value)
        return fail("unknown dimension '" + name.str() + "'");
      return *value;
    }
    return fail(pos < text.size() ? "unexpected '" + text.substr(pos, 1).str() + "'"
                                  : "unexpected end");
  }

  llvm::StringRef text;
  Lookup lookup;
  bool evaluate;
  size_t pos = 0;
  std::string error;
};
} // namespace

llvm::Expected<std::vector<std::string>> kiln::dimExprNames(llvm::StringRef expr) {
  auto noLookup = [](llvm::StringRef) { return llvm::Optional<int64_t>(); };
  Parser parser(expr, noLookup, /*evaluate=*/false);
  if (llvm::Error e = parser.parseAll().takeError())
    return std::move(e);
  return std::move(parser.names);
}

bool kiln::isDimName(llvm::StringRef text) {
  auto isNameChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  return !text.empty() && (llvm::isAlpha(text[0]) || text[0] == '_') &&
         llvm::all_of(text, isNameChar);
}

llvm::Expected<int64_t> kiln::evaluateDimExpr(
    llvm::StringRef expr,
    llvm::function_ref<llvm::Optional<int64_t>(llvm::StringRef)> lookup) {
  return Parser(expr, lookup, /*evaluate=*/true).parseAll();
}
