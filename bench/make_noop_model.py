#!/usr/bin/env python3
"""make_noop_model.py - the C source of a model with MODEL.so's manifest whose kernels
return at once, so that timing it times the runtime alone (bench/session_overhead.cpp).

  make_noop_model.py MODEL.so OUT.c      then: cc -shared -fPIC OUT.c -o noop.so
"""
import ctypes
import json
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model = ctypes.CDLL(sys.argv[1])
    model.kiln_model_manifest.restype = ctypes.c_char_p
    text = model.kiln_model_manifest().decode()
    abi = model.kiln_model_abi_version()
    kernels = json.loads(text)["kernels"]
    with open(sys.argv[2], "w") as out:
        out.write('#define EXPORT __attribute__((visibility("default")))\n')
        out.write("EXPORT const char *kiln_model_manifest(void) { return %s; }\n"
                  % json.dumps(text))
        out.write("EXPORT int kiln_model_abi_version(void) { return %d; }\n" % abi)
        for name in kernels:
            out.write("EXPORT int %s_argv(void **args) { (void)args; return 0; }\n"
                      % name)


if __name__ == "__main__":
    main()
