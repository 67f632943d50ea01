//===- DemoModelTest.cpp - The shipped demo model, end to end --------------===//
//
// models/demo.cpp (one Transformer encoder block) as its build compiled it, with random
// weights, against the reference interpreter: every op of the dialect, chained the way a
// real model chains them, with kernels shared between the projections.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <gtest/gtest.h>

kiln::dsl::Model buildDemo();

using namespace kiln::e2e;

TEST(DemoModelTest, MatchesTheReference) {
  Harness h(KILN_DEMO_LIBRARY, buildDemo);
  ASSERT_TRUE(h.ok());
  for (const Dims &dims :
       {Dims{{"B", 1}, {"S", 1}}, Dims{{"B", 2}, {"S", 7}}, Dims{{"B", 3}, {"S", 33}}})
    EXPECT_EQ(h.check(dims), 1u);
}
