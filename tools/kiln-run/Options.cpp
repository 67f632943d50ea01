//===- Options.cpp - kiln-run's options for running a model ---------------===//
//
// Each option with its type, its range and its help; values are checked while the
// command line is parsed, before any file is opened.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "OptionValidators.h"

#include <functional>
#include <limits>

namespace kiln::driver {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

const char *kFooter = R"(
SPEC is a .npy file (float32/float64/int32/int64, C order) or an inline literal
SHAPE:VALUES, e.g. 2x3:1,2,3,4,5,6 (":7" is a scalar). --random fills every input not
given (floats in [-1, 1]; integers within the input's bounds, as --list shows them, or in
[0, 10) if it has none), sizing dynamic dimensions from --dim and the given inputs.
--init-weights writes random weights for the model's parameters (uniform in [-S, S]; by
default S = 1/sqrt(last dim), like PyTorch's Linear init). --convert-weights writes the
parameters of --weights as the model reads them (bf16, or int8 with scales, for a model
compiled for that precision), so that loading them needs no conversion.

  kiln-run MODEL.so --list
  kiln-run --init-weights OUT.safetensors MODEL.so [--seed N] [--scale S]
  kiln-run --convert-weights OUT.safetensors MODEL.so --weights W.safetensors
  kiln-run MODEL.so --weights W.safetensors --entry NAME --input NAME=SPEC ...
  kiln-run translate --help

Exit status: 0 on success, 1 when the run fails, 2 for a usage error.)";

/// A NAME=VALUE option that may be given any number of times, one value each.
void addAssignments(CLI::App &app, const std::string &name, const std::string &valueName,
                    CLI::Validator value,
                    std::function<void(const std::string &, const std::string &)> add,
                    const std::string &help) {
  auto callback = [add](const std::vector<std::string> &values) {
    for (const std::string &v : values) {
      size_t eq = v.find('='); // there is one: assignment() has checked
      add(v.substr(0, eq), v.substr(eq + 1));
    }
  };
  app.add_option_function<std::vector<std::string>>(name, callback, help)
      ->transform(assignment(valueName, std::move(value)))
      ->type_name("NAME=" + valueName)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->allow_extra_args(false);
}

} // namespace

void addRunOptions(CLI::App &app, Options &o) {
  app.footer(kFooter);
  app.add_option("MODEL", o.model, "The compiled model (MODEL.so)")->type_name("");
  app.add_option("--weights", o.weights, "The model's weights (.safetensors)")
      ->type_name("FILE");
  app.add_option("--entry", o.entry,
                 "The entry point to run (default: the model's only one)")
      ->type_name("NAME");
  addAssignments(
      app, "--input", "SPEC", CLI::Validator(),
      [&o](const std::string &name, const std::string &spec) {
        o.inputs.emplace_back(name, spec);
      },
      "An input: a .npy file or SHAPE:VALUES (repeatable)");
  addAssignments(
      app, "--dim", "N", integerIn(0, kInt64Max),
      [&o](const std::string &name, const std::string &size) {
        o.dims.emplace_back(name, std::stoll(size));
      },
      "The size of a dynamic dimension, for --random (repeatable)");
  app.add_flag("--random", o.random, "Fill every input not given with random values");
  app.add_option("--seed", o.seed, "Seed of --random and --init-weights (default 0)")
      ->transform(integerIn(0, kInt64Max))
      ->type_name("N");
  app.add_option("--repeat", o.repeat,
                 "Run N times and report the median, minimum and mean time, outputs "
                 "read back included (default 1)")
      ->transform(integerIn(1, 1000000))
      ->type_name("N");
  addSessionFlags(app, o.session);
  app.add_option_function<std::string>(
         "--print",
         [&o](const std::string &mode) {
           o.print = mode == "full"   ? PrintMode::Full
                     : mode == "none" ? PrintMode::None
                                      : PrintMode::Summary;
         },
         "How to show the outputs: summary (default), full or none")
      ->check(CLI::IsMember({"summary", "full", "none"}))
      ->type_name("MODE");
  app.add_option("--save-outputs", o.saveOutputs, "Write each output to DIR/NAME.npy")
      ->type_name("DIR");
  app.add_flag("--list", o.list, "List the entries, inputs, outputs and parameters");
  app.add_option("--init-weights", o.initWeights,
                 "Write random weights for the model's parameters to OUT")
      ->type_name("OUT");
  app.add_option("--convert-weights", o.convertWeights,
                 "Write --weights converted to the model's precision to OUT")
      ->type_name("OUT");
  app.add_option("--scale", o.scale, "--init-weights: uniform in [-S, S]")
      ->check(finiteAtLeast(0))
      ->type_name("S");
}

} // namespace kiln::driver
