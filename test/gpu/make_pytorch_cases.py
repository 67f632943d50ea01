#!/usr/bin/env python3
"""Turns make_reference.py's output (PyTorch's torch.nn.Transformer: weights, and per case
the inputs, memory and logits) into GPU test cases (test/gpu/README.md): encode, then
decode on PyTorch's memory, in one session of the CUDA base Transformer, within 1e-4.

    make_pytorch_cases.py REFERENCE_DIR CASES_DIR

Needs numpy only (the device has it beside PyTorch).
"""
import json
import os
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "I32": np.int32, "I64": np.int64}
RUNS = [("encode", ["src_ids", "src_lengths"], ["memory"]),
        ("decode", ["tgt_ids", "memory", "src_lengths"], ["logits"])]


def read_safetensors(path):
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        payload = f.read()
    return {name: np.frombuffer(payload[info["data_offsets"][0]:info["data_offsets"][1]],
                                dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
            for name, info in header.items() if name != "__metadata__"}


def main():
    reference, cases = sys.argv[1:3]
    weights = os.path.abspath(os.path.join(reference, "weights.safetensors"))
    for name in sorted(os.listdir(reference)):
        if not name.endswith(".safetensors") or name == "weights.safetensors":
            continue
        tensors = read_safetensors(os.path.join(reference, name))
        out = os.path.join(cases, "transformer_base." + name[:-len(".safetensors")])
        os.makedirs(out, exist_ok=True)
        lines = ["model transformer_base", "weights " + weights, "tolerance 1e-4"]
        for entry, inputs, outputs in RUNS:
            lines.append("run " + entry)
            for kind, names in (("input", inputs), ("expect", outputs)):
                for tensor in names:
                    np.save(os.path.join(out, tensor + ".npy"), tensors[tensor])
                    lines.append(f"{kind} {tensor}.npy {tensor}")
        with open(os.path.join(out, "case.txt"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("wrote", out)


if __name__ == "__main__":
    main()
