// DimExprTest.cpp - dimension expressions: parsing, binding names to slots, evaluation
// and its failures.
#include "DimExpr.hpp"

#include <gtest/gtest.h>

using kiln::rt::DimExpr;

namespace {
DimExpr parseOk(const std::string &text) {
  std::string error;
  auto e = DimExpr::parse(text, error);
  EXPECT_TRUE(e.has_value()) << text << ": " << error;
  return e ? *e : DimExpr::constant(-1);
}
std::string parseError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(DimExpr::parse(text, error).has_value()) << text;
  return error;
}
// Evaluates with B=3, S=7, T=10 (slots in that order).
int64_t eval(DimExpr e) {
  const std::vector<std::string> names{"B", "S", "T"};
  e.resolve([&](const std::string &n) {
    return int(std::find(names.begin(), names.end(), n) - names.begin());
  });
  const int64_t values[] = {3, 7, 10};
  int64_t out = -1;
  std::string error;
  EXPECT_TRUE(e.evaluate(values, out, error)) << e.text() << ": " << error;
  return out;
}
} // namespace

TEST(DimExpr, EvaluatesWithPrecedenceAndIntegerDivision) {
  EXPECT_EQ(eval(parseOk("B")), 3);
  EXPECT_EQ(eval(parseOk("B*S")), 21);
  EXPECT_EQ(eval(parseOk("(B*S*512)/512")), 21);
  EXPECT_EQ(eval(parseOk("T+1")), 11);
  EXPECT_EQ(eval(parseOk(" T - 2 * B ")), 4);
  EXPECT_EQ(eval(parseOk("T/B")), 3);
  EXPECT_EQ(eval(parseOk("(T+B)*(S-1)")), 78);
  EXPECT_EQ(eval(parseOk("B-S+T")), 6); // left-associative
}

TEST(DimExpr, BareNamesBindConstantsFold) {
  EXPECT_NE(parseOk("S").bareName(), nullptr);
  EXPECT_EQ(*parseOk("S").bareName(), "S");
  EXPECT_EQ(parseOk("(S)").bareName(), nullptr); // written as an expression: only checked
  EXPECT_EQ(parseOk("S+0").bareName(), nullptr);
  DimExpr c = parseOk("(2+3)*4");
  EXPECT_TRUE(c.isConstant());
  EXPECT_EQ(c.constantValue(), 20);
  DimExpr e = parseOk("B*S+B");
  EXPECT_EQ(e.names(), (std::vector<std::string>{"B", "S"}));
}

TEST(DimExpr, RejectsMalformedText) {
  EXPECT_EQ(parseError(""), "empty expression");
  EXPECT_EQ(parseError("B*"), "expression ends where a number, name or '(' was expected");
  EXPECT_EQ(parseError("(B"), "missing ')'");
  EXPECT_EQ(parseError("B S"), "unexpected 'S' at offset 2");
  EXPECT_EQ(parseError("B%2"), "unexpected '%' at offset 1");
  EXPECT_EQ(parseError("99999999999999999999"), "integer too large");
  EXPECT_EQ(parseError("4/0"), "division by zero in '4/0'");
}

TEST(DimExpr, EvaluationFailuresAreReported) {
  std::string error;
  DimExpr e = parseOk("T/(B-B)");
  e.resolve([](const std::string &n) { return n == "T" ? 0 : 1; });
  const int64_t values[] = {10, 3};
  int64_t out;
  EXPECT_FALSE(e.evaluate(values, out, error));
  EXPECT_EQ(error, "division by zero in 'T/(B-B)'");
  DimExpr big = parseOk("B*B*B");
  big.resolve([](const std::string &) { return 0; });
  const int64_t huge[] = {int64_t(1) << 40};
  EXPECT_FALSE(big.evaluate(huge, out, error));
  EXPECT_EQ(error, "integer overflow in 'B*B*B'");
}
