# lit configuration of Kiln's IR and pass tests (kiln-opt + FileCheck).
# Loaded from the build tree's lit.site.cfg.py, which sets the tool paths.

import os
import shutil
import sys

import lit.formats

config.name = "Kiln"
if not hasattr(config, "kiln_obj_root"):
    lit_config.fatal("run lit on BUILD/test/lit (where lit.site.cfg.py is), not on the "
                     "source directory, or use `ctest -R lit` / `ninja check-kiln-lit`")
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "check_dot.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test", "lit")

# Tests name their tools bare (kiln-opt, demo-gen, FileCheck, not): put the build's
# kiln-opt and model compilers and LLVM's test tools first on PATH.
config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir] + config.kiln_model_gen_dirs +
    [config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%python", sys.executable))
# Rendering with Graphviz is checked where it is installed; check_dot.py checks the
# syntax everywhere.
if shutil.which("dot"):
    config.available_features.add("graphviz")
