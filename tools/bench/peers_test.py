#!/usr/bin/env python3
"""Tests of peers.py that need no ONNX Runtime: the times it reads from
onnx_bench's results, the files it reads of a model, the results it writes
for the summary, and its message and exit code where onnxruntime is not
installed. ctest runs it as bench.peers."""

import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402


def row(run_name, aggregate, cpu_time, unit):
    return {"name": f"{run_name}_{aggregate}", "run_name": run_name, "run_type": "aggregate",
            "aggregate_name": aggregate, "cpu_time": cpu_time, "time_unit": unit}


class PeersTest(unittest.TestCase):
    def test_reads_the_median_cpu_times_in_nanoseconds(self):
        results = {"benchmarks": [row("dense/loaded", "mean", 9.0, "ms"),
                                  row("dense/loaded", "median", 1.5, "ms"),
                                  row("dense/traced", "median", 1700.0, "us"),
                                  row("add_one/loaded", "median", 173.0, "ns")]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "onnx_bench.json")
            with open(path, "w") as f:
                json.dump(results, f)
            times = peers.our_times(path)
        self.assertEqual(times, {"dense": {"loaded": 1.5e6, "traced": 1.7e6},
                                 "add_one": {"loaded": 173.0}})

    @unittest.skipIf(peers.np is None, "numpy is not installed")
    def test_reads_a_models_input_and_output_with_their_shapes(self):
        with tempfile.TemporaryDirectory() as d:
            peers.np.arange(6, dtype=peers.np.float32).tofile(os.path.join(d, "m.input.f32"))
            peers.np.array([2.5, -1], dtype=peers.np.float32).tofile(os.path.join(d, "m.output.f32"))
            with open(os.path.join(d, "m.json"), "w") as f:
                json.dump({"input_shape": [2, 3], "output_shape": [2]}, f)
            x, y = peers.load_case(d, "m")
        self.assertEqual(x.shape, (2, 3))
        self.assertEqual(x[1, 2], 5.0)
        self.assertEqual(y.tolist(), [2.5, -1.0])

    @unittest.skipIf(peers.np is None, "numpy is not installed")
    def test_gives_a_model_its_input_type(self):
        x = peers.np.array([3.0, 97.0], dtype=peers.np.float32)
        ids = peers.as_input_type(x, "tensor(int64)")
        self.assertEqual((ids.dtype, ids.tolist()), (peers.np.dtype("int64"), [3, 97]))
        self.assertEqual(peers.as_input_type(x, "tensor(float)").dtype, peers.np.dtype("float32"))
        with self.assertRaisesRegex(ValueError, r"input type tensor\(string\) is not one of"):
            peers.as_input_type(x, "tensor(string)")

    def test_writes_its_times_as_median_rows_for_the_summary(self):
        doc = peers.results_json({"resnet18": 30.5e6, "add_one": 900.0}, "onnxruntime", "1.32.0")
        self.assertEqual(doc["context"], {"onnxruntime": "1.32.0"})
        self.assertEqual(doc["benchmarks"], [
            {"name": "add_one/onnxruntime_median", "run_name": "add_one/onnxruntime",
             "run_type": "aggregate", "aggregate_name": "median", "cpu_time": 900.0,
             "time_unit": "ns"},
            {"name": "resnet18/onnxruntime_median", "run_name": "resnet18/onnxruntime",
             "run_type": "aggregate", "aggregate_name": "median", "cpu_time": 30.5e6,
             "time_unit": "ns"}])

    def test_without_onnxruntime_it_says_so_and_succeeds(self):
        out = io.StringIO()
        argv = ["peers.py", "--models", "unused", "--results", "unused"]
        with mock.patch.dict(sys.modules, {"onnxruntime": None}), mock.patch.object(sys, "argv", argv), \
                contextlib.redirect_stdout(out):
            code = peers.main()
        self.assertEqual(code, 0)
        self.assertIn("onnxruntime is not installed", out.getvalue())


if __name__ == "__main__":
    unittest.main()
