//===- FuzzJson.cpp - libFuzzer target: the JSON parser -------------------===//
//
// parseJson on arbitrary bytes must return a value or an error, in time linear in the
// input; a string it returns must come back unchanged through quoteJson and parseJson,
// the path by which the runtime writes names into messages and files.
//
//===----------------------------------------------------------------------===//

#include "Json.h"

#include <cstdlib>

using kiln::rt::Json;

namespace {

void checkRoundTrip(const std::string &s) {
  std::string error;
  std::optional<Json> back = kiln::rt::parseJson(kiln::rt::quoteJson(s), error);
  if (!back || !back->isString() || back->asString() != s)
    std::abort();
}

void walk(const Json &value) {
  switch (value.kind()) {
  case Json::Kind::String:
    checkRoundTrip(value.asString());
    break;
  case Json::Kind::Array:
    for (const Json &item : value.items())
      walk(item);
    break;
  case Json::Kind::Object:
    for (const auto &[key, member] : value.members()) {
      checkRoundTrip(key);
      // Keys are unique, so find() must land on this very member.
      if (value.find(key) != &member)
        std::abort();
      walk(member);
    }
    break;
  default:
    break;
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  std::optional<Json> value = kiln::rt::parseJson(
      std::string_view(reinterpret_cast<const char *>(data), size), error);
  if (value)
    walk(*value);
  else if (error.empty())
    std::abort(); // a failure must say what went wrong
  return 0;
}
