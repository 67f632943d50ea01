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

#include <algorithm>
#include <optional>
#include <set>
#include <vector>

kiln::dsl::Model buildDemo();

using namespace kiln::e2e;

TEST(DemoModelTest, MatchesTheReference) {
  Harness h(KILN_DEMO_LIBRARY, buildDemo);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}}, Dims{{"B", 2}, {"S", 7}}, Dims{{"B", 3}, {"S", 33}}})
    EXPECT_EQ(h.check(dims), 1u);
}

/// The bytes of `buffer` with `dims`.
static uint64_t bytesOf(const llvm::json::Object &buffer, const Dims &dims) {
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
  return bytes;
}

/// The temps of one entry with `dims`, from its manifest: their bytes side by side (what
/// the session held before temps shared an arena), and the least any placement can hold:
/// the most bytes of non-output temps live at one step, plus the outputs' own blocks.
struct TempBytes {
  uint64_t separate = 0;
  uint64_t lowerBound = 0;
};

static TempBytes tempBytes(const llvm::json::Value &manifest, const std::string &entry,
                           const Dims &dims) {
  TempBytes result;
  for (const llvm::json::Value &e : *manifest.getAsObject()->getArray("entries")) {
    const llvm::json::Object &object = *e.getAsObject();
    if (object.getString("name").getValueOr("") != entry)
      continue;
    const llvm::json::Array &buffers = *object.getArray("buffers");
    std::set<int64_t> outputs;
    for (const llvm::json::Value &out : *object.getArray("outputs")) {
      int64_t b = out.getAsObject()->getInteger("buffer").getValueOr(-1);
      while (llvm::Optional<int64_t> base =
                 buffers[b].getAsObject()->getInteger("view_of"))
        b = *base;
      outputs.insert(b);
    }
    std::vector<uint64_t> liveAtStep(object.getArray("steps")->size(), 0);
    for (size_t b = 0; b < buffers.size(); ++b) {
      const llvm::json::Object &buffer = *buffers[b].getAsObject();
      if (buffer.getString("kind").getValueOr("") != "temp")
        continue;
      uint64_t bytes = bytesOf(buffer, dims);
      result.separate += bytes;
      if (outputs.count(int64_t(b))) {
        result.lowerBound += bytes;
        continue;
      }
      const llvm::json::Array &live = *buffer.getArray("live");
      for (int64_t step = *live[0].getAsInteger(); step <= *live[1].getAsInteger();
           ++step)
        liveAtStep[step] += bytes;
    }
    result.lowerBound += *std::max_element(liveAtStep.begin(), liveAtStep.end());
  }
  return result;
}

// The temps share one arena: the results still match the reference (above), and the
// arena plus the outputs' own blocks is as small as any placement could make it (the
// greedy placement finds the optimum on this model: the feed-forward's 256-wide hidden
// layer beside its input and output is the peak), well under the temps side by side.
TEST(DemoModelTest, TemporariesShareOneArena) {
  Harness h(KILN_DEMO_LIBRARY, buildDemo);
  ASSERT_TRUE(h.ok());
  Dims dims{{"B", 3}, {"S", 33}};
  EXPECT_EQ(h.check(dims), 1u);
  kiln_session_stats stats;
  kiln_session_get_stats(h.session(), &stats);
  llvm::Optional<llvm::json::Value> manifest = manifestOf(h.model());
  ASSERT_TRUE(manifest);
  TempBytes temps = tempBytes(*manifest, "forward", dims);
  EXPECT_EQ(stats.temp_bytes, temps.lowerBound)
      << "temps side by side " << temps.separate;
  EXPECT_LT(temps.lowerBound * 3, temps.separate * 2);
}
