//===- DimExprTest.cpp - The shared dimension-expression parser -----------===//
//
// The grammar of kiln/abi/DimExpr.h, its failures (each a message, none undefined), and
// the inputs on which the runtime's and the IR's former parsers disagreed.
//
//===----------------------------------------------------------------------===//

#include "kiln/abi/DimExpr.h"

#include <gtest/gtest.h>

#include <algorithm>

using kiln::abi::DimExpr;

namespace {

DimExpr parseOk(const std::string &text) {
  std::string error;
  std::optional<DimExpr> e = DimExpr::parse(text, error);
  EXPECT_TRUE(e.has_value()) << text << ": " << error;
  return e ? *e : DimExpr::constant(-1);
}

std::string parseError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(DimExpr::parse(text, error).has_value()) << text;
  return error;
}

/// Evaluates with B=3, S=7, T=10 in slots 0, 1, 2; the value, or the error.
std::string eval(const std::string &text, const int64_t (&values)[3] = {3, 7, 10}) {
  std::string error;
  std::optional<DimExpr> e = DimExpr::parse(text, error);
  if (!e)
    return "parse: " + error;
  const std::vector<std::string> names{"B", "S", "T"};
  e->resolve([&](const std::string &n) {
    return int(std::find(names.begin(), names.end(), n) - names.begin());
  });
  int64_t out = -1;
  if (!e->evaluate(values, out, error))
    return error;
  return std::to_string(out);
}

struct Case {
  std::string text, expected;
};

/// Checks answer(text) against each case.
template <typename Answer>
void expectAnswers(Answer &&answer, std::initializer_list<Case> cases) {
  for (const Case &c : cases)
    EXPECT_EQ(answer(c.text), c.expected) << "\"" << c.text << "\"";
}

std::string evalDefault(const std::string &text) { return eval(text); }

} // namespace

TEST(DimExpr, EvaluatesWithPrecedenceAndIntegerDivision) {
  expectAnswers(evalDefault, {
                                 {"B", "3"},
                                 {"B*S", "21"},
                                 {"(B*S*512)/512", "21"},
                                 {"T+1", "11"},
                                 {" T - 2 * B ", "4"},
                                 {"T/B", "3"},
                                 {"(T+B)*(S-1)", "78"},
                                 {"B-S+T", "6"},  // left-associative
                                 {"T/B/2", "1"},  // (10/3)/2
                                 {"0-T/B", "-3"}, // truncates toward zero
                                 {"(0-T)/B", "-3"},
                             });
}

TEST(DimExpr, BareNamesBindConstantsFold) {
  ASSERT_NE(parseOk("S").bareName(), nullptr);
  EXPECT_EQ(*parseOk("S").bareName(), "S");
  EXPECT_EQ(*parseOk("\tS ").bareName(), "S");
  EXPECT_EQ(parseOk("(S)").bareName(), nullptr); // written as an expression: only checked
  EXPECT_EQ(parseOk("S+0").bareName(), nullptr);
  DimExpr c = parseOk("(2+3)*4");
  EXPECT_TRUE(c.isConstant());
  EXPECT_EQ(c.constantValue(), 20);
  EXPECT_EQ(parseOk("B*S+B").names(), (std::vector<std::string>{"B", "S"}));
}

TEST(DimExpr, NamesFollowTheGrammar) {
  EXPECT_TRUE(kiln::abi::isDimName("B"));
  EXPECT_TRUE(kiln::abi::isDimName("_seq_len2"));
  EXPECT_FALSE(kiln::abi::isDimName(""));
  EXPECT_FALSE(kiln::abi::isDimName("2B"));
  EXPECT_FALSE(kiln::abi::isDimName("B "));
  EXPECT_FALSE(kiln::abi::isDimName("B*S"));
  EXPECT_EQ(parseOk("x_1*_y").names(), (std::vector<std::string>{"x_1", "_y"}));
}

TEST(DimExpr, RejectsMalformedTextWithWhereAndWhat) {
  expectAnswers(parseError,
                {
                    {"", "empty expression"},
                    {" \t ", "empty expression"},
                    {"B*", "unexpected end, where a number, name or '(' was expected"},
                    {"()", "unexpected ')' at offset 1"},
                    {"(B", "missing ')' for the '(' at offset 0"},
                    {"B)", "unexpected ')' at offset 1"},
                    {"B S", "unexpected 'S' at offset 2"},
                    {"B%2", "unexpected '%' at offset 1"},
                    {"-5", "unexpected '-' at offset 0"}, // no unary minus: "0-5"
                    {"B**S", "unexpected '*' at offset 2"},
                    {"2B", "unexpected 'B' at offset 1"},
                    {"B\xc3\xa9", "unexpected '\xc3' at offset 1"},
                });
}

