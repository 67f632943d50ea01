//===- VocabularyFiles.cpp - Reading vocab.txt and config.json ------------===//
//
// The files a vocabulary comes from: vocab.txt (one token per line, id = 0-based line)
// and the model's config.json, read with the runtime's JSON parser. Every config value
// is checked for its type and range, so a mistyped special id is an error naming the file
// and the key rather than a model that silently decodes with the wrong <eos>.
//
//===----------------------------------------------------------------------===//

#include "kiln/generate.h"

#include "Json.h"

#include <charconv>
#include <climits>
#include <fstream>
#include <sstream>

namespace kiln {
namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(KILN_STATUS_NOT_FOUND, "cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The members of config.json's top-level object, each read with its type and range
/// checked. Errors are "PATH: "KEY" is GOT, expected WHAT".
class ConfigReader {
public:
  ConfigReader(std::string path, const rt::Json &root)
      : path_(std::move(path)), root_(root) {}

  /// A required integer in [lo, hi].
  int64_t integer(const char *key, int64_t lo, int64_t hi) const {
    const rt::Json *value = root_.find(key);
    if (!value)
      fail(key, "missing", expectedInteger(lo, hi));
    return checkedInteger(key, *value, lo, hi);
  }

  /// An optional integer in [lo, hi]; `fallback` when the key is absent.
  int64_t integerOr(const char *key, int64_t fallback, int64_t lo, int64_t hi) const {
    const rt::Json *value = root_.find(key);
    return value ? checkedInteger(key, *value, lo, hi) : fallback;
  }

  /// An optional string; `fallback` when the key is absent.
  std::string stringOr(const char *key, const std::string &fallback) const {
    const rt::Json *value = root_.find(key);
    if (!value)
      return fallback;
    if (!value->isString())
      fail(key, rt::Json::kindName(value->kind()), "a string");
    return value->asString();
  }

private:
  static std::string expectedInteger(int64_t lo, int64_t hi) {
    return "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  }

  int64_t checkedInteger(const char *key, const rt::Json &value, int64_t lo,
                         int64_t hi) const {
    if (value.isInteger() && value.asInt() >= lo && value.asInt() <= hi)
      return value.asInt();
    std::string got = rt::Json::kindName(value.kind());
    if (value.isInteger()) {
      got = std::to_string(value.asInt());
    } else if (value.isNumber()) {
      char text[32];
      got.assign(text, std::to_chars(text, text + sizeof text, value.asDouble()).ptr);
    }
    fail(key, got, expectedInteger(lo, hi));
  }

  [[noreturn]] void fail(const char *key, const std::string &got,
                         const std::string &expected) const {
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                path_ + ": \"" + key + "\" is " + got + ", expected " + expected);
  }

  std::string path_;
  const rt::Json &root_;
};

} // namespace

Vocabulary Vocabulary::load(const std::string &vocabPath, VocabularyOptions options) {
  std::istringstream in(readFile(vocabPath));
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    tokens.push_back(line);
  }
  // A trailing empty line is the file's final newline, not a token.
  while (!tokens.empty() && tokens.back().empty())
    tokens.pop_back();
  if (tokens.empty())
    throw Error(KILN_STATUS_INVALID_ARGUMENT, "'" + vocabPath + "' holds no tokens");
  return Vocabulary(std::move(tokens), options);
}

Vocabulary Vocabulary::fromConfig(const std::string &configPath) {
  std::string error;
  std::optional<rt::Json> root = rt::parseJson(readFile(configPath), error);
  if (!root)
    throw Error(KILN_STATUS_INVALID_ARGUMENT, configPath + ": " + error);
  if (!root->isObject())
    throw Error(KILN_STATUS_INVALID_ARGUMENT, configPath + ": the top level is " +
                                                  rt::Json::kindName(root->kind()) +
                                                  ", expected an object");
  ConfigReader config(configPath, *root);
  VocabularyOptions o;
  o.padId = int32_t(config.integer("pad_id", 0, INT32_MAX));
  o.bosId = int32_t(config.integer("bos_id", 0, INT32_MAX));
  o.eosId = int32_t(config.integer("eos_id", 0, INT32_MAX));
  o.unkId = int32_t(config.integer("unk_id", 0, INT32_MAX));
  o.maxSourceLen = config.integerOr("max_source_len", 0, 0, INT64_MAX);
  // GenerateOptions::maxLength is an int.
  o.maxTargetLen = config.integerOr("max_target_len", 0, 0, INT32_MAX);
  std::string file = config.stringOr("vocab_file", "vocab.txt");
  size_t slash = configPath.find_last_of('/');
  std::string dir = slash == std::string::npos ? "" : configPath.substr(0, slash + 1);
  std::string vocabPath = file.size() && file[0] == '/' ? file : dir + file;
  // The special ids meet the vocabulary only here: say which config they came from.
  Vocabulary vocab = [&] {
    try {
      return load(vocabPath, o);
    } catch (const Error &e) {
      if (e.code() != KILN_STATUS_INVALID_ARGUMENT)
        throw;
      throw Error(e.code(), configPath + ": " + e.what());
    }
  }();
  int64_t declared = config.integerOr("vocab_size", int64_t(vocab.size()), 1, INT64_MAX);
  if (declared != int64_t(vocab.size()))
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                configPath + ": \"vocab_size\" is " + std::to_string(declared) +
                    " but the vocabulary has " + std::to_string(vocab.size()) +
                    " tokens");
  return vocab;
}

} // namespace kiln
