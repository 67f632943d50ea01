//===- DemoModelTest.cpp - The shipped demo model, end to end --------------===//
//
// models/demo.cpp (one Transformer encoder block) as its build compiled it, with random
// weights, against the reference interpreter: every op of the dialect, chained the way a
// real model chains them, with kernels shared between the projections, and temporaries
// sharing one arena.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "kiln/abi/DimExpr.h"

#include <gtest/gtest.h>

#include <optional>

kiln::dsl::Model buildDemo();

using namespace kiln::e2e;

TEST(DemoModelTest, MatchesTheReference) {
  Harness h(KILN_DEMO_LIBRARY, buildDemo);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}}, Dims{{"B", 2}, {"S", 7}}, Dims{{"B", 3}, {"S", 33}}})
    EXPECT_EQ(h.check(dims), 1u);
}

/// The bytes of every temp of `entry` with `dims`, each in memory of its own: what the
/// session held before temps shared an arena.
static uint64_t separateTempBytes(const llvm::json::Value &manifest,
                                  const std::string &entry, const Dims &dims) {
  uint64_t total = 0;
  for (const llvm::json::Value &e : *manifest.getAsObject()->getArray("entries")) {
    if (e.getAsObject()->getString("name").getValueOr("") != entry)
      continue;
    for (const llvm::json::Value &b : *e.getAsObject()->getArray("buffers")) {
      const llvm::json::Object &buffer = *b.getAsObject();
      if (buffer.getString("kind").getValueOr("") != "temp")
        continue;
      uint64_t bytes = buffer.getString("dtype").getValueOr("") == "i64" ? 8 : 4;
      for (const llvm::json::Value &item : *buffer.getArray("shape")) {
        if (llvm::Optional<int64_t> size = item.getAsInteger()) {
          bytes *= uint64_t(*size);
          continue;
        }
        std::string error;
        std::optional<kiln::abi::DimExpr> expr =
            kiln::abi::DimExpr::parse(item.getAsString().getValueOr("").str(), error);
        int64_t size = 0;
        EXPECT_TRUE(expr && expr->evaluateWith(
                                [&](const std::string &name) -> std::optional<int64_t> {
                                  return dims.at(name);
                                },
                                size, error))
            << error;
        bytes *= uint64_t(size);
      }
      total += bytes;
    }
  }
  return total;
}

// The temps share one arena: the results still match the reference (above), and the
// arena plus the output's own block is well under the temps' bytes side by side. Here it
// is at the lower bound: 384 of the 768 columns of [B, S, ·] temps are live at once (the
// feed-forward's 256-wide hidden layer beside its input and output), plus the
// output's 64.
TEST(DemoModelTest, TemporariesShareOneArena) {
  Harness h(KILN_DEMO_LIBRARY, buildDemo);
  ASSERT_TRUE(h.ok());
  Dims dims{{"B", 3}, {"S", 33}};
  EXPECT_EQ(h.check(dims), 1u);
  kiln_session_stats stats;
  kiln_session_get_stats(h.session(), &stats);
  llvm::Optional<llvm::json::Value> manifest = manifestOf(h.model());
  ASSERT_TRUE(manifest);
  uint64_t separate = separateTempBytes(*manifest, "forward", dims);
  EXPECT_LT(stats.temp_bytes * 3, separate * 2)
      << "arena " << stats.temp_bytes << " bytes, temps side by side " << separate;
}