TEST(DimExpr, IntegersAreInt64) {
  EXPECT_EQ(eval("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(parseError("9223372036854775808"),
            "integer 9223372036854775808 at offset 0 does not fit in int64");
  EXPECT_EQ(parseError("1+99999999999999999999"),
            "integer 99999999999999999999 at offset 2 does not fit in int64");
  EXPECT_EQ(eval("0-9223372036854775807-1"), "-9223372036854775808");
}

TEST(DimExpr, ArithmeticThatLeavesInt64FailsNeverWraps) {
  EXPECT_EQ(parseError("4/0"), "division by zero in '4/0'");
  EXPECT_EQ(parseError("(0-9223372036854775807-1)/(0-1)"),
            "integer overflow in '(0-9223372036854775807-1)/(0-1)'");
  EXPECT_EQ(parseError("9223372036854775807+1"),
            "integer overflow in '9223372036854775807+1'");
  EXPECT_EQ(parseError("0-9223372036854775807-2"),
            "integer overflow in '0-9223372036854775807-2'");
  EXPECT_EQ(parseError("4294967296*4294967296"),
            "integer overflow in '4294967296*4294967296'");
  EXPECT_EQ(eval("T/(B-B)"), "division by zero in 'T/(B-B)'");
  EXPECT_EQ(eval("B*B*B", {int64_t(1) << 40, 0, 0}), "integer overflow in 'B*B*B'");
  EXPECT_EQ(eval("B/S", {INT64_MIN, -1, 0}), "integer overflow in 'B/S'");
  EXPECT_EQ(eval("B/S", {INT64_MIN, 1, 0}), std::to_string(INT64_MIN));
  EXPECT_EQ(eval("B-S", {INT64_MIN, 1, 0}), "integer overflow in 'B-S'");
}

TEST(DimExpr, NestingIsLimitedLongChainsAreNot) {
  using kiln::abi::kMaxDimExprNesting;
  std::string deepest =
      std::string(kMaxDimExprNesting, '(') + "B" + std::string(kMaxDimExprNesting, ')');
  EXPECT_EQ(eval(deepest), "3");
  std::string tooDeep = "(" + deepest + ")";
  EXPECT_EQ(parseError(tooDeep),
            "parentheses nested deeper than " + std::to_string(kMaxDimExprNesting) +
                " levels at offset " + std::to_string(kMaxDimExprNesting));
  // The deepest evaluation stack: a pending sum and product at every level.
  std::string stacked = "B";
  for (int i = 0; i < kMaxDimExprNesting; ++i)
    stacked = "1+1*(" + stacked + ")";
  EXPECT_EQ(eval(stacked), std::to_string(3 + kMaxDimExprNesting));
  // A long flat chain needs no depth at all, in parsing or in evaluation.
  std::string chain = "B";
  for (int i = 0; i < 100000; ++i)
    chain += "+1";
  EXPECT_EQ(eval(chain), "100003");
}

TEST(DimExpr, EvaluateWithLooksNamesUp) {
  DimExpr e = parseOk("S*2+T");
  auto known = [](const std::string &n) -> std::optional<int64_t> {
    if (n == "S")
      return 5;
    return std::nullopt;
  };
  int64_t out = 0;
  std::string error;
  EXPECT_FALSE(e.evaluateWith(known, out, error));
  EXPECT_EQ(error, "unknown dimension 'T' in 'S*2+T'");
  EXPECT_TRUE(e.evaluateWith(
      [](const std::string &) { return std::optional<int64_t>(1); }, out, error));
  EXPECT_EQ(out, 3);
}

// Inputs on which the runtime's former parser and the IR's former parser gave different
// answers; the shared parser gives one.
TEST(DimExpr, FormerDisagreements) {
  EXPECT_EQ(eval("B\t*\tS"), "21");   // tabs: the IR's parser rejected them
  EXPECT_EQ(eval("B\n+ 1\r\n"), "4"); // line breaks: both rejected them
  // INT64_MIN / -1: the IR's parser divided (undefined behaviour), the runtime's failed.
  EXPECT_EQ(eval("B/(0-1)", {INT64_MIN, 0, 0}), "integer overflow in 'B/(0-1)'");
  // "4/0" had no names: the IR's parser accepted it until evaluation.
  EXPECT_EQ(parseError("4/0"), "division by zero in '4/0'");
}
