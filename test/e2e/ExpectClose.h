//===- ExpectClose.h - Comparing a kernel's floats with expected ones -*- C++ -*-===//
//
// The e2e tests (against the reference interpreter, in process) and the GPU tests
// (against expected outputs read from files) judge outputs by one rule.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_E2E_EXPECTCLOSE_H
#define KILN_TEST_E2E_EXPECTCLOSE_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kiln::e2e {

/// Expects max|a - b| / max|b| over finite values to be at most `tolerance`, and
/// non-finite values to agree exactly. Returns that relative error.
inline double expectClose(const std::string &what, const float *actual,
                          const std::vector<float> &expected, double tolerance) {
  double maxDiff = 0, maxRef = 0;
  size_t mismatches = 0, firstMismatch = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    float a = actual[i], b = expected[i];
    if (!std::isfinite(b) || !std::isfinite(a)) {
      bool same = (std::isnan(a) && std::isnan(b)) || a == b;
      if (!same && mismatches++ == 0)
        firstMismatch = i;
      continue;
    }
    maxDiff = std::max(maxDiff, std::fabs(double(a) - double(b)));
    maxRef = std::max(maxRef, std::fabs(double(b)));
  }
  EXPECT_EQ(mismatches, 0u) << what << ": non-finite values differ, first at element "
                            << firstMismatch << ": " << actual[firstMismatch] << " vs "
                            << expected[firstMismatch];
  double relative = maxRef > 0 ? maxDiff / maxRef : maxDiff;
  EXPECT_LE(relative, tolerance)
      << what << ": max|a-b| = " << maxDiff << ", max|b| = " << maxRef;
  return relative;
}

} // namespace kiln::e2e

#endif // KILN_TEST_E2E_EXPECTCLOSE_H
