//===- DedupTest.cpp - Identical ops share one kernel ----------------------===//
//
// e2e_dedup computes relu(relu((x + y) + z + bias)): a chain of elementwise ops, each
// read once, which kiln-fuse-kernels makes one kernel group; identical groups sharing a
// kernel is PlanGroupsTest's (the base model's six layers).
//
//===----------------------------------------------------------------------===//

#include "Harness.h"
#include "models/Models.h"

#include <gtest/gtest.h>

using namespace kiln::e2e;

TEST(DedupTest, IdenticalOpsShareOneKernel) {
  Harness h(modelLibrary("e2e_dedup"), buildDedupModel);
  ASSERT_TRUE(h.ok());
  llvm::Optional<llvm::json::Value> manifest = manifestOf(h.model());
  ASSERT_TRUE(manifest);
  const llvm::json::Object &root = *manifest->getAsObject();

  std::vector<std::string> kernels;
  for (const llvm::json::Value &k : *root.getArray("kernels"))
    kernels.push_back(k.getAsString()->str());
  EXPECT_EQ(kernels, (std::vector<std::string>{"kiln_e2e_dedup_k0_fusion"}));

  const llvm::json::Array &steps =
      *(*root.getArray("entries"))[0].getAsObject()->getArray("steps");
  std::vector<int64_t> stepKernels;
  for (const llvm::json::Value &step : steps)
    stepKernels.push_back(*step.getAsObject()->getInteger("kernel"));
  EXPECT_EQ(stepKernels, (std::vector<int64_t>{0}));

  // Sharing must not change what is computed.
  for (const Dims &dims : {Dims{{"B", 1}, {"S", 1}}, Dims{{"B", 3}, {"S", 19}}})
    EXPECT_EQ(h.check(dims), 1u);
}

TEST(DedupTest, EntriesShareWeightsAndKernels) {
  Harness h(modelLibrary("e2e_two_entries"), buildTwoEntriesModel);
  ASSERT_TRUE(h.ok());
  llvm::Optional<llvm::json::Value> manifest = manifestOf(h.model());
  ASSERT_TRUE(manifest);
  const llvm::json::Object &root = *manifest->getAsObject();
  EXPECT_EQ(root.getArray("parameters")->size(), 1u);
  EXPECT_EQ(root.getArray("kernels")->size(), 2u); // matmul + relu (a group), matmul
  const llvm::json::Array &entries = *root.getArray("entries");
  ASSERT_EQ(entries.size(), 2u);
  const llvm::json::Array &stepSteps = *entries[1].getAsObject()->getArray("steps");
  ASSERT_EQ(stepSteps.size(), 1u);
  EXPECT_EQ(stepSteps[0].getAsObject()->getInteger("kernel").getValueOr(-1), 1);

  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}, {"T", 1}}, Dims{{"B", 2}, {"S", 9}, {"T", 4}}}) {
    EXPECT_EQ(h.check(dims, "encode"), 1u);
    EXPECT_EQ(h.check(dims, "step"), 1u);
  }
}
