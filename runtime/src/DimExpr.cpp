// DimExpr.cpp - parsing and evaluation of dimension expressions.
#include "DimExpr.hpp"

#include <algorithm>

namespace kiln::rt {

namespace {
struct ParseFailure {
  std::string message;
};
} // namespace

class DimExprParser {
public:
  DimExprParser(std::string_view text, DimExpr &expr) : text_(text), expr_(expr) {}

  void parse() {
    skipSpace();
    if (pos_ == text_.size())
      fail("empty expression");
    parseSum();
    skipSpace();
    if (pos_ != text_.size())
      fail(std::string("unexpected '") + text_[pos_] + "' at offset " +
           std::to_string(pos_));
  }

private:
  using Op = DimExpr::Op;

  [[noreturn]] void fail(const std::string &message) { throw ParseFailure{message}; }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      ++pos_;
  }

  int add(DimExpr::Node node) {
    expr_.nodes_.push_back(node);
    return int(expr_.nodes_.size()) - 1;
  }

  int parseSum() {
    int lhs = parseProduct();
    while (true) {
      skipSpace();
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
        Op op = text_[pos_++] == '+' ? Op::Add : Op::Sub;
        int rhs = parseProduct();
        lhs = add({op, 0, lhs, rhs});
      } else {
        return lhs;
      }
    }
  }

  int parseProduct() {
    int lhs = parseAtom();
    while (true) {
      skipSpace();
      if (pos_ < text_.size() && (text_[pos_] == '*' || text_[pos_] == '/')) {
        Op op = text_[pos_++] == '*' ? Op::Mul : Op::Div;
        int rhs = parseAtom();
        lhs = add({op, 0, lhs, rhs});
      } else {
        return lhs;
      }
    }
  }

  static bool isNameStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }
  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  int parseAtom() {
    skipSpace();
    if (pos_ >= text_.size())
      fail("expression ends where a number, name or '(' was expected");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      int inner = parseSum();
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != ')')
        fail("missing ')'");
      ++pos_;
      return inner;
    }
    if (isDigit(c)) {
      int64_t value = 0;
      while (pos_ < text_.size() && isDigit(text_[pos_])) {
        if (__builtin_mul_overflow(value, 10, &value) ||
            __builtin_add_overflow(value, text_[pos_] - '0', &value))
          fail("integer too large");
        ++pos_;
      }
      return add({Op::Const, value});
    }
    if (isNameStart(c)) {
      size_t start = pos_;
      while (pos_ < text_.size() && (isNameStart(text_[pos_]) || isDigit(text_[pos_])))
        ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      auto &names = expr_.names_;
      auto it = std::find(names.begin(), names.end(), name);
      int64_t index = it - names.begin();
      if (it == names.end())
        names.push_back(name);
      return add({Op::Name, index});
    }
    fail(std::string("unexpected '") + c + "' at offset " + std::to_string(pos_));
  }

  std::string_view text_;
  DimExpr &expr_;
  size_t pos_ = 0;
};

std::optional<DimExpr> DimExpr::parse(std::string_view text, std::string &error) {
  DimExpr expr;
  expr.text_ = std::string(text);
  try {
    DimExprParser(text, expr).parse();
  } catch (const ParseFailure &f) {
    error = f.message;
    return std::nullopt;
  }
  if (expr.isConstant()) {
    std::string evalError;
    if (!expr.evaluate(nullptr, expr.constant_, evalError)) {
      error = evalError;
      return std::nullopt;
    }
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
  // "(S)" evaluates like "S" but is written as an expression: only a plain name binds.
  if (nodes_.size() != 1 || nodes_[0].op != Op::Name)
    return nullptr;
  size_t b = text_.find_first_not_of(" \t"), e = text_.find_last_not_of(" \t");
  return text_.compare(b, e - b + 1, names_[0]) == 0 ? &names_[0] : nullptr;
}

bool DimExpr::evaluate(const int64_t *values, int64_t &out, std::string &error) const {
  return evalNode(int(nodes_.size()) - 1, values, out, error);
}

bool DimExpr::evalNode(int index, const int64_t *values, int64_t &out,
                       std::string &error) const {
  const Node &node = nodes_[index];
  if (node.op == Op::Const) {
    out = node.value;
    return true;
  }
  if (node.op == Op::Name) {
    out = values[slots_[node.value]];
    return true;
  }
  int64_t a, b;
  if (!evalNode(node.lhs, values, a, error) || !evalNode(node.rhs, values, b, error))
    return false;
  bool overflow = false;
  switch (node.op) {
  case Op::Add:
    overflow = __builtin_add_overflow(a, b, &out);
    break;
  case Op::Sub:
    overflow = __builtin_sub_overflow(a, b, &out);
    break;
  case Op::Mul:
    overflow = __builtin_mul_overflow(a, b, &out);
    break;
  case Op::Div:
    if (b == 0) {
      error = "division by zero in '" + text_ + "'";
      return false;
    }
    if (a == INT64_MIN && b == -1) {
      overflow = true;
      break;
    }
    out = a / b;
    break;
  default:
    break;
  }
  if (overflow) {
    error = "integer overflow in '" + text_ + "'";
    return false;
  }
  return true;
}

} // namespace kiln::rt
