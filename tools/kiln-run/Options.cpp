// Options.cpp - parsing kiln-run's arguments; every mistake is a UsageError with a
// reason.
#include "Options.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace kiln::driver {

const char *usage() {
  return "usage:\n"
         "  kiln-run MODEL.so [--weights W.safetensors] [--entry NAME]\n"
         "           [--input NAME=SPEC ...] [--dim NAME=N ...] [--random] [--seed N]\n"
         "           [--repeat N] [--print summary|full|none] [--save-outputs DIR]\n"
         "  kiln-run MODEL.so --list\n"
         "  kiln-run --init-weights OUT.safetensors MODEL.so [--seed N] [--scale S]\n"
         "\n"
         "SPEC is a .npy file (float32/float64/int32/int64, C order) or an inline "
         "literal\n"
         "SHAPE:VALUES, e.g. 2x3:1,2,3,4,5,6 (\":7\" is a scalar). --random fills every "
         "input\n"
         "not given (floats in [-1, 1]; integers within the input's bounds, as --list "
         "shows\n"
         "them, or in [0, 10) if it has none), sizing dynamic dimensions from --dim and "
         "the\n"
         "given inputs. --repeat N runs N times and reports median and minimum time.\n"
         "--init-weights writes random weights for the model's parameters (uniform in\n"
         "[-S, S]; by default S = 1/sqrt(last dim), like PyTorch's Linear init).\n";
}

namespace {

int64_t parseInt(const std::string &text, const std::string &what) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno)
    throw UsageError{what + ": '" + text + "' is not an integer"};
  return v;
}

std::pair<std::string, std::string> splitAssign(const std::string &arg,
                                                const char *flag) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError{std::string(flag) + " expects NAME=VALUE, got '" + arg + "'"};
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

} // namespace

Options parseOptions(int argc, char **argv) {
  Options o;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw UsageError{arg + " needs a value"};
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--weights") {
      o.weights = value();
    } else if (arg == "--entry") {
      o.entry = value();
    } else if (arg == "--input") {
      o.inputs.push_back(splitAssign(value(), "--input"));
    } else if (arg == "--dim") {
      auto [name, n] = splitAssign(value(), "--dim");
      int64_t size = parseInt(n, "--dim " + name);
      if (size < 0)
        throw UsageError{"--dim " + name + ": size must be non-negative"};
      o.dims.emplace_back(name, size);
    } else if (arg == "--random") {
      o.random = true;
    } else if (arg == "--seed") {
      o.seed = uint64_t(parseInt(value(), "--seed"));
    } else if (arg == "--repeat") {
      int64_t n = parseInt(value(), "--repeat");
      if (n < 1 || n > 1000000)
        throw UsageError{"--repeat must be between 1 and 1000000"};
      o.repeat = int(n);
    } else if (arg == "--print") {
      std::string mode = value();
      if (mode == "summary")
        o.print = PrintMode::Summary;
      else if (mode == "full")
        o.print = PrintMode::Full;
      else if (mode == "none")
        o.print = PrintMode::None;
      else
        throw UsageError{"--print expects summary, full or none, got '" + mode + "'"};
    } else if (arg == "--save-outputs") {
      o.saveOutputs = value();
    } else if (arg == "--list") {
      o.list = true;
    } else if (arg == "--init-weights") {
      o.initWeights = value();
    } else if (arg == "--scale") {
      std::string text = value();
      char *end = nullptr;
      o.scale = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || !(o.scale >= 0))
        throw UsageError{"--scale: '" + text + "' is not a non-negative number"};
      o.haveScale = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError{"unknown option '" + arg + "'"};
    } else {
      positional.push_back(arg);
    }
  }
  if (o.help)
    return o;
  if (positional.size() != 1)
    throw UsageError{positional.empty()
                         ? "no model given"
                         : "expected one model, got '" + positional[1] + "' too"};
  o.model = positional[0];
  return o;
}

} // namespace kiln::driver
