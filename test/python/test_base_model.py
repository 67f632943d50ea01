"""The base Transformer run from Python gives kiln-run's outputs bit for bit, on fresh
random weights and inputs."""

import os
import tempfile
import unittest

import numpy as np

import kiln
from kilntest import BASE_SO, kiln_run


class BaseModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.weights_path = os.path.join(cls.tmp.name, "base.safetensors")
        kiln_run("--init-weights", cls.weights_path, BASE_SO, "--seed", "15")
        cls.model = kiln.Model(BASE_SO)
        cls.session = kiln.Session(cls.model, kiln.Weights(cls.model, cls.weights_path))
        cls.rng = np.random.default_rng(15)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def same_as_kiln_run(self, entry, **inputs):
        args = [BASE_SO, "--weights", self.weights_path, "--entry", entry, "--print", "none"]
        for name, value in inputs.items():
            path = os.path.join(self.tmp.name, f"{entry}.{name}.npy")
            np.save(path, value)
            args += ["--input", f"{name}={path}"]
        saved = os.path.join(self.tmp.name, entry)
        kiln_run(*args, "--save-outputs", saved)
        ours = self.session.run(entry, **inputs)
        self.assertEqual(sorted(ours), sorted(o.name for o in self.model.entry(entry).outputs))
        for name, got in ours.items():
            want = np.load(os.path.join(saved, f"{name}.npy"))
            self.assertEqual((got.dtype, got.shape), (want.dtype, want.shape))
            self.assertGreater(np.count_nonzero(want), want.size // 2)  # not a blank
            self.assertTrue(np.array_equal(got, want), f"{entry}: {name} differs")
        return ours

    def test_encode_and_decode(self):
        lengths = np.array([7, 4], np.int32)
        ids = self.rng.integers(0, 8000, (2, 7)).astype(np.int32)
        memory = self.same_as_kiln_run("encode", src_ids=ids, src_lengths=lengths)["memory"]
        targets = self.rng.integers(0, 8000, (2, 5)).astype(np.int32)
        self.same_as_kiln_run("decode", tgt_ids=targets, memory=memory,
                              src_lengths=lengths)


if __name__ == "__main__":
    unittest.main()
