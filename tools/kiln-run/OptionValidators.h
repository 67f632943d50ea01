//
// CLI11 validators for the values kiln-run's options take. CLI11's own number conversion
// reads "010" as octal and wraps "-1" into an unsigned seed; these accept plain decimal
// only, within a range, so a mistyped value is an error naming the option and the value
// instead of a silent 0, a wrapped seed or a greedy run.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_RUN_OPTIONVALIDATORS_H
#define KILN_TOOLS_KILN_RUN_OPTIONVALIDATORS_H

#include <CLI/CLI.hpp>

#include <cstdint>

namespace kiln::driver {

/// A decimal integer in [lo, hi]. Rewrites the value to its canonical spelling (no sign,
/// no leading zeros), which CLI11's conversion then reads back unchanged.
CLI::Validator integerIn(int64_t lo, int64_t hi);

/// A finite floating-point number, at least `lo`.
CLI::Validator finiteAtLeast(double lo);

/// NAME=VALUE with a non-empty NAME and a VALUE that `value` accepts (and may rewrite);
/// `valueName` names VALUE in the option's help.
CLI::Validator assignment(const std::string &valueName,
                          CLI::Validator value = CLI::Validator());

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_RUN_OPTIONVALIDATORS_H
