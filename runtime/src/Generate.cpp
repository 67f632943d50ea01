// Generate.cpp - the vocabulary/tokenizer, and greedy and beam search (the algorithm of
// models/translator/reference_beam.py) for kiln/generate.h.
#include "kiln/generate.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace kiln {
namespace {

[[noreturn]] void fail(kiln_status_code code, const std::string &message) {
  throw Error(code, message);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(KILN_STATUS_NOT_FOUND, "cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The few config.json fields we need are flat scalars, so a key search is enough; a full
// JSON parser lives inside libkiln_runtime but is not part of its public API.
const char *findValue(const std::string &json, const std::string &key) {
  std::string quoted = "\"" + key + "\"";
  for (size_t at = json.find(quoted); at != std::string::npos;
       at = json.find(quoted, at + 1)) {
    size_t p = at + quoted.size();
    while (p < json.size() && std::isspace(static_cast<unsigned char>(json[p])))
      ++p;
    if (p < json.size() && json[p] == ':') {
      ++p;
      while (p < json.size() && std::isspace(static_cast<unsigned char>(json[p])))
        ++p;
      return json.c_str() + p;
    }
  }
  return nullptr;
}

int64_t intField(const std::string &json, const std::string &key, int64_t fallback,
                 const std::string &path) {
  const char *v = findValue(json, key);
  if (!v)
    return fallback;
  char *end = nullptr;
  long long value = std::strtoll(v, &end, 10);
  if (end == v)
    fail(KILN_STATUS_INVALID_ARGUMENT, path + ": \"" + key + "\" is not an integer");
  return value;
}

std::string stringField(const std::string &json, const std::string &key,
                        const std::string &fallback, const std::string &path) {
  const char *v = findValue(json, key);
  if (!v)
    return fallback;
  if (*v != '"')
    fail(KILN_STATUS_INVALID_ARGUMENT, path + ": \"" + key + "\" is not a string");
  const char *end = std::strchr(v + 1, '"');
  if (!end)
    fail(KILN_STATUS_INVALID_ARGUMENT,
         path + ": unterminated string for \"" + key + "\"");
  return std::string(v + 1, end);
}

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

double lengthPenalty(size_t length, double alpha) {
  return std::pow((5.0 + double(length)) / 6.0, alpha);
}

} // namespace

//===-- Vocabulary ---------------------------------------------------------===//

Vocabulary::Vocabulary(std::vector<std::string> tokens, VocabularyOptions options)
    : tokens_(std::move(tokens)), options_(options) {
  for (size_t i = 0; i < tokens_.size(); ++i)
    ids_.emplace(tokens_[i], int32_t(i)); // the first occurrence wins, as in a dict
  for (int32_t special : {options_.padId, options_.bosId, options_.eosId, options_.unkId})
    if (special < 0 || size_t(special) >= tokens_.size())
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "special id " + std::to_string(special) + " is outside the " +
               std::to_string(tokens_.size()) + "-token vocabulary");
}

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
    fail(KILN_STATUS_INVALID_ARGUMENT, "'" + vocabPath + "' holds no tokens");
  return Vocabulary(std::move(tokens), options);
}

Vocabulary Vocabulary::fromConfig(const std::string &configPath) {
  std::string json = readFile(configPath);
  VocabularyOptions o;
  o.padId = int32_t(intField(json, "pad_id", o.padId, configPath));
  o.bosId = int32_t(intField(json, "bos_id", o.bosId, configPath));
  o.eosId = int32_t(intField(json, "eos_id", o.eosId, configPath));
  o.unkId = int32_t(intField(json, "unk_id", o.unkId, configPath));
  o.maxSourceLen = intField(json, "max_source_len", 0, configPath);
  o.maxTargetLen = intField(json, "max_target_len", 0, configPath);
  std::string file = stringField(json, "vocab_file", "vocab.txt", configPath);
  size_t slash = configPath.find_last_of('/');
  std::string dir = slash == std::string::npos ? "" : configPath.substr(0, slash + 1);
  Vocabulary vocab = load(file.size() && file[0] == '/' ? file : dir + file, o);
  int64_t declared = intField(json, "vocab_size", int64_t(vocab.size()), configPath);
  if (declared != int64_t(vocab.size()))
    fail(KILN_STATUS_INVALID_ARGUMENT,
         configPath + " declares vocab_size " + std::to_string(declared) +
             " but the vocabulary has " + std::to_string(vocab.size()) + " tokens");
  return vocab;
}

