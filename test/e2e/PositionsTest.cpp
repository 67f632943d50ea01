//===- PositionsTest.cpp - Gathers out of their table, and bounded dims ----===//
//
// The case: a 32-row learned position table run with T = 40 used to clamp the
// positions 32-39 to row 31 and print logits. Now an unbounded T fails in the kernel's
// check and in the interpreter alike, a bounded T is refused before any kernel runs, and
// T up to 32 matches the interpreter. The manifest records the bound.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "models/Models.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

using namespace kiln;
using namespace kiln::e2e;

namespace {

class Positions : public ::testing::Test {
protected:
  Harness harness{modelLibrary("e2e_positions"), buildPositionsModel};
};

TEST_F(Positions, MatchesTheReferenceUpToTheTable) {
  ASSERT_TRUE(harness.ok());
  for (const char *entry : {"unbounded", "bounded"})
    for (int64_t t : {1, 7, 32}) {
      SCOPED_TRACE(entry);
      EXPECT_EQ(harness.check({{"B", 2}, {"T", t}}, entry), 1u);
    }
}

TEST_F(Positions, UnboundedPastTheTableFailsInTheKernelAndTheReference) {
  ASSERT_TRUE(harness.ok());
  auto [runtime, reference] = harness.failures({{"B", 2}, {"T", 40}}, "unbounded");
  // Positions 32..39 are out of range; which row the kernel meets first is its own.
  EXPECT_TRUE(std::regex_match(
      runtime, std::regex("INVALID_ARGUMENT: entry 'unbounded': embedding of "
                          "'wpe.weight' \\(32 rows\\): index 3[2-9] out of range .*")))
      << runtime;
  EXPECT_NE(reference.find("embedding of 'wpe.weight' (32 rows): index 32 out of range "
                           "(ids element [32])"),
            std::string::npos)
      << reference;
}

TEST_F(Positions, BoundedPastItsBoundIsRefusedNamingTheBound) {
  ASSERT_TRUE(harness.ok());
  auto [runtime, reference] = harness.failures({{"B", 2}, {"T", 40}}, "bounded");
  EXPECT_EQ(runtime, "INVALID_ARGUMENT: entry 'bounded': input 'ids' dim 1 (T) is 40, "
                     "above its bound 32");
  // The interpreter checks no dims; it meets the gather out of its table.
  EXPECT_NE(reference.find("index 32 out of range"), std::string::npos) << reference;
}

/// The names of the kernels `entry` calls.
std::set<std::string> kernelsOf(const llvm::json::Object &manifest,
                                llvm::StringRef entry) {
  std::set<std::string> names;
  const llvm::json::Array *kernels = manifest.getArray("kernels");
  for (const llvm::json::Value &e : *manifest.getArray("entries"))
    if (e.getAsObject()->getString("name") == entry)
      for (const llvm::json::Value &step : *e.getAsObject()->getArray("steps"))
        names.insert(
            (*kernels)[*step.getAsObject()->getInteger("kernel")].getAsString()->str());
  return names;
}

TEST_F(Positions, OnlyTheUnprovenGatherIsChecked) {
  ASSERT_TRUE(harness.ok());
  llvm::Optional<llvm::json::Value> manifest = manifestOf(harness.model());
  ASSERT_TRUE(manifest);
  auto checked = [](const std::set<std::string> &kernels) {
    return llvm::count_if(kernels, [](const std::string &name) {
      return llvm::StringRef(name).endswith("_checked");
    });
  };
  // unbounded: the token gather is proven by the ids' bounds, the position one is not;
  // bounded: both are proven. (Both gathers are in the kernel of the add that reads
  // them, named for the check it makes.)
  EXPECT_EQ(checked(kernelsOf(*manifest->getAsObject(), "unbounded")), 1);
  EXPECT_EQ(checked(kernelsOf(*manifest->getAsObject(), "bounded")), 0);
}

TEST_F(Positions, ManifestRecordsTheBoundOfTheBoundedEntryOnly) {
  ASSERT_TRUE(harness.ok());
  llvm::Optional<llvm::json::Value> manifest = manifestOf(harness.model());
  ASSERT_TRUE(manifest);
  const llvm::json::Array *entries = manifest->getAsObject()->getArray("entries");
  ASSERT_TRUE(entries);
  std::map<std::string, llvm::Optional<int64_t>> maxT;
  for (const llvm::json::Value &entry : *entries) {
    const llvm::json::Object *e = entry.getAsObject();
    const llvm::json::Object *dimMax = e->getObject("dim_max");
    maxT[e->getString("name")->str()] =
        dimMax ? dimMax->getInteger("T") : llvm::Optional<int64_t>();
  }
  EXPECT_EQ(maxT["bounded"], llvm::Optional<int64_t>(32));
  EXPECT_EQ(maxT["unbounded"], llvm::None);
}

} // namespace
