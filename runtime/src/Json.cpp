// Json.cpp - recursive-descent JSON parser (RFC 8259), with exact 64-bit integers.
#include "Json.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

namespace kiln::rt {

const Json *Json::find(std::string_view key) const {
  for (const auto &[name, value] : members_)
    if (name == key)
      return &value;
  return nullptr;
}

const char *Json::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "?";
}

namespace {
struct ParseError {
  size_t offset;
  std::string message;
};
} // namespace

class JsonParser {
public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  Json parseDocument() {
    Json value = parseValue(0);
    skipSpace();
    if (pos_ != text_.size())
      error("unexpected trailing characters");
    return value;
  }

private:
  // Deep nesting would overflow the stack on hostile input; no real header nests this
  // far.
  static constexpr int kMaxDepth = 128;

  [[noreturn]] void error(const std::string &message) { throw ParseError{pos_, message}; }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }

  bool consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      return false;
    pos_ += word.size();
    return true;
  }

  Json parseValue(int depth) {
    if (depth > kMaxDepth)
      error("nesting deeper than " + std::to_string(kMaxDepth));
    skipSpace();
    if (pos_ >= text_.size())
      error("unexpected end of input");
    Json value;
    char c = text_[pos_];
    if (c == '{') {
      value.kind_ = Json::Kind::Object;
      parseObject(value, depth);
    } else if (c == '[') {
      value.kind_ = Json::Kind::Array;
      parseArray(value, depth);
    } else if (c == '"') {
      value.kind_ = Json::Kind::String;
      value.string_ = parseString();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      parseNumber(value);
    } else if (consume("true")) {
      value.kind_ = Json::Kind::Bool;
      value.bool_ = true;
    } else if (consume("false")) {
      value.kind_ = Json::Kind::Bool;
    } else if (consume("null")) {
      value.kind_ = Json::Kind::Null;
    } else {
      error(std::string("unexpected character '") + c + "'");
    }
    return value;
  }

  void parseObject(Json &value, int depth) {
    ++pos_; // '{'
    skipSpace();
    if (consume("}"))
      return;
    // A hash set, not Json::find: a scan per key made a 160k-key safetensors header take
    // most of a minute.
    std::unordered_set<std::string> keys;
    while (true) {
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"')
        error("expected a string key");
      size_t keyOffset = pos_;
      std::string key = parseString();
      if (!keys.insert(key).second) {
        pos_ = keyOffset;
        error("duplicate key \"" + key + "\"");
      }
      skipSpace();
      if (!consume(":"))
        error("expected ':'");
      Json member = parseValue(depth + 1);
      value.members_.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (consume("}"))
        return;
      if (!consume(","))
        error("expected ',' or '}'");
    }
  }

  void parseArray(Json &value, int depth) {
    ++pos_; // '['
    skipSpace();
    if (consume("]"))
      return;
    while (true) {
      value.items_.push_back(parseValue(depth + 1));
      skipSpace();
      if (consume("]"))
        return;
      if (!consume(","))
        error("expected ',' or ']'");
    }
  }

  unsigned parseHex4() {
    if (pos_ + 4 > text_.size())
      error("truncated \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      char h = text_[pos_++];
      code <<= 4;
      if (h >= '0' && h <= '9')
        code |= unsigned(h - '0');
      else if (h >= 'a' && h <= 'f')
        code |= unsigned(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        code |= unsigned(h - 'A' + 10);
      else
        error("bad hex digit in \\u escape");
    }
    return code;
  }

  static void appendUtf8(std::string &out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  std::string parseString() {
    ++pos_; // '"'
    std::string out;
    while (true) {
      if (pos_ >= text_.size())
        error("unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        error("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size())
        error("unterminated string");
      char e = text_[pos_++];
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        unsigned cp = parseHex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (!consume("\\u"))
            error("unpaired surrogate in \\u escape");
          unsigned low = parseHex4();
          if (low < 0xDC00 || low > 0xDFFF)
            error("bad low surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          error("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        error(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  void parseNumber(Json &value) {
    size_t start = pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
        ++pos_;
      return pos_ - from;
    };
    if (text_[pos_] == '-')
      ++pos_;
    size_t intStart = pos_;
    if (digits() == 0)
      error("expected digits");
    if (text_[intStart] == '0' && pos_ - intStart > 1) {
      pos_ = intStart;
      error("leading zero in number");
    }
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0)
        error("expected digits after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-'))
        ++pos_;
      if (digits() == 0)
        error("expected digits in exponent");
    }
    std::string literal(text_.substr(start, pos_ - start));
    value.kind_ = Json::Kind::Number;
    value.number_ = std::strtod(literal.c_str(), nullptr);
    if (integral) {
      errno = 0;
      long long v = std::strtoll(literal.c_str(), nullptr, 10);
      if (errno == 0) {
        value.isInteger_ = true;
        value.integer_ = v;
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::optional<Json> parseJson(std::string_view text, std::string &error) {
  try {
    return JsonParser(text).parseDocument();
  } catch (const ParseError &e) {
    error = "byte " + std::to_string(e.offset) + ": " + e.message;
    return std::nullopt;
  }
}

std::string quoteJson(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        static const char hex[] = "0123456789abcdef";
        out += "\\u00";
        out += hex[(c >> 4) & 0xF];
        out += hex[c & 0xF];
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

} // namespace kiln::rt
