//===- DimExpr.h - Integer expressions over named dimensions ----*- C++ -*-===//
//
// The dimension expressions of docs/manifest.md, shared by the compiler (ir/, through
// kiln/ir/DimExpr.h) and the runtime, so that both read every text the same way:
//
//   expr   := term (('+' | '-') term)*
//   term   := factor (('*' | '/') factor)*
//   factor := integer | name | '(' expr ')'
//   name   := [A-Za-z_][A-Za-z0-9_]*
//
// Integers are decimal int64 (no sign: write "0-5"); '/' divides and truncates toward
// zero; whitespace (space, tab, newline, carriage return) may stand between tokens. Every
// input has a defined outcome: text outside the grammar, an integer beyond int64,
// nesting deeper than kMaxDimExprNesting, and evaluation that divides by zero or leaves
// int64 (INT64_MIN / -1 included) each fail with a message; nothing is undefined.
//
// Plain C++17, free of LLVM: it is part of libkiln_runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_ABI_DIMEXPR_H
#define KILN_ABI_DIMEXPR_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::abi {

/// How deeply parentheses may nest. A parser of untrusted text must not recurse without
/// bound; real expressions nest two or three levels.
inline constexpr int kMaxDimExprNesting = 64;

/// Whether `text` is exactly one dimension name: what may name a dynamic dimension ("B",
/// "S") or the dimension an input's value binds ("P").
bool isDimName(std::string_view text);

/// A parsed dimension expression. Names are numbered in order of first use; evaluation
/// reads each name's value from a table, by default at the name's number, or at the slot
/// resolve() gave it, so that evaluating during a run does no lookup and no allocation.
class DimExpr {
public:
  /// Parses `text`. A name-free expression is evaluated now (constantValue()), so "4/0"
  /// fails here. On failure returns nothing and sets `error` to the problem, e.g.
  /// "unexpected '%' at offset 1".
  static std::optional<DimExpr> parse(std::string_view text, std::string &error);
  static DimExpr constant(int64_t value);

  /// The text as written.
  const std::string &text() const { return text_; }
  bool isConstant() const { return names_.empty(); }
  /// The value of a name-free expression.
  int64_t constantValue() const { return constant_; }
  /// The name when the text is exactly one name (surrounding whitespace aside), else
  /// null. "(S)" evaluates like "S" but is an expression: only a plain name binds.
  const std::string *bareName() const;
  /// The names, in order of first use.
  const std::vector<std::string> &names() const { return names_; }

  /// Gives names()[i] the slot slotOf(names()[i]) (>= 0) in the table evaluate() reads.
  template <typename SlotOf> void resolve(SlotOf &&slotOf) {
    slots_.clear();
    for (const std::string &name : names_)
      slots_.push_back(slotOf(name));
  }
  /// The slot of names()[nameIndex]: resolve()'s, or nameIndex before it.
  int slotOfName(size_t nameIndex) const {
    return slots_.empty() ? int(nameIndex) : slots_[nameIndex];
  }

  /// The value, with names()[i] worth values[slotOfName(i)]. Fails with `error` set to
  /// "division by zero in 'TEXT'" or "integer overflow in 'TEXT'".
  bool evaluate(const int64_t *values, int64_t &out, std::string &error) const;

  /// The value, with each name worth valueOf(name) (a std::optional<int64_t>; none: the
  /// name is unknown, an error "unknown dimension 'N' in 'TEXT'").
  template <typename ValueOf>
  bool evaluateWith(ValueOf &&valueOf, int64_t &out, std::string &error) const {
    std::vector<int64_t> values;
    for (const std::string &name : names_) {
      std::optional<int64_t> value = valueOf(name);
      if (!value) {
        error = "unknown dimension '" + name + "' in '" + text_ + "'";
        return false;
      }
      values.push_back(*value);
    }
    return evaluateInNameOrder(values.data(), out, error);
  }

private:
  enum class Op : uint8_t { Const, Name, Add, Sub, Mul, Div };
  /// The expression in postfix order: operands come before their operator, so that
  /// evaluation is one loop over a small stack and never recurses.
  struct Node {
    Op op;
    int64_t value; // Const: the value; Name: index into names_
  };
  friend class DimExprParser;

  bool evaluateSlots(const int64_t *values, const int *slots, int64_t &out,
                     std::string &error) const;
  bool evaluateInNameOrder(const int64_t *values, int64_t &out,
                           std::string &error) const {
    return evaluateSlots(values, nullptr, out, error);
  }

  std::string text_;
  std::vector<Node> nodes_;
  std::vector<std::string> names_;
  std::vector<int> slots_;
  int64_t constant_ = 0;
};

} // namespace kiln::abi

#endif // KILN_ABI_DIMEXPR_H
