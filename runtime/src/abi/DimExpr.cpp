//===- DimExpr.cpp - Integer expressions over named dimensions ------------===//
//
// A recursive-descent parser that emits postfix code, and a stack machine that runs it.
// Only parentheses recurse (bounded by kMaxDimExprNesting); chains such as "1+1+...+1"
// are loops, so no text can exhaust the native stack, in the parser or the evaluator.
//
//===----------------------------------------------------------------------===//

#include "kiln/abi/DimExpr.h"

#include <algorithm>

namespace kiln::abi {

namespace {

/// Each nesting level holds at most a pending sum and a pending product on the stack.
constexpr int kMaxStack = 2 * (kMaxDimExprNesting + 1) + 1;

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isNameChar(char c) { return isNameStart(c) || isDigit(c); }

} // namespace

bool isDimName(std::string_view text) {
  return !text.empty() && isNameStart(text[0]) &&
         std::all_of(text.begin(), text.end(), isNameChar);
}

/// Parses into a DimExpr's postfix nodes; the first problem found stops it.
class DimExprParser {
public:
  DimExprParser(std::string_view text, DimExpr &expr) : text_(text), expr_(expr) {}

  /// The problem, or empty when `text` is a whole expression.
  std::string parse() {
    skipSpace();
    if (pos_ == text_.size())
      return "empty expression";
    parseSum();
    skipSpace();
    if (error_.empty() && pos_ != text_.size())
      failUnexpected();
    return error_;
  }

  /// The most values evaluation holds at once.
  int maxDepth() const { return maxDepth_; }

private:
  using Op = DimExpr::Op;

  void fail(std::string message) {
    if (error_.empty())
      error_ = std::move(message);
  }
  void failUnexpected() {
    if (pos_ == text_.size())
      fail("unexpected end, where a number, name or '(' was expected");
    else
      fail(std::string("unexpected '") + text_[pos_] + "' at offset " +
           std::to_string(pos_));
  }

  void skipSpace() {
    while (pos_ < text_.size() && isSpace(text_[pos_]))
      ++pos_;
  }

  /// Consumes whichever of `a` and `b` comes next; returns it, or 0.
  char eatEither(char a, char b) {
    skipSpace();
    if (error_.empty() && pos_ < text_.size() && (text_[pos_] == a || text_[pos_] == b))
      return text_[pos_++];
    return 0;
  }

  void emit(Op op, int64_t value = 0) {
    expr_.nodes_.push_back({op, value});
    depth_ += op == Op::Const || op == Op::Name ? 1 : -1;
    maxDepth_ = std::max(maxDepth_, depth_);
  }

  void parseSum() {
    parseProduct();
    while (char c = eatEither('+', '-')) {
      parseProduct();
      emit(c == '+' ? Op::Add : Op::Sub);
    }
  }

  void parseProduct() {
    parseFactor();
    while (char c = eatEither('*', '/')) {
      parseFactor();
      emit(c == '*' ? Op::Mul : Op::Div);
    }
  }

  void parseFactor() {
    skipSpace();
    if (!error_.empty())
      return;
    if (pos_ == text_.size())
      return failUnexpected();
    char c = text_[pos_];
    if (c == '(')
      return parseParenthesized();
    if (isDigit(c))
      return parseInteger();
    if (isNameStart(c))
      return parseName();
    failUnexpected();
  }

  void parseParenthesized() {
    if (nesting_ == kMaxDimExprNesting)
      return fail("parentheses nested deeper than " + std::to_string(kMaxDimExprNesting) +
                  " levels at offset " + std::to_string(pos_));
    size_t open = pos_++;
    ++nesting_;
    parseSum();
    --nesting_;
    skipSpace();
    if (!error_.empty())
      return;
    if (pos_ == text_.size() || text_[pos_] != ')')
      return fail("missing ')' for the '(' at offset " + std::to_string(open));
    ++pos_;
  }

