"""Kiln for Python: load a compiled model (NAME.so) and its weights, run its entry points
on numpy arrays, and generate text with greedy or beam search or sampling (encoder-decoder
models: KVCacheDecoder, PrefixDecoder; decoder-only models: PrefillDecoder).

    import numpy as np, kiln
    model = kiln.Model("translator.so")
    weights = kiln.Weights(model, "translator.safetensors")
    session = kiln.Session(model, weights)
    out = session.run("encode", src_ids=np.array([[8, 4, 13, 10]]), src_lengths=[4])
    out["memory"].shape            # (1, 4, 128)

Errors are kiln.Error subclasses carrying the runtime's message (InvalidArgumentError is
also a ValueError, NotFoundError a LookupError, ...). The GIL is released while kernels
run. See help(kiln.Session.run) for how inputs are converted and outputs returned.
"""

from ._kiln import (
    Entry,
    Error,
    FailedPreconditionError,
    FileError,
    GenerateOptions,
    GenerateResult,
    Hypothesis,
    IncompatibleModelError,
    InternalError,
    InvalidArgumentError,
    InvalidModelError,
    InvalidWeightsError,
    KernelError,
    KVCacheDecoder,
    Model,
    NotFoundError,
    PrefillDecoder,
    PrefixDecoder,
    ResourceExhaustedError,
    Session,
    SessionStats,
    StepDecoder,
    TensorInfo,
    Vocabulary,
    Weights,
    generate,
)
from .translate import Translation, Translator

import types as _types

__all__ = [name for name, value in globals().items()
           if not name.startswith("_") and not isinstance(value, _types.ModuleType)]
