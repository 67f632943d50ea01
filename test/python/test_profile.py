"""Session options num_threads and profile, and the profile read from Python, on the
shipped translator's encoder."""

import json
import os
import tempfile
import unittest
from collections import Counter

import numpy as np

import kiln
from kilntest import translator


class ProfileTest(unittest.TestCase):
    def setUp(self):
        self.model, self.weights = translator()
        rng = np.random.default_rng(152)
        self.inputs = dict(src_ids=rng.integers(4, 45, (2, 7)), src_lengths=[7, 5])
        manifest = json.loads(self.model.manifest)
        entry = next(e for e in manifest["entries"] if e["name"] == "encode")
        self.steps = entry["steps"]
        self.kernel_names = manifest["kernels"]

    def test_rows_calls_and_trace_cover_every_kernel_call(self):
        session = kiln.Session(self.model, self.weights, profile=True)
        runs = 3
        for _ in range(runs):
            session.run("encode", **self.inputs)
        per_run = Counter(self.kernel_names[s["kernel"]] for s in self.steps)
        rows = session.profile(by="kernel")
        self.assertEqual({r["name"]: r["calls"] for r in rows},
                         {k: runs * n for k, n in per_run.items()})
        for r in rows:
            self.assertLessEqual(r["min_ns"], r["max_ns"])
            self.assertLessEqual(r["max_ns"], r["total_ns"])
            self.assertGreater(r["min_ns"], 0)
        totals = [r["total_ns"] for r in rows]
        self.assertEqual(totals, sorted(totals, reverse=True))
        by_line = session.profile(by="line")
        self.assertEqual({r["name"]: r["calls"] for r in by_line},
                         {k: runs * n for k, n in
                          Counter(s.get("loc", "") for s in self.steps).items()})
        self.assertEqual(sum(r["total_ns"] for r in by_line), sum(totals))

        calls = session.profile_calls()
        self.assertEqual(len(calls), runs * len(self.steps))
        self.assertEqual([(c["run"], c["step"], c["kernel"]) for c in calls],
                         [(run, i, self.kernel_names[s["kernel"]])
                          for run in range(runs) for i, s in enumerate(self.steps)])
        self.assertEqual({c["entry"] for c in calls}, {"encode"})
        starts = [c["start_ns"] for c in calls]
        self.assertEqual(starts, sorted(starts))

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            session.write_trace(path)
            with open(path) as f:
                events = json.load(f)["traceEvents"]
        slices = [e for e in events if e.get("ph") == "X"]
        self.assertEqual(len(slices), len(calls))
        self.assertEqual([e["name"] for e in slices], [c["kernel"] for c in calls])

        session.reset_profile()
        self.assertEqual(session.profile_calls(), [])
        self.assertEqual(session.profile(), [])
        session.run("encode", **self.inputs)
        self.assertEqual({c["run"] for c in session.profile_calls()}, {0})

    def test_errors(self):
        plain = kiln.Session(self.model, self.weights)
        plain.run("encode", **self.inputs)
        for call in [plain.profile, plain.profile_calls, plain.reset_profile,
                     lambda: plain.write_trace("unused.json")]:
            with self.assertRaisesRegex(kiln.FailedPreconditionError,
                                        "the session does not profile"):
                call()
        profiled = kiln.Session(self.model, self.weights, profile=True)
        with self.assertRaisesRegex(kiln.InvalidArgumentError,
                                    "by is 'op'; expected 'kernel' or 'line'"):
            profiled.profile(by="op")

    def test_num_threads(self):
        want = kiln.Session(self.model, self.weights).run("encode", **self.inputs)
        for threads in (1, 2):
            session = kiln.Session(self.model, self.weights, num_threads=threads)
            got = session.run("encode", **self.inputs)
            np.testing.assert_allclose(got["memory"], want["memory"], rtol=1e-5,
                                       atol=1e-6)
        for bad in (-1, 257):
            with self.assertRaisesRegex(
                    kiln.InvalidArgumentError,
                    f"kiln_session_options.num_threads is {bad}; expected 0 "
                    r"\(the default\) to 256"):
                kiln.Session(self.model, self.weights, num_threads=bad)


if __name__ == "__main__":
    unittest.main()
