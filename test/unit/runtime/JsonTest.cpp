// JsonTest.cpp - the runtime's JSON parser: values, exact integers, escapes, and errors
// with byte offsets.
#include "Json.h"

#include <gtest/gtest.h>

using kiln::rt::Json;
using kiln::rt::parseJson;

namespace {
Json parseOk(const std::string &text) {
  std::string error;
  auto v = parseJson(text, error);
  EXPECT_TRUE(v.has_value()) << text << ": " << error;
  return v ? *v : Json();
}
std::string parseError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(parseJson(text, error).has_value()) << text;
  return error;
}
} // namespace

TEST(Json, ParsesObjectsInOrder) {
  Json v = parseOk(R"( {"b": [1, -2, 3.5e1], "a": {"t": true, "f": false, "n": null}} )");
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.members().size(), 2u);
  EXPECT_EQ(v.members()[0].first, "b");
  const Json &b = *v.find("b");
  ASSERT_EQ(b.items().size(), 3u);
  EXPECT_TRUE(b.items()[1].isInteger());
  EXPECT_EQ(b.items()[1].asInt(), -2);
  EXPECT_FALSE(b.items()[2].isInteger());
  EXPECT_DOUBLE_EQ(b.items()[2].asDouble(), 35.0);
  EXPECT_TRUE(v.find("a")->find("t")->asBool());
  EXPECT_TRUE(v.find("a")->find("n")->isNull());
  EXPECT_EQ(v.find("zzz"), nullptr);
}

TEST(Json, IntegersAreExactBeyondDoublePrecision) {
  Json v = parseOk("[9007199254740993, 9223372036854775807]");
  EXPECT_EQ(v.items()[0].asInt(), 9007199254740993LL);
  EXPECT_EQ(v.items()[1].asInt(), INT64_MAX);
  // Too large for int64: still a number, but not an integer.
  Json big = parseOk("92233720368547758070");
  EXPECT_TRUE(big.isNumber());
  EXPECT_FALSE(big.isInteger());
}

TEST(Json, DecodesEscapes) {
  Json v = parseOk(R"("a\"b\\c\/\n\t\u00e9\ud83d\ude00")");
  EXPECT_EQ(v.asString(), "a\"b\\c/\n\t\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(kiln::rt::quoteJson("q\"\n\x01"), "\"q\\\"\\n\\u0001\"");
}

TEST(Json, ErrorsGiveByteOffsets) {
  EXPECT_EQ(parseError("{\"a\": 1,}"), "byte 8: expected a string key");
  EXPECT_EQ(parseError("[1 2]"), "byte 3: expected ',' or ']'");
  EXPECT_EQ(parseError("{\"a\": 1, \"a\": 2}"), "byte 9: duplicate key \"a\"");
  EXPECT_EQ(parseError("01"), "byte 0: leading zero in number");
  EXPECT_EQ(parseError("\"abc"), "byte 4: unterminated string");
  EXPECT_EQ(parseError("[1] x"), "byte 4: unexpected trailing characters");
  EXPECT_EQ(parseError(""), "byte 0: unexpected end of input");
  EXPECT_EQ(parseError("\"\\ud800\""), "byte 7: unpaired surrogate in \\u escape");
  EXPECT_NE(parseError(std::string(1000, '[')).find("nesting deeper than"),
            std::string::npos);
}
