//===- main.cpp - kiln-run, the driver for compiled Kiln models -----------===//
//
// The command line (CLI11) and how failures end the process: 2 for a usage error, 1 for a
// run that failed, each with a message on stderr that names the problem.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "DriverError.h"
#include "Generate.h"
#include "Options.h"
#include "Translate.h"

#include "kiln/runtime.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>

using namespace kiln::driver;

namespace {

constexpr int kRunFailed = 1;
constexpr int kUsageError = 2;

} // namespace

int main(int argc, char **argv) {
  CLI::App app("kiln-run: lists, runs and tries out compiled Kiln models.", "kiln-run");
  // A repeated option keeps its last value, as getopt-style tools do.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  Options options;
  addRunOptions(app, options);
  TranslateOptions translateOptions;
  CLI::App *translateCommand = addTranslateCommand(app, translateOptions);
  GenerateCommandOptions generateOptions;
  CLI::App *generateCommand = addGenerateCommand(app, generateOptions);

  // Messages start with the command they concern: "kiln-run translate: error: ...".
  auto command = [&] {
    return translateCommand->parsed()  ? "kiln-run translate"
           : generateCommand->parsed() ? "kiln-run generate"
                                       : "kiln-run";
  };
  try {
    app.parse(argc, argv);
    if (translateCommand->parsed())
      translate(translateOptions);
    else if (generateCommand->parsed())
      generateText(generateOptions);
    else if (options.model.empty())
      throw CLI::RequiredError("MODEL");
    else if (!options.initWeights.empty())
      initWeights(options);
    else if (!options.convertWeights.empty())
      convertWeights(options);
    else
      runModel(options);
    return 0;
  } catch (const CLI::Success &e) { // --help
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::fprintf(stderr, "%s: error: %s\nRun '%s --help' for the options.\n", command(),
                 e.what(), command());
    return kUsageError;
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "%s: error: %s\n", command(), e.what());
  } catch (const DriverError &e) {
    std::fprintf(stderr, "%s: error: %s\n", command(), e.what());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: internal error: %s\n", command(), e.what());
  }
  return kRunFailed;
}
