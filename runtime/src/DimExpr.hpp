// DimExpr.hpp - dimension expressions of the manifest ("B", "B*S", "(B*S*512)/512",
// "T+1").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

// An integer expression over an entry's dynamic dimension names: integers, names, + - * /
// (integer division) and parentheses. Names are resolved once to slots in the entry's
// dimension table so that evaluating during a run does no lookups or allocation.
class DimExpr {
public:
  static std::optional<DimExpr> parse(std::string_view text, std::string &error);
  static DimExpr constant(int64_t value);

  const std::string &text() const { return text_; }
  bool isConstant() const { return names_.empty(); }
  // The value of a name-free expression (already folded at parse time).
  int64_t constantValue() const { return constant_; }
  // The name when the expression is exactly one name (these bind dimensions), else null.
  const std::string *bareName() const;
  // Names in order of first use.
  const std::vector<std::string> &names() const { return names_; }

  // Maps each name to its slot in the table evaluate() reads; slotOf(name) must be >= 0.
  template <typename SlotOf> void resolve(SlotOf &&slotOf) {
    slots_.clear();
    for (const std::string &name : names_)
      slots_.push_back(slotOf(name));
  }
  int slotOfName(size_t nameIndex) const { return slots_[nameIndex]; }

  // Evaluates with values[slot]; fails (with error set) on overflow or division by zero.
  bool evaluate(const int64_t *values, int64_t &out, std::string &error) const;

private:
  enum class Op : uint8_t { Const, Name, Add, Sub, Mul, Div };
  struct Node {
    Op op;
    int64_t value; // Const: the value; Name: index into names_
    int lhs = -1, rhs = -1;
  };
  friend class DimExprParser;

  bool evalNode(int node, const int64_t *values, int64_t &out, std::string &error) const;

  std::string text_;
  std::vector<Node> nodes_; // root is the last node
  std::vector<std::string> names_;
  std::vector<int> slots_;
  int64_t constant_ = 0;
};

} // namespace kiln::rt
