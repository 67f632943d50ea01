//===- Module.cpp - What an nn module needs to name itself ----------------===//

#include "kiln/frontend/nn/Module.h"

using namespace kiln::dsl;
using namespace kiln::dsl::nn;

Module::Module(ModelBuilder &m, const std::string &kind, const std::string &prefix)
    : builder_(&m) {
  llvm::StringRef name(prefix);
  name.consume_back(".");
  name_ = kind + " '" + name.str() + "'";
}
