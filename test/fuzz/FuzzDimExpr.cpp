//===- FuzzDimExpr.cpp - libFuzzer target: dimension expressions ----------===//
//
// Input: one byte choosing the values of the names, then the expression's text. Parsing
// and evaluating must each succeed or fail with a message, never trap (deep nesting,
// int64 overflow, division by zero, INT64_MIN / -1), and the three ways of evaluating
// (constant, by name, by resolved slot) must agree.
//
//===----------------------------------------------------------------------===//

#include "kiln/abi/DimExpr.h"

#include <cstdlib>
#include <limits>

using kiln::abi::DimExpr;

namespace {

/// Values the names take: ordinary sizes and the edges where arithmetic overflows.
constexpr int64_t kValues[] = {0,
                               1,
                               2,
                               7,
                               -1,
                               4096,
                               std::numeric_limits<int64_t>::max(),
                               std::numeric_limits<int64_t>::min(),
                               int64_t(1) << 32,
                               -(int64_t(1) << 31)};
constexpr size_t kValueCount = sizeof(kValues) / sizeof(kValues[0]);

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  const size_t seed = data[0];
  std::string error;
  std::optional<DimExpr> expr = DimExpr::parse(
      std::string_view(reinterpret_cast<const char *>(data + 1), size - 1), error);
  if (!expr) {
    if (error.empty())
      std::abort();
    return 0;
  }
  if (expr->bareName() && expr->names().size() != 1)
    std::abort();

  const std::vector<std::string> &names = expr->names();
  std::vector<int64_t> byName;
  for (size_t i = 0; i < names.size(); ++i)
    byName.push_back(kValues[(seed + i) % kValueCount]);
  int64_t direct = 0;
  std::string directError;
  bool directOk = expr->evaluate(byName.data(), direct, directError);
  if (!directOk && directError.empty())
    std::abort();
  if (expr->isConstant() && (!directOk || direct != expr->constantValue()))
    std::abort();

  size_t next = 0;
  int64_t viaName = 0;
  std::string nameError;
  bool nameOk = expr->evaluateWith(
      [&](const std::string &) -> std::optional<int64_t> { return byName[next++]; },
      viaName, nameError);
  if (nameOk != directOk || (nameOk && viaName != direct))
    std::abort();

  // Slots in reverse order, in a table with the values placed to match.
  std::vector<int64_t> bySlot(names.size());
  size_t index = 0;
  expr->resolve([&](const std::string &) {
    int slot = int(names.size() - 1 - index);
    bySlot[slot] = byName[index++];
    return slot;
  });
  int64_t viaSlot = 0;
  bool slotOk = expr->evaluate(bySlot.data(), viaSlot, error);
  if (slotOk != directOk || (slotOk && viaSlot != direct))
    std::abort();
  return 0;
}
