"""kiln.Translator and kiln.generate on the shipped translator: the held-out set, the
PyTorch reference's beam search, and the same output as kiln-run translate."""

import os
import time
import unittest

import kiln
from kilntest import (TRANSLATOR_CONFIG, TRANSLATOR_DIR, TRANSLATOR_SO,
                      TRANSLATOR_WEIGHTS, kiln_run)


def rows(name):
    """The tab-separated rows of a file beside the translator, comments skipped."""
    with open(os.path.join(TRANSLATOR_DIR, name)) as f:
        return [line.rstrip("\n").split("\t") for line in f
                if line.strip() and not line.startswith("#")]


def kiln_run_translate(texts, *options):
    """kiln-run translate's lines for texts: (text, translation, score as printed)."""
    out = kiln_run("translate", TRANSLATOR_SO, "--weights", TRANSLATOR_WEIGHTS,
                   "--config", TRANSLATOR_CONFIG, *options, *texts)
    return [tuple(line.split("\t")) for line in out.splitlines()[:len(texts)]]


class TranslatorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.translator = kiln.Translator(TRANSLATOR_SO, TRANSLATOR_WEIGHTS,
                                         TRANSLATOR_CONFIG)

    def test_held_out_greedy(self):
        pairs = rows("heldout.tsv")
        self.assertEqual(len(pairs), 200)
        begin = time.perf_counter()
        correct = 0
        # Batches of 20 consecutive lines mix 3- to 8-digit sources: padding is exercised.
        for b in range(0, len(pairs), 20):
            batch = pairs[b:b + 20]
            for (source, want), got in zip(batch, self.translator.translate(
                    [source for source, _ in batch])):
                self.assertEqual(got.source, source)
                correct += got.text == want
        print(f"\ngreedy held-out exact match: {correct}/{len(pairs)} in "
              f"{time.perf_counter() - begin:.2f} s")
        self.assertGreaterEqual(correct / len(pairs), 0.98)

    def test_same_as_kiln_run_translate(self):
        texts = [source for source, _ in rows("heldout.tsv")[:12]] + ["4096", "073812"]
        for options, kwargs in [((), {}),
                                (("--beam", "4", "--alpha", "0.6"),
                                 {"beam_size": 4, "alpha": 0.6}),
                                (("--beam", "3", "--max-len", "5"),
                                 {"beam_size": 3, "max_length": 5})]:
            ours = [(t.source, t.text, f"{t.score:.6f}")
                    for t in self.translator.translate(texts, **kwargs)]
            self.assertEqual(ours, kiln_run_translate(texts, *options), options)

    def test_beam_matches_reference(self):
        want = {}
        for source, rank, text, score, raw in rows("beam_reference.tsv"):
            want.setdefault(source, []).append((text, float(score), float(raw)))
        got = self.translator.translate(list(want), beam_size=4, alpha=0.6,
                                        n_best=True, allow_over_length=True)
        for t in got:
            self.assertEqual(t.text, want[t.source][0][0], t.source)
            self.assertEqual(len(t.n_best), len(want[t.source]), t.source)
            for hyp, (text, score, raw) in zip(t.n_best, want[t.source]):
                self.assertEqual(hyp.text, text, t.source)
                self.assertAlmostEqual(hyp.score, score, delta=1e-3)
                self.assertAlmostEqual(hyp.raw_score, raw, delta=1e-3)
                self.assertTrue(hyp.finished)

    def test_prefix_decoder_agrees_with_the_cache(self):
        texts = ["809", "2189048", "40090"]
        plain = kiln.Translator(TRANSLATOR_SO, TRANSLATOR_WEIGHTS, TRANSLATOR_CONFIG,
                                cache=False)
        self.assertTrue(self.translator.cached)
        self.assertFalse(plain.cached)
        for a, b in zip(self.translator.translate(texts, beam_size=2),
                        plain.translate(texts, beam_size=2)):
            self.assertEqual(a.tokens, b.tokens)
            self.assertAlmostEqual(a.score, b.score, delta=1e-5)
        self.assertGreater(plain.decoder.decode_calls, 0)

    def test_generate_on_token_ids(self):
        model = kiln.Model(TRANSLATOR_SO)
        decoder = kiln.KVCacheDecoder(model, kiln.Weights(model, TRANSLATOR_WEIGHTS))
        vocab = kiln.Vocabulary.from_config(TRANSLATOR_CONFIG)
        self.assertEqual(len(vocab), 45)
        self.assertEqual(vocab.encode_source(" 4096\n"), [8, 4, 13, 10])
        options = kiln.GenerateOptions.for_vocabulary(vocab)
        self.assertEqual((options.search, options.max_length), ("greedy", 13))
        [result] = kiln.generate(decoder, [vocab.encode_source("4096")], options)
        self.assertEqual(vocab.decode_target(result.best.tokens), "four thousand ninety six")
        self.assertEqual(result.best.tokens[-1], vocab.eos_id)
        self.assertEqual(decoder.capacity, 64)
        self.assertEqual(decoder.step_calls, len(result.best.tokens))
        self.assertEqual(decoder.vocab_size, 45)


if __name__ == "__main__":
    unittest.main()
