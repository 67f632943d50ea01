"""kiln.Model and kiln.Weights: what a compiled model declares, as kiln-run --list shows
it, and the errors of opening files."""

import os
import re
import tempfile
import unittest

import numpy as np

import kiln
from kilntest import DEMO_SO, TRANSLATOR_SO, TRANSLATOR_WEIGHTS, kiln_run, translator

SHORT = {np.dtype("float32"): "f32", np.dtype("int32"): "i32", np.dtype("int64"): "i64"}


def listing(model):
    """The model described in kiln-run --list's words, from the Python objects alone:
    entries, their inputs and outputs (dtype, shape with dimension names, bounds) and the
    parameters."""

    def tensor(t):
        dims = ", ".join(str(d) for d in t.shape)
        bounds = f", values in [{t.bounds[0]}, {t.bounds[1]}]" if t.bounds else ""
        return f"{t.name}: {SHORT[t.dtype]} [{dims}]{bounds}"

    lines = []
    for e in model.entries:
        lines.append(f"entry {e.name} (dynamic dims: {', '.join(e.dims)})")
        lines += [f"  input  {tensor(t)}" for t in e.inputs]
        lines += [f"  output {tensor(t)}" for t in e.outputs]
    lines.append("parameters:")
    lines += [f"  {tensor(t)}" for t in model.parameters]
    return lines


class ModelTest(unittest.TestCase):
    def test_everything_kiln_run_lists(self):
        model = kiln.Model(TRANSLATOR_SO)
        # A converted parameter's line ends with where it comes from, which the Python
        # objects do not say: " (panels of 'SOURCE' rows [a, b))".
        theirs = [re.sub(r" \(\w+ of '.*$", "", line)
                  for line in kiln_run("--list", TRANSLATOR_SO).splitlines()]
        self.assertTrue(theirs[0].startswith(
            f"model {model.name} (target {model.target}): {len(model.entries)} entries, "
            f"{len(model.parameters)} parameters"), theirs[0])
        # Every line, in kiln-run's order (kiln-run may print more).
        rest = iter(theirs[1:])
        for line in listing(model):
            self.assertIn(line, rest, "missing from kiln-run --list, or out of order")

    def test_entries_inputs_and_outputs(self):
        model = kiln.Model(TRANSLATOR_SO)
        self.assertEqual([e.name for e in model.entries],
                         ["encode", "decode", "decode_start", "decode_step"])
        step = model.entry("decode_step")
        self.assertEqual(step.dims, ["B", "S", "P"])
        ids, position, lengths = step.inputs
        self.assertEqual((ids.name, ids.dtype, ids.shape, ids.bounds),
                         ("tgt_ids", np.int32, ("B", 1), ("0", "44")))
        self.assertEqual((position.shape, position.bounds), ((), ("0", "63")))
        self.assertEqual(lengths.bounds, ("1", "S"))
        self.assertEqual(step.outputs[0].shape, ("B", 45))
        self.assertEqual(model.entry("decode_start").outputs, [])
        self.assertEqual(repr(ids), "TensorInfo('tgt_ids', int32, ('B', 1), "
                                    "bounds=('0', '44'))")

    def test_states_and_manifest(self):
        model = kiln.Model(TRANSLATOR_SO)
        # Per decoder layer: cross-attention keys and values, self-attention caches; and
        # the decoder's padding mask of the memory, built once per sequence.
        self.assertEqual(len(model.states), 3 * 4 + 1)
        self.assertIn("transformer.decoder.layers.0.self_attn.k_cache", model.states)
        self.assertIn("transformer.decoder.memory_mask", model.states)
        for state in model.states:
            self.assertIn(f'"{state}"', model.manifest)
        self.assertEqual(model.path, TRANSLATOR_SO)

    def test_unknown_entry_lists_the_entries(self):
        model = kiln.Model(TRANSLATOR_SO)
        with self.assertRaises(kiln.NotFoundError) as caught:
            model.entry("encoder")
        self.assertEqual(str(caught.exception),
                         "model 'translator' has no entry 'encoder'; available entries: "
                         "encode, decode, decode_start, decode_step")

    def test_bad_model_files(self):
        with self.assertRaisesRegex(kiln.NotFoundError,
                                    "model file '/nonexistent/m.so'.*No such file"):
            kiln.Model("/nonexistent/m.so")
        with self.assertRaisesRegex(kiln.InvalidModelError, "not an ELF file"):
            kiln.Model(TRANSLATOR_WEIGHTS)

    def test_bad_weights_files(self):
        model, _ = translator()
        with self.assertRaisesRegex(kiln.NotFoundError,
                                    "weights file '/nonexistent/w.safetensors'"):
            kiln.Weights(model, "/nonexistent/w.safetensors")
        with tempfile.TemporaryDirectory() as tmp:
            # Weights of another model: every mismatch is named in one error.
            other = os.path.join(tmp, "other.safetensors")
            kiln_run("--init-weights", other, DEMO_SO)
            with self.assertRaises(kiln.InvalidWeightsError) as caught:
                kiln.Weights(model, other)
            self.assertIsInstance(caught.exception, ValueError)
            self.assertIn("embed.weight", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
