"""What the Python tests share: the shipped translator and the files beside it, as
test/python/CMakeLists.txt passes them in the environment."""

import os
import subprocess

import numpy as np

import kiln

KILN_RUN = os.environ["KILN_RUN"]
TRANSLATOR_SO = os.environ["KILN_TRANSLATOR_SO"]
TRANSLATOR_DIR = os.environ["KILN_TRANSLATOR_DIR"]
TRANSLATOR_WEIGHTS = os.path.join(TRANSLATOR_DIR, "translator.safetensors")
TRANSLATOR_CONFIG = os.path.join(TRANSLATOR_DIR, "config.json")
BASE_SO = os.environ["KILN_BASE_SO"]
DEMO_SO = os.environ["KILN_DEMO_SO"]


def translator():
    """(model, weights) of the shipped translator."""
    model = kiln.Model(TRANSLATOR_SO)
    return model, kiln.Weights(model, TRANSLATOR_WEIGHTS)


def sources(rng, batch, length):
    """Random token ids (digits and the rest of the vocabulary) and full lengths."""
    return rng.integers(4, 45, (batch, length)), np.full(batch, length)


def kiln_run(*args):
    """kiln-run's standard output; fails the caller on a nonzero exit."""
    done = subprocess.run([KILN_RUN, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"kiln-run {' '.join(args)} exited {done.returncode}: "
                             f"{done.stderr}")
    return done.stdout
