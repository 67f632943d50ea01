// Translate.hpp - `kiln-run translate`: text in, text out through kiln_generate.
#ifndef KILN_RUN_TRANSLATE_HPP
#define KILN_RUN_TRANSLATE_HPP

namespace kiln::driver {

// argv[0] is "translate"; returns the process exit code.
int translateMain(int argc, char **argv);

} // namespace kiln::driver

#endif // KILN_RUN_TRANSLATE_HPP
