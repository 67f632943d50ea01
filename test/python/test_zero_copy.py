"""Outputs handed over without a copy: a large output's array owns the session's block
(it survives later runs and the session), small outputs and a state's memory are copied."""

import gc
import os
import unittest

import numpy as np

import kiln
from kilntest import sources, translator

STATE_SO = os.environ["KILN_STATE_SO"]


def handed_over(array):
    """Whether array is a view of a detached block (its base the capsule that frees it)
    rather than memory numpy allocated."""
    return (not array.flags.owndata and type(array.base).__name__ == "PyCapsule"
            and array.ctypes.data % 64 == 0)  # the runtime's blocks are 64-byte aligned


class ZeroCopyTest(unittest.TestCase):
    def setUp(self):
        self.model, self.weights = translator()
        self.rng = np.random.default_rng(151)

    def test_large_output_is_the_sessions_block_and_outlives_it(self):
        session = kiln.Session(self.model, self.weights)
        ids, lengths = sources(self.rng, 4, 40)  # memory: 4 x 40 x 128 f32, 80 KiB
        a = session.run("encode", src_ids=ids, src_lengths=lengths)["memory"]
        self.assertTrue(handed_over(a))
        self.assertTrue(a.flags.writeable and a.flags.c_contiguous)
        self.assertEqual((a.shape, a.dtype), ((4, 40, 128), np.float32))
        kept = a.copy()
        allocations = session.stats.temp_allocations
        # The same shapes again: without the detach the session would reuse a's memory.
        other, _ = sources(self.rng, 4, 40)
        b = session.run("encode", src_ids=other, src_lengths=lengths)["memory"]
        self.assertEqual(session.stats.temp_allocations, allocations + 1)  # b's block
        self.assertNotEqual(a.ctypes.data, b.ctypes.data)
        self.assertGreater(np.abs(a - b).max(), 0.1)
        np.testing.assert_array_equal(a, kept)
        # The same inputs give the same values in a fresh block.
        again = session.run("encode", src_ids=ids, src_lengths=lengths)["memory"]
        np.testing.assert_array_equal(again, kept)
        a[0, 0, 0] += 1.0  # the caller's own memory
        kept[0, 0, 0] += 1.0
        del session, b, again
        gc.collect()
        np.testing.assert_array_equal(a, kept)
        view = a[1:3]  # a view keeps the block alive through its base chain
        del a
        gc.collect()
        np.testing.assert_array_equal(view, kept[1:3])

    def test_small_output_is_copied(self):
        session = kiln.Session(self.model, self.weights)
        ids, lengths = sources(self.rng, 2, 5)  # memory: 5 KiB
        out = session.run("encode", src_ids=ids, src_lengths=lengths)["memory"]
        self.assertTrue(out.flags.owndata and out.flags.writeable)
        self.assertIsNone(out.base)
        allocations = session.stats.temp_allocations
        session.run("encode", src_ids=ids, src_lengths=lengths)
        self.assertEqual(session.stats.temp_allocations, allocations)  # reused

    def test_state_output_is_copied(self):
        model = kiln.Model(STATE_SO)  # "whole" outputs the state cache [B, 3] itself
        session = kiln.Session(model)
        rows = 6000  # 72 KB: over the 16 KiB from which outputs are handed over
        session.run("start", batch=np.zeros(rows, np.int32))
        v = self.rng.standard_normal((rows, 1)).astype(np.float32)
        session.run("step", v=v, pos=np.int32(0), limit=np.zeros(rows, np.int32))
        cache = session.run("whole")["cache"]
        self.assertTrue(cache.flags.owndata)
        np.testing.assert_array_equal(cache[:, 0], v[:, 0])
        np.testing.assert_array_equal(cache, session.state("cache"))
        session.gather_states(list(range(rows - 1, -1, -1)))
        session.clear_states()
        np.testing.assert_array_equal(cache[:, 0], v[:, 0])


if __name__ == "__main__":
    unittest.main()
