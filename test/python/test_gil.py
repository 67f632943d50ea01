"""The GIL is released while kernels run: another Python thread makes progress in the
middle of a Session.run and of a kiln.generate."""

import threading
import time
import unittest

import numpy as np

import kiln
from kilntest import translator


def main_thread_progress(call):
    """Runs call() on another thread; returns how many times this thread woke up (every
    millisecond it can) inside the middle half of the call, and the call's duration. A
    call that held the GIL would leave no such wake-ups."""
    span = {}

    def work():
        span["start"] = time.perf_counter()
        call()
        span["end"] = time.perf_counter()

    worker = threading.Thread(target=work)
    wakeups = []
    worker.start()
    while worker.is_alive():
        wakeups.append(time.perf_counter())
        time.sleep(0.001)
    worker.join()
    start, end = span["start"], span["end"]
    quarter = (end - start) / 4
    return sum(start + quarter < t < end - quarter for t in wakeups), end - start


class GilTest(unittest.TestCase):
    def setUp(self):
        self.model, self.weights = translator()
        rng = np.random.default_rng(15)
        self.ids = rng.integers(4, 45, (256, 8))
        self.lengths = np.full(256, 8)

    def test_run_releases_the_gil(self):
        session = kiln.Session(self.model, self.weights)
        memory = session.run("encode", src_ids=self.ids, src_lengths=self.lengths)["memory"]
        targets = np.ones((256, 32), np.int32)
        wakeups, seconds = main_thread_progress(lambda: session.run(
            "decode", tgt_ids=targets, memory=memory, src_lengths=self.lengths))
        self.assertGreaterEqual(wakeups, 3, f"one run of {seconds:.3f} s")

    def test_generate_releases_the_gil(self):
        decoder = kiln.PrefixDecoder(self.model, self.weights)
        options = kiln.GenerateOptions(search="beam", beam_size=2, max_length=13)
        sources = [list(row) for row in self.ids[:16]]
        wakeups, seconds = main_thread_progress(lambda: kiln.generate(decoder, sources,
                                                                      options))
        self.assertGreaterEqual(wakeups, 3, f"one generate of {seconds:.3f} s")

    def test_a_busy_session_refuses_a_second_thread(self):
        session = kiln.Session(self.model, self.weights)
        targets = np.ones((256, 32), np.int32)
        memory = session.run("encode", src_ids=self.ids, src_lengths=self.lengths)["memory"]
        errors = []

        def run():
            try:
                session.run("decode", tgt_ids=targets, memory=memory,
                            src_lengths=self.lengths)
            except kiln.FailedPreconditionError as e:
                errors.append(str(e))

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Four overlapping calls of 0.1 s or more: the ones that find it busy are refused.
        self.assertTrue(errors)
        self.assertTrue(all(e == "session is running on another thread" for e in errors))


if __name__ == "__main__":
    unittest.main()
