//===- RunModel.cpp - Running one entry of a model ------------------------===//

#include "Commands.h"

#include "DriverError.h"
#include "HostTensor.h"
#include "Inputs.h"
#include "Npy.h"
#include "Options.h"
#include "Print.h"

#include "kiln/runtime.hpp"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <set>
#include <sys/stat.h>

namespace kiln::driver {
namespace {

std::string resolveEntry(const kiln::Model &model, const std::string &requested) {
  std::vector<std::string> entries = model.entries();
  if (!requested.empty()) {
    size_t index;
    kiln::check(kiln_model_find_entry(model.get(), requested.c_str(), &index));
    return requested;
  }
  if (entries.size() == 1)
    return entries[0];
  std::string names;
  for (const std::string &e : entries)
    names += (names.empty() ? "" : ", ") + e;
  throw DriverError("model '" + model.name() + "' has " + std::to_string(entries.size()) +
                    " entries (" + names + "); choose one with --entry");
}

void checkDims(const kiln::Model &model, const std::string &entry,
               const Options &options) {
  size_t e;
  kiln::check(kiln_model_find_entry(model.get(), entry.c_str(), &e));
  size_t n = kiln_model_dim_count(model.get(), e);
  for (const auto &[name, value] : options.dims) {
    bool known = false;
    std::string all;
    for (size_t d = 0; d < n; ++d) {
      known = known || name == kiln_model_dim_name(model.get(), e, d);
      all += std::string(d ? ", " : "") + kiln_model_dim_name(model.get(), e, d);
    }
    if (!known)
      throw DriverError("--dim " + name + ": entry '" + entry + "' has no dimension '" +
                        name + "' (" + (all.empty() ? "it has none" : "it has " + all) +
                        ")");
  }
}

} // namespace

void runModel(const Options &options) {
  kiln::Model model = kiln::Model::open(options.model);
  if (options.list) {
    printModel(stdout, model);
    return;
  }
  kiln::Weights weights;
  if (!options.weights.empty())
    weights = kiln::Weights::open(model, options.weights);
  else if (kiln_model_parameter_count(model.get()) > 0)
    throw DriverError("model '" + model.name() + "' has " +
                      std::to_string(kiln_model_parameter_count(model.get())) +
                      " parameters: pass --weights FILE (kiln-run --init-weights OUT " +
                      options.model + " makes random ones)");
  kiln_session_options sessionOptions = options.session.toOptions();
  kiln::Session session(model, weights, &sessionOptions);
  std::string entry = resolveEntry(model, options.entry);

  checkDims(model, entry, options);
  std::vector<HostTensor> host = buildInputs(model, entry, options);
  std::vector<kiln::TensorInfo> infos = model.inputs(entry);
  std::vector<kiln::TensorArg> inputs;
  for (size_t k = 0; k < infos.size(); ++k)
    inputs.push_back({infos[k].name, host[k].dtype, host[k].shape, host[k].bytes.data()});

  std::vector<double> times;
  for (int r = 0; r < options.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    session.run(entry, inputs);
    // A run's time is what a caller waits for its results: on a GPU the outputs are
    // copied back only when read, and the kernels run asynchronously until then.
    for (size_t i = 0; i < session.outputCount(); ++i)
      session.outputAt(i);
    auto end = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }

  // The dims this run bound, e.g. "B=2, S=7", read off the inputs' bare-name dims.
  std::string bound;
  std::set<std::string> seen;
  for (size_t k = 0; k < infos.size(); ++k)
    for (size_t d = 0; d < infos[k].dims.size(); ++d) {
      const std::string &name = infos[k].dims[d];
      bool isName = !name.empty() &&
                    (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
      for (char c : name)
        isName = isName && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
      if (isName && seen.insert(name).second)
        bound +=
            (bound.empty() ? "" : ", ") + name + "=" + std::to_string(host[k].shape[d]);
    }
  std::printf("model %s, entry %s%s\n", model.name().c_str(), entry.c_str(),
              bound.empty() ? "" : (" (" + bound + ")").c_str());
  for (size_t i = 0; i < session.outputCount(); ++i) {
    kiln::OutputView out = session.outputAt(i);
    printOutput(stdout, out, options.print);
    if (!options.saveOutputs.empty()) {
      ::mkdir(options.saveOutputs.c_str(), 0777);
      kiln_tensor raw{out.name.c_str(), out.dtype, int32_t(out.shape.size()),
                      out.shape.data(), out.data};
      writeNpy(options.saveOutputs + "/" + out.name + ".npy", raw);
    }
  }
  printTimes(stdout, times);
  reportProfile(stdout, session, options.session);
}

} // namespace kiln::driver