  void parseInteger() {
    size_t begin = pos_;
    int64_t value = 0;
    bool overflow = false;
    for (; pos_ < text_.size() && isDigit(text_[pos_]); ++pos_)
      overflow = overflow || __builtin_mul_overflow(value, 10, &value) ||
                 __builtin_add_overflow(value, text_[pos_] - '0', &value);
    if (overflow)
      return fail("integer " + std::string(text_.substr(begin, pos_ - begin)) +
                  " at offset " + std::to_string(begin) + " does not fit in int64");
    emit(Op::Const, value);
  }

  void parseName() {
    size_t begin = pos_;
    while (pos_ < text_.size() && isNameChar(text_[pos_]))
      ++pos_;
    std::string name(text_.substr(begin, pos_ - begin));
    std::vector<std::string> &names = expr_.names_;
    auto it = std::find(names.begin(), names.end(), name);
    emit(Op::Name, it - names.begin());
    if (it == names.end())
      names.push_back(std::move(name));
  }

  std::string_view text_;
  DimExpr &expr_;
  size_t pos_ = 0;
  int nesting_ = 0;
  int depth_ = 0, maxDepth_ = 0;
  std::string error_;
};

std::optional<DimExpr> DimExpr::parse(std::string_view text, std::string &error) {
  DimExpr expr;
  expr.text_ = std::string(text);
  DimExprParser parser(text, expr);
  std::string problem = parser.parse();
  if (problem.empty() && parser.maxDepth() > kMaxStack)
    problem = "expression too deeply nested";
  if (problem.empty() && expr.isConstant())
    expr.evaluate(nullptr, expr.constant_, problem);
  if (!problem.empty()) {
    error = std::move(problem);
    return std::nullopt;
  }
  return expr;
}

DimExpr DimExpr::constant(int64_t value) {
  DimExpr expr;
  expr.text_ = std::to_string(value);
  expr.nodes_.push_back({Op::Const, value});
  expr.constant_ = value;
  return expr;
}

const std::string *DimExpr::bareName() const {
  if (nodes_.size() != 1 || nodes_[0].op != Op::Name)
    return nullptr;
  auto first = std::find_if_not(text_.begin(), text_.end(), isSpace);
  auto last = std::find_if_not(text_.rbegin(), text_.rend(), isSpace).base();
  return std::string_view(&*first, size_t(last - first)) == names_[0] ? &names_[0]
                                                                      : nullptr;
}

bool DimExpr::evaluate(const int64_t *values, int64_t &out, std::string &error) const {
  return evaluateSlots(values, slots_.empty() ? nullptr : slots_.data(), out, error);
}

bool DimExpr::evaluateSlots(const int64_t *values, const int *slots, int64_t &out,
                            std::string &error) const {
  int64_t stack[kMaxStack];
  int top = 0; // parse() guarantees the nodes never need more than kMaxStack
  for (const Node &node : nodes_) {
    if (node.op == Op::Const || node.op == Op::Name) {
      stack[top++] = node.op == Op::Const ? node.value
                     : slots              ? values[slots[node.value]]
                                          : values[node.value];
      continue;
    }
    int64_t b = stack[--top];
    int64_t &a = stack[top - 1];
    bool overflow = false;
    switch (node.op) {
    case Op::Add:
      overflow = __builtin_add_overflow(a, b, &a);
      break;
    case Op::Sub:
      overflow = __builtin_sub_overflow(a, b, &a);
      break;
    case Op::Mul:
      overflow = __builtin_mul_overflow(a, b, &a);
      break;
    case Op::Div:
      if (b == 0) {
        error = "division by zero in '" + text_ + "'";
        return false;
      }
      overflow = a == INT64_MIN && b == -1;
      if (!overflow)
        a /= b;
      break;
    case Op::Const:
    case Op::Name:
      break;
    }
    if (overflow) {
      error = "integer overflow in '" + text_ + "'";
      return false;
    }
  }
  out = stack[0];
  return true;
}

} // namespace kiln::abi
