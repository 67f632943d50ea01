//===- Vocabulary.cpp - Tokenizing text for kiln_generate -----------------===//
//
// kiln::Vocabulary in memory: source text to ids one character at a time, target words
// to ids and back. Reading vocab.txt and config.json is VocabularyFiles.cpp.
//
//===----------------------------------------------------------------------===//

#include "kiln/generate.h"

#include <cctype>
#include <cstdio>
#include <sstream>

namespace kiln {
namespace {

std::string describeChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (std::isprint(u))
    return std::string("'") + c + "'";
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", u);
  return buf;
}

std::string trim(const std::string &text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1])))
    --e;
  return text.substr(b, e - b);
}

} // namespace

Vocabulary::Vocabulary(std::vector<std::string> tokens, VocabularyOptions options)
    : tokens_(std::move(tokens)), options_(options) {
  for (size_t i = 0; i < tokens_.size(); ++i)
    ids_.emplace(tokens_[i], int32_t(i)); // the first occurrence wins, as in a dict
  std::pair<const char *, int32_t> specials[] = {{"pad_id", options_.padId},
                                                 {"bos_id", options_.bosId},
                                                 {"eos_id", options_.eosId},
                                                 {"unk_id", options_.unkId}};
  for (auto [name, id] : specials)
    if (id < 0 || size_t(id) >= tokens_.size())
      throw Error(KILN_STATUS_INVALID_ARGUMENT,
                  std::string(name) + " " + std::to_string(id) + " is outside the " +
                      std::to_string(tokens_.size()) + "-token vocabulary");
}
std::vector<int32_t> Vocabulary::encodeSource(const std::string &raw,
                                              bool allowOverLength) const {
  std::string text = trim(raw);
  if (text.empty())
    throw Error(KILN_STATUS_INVALID_ARGUMENT, "empty input: nothing to translate");
  if (!allowOverLength && options_.maxSourceLen > 0 &&
      int64_t(text.size()) > options_.maxSourceLen)
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "input '" + text + "' has " + std::to_string(text.size()) +
                    " characters; the model takes at most " +
                    std::to_string(options_.maxSourceLen));
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    int32_t id = this->id(std::string(1, text[i]));
    // Specials are whole tokens such as "<pad>", never one character, so a hit is a real
    // source token; <unk> would silently give an undefined translation, hence the error.
    if (id < 0)
      throw Error(KILN_STATUS_INVALID_ARGUMENT,
                  "character " + describeChar(text[i]) + " at position " +
                      std::to_string(i) + " of '" + text + "' is not in the vocabulary");
    ids.push_back(id);
  }
  return ids;
}

std::vector<int32_t> Vocabulary::encodeTarget(const std::string &text) const {
  std::istringstream in(text);
  std::vector<int32_t> ids;
  for (std::string word; in >> word;) {
    int32_t id = this->id(word);
    if (id < 0)
      throw Error(KILN_STATUS_INVALID_ARGUMENT, "word '" + word + "' at position " +
                                                    std::to_string(ids.size()) +
                                                    " is not in the vocabulary");
    ids.push_back(id);
  }
  return ids;
}

std::string Vocabulary::decodeTarget(const std::vector<int32_t> &ids) const {
  std::string out;
  for (int32_t id : ids) {
    if (id == options_.eosId)
      break;
    if (id == options_.padId || id == options_.bosId)
      continue;
    if (!out.empty())
      out += ' ';
    out += token(id);
  }
  return out;
}

const std::string &Vocabulary::token(int32_t id) const {
  if (id < 0 || size_t(id) >= tokens_.size())
    throw Error(KILN_STATUS_INVALID_ARGUMENT,
                "token id " + std::to_string(id) + " is outside the " +
                    std::to_string(tokens_.size()) + "-token vocabulary");
  return tokens_[size_t(id)];
}

int32_t Vocabulary::id(const std::string &token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

} // namespace kiln
