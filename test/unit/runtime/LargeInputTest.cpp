//===- LargeInputTest.cpp - Huge JSON objects and dimension expressions ---===//
//
// Inputs sized to hurt a parser: objects with 10^5 keys, expressions 10^5 levels deep or
// 10^6 terms long. Each must end, in time linear in its size, with the right value or a
// message; none may exhaust the stack.
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "Json.h"
#include "Manifest.h"

#include <gtest/gtest.h>

using namespace kiln::rt;

namespace {

/// {"k0": 0, "k1": 1, ...}, `count` keys; then `extra` verbatim before the '}'.
std::string manyKeys(size_t count, const std::string &extra = "") {
  std::string text = "{";
  for (size_t i = 0; i < count; ++i)
    text += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
  return text + extra + "}";
}

/// A one-entry manifest whose temp buffer and output have the shape [`dim`].
std::string manifestWithDim(const std::string &dim) {
  std::string quoted = quoteJson(dim);
  return R"({"abi_version": 4, "model": "m", "target": "host", "parameters": [],
    "kernels": ["k"],
    "entries": [{"name": "f",
      "inputs": [{"name": "x", "dtype": "f32", "shape": ["B"], "buffer": 0}],
      "outputs": [{"name": "y", "dtype": "f32", "shape": [)" +
         quoted + R"(], "buffer": 1}],
      "buffers": [{"dtype": "f32", "shape": ["B"], "kind": "input", "input": 0},
                  {"dtype": "f32", "shape": [)" +
         quoted + R"(], "kind": "temp", "live": [0, 0]}],
      "steps": [{"kernel": 0, "args": [0, 1]}]}]})";
}

} // namespace

TEST(LargeInput, ObjectWithManyKeysKeepsEveryMemberInOrder) {
  std::string error;
  auto json = parseJson(manyKeys(160000), error);
  ASSERT_TRUE(json) << error;
  ASSERT_EQ(json->members().size(), 160000u);
  EXPECT_EQ(json->members()[123456].first, "k123456");
  EXPECT_EQ(json->members()[123456].second.asInt(), 123456);
}

TEST(LargeInput, DuplicateKeyAmongManyIsFoundAtItsOffset) {
  std::string text = manyKeys(160000, ", \"k70000\": 1");
  std::string error;
  EXPECT_FALSE(parseJson(text, error));
  EXPECT_EQ(error, "byte " + std::to_string(text.rfind("\"k70000\"")) +
                       ": duplicate key \"k70000\"");
}

TEST(LargeInput, DuplicateKeysWrittenWithEscapesAreStillDuplicates) {
  std::string error;
  EXPECT_FALSE(parseJson(manyKeys(60000, ", \"\\u006b59999\": 1"), error));
  EXPECT_NE(error.find("duplicate key \"k59999\""), std::string::npos) << error;
}

TEST(LargeInput, DeeplyNestedDimensionIsAnErrorNotAStackOverflow) {
  const size_t depth = 100000;
  std::string dim = std::string(depth, '(') + "B" + std::string(depth, ')');
  try {
    parseManifest(manifestWithDim(dim));
    FAIL() << "a 10^5-deep expression was accepted";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), KILN_STATUS_INVALID_MODEL) << e.what();
    EXPECT_NE(std::string(e.what()).find("nest"), std::string::npos) << e.what();
  }
}

TEST(LargeInput, MillionTermDimensionParsesAndEvaluates) {
  const size_t terms = 1000000;
  std::string dim = "B";
  dim.reserve(2 * terms);
  for (size_t i = 1; i < terms; ++i)
    dim += "+B";
  auto manifest = parseManifest(manifestWithDim(dim));
  const DimExpr &expr = manifest->entries[0].buffers[1].dims[0];
  int64_t value = 0;
  std::string error;
  ASSERT_TRUE(
      expr.evaluateWith([](const std::string &) { return int64_t(3); }, value, error))
      << error;
  EXPECT_EQ(value, 3 * int64_t(terms));
}
