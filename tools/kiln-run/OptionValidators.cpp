//===- OptionValidators.cpp - Checks for option values --------------------===//
//
// Each validator returns "" to accept and a reason to reject; CLI11 prefixes the reason
// with the option's name ("--beam: 'abc' is not an integer").
//
//===----------------------------------------------------------------------===//

#include "OptionValidators.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace kiln::driver {
CLI::Validator integerIn(int64_t lo, int64_t hi) {
  // Always both bounds: "at least 0" would misdescribe a value too large for int64.
  std::string range = "in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string &text) -> std::string {
        // strtoll alone would also take leading blanks and, through CLI11, "0x10".
        bool digits =
            !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
        char *end = nullptr;
        errno = 0;
        long long value = std::strtoll(text.c_str(), &end, 10);
        if (!digits || *end)
          return "'" + text + "' is not an integer";
        if (errno == ERANGE || value < lo || value > hi)
          return text + " is not " + range;
        text = std::to_string(value);
        return "";
      },
      range);
}

CLI::Validator finiteAtLeast(double lo) {
  std::ostringstream range;
  range << "at least " << lo;
  return CLI::Validator(
      [lo, range = range.str()](std::string &text) -> std::string {
        char *end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end || std::isspace(static_cast<unsigned char>(text[0])))
          return "'" + text + "' is not a number";
        if (!std::isfinite(value))
          return "'" + text + "' is not a finite number";
        if (value < lo)
          return text + " is not " + range;
        return "";
      },
      range.str());
}

CLI::Validator assignment(const std::string &valueName, CLI::Validator value) {
  return CLI::Validator(
      [value, valueName](std::string &text) -> std::string {
        size_t eq = text.find('=');
        if (eq == std::string::npos || eq == 0)
          return "expected NAME=" + valueName + ", got '" + text + "'";
        std::string name = text.substr(0, eq), rhs = text.substr(eq + 1);
        std::string reason = value(rhs);
        if (!reason.empty())
          return name + ": " + reason;
        text = name + "=" + rhs;
        return "";
      },
      "");
}

} // namespace kiln::driver