std::vector<int32_t> Vocabulary::encodeSource(const std::string &raw,
                                              bool allowOverLength) const {
  std::string text = trim(raw);
  if (text.empty())
    fail(KILN_STATUS_INVALID_ARGUMENT, "empty input: nothing to translate");
  if (!allowOverLength && options_.maxSourceLen > 0 &&
      int64_t(text.size()) > options_.maxSourceLen)
    fail(KILN_STATUS_INVALID_ARGUMENT, "input '" + text + "' has " +
                                           std::to_string(text.size()) +
                                           " characters; the model takes at most " +
                                           std::to_string(options_.maxSourceLen));
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    int32_t id = this->id(std::string(1, text[i]));
    // Specials are whole tokens such as "<pad>", never one character, so a hit is a real
    // source token; <unk> would silently give an undefined translation, hence the error.
    if (id < 0)
      fail(KILN_STATUS_INVALID_ARGUMENT,
           "character " + describeChar(text[i]) + " at position " + std::to_string(i) +
               " of '" + text + "' is not in the vocabulary");
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
      fail(KILN_STATUS_INVALID_ARGUMENT, "word '" + word + "' at position " +
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
    fail(KILN_STATUS_INVALID_ARGUMENT,
         "token id " + std::to_string(id) + " is outside the " +
             std::to_string(tokens_.size()) + "-token vocabulary");
  return tokens_[size_t(id)];
}

int32_t Vocabulary::id(const std::string &token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

//===-- Search -------------------------------------------------------------===//

GenerateOptions GenerateOptions::forVocabulary(const Vocabulary &vocab) {
  GenerateOptions o;
  o.bosId = vocab.options().bosId;
  o.eosId = vocab.options().eosId;
  o.maxLength = int(vocab.options().maxTargetLen);
  return o;
}

namespace {

struct Live {
  std::vector<int32_t> prefix; // <bos> first
  double raw = 0;
};

// Greedy: the arg-max token (lowest id on a tie) until <eos> or maxLength.
std::vector<GenerateResult> greedy(StepDecoder &decoder, size_t batch,
                                   const GenerateOptions &o) {
  int64_t v = decoder.vocabSize();
  std::vector<Live> live(batch, Live{{o.bosId}, 0.0});
  std::vector<bool> done(batch, false);
  std::vector<double> logp;
  for (int t = 0; t < o.maxLength; ++t) {
    std::vector<int32_t> sourceOf, parents;
    std::vector<std::vector<int32_t>> prefixes;
    for (size_t s = 0; s < batch; ++s)
      if (!done[s]) {
        sourceOf.push_back(int32_t(s));
        prefixes.push_back(live[s].prefix);
      }
    if (sourceOf.empty())
      break;
    decoder.step(sourceOf, prefixes, logp);
    for (size_t r = 0; r < sourceOf.size(); ++r) {
      const double *row = logp.data() + r * size_t(v);
      int32_t best = 0;
      for (int32_t i = 1; i < v; ++i)
        if (row[i] > row[best])
          best = i;
      Live &h = live[size_t(sourceOf[r])];
      h.prefix.push_back(best);
      h.raw += row[best];
      if (best == o.eosId)
        done[size_t(sourceOf[r])] = true;
      else
        parents.push_back(int32_t(r));
    }
    if (!parents.empty())
      decoder.reorder(parents);
  }
  std::vector<GenerateResult> results(batch);
  for (size_t s = 0; s < batch; ++s) {
    Hypothesis &h = results[s].best;
    h.tokens.assign(live[s].prefix.begin() + 1, live[s].prefix.end());
    h.rawScore = h.score = live[s].raw;
    h.finished = done[s];
    if (o.nBest)
      results[s].nBest = {h};
  }
  return results;
}

struct Candidate {
  double raw;
  int32_t live; // index in the source's live list
  int32_t token;
};

// Beam search exactly as reference_beam.py: a shrinking beam (width = K - finished),
// every live hypothesis extended by every token, the best `width` by raw score kept
// (ties: lower live index, then lower token id), GNMT normalization only when ranking the
// finished.
std::vector<GenerateResult> beam(StepDecoder &decoder, size_t batch,
                                 const GenerateOptions &o) {
  int64_t v = decoder.vocabSize();
  int k = o.beamSize;
  std::vector<std::vector<Live>> live(batch, {Live{{o.bosId}, 0.0}});
  std::vector<std::vector<Hypothesis>> finished(batch);
  std::vector<double> logp;
  for (int t = 0; t < o.maxLength; ++t) {
    // Rows of every live hypothesis of every source, in source then live order; all have
    // length t + 1, so one decode call serves the whole batch.
    std::vector<int32_t> sourceOf;
    std::vector<std::vector<int32_t>> prefixes;
    std::vector<size_t> firstRow(batch);
    for (size_t s = 0; s < batch; ++s) {
      firstRow[s] = sourceOf.size();
      for (const Live &h : live[s]) {
        sourceOf.push_back(int32_t(s));
        prefixes.push_back(h.prefix);
      }
    }
    if (sourceOf.empty())
      break;
    decoder.step(sourceOf, prefixes, logp);

    std::vector<int32_t> parents;
    for (size_t s = 0; s < batch; ++s) {
      if (live[s].empty())
        continue;
      size_t width = size_t(k) - finished[s].size();
      std::vector<Candidate> cands;
      cands.reserve(live[s].size() * size_t(v));
      for (size_t i = 0; i < live[s].size(); ++i) {
        const double *row = logp.data() + (firstRow[s] + i) * size_t(v);
        for (int32_t tok = 0; tok < v; ++tok)
          cands.push_back({live[s][i].raw + row[tok], int32_t(i), tok});
      }
      width = std::min(width, cands.size());
      std::partial_sort(cands.begin(), cands.begin() + long(width), cands.end(),
                        [](const Candidate &a, const Candidate &b) {
                          if (a.raw != b.raw)
                            return a.raw > b.raw;
                          if (a.live != b.live)
                            return a.live < b.live;
                          return a.token < b.token;
                        });
      std::vector<Live> next;
      for (size_t c = 0; c < width; ++c) {
        const Candidate &cand = cands[c];
        const Live &parent = live[s][size_t(cand.live)];
        if (cand.token == o.eosId) {
          Hypothesis h;
          h.tokens.assign(parent.prefix.begin() + 1, parent.prefix.end());
          h.tokens.push_back(cand.token);
          h.rawScore = cand.raw;
          h.finished = true;
          finished[s].push_back(std::move(h));
        } else {
          Live h{parent.prefix, cand.raw};
          h.prefix.push_back(cand.token);
          next.push_back(std::move(h));
          parents.push_back(int32_t(firstRow[s] + size_t(cand.live)));
        }
      }
      live[s] = std::move(next);
    }
    if (!parents.empty())
      decoder.reorder(parents);
  }

  std::vector<GenerateResult> results(batch);
  for (size_t s = 0; s < batch; ++s) {
    // Cut off at maxLength: finished as they are, without <eos>.
    for (const Live &l : live[s]) {
      Hypothesis h;
      h.tokens.assign(l.prefix.begin() + 1, l.prefix.end());
      h.rawScore = l.raw;
      finished[s].push_back(std::move(h));
    }
    for (Hypothesis &h : finished[s])
      h.score = h.rawScore / lengthPenalty(h.tokens.size(), o.alpha);
    // Stable: on equal normalized scores the earlier finished stays first.
    std::stable_sort(
        finished[s].begin(), finished[s].end(),
        [](const Hypothesis &a, const Hypothesis &b) { return a.score > b.score; });
    results[s].best = finished[s].front();
    if (o.nBest)
      results[s].nBest = std::move(finished[s]);
  }
  return results;
}

} // namespace

std::vector<GenerateResult> generate(StepDecoder &decoder,
                                     const std::vector<std::vector<int32_t>> &sources,
                                     const GenerateOptions &options) {
  bool beamSearch = options.search == GenerateOptions::Search::Beam;
  if (beamSearch && options.beamSize < 1)
    fail(KILN_STATUS_INVALID_ARGUMENT,
         "beam size must be at least 1, got " + std::to_string(options.beamSize));
  if (options.maxLength < 1)
    fail(KILN_STATUS_INVALID_ARGUMENT,
         "maxLength must be at least 1, got " + std::to_string(options.maxLength));
  if (sources.empty())
    return {};
  decoder.start(sources);
  return beamSearch ? beam(decoder, sources.size(), options)
                    : greedy(decoder, sources.size(), options);
}

} // namespace kiln
