"""Bad input raises a kiln.Error subclass carrying the runtime's message (or, for what the
bindings check before the runtime sees it, a message in the runtime's words)."""

import unittest

import numpy as np

import kiln
from kilntest import TRANSLATOR_CONFIG, translator


class RunErrorTest(unittest.TestCase):
    def setUp(self):
        model, weights = translator()
        self.session = kiln.Session(model, weights)
        self.ids = np.array([[8, 4, 13, 10], [5, 6, 7, 8]])
        self.lengths = np.array([4, 3])

    def raises(self, cls, message, entry, **inputs):
        with self.assertRaises(cls) as caught:
            self.session.run(entry, **inputs)
        self.assertIsInstance(caught.exception, kiln.Error)
        self.assertEqual(str(caught.exception), message)
        return caught.exception

    def test_wrong_dtype(self):
        e = self.raises(kiln.InvalidArgumentError,
                        "entry 'encode': input 'src_ids' has dtype float64, expected i32: "
                        "float64 does not convert to int32 without changing kind "
                        "(numpy's 'same_kind' rule)",
                        "encode", src_ids=self.ids * 1.0, src_lengths=self.lengths)
        self.assertIsInstance(e, ValueError)
        self.assertEqual(e.code, "INVALID_ARGUMENT")
        self.raises(kiln.InvalidArgumentError,
                    "entry 'encode': input 'src_lengths' has dtype <U1, expected i32: <U1 "
                    "does not convert to int32 without changing kind (numpy's "
                    "'same_kind' rule)",
                    "encode", src_ids=self.ids, src_lengths=["4", "3"])

    def test_integer_that_does_not_fit(self):
        self.raises(kiln.InvalidArgumentError,
                    "entry 'encode': input 'src_ids' holds 4294967300, which does not fit "
                    "i32", "encode", src_ids=self.ids + 2**32, src_lengths=self.lengths)

    def test_wrong_shapes(self):
        self.raises(kiln.InvalidArgumentError,
                    "entry 'encode': input 'src_ids' has rank 1, expected 2 [B, S]",
                    "encode", src_ids=self.ids[0], src_lengths=self.lengths)
        self.raises(kiln.InvalidArgumentError,
                    "entry 'encode': dimension 'B' is 2 in input 'src_ids' (dim 0 of "
                    "[2, 4]) but 3 in input 'src_lengths' (dim 0 of [3])",
                    "encode", src_ids=self.ids, src_lengths=[4, 3, 2])

    def test_values_out_of_bounds(self):
        self.raises(kiln.InvalidArgumentError,
                    "entry 'encode': input 'src_ids' element [0, 0] is 48, outside its "
                    "bounds [0, 44]", "encode", src_ids=self.ids + 40,
                    src_lengths=self.lengths)

    def test_unknown_entry_missing_and_unknown_inputs(self):
        e = self.raises(kiln.NotFoundError,
                        "model 'translator' has no entry 'encoder'; available entries: "
                        "encode, decode, decode_start, decode_step", "encoder")
        self.assertIsInstance(e, LookupError)
        self.raises(kiln.InvalidArgumentError,
                    "entry 'encode': missing input 'src_lengths' (it takes 'src_ids', "
                    "'src_lengths')", "encode", src_ids=self.ids)
        self.raises(kiln.NotFoundError,
                    "entry 'encode' has no input 'lengths'; its inputs are 'src_ids', "
                    "'src_lengths'", "encode", src_ids=self.ids, lengths=self.lengths)

    def test_states_before_they_are_set(self):
        with self.assertRaisesRegex(kiln.FailedPreconditionError, "decode_start"):
            self.session.run("decode_step", tgt_ids=[[1], [1]], step=0,
                             src_lengths=self.lengths)

    def test_wrong_argument_types(self):
        model, _ = translator()
        with self.assertRaisesRegex(TypeError, "model must be a kiln.Model"):
            kiln.Session("translator.so")
        with self.assertRaisesRegex(kiln.InvalidArgumentError, "weights"):
            kiln.Session(model)  # parameters but no weights


class GenerateErrorTest(unittest.TestCase):
    def test_vocabulary_and_options(self):
        vocab = kiln.Vocabulary.from_config(TRANSLATOR_CONFIG)
        with self.assertRaisesRegex(kiln.InvalidArgumentError,
                                    "character 'a' at position 2 of '40a6' is not in the "
                                    "vocabulary"):
            vocab.encode_source("40a6")
        with self.assertRaisesRegex(kiln.InvalidArgumentError,
                                    "9 characters; the model takes at most 8"):
            vocab.encode_source("123456789")
        with self.assertRaisesRegex(kiln.InvalidArgumentError,
                                    "'greedy', 'beam' or 'sample', got 'nucleus'"):
            kiln.GenerateOptions(search="nucleus")
        model, weights = translator()
        decoder = kiln.KVCacheDecoder(model, weights)
        with self.assertRaisesRegex(kiln.InvalidArgumentError,
                                    "maxLength must be at least 1, got 0"):
            kiln.generate(decoder, [[8, 4]], kiln.GenerateOptions(max_length=0))
        with self.assertRaisesRegex(kiln.NotFoundError, "config"):
            kiln.Vocabulary.from_config("/nonexistent/config.json")


if __name__ == "__main__":
    unittest.main()
