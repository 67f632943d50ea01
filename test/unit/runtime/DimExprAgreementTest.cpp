//===- DimExprAgreementTest.cpp - The IR and the runtime agree ------------===//
//
// The compiler reads a dimension expression through kiln/ir/DimExpr.h, the runtime
// through kiln/abi/DimExpr.h with names resolved to slots. On every input of the table,
// including those where their former, separate parsers disagreed, both must give the
// same value or fail with the same problem.
//
//===----------------------------------------------------------------------===//

#include "kiln/abi/DimExpr.h"
#include "kiln/ir/DimExpr.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

/// B, S and T, in the runtime's slots 0, 1 and 2.
const std::vector<std::string> kNames{"B", "S", "T"};
struct Bindings {
  int64_t values[3];
};

/// The value as text, or the problem, as the runtime computes it.
std::string runtimeAnswer(const std::string &text, const Bindings &b) {
  std::string error;
  std::optional<kiln::abi::DimExpr> e = kiln::abi::DimExpr::parse(text, error);
  if (!e)
    return "invalid: " + error;
  for (const std::string &name : e->names())
    if (std::find(kNames.begin(), kNames.end(), name) == kNames.end())
      return "unknown dimension '" + name + "' in '" + text + "'";
  e->resolve([](const std::string &n) {
    return int(std::find(kNames.begin(), kNames.end(), n) - kNames.begin());
  });
  int64_t out;
  return e->evaluate(b.values, out, error) ? std::to_string(out) : error;
}

/// The same, as the compiler computes it.
std::string irAnswer(const std::string &text, const Bindings &b) {
  auto lookup = [&](llvm::StringRef name) -> llvm::Optional<int64_t> {
    auto it = std::find(kNames.begin(), kNames.end(), name.str());
    if (it == kNames.end())
      return llvm::None;
    return b.values[it - kNames.begin()];
  };
  llvm::Expected<int64_t> value = kiln::evaluateDimExpr(text, lookup);
  if (value)
    return std::to_string(*value);
  std::string error = llvm::toString(value.takeError());
  std::string prefix = "invalid dimension expression \"" + text + "\": ";
  return error.rfind(prefix, 0) == 0 ? "invalid: " + error.substr(prefix.size()) : error;
}

} // namespace

TEST(DimExprAgreement, IrAndRuntimeGiveOneAnswer) {
  const std::vector<std::string> texts = {"B",
                                          "B*S",
                                          "(B*S*512)/512",
                                          "T+1",
                                          " T - 2 * B ",
                                          "B\t*\tS",
                                          "B\n+1\r\n",
                                          "(S)",
                                          "T/B/2",
                                          "0-T/B",
                                          "",
                                          "  ",
                                          "B*",
                                          "(B",
                                          "B)",
                                          "B S",
                                          "B%2",
                                          "-5",
                                          "2B",
                                          "X+1",
                                          "T/(B-B)",
                                          "4/0",
                                          "9223372036854775807",
                                          "9223372036854775808",
                                          "0-9223372036854775807-1",
                                          "9223372036854775807+1",
                                          "B/(0-1)",
                                          "B*B*B",
                                          "B-S",
                                          std::string(80, '(') + "B" +
                                              std::string(80, ')')};
  const Bindings bindings[] = {
      {{3, 7, 10}}, {{INT64_MIN, 1, 0}}, {{int64_t(1) << 40, -1, 0}}, {{0, 0, 0}}};
  for (const std::string &text : texts)
    for (const Bindings &b : bindings)
      EXPECT_EQ(irAnswer(text, b), runtimeAnswer(text, b))
          << "\"" << text << "\" with B=" << b.values[0] << " S=" << b.values[1]
          << " T=" << b.values[2];
}

TEST(DimExprAgreement, IrNamesAreTheRuntimesNames) {
  for (const char *text : {"B*S+B", "T", "4", "x_1*(_y+x_1)"}) {
    std::string error;
    llvm::Expected<std::vector<std::string>> names = kiln::dimExprNames(text);
    ASSERT_TRUE(bool(names)) << llvm::toString(names.takeError());
    EXPECT_EQ(*names, kiln::abi::DimExpr::parse(text, error)->names()) << text;
  }
  EXPECT_TRUE(kiln::isDimName("S"));
  EXPECT_FALSE(kiln::isDimName("S "));
}
