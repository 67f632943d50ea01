"""kiln.Session: inputs converted or read in place, outputs owned by the caller, states,
stats and options, on the shipped translator."""

import gc
import unittest

import numpy as np

import kiln
from kilntest import sources, translator


class SessionTest(unittest.TestCase):
    def setUp(self):
        self.model, self.weights = translator()
        self.rng = np.random.default_rng(15)

    def test_outputs_outlive_later_runs_and_the_session(self):
        session = kiln.Session(self.model, self.weights)
        ids_a, lengths = sources(self.rng, 3, 6)
        ids_b, _ = sources(self.rng, 3, 6)
        a = session.run("encode", src_ids=ids_a, src_lengths=lengths)["memory"]
        kept = a.copy()
        # The same shapes again: the session reuses the very memory a was read from.
        b = session.run("encode", src_ids=ids_b, src_lengths=lengths)["memory"]
        self.assertFalse(np.array_equal(a, b))
        np.testing.assert_array_equal(a, kept)
        self.assertTrue(a.flags.owndata and a.flags.writeable and a.flags.c_contiguous)
        a[0, 0, 0] += 1.0  # the caller's own array: writing it touches no session
        del session
        gc.collect()
        np.testing.assert_array_equal(b, b.copy())
        self.assertEqual(a.shape, (3, 6, 128))

    def test_inputs_of_any_layout_and_convertible_dtype(self):
        session = kiln.Session(self.model, self.weights)
        ids, lengths = sources(self.rng, 2, 5)
        want = session.run("encode", src_ids=ids.astype(np.int32),
                           src_lengths=lengths.astype(np.int32))["memory"]
        self.assertGreater(np.abs(want).max(), 0.1)
        wide = np.zeros((2, 10), np.int64)
        wide[:, ::2] = ids  # a strided view
        for given_ids, given_lengths in [
            (ids, lengths),  # int64, numpy's default
            (ids.tolist(), lengths.tolist()),  # lists
            (np.asfortranarray(ids.astype(np.int32)), lengths),  # Fortran order
            (wide[:, ::2], lengths.astype(np.uint8)),  # strided; unsigned
            (ids.astype(">i4"), lengths.astype(np.int16)),  # big-endian; narrow
        ]:
            got = session.run("encode", src_ids=given_ids, src_lengths=given_lengths)
            np.testing.assert_array_equal(got["memory"], want)
        # A float32 input given as float64 (exactly representable) or int: the same bits.
        tgt = np.array([[1, 8, 9], [1, 20, 30]], np.int32)
        logits = session.run("decode", tgt_ids=tgt, memory=want, src_lengths=lengths)
        for memory in [want.astype(np.float64), np.ascontiguousarray(want[:, :, ::-1])[
                :, :, ::-1]]:
            again = session.run("decode", tgt_ids=tgt, memory=memory, src_lengths=lengths)
            np.testing.assert_array_equal(again["logits"], logits["logits"])
        # The caller's arrays are only read.
        np.testing.assert_array_equal(wide[:, ::2], ids)

    def test_states_get_gather_clear(self):
        session = kiln.Session(self.model, self.weights)
        ids, lengths = sources(self.rng, 2, 4)
        memory = session.run("encode", src_ids=ids, src_lengths=lengths)["memory"]
        self.assertEqual(
            session.run("decode_start", memory=memory, src_lengths=lengths), {})
        name = "transformer.decoder.layers.1.multihead_attn.memory_k"
        before = session.state(name)
        self.assertEqual(before.shape[0], 2)
        self.assertGreater(np.abs(before).max(), 0.1)
        session.gather_states([1, 0, 1])
        after = session.state(name)
        np.testing.assert_array_equal(after, before[[1, 0, 1]])
        self.assertEqual(session.stats.state_rows_copied, 3)
        # A step over the gathered batch runs on the reordered caches.
        logits = session.run("decode_step", tgt_ids=[[1], [1], [1]], step=0,
                             src_lengths=lengths[[1, 0, 1]])["logits"]
        self.assertEqual(logits.shape, (3, 45))
        # Rows 0 and 2 hold the same source (to rounding: rows take different paths
        # through the vectorized kernels); row 1 another.
        np.testing.assert_allclose(logits[0], logits[2], rtol=1e-5, atol=1e-5)
        self.assertGreater(np.abs(logits[0] - logits[1]).max(), 1e-2)
        with self.assertRaisesRegex(kiln.InvalidArgumentError,
                                    r"rows\[0\] is 5, outside the batch of 3 rows"):
            session.gather_states([5])
        session.clear_states()
        with self.assertRaisesRegex(kiln.FailedPreconditionError, name):
            session.state(name)
        with self.assertRaises(kiln.NotFoundError):
            session.state("no_such_state")
        np.testing.assert_array_equal(after, before[[1, 0, 1]])  # still the caller's

    def test_stats_and_options(self):
        session = kiln.Session(self.model, self.weights)
        ids, lengths = sources(self.rng, 2, 4)
        for _ in range(3):
            session.run("encode", src_ids=ids, src_lengths=lengths)
        stats = session.stats
        self.assertEqual(stats.runs, 3)
        self.assertGreater(stats.temp_bytes, 0)
        self.assertEqual(stats.temp_allocations, 2)  # arena and output, kept for reuse
        fresh = kiln.Session(self.model, self.weights, reuse_temps=False)
        for _ in range(3):
            fresh.run("encode", src_ids=ids, src_lengths=lengths)
        self.assertEqual(fresh.stats.temp_allocations, 6)
        tight = kiln.Session(self.model, self.weights, max_temp_bytes=1000)
        with self.assertRaises(kiln.ResourceExhaustedError) as caught:
            tight.run("encode", src_ids=ids, src_lengths=lengths)
        self.assertIsInstance(caught.exception, MemoryError)
        self.assertIn("1000", str(caught.exception))
        self.assertIs(session.model, self.model)
        self.assertIs(session.weights, self.weights)


if __name__ == "__main__":
    unittest.main()
