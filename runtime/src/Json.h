//===- Json.h - A small JSON value and parser -------------------*- C++ -*-===//
//
// A small JSON value and parser for the manifest and safetensors headers.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_JSON_H
#define KILN_RUNTIME_JSON_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::rt {

class Json {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isBool() const { return kind_ == Kind::Bool; }
  bool isNumber() const { return kind_ == Kind::Number; }
  bool isString() const { return kind_ == Kind::String; }
  bool isArray() const { return kind_ == Kind::Array; }
  bool isObject() const { return kind_ == Kind::Object; }
  // True for a number written without fraction or exponent that fits in int64; sizes and
  // offsets must be exact, so they never go through double.
  bool isInteger() const { return kind_ == Kind::Number && isInteger_; }

  bool asBool() const { return bool_; }
  double asDouble() const { return number_; }
  int64_t asInt() const { return integer_; }
  const std::string &asString() const { return string_; }
  const std::vector<Json> &items() const { return items_; }
  // Members in file order; duplicate keys are rejected by the parser.
  const std::vector<std::pair<std::string, Json>> &members() const { return members_; }
  const Json *find(std::string_view key) const;

  static const char *kindName(Kind kind);

private:
  friend class JsonParser;
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  bool isInteger_ = false;
  double number_ = 0;
  int64_t integer_ = 0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

// Parses one JSON document (trailing whitespace allowed). On failure returns nullopt and
// sets error to "byte N: what went wrong".
std::optional<Json> parseJson(std::string_view text, std::string &error);

// Writes s as a JSON string literal (with quotes).
std::string quoteJson(std::string_view s);

} // namespace kiln::rt

#endif // KILN_RUNTIME_JSON_H
