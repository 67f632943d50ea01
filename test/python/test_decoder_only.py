"""kiln.PrefillDecoder and kiln.generate on the e2e tests' tiny GPT (a decoder-only model)
with random weights: the same tokens as kiln-run generate, sampling that a seed
reproduces, and its greedy limit."""

import os
import tempfile
import unittest

import kiln
from kilntest import kiln_run

TINY_GPT_SO = os.environ["KILN_TINY_GPT_SO"]
PROMPTS = [[5, 7, 9], [1, 2, 3, 4, 5, 6]]


class DecoderOnlyTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.weights_path = os.path.join(cls.dir.name, "gpt.safetensors")
        kiln_run("--init-weights", cls.weights_path, TINY_GPT_SO, "--seed", "5",
                 "--scale", "0.5")
        cls.model = kiln.Model(TINY_GPT_SO)
        cls.weights = kiln.Weights(cls.model, cls.weights_path)
        cls.decoder = kiln.PrefillDecoder(cls.model, cls.weights)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def tokens(self, **options):
        opts = kiln.GenerateOptions(max_length=6, eos_id=-1, **options)
        return [r.best.tokens for r in kiln.generate(self.decoder, PROMPTS, opts)]

    def test_greedy_is_kiln_run_generate(self):
        self.assertEqual(self.decoder.capacity, 16)
        self.assertEqual(self.decoder.vocab_size, 23)
        args = ["generate", TINY_GPT_SO, "--weights", self.weights_path,
                "--max-new-tokens", "6"]
        for prompt in PROMPTS:
            args += ["--prompt-ids", ",".join(map(str, prompt))]
        lines = kiln_run(*args).splitlines()
        self.assertEqual([[int(t) for t in line.split(",")] for line in lines],
                         self.tokens())

    def test_sampling_is_seeded_and_greedy_at_top_k_1(self):
        sampled = self.tokens(search="sample", temperature=1.5, seed=11)
        self.assertEqual(self.tokens(search="sample", temperature=1.5, seed=11), sampled)
        self.assertNotEqual(self.tokens(search="sample", temperature=1.5, seed=12),
                            sampled)
        self.assertEqual(self.tokens(search="sample", top_k=1, seed=11), self.tokens())
        self.assertEqual(kiln.GenerateOptions(search="sample").search, "sample")

    def test_errors(self):
        with self.assertRaisesRegex(kiln.InvalidArgumentError,
                                    "id 23 is not in the vocabulary"):
            kiln.generate(self.decoder, [[23]], kiln.GenerateOptions(max_length=2))
        with self.assertRaisesRegex(kiln.InvalidArgumentError, "'greedy', 'beam' or"):
            kiln.GenerateOptions(search="nucleus")


if __name__ == "__main__":
    unittest.main()
