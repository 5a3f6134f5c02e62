#!/usr/bin/env python3
"""Tests of pytorch_peers.py: the files it reads of a training step and its
message where PyTorch is not installed (no PyTorch needed), and, where
PyTorch is installed, the check of its step against this runtime's and the
filter layouts. ctest runs it as bench.pytorch_peers."""

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
import pytorch_peers  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def write_step(folder, name, kind, loss, tensors):
    """What train_bench's ag_bench::write_training_step writes."""
    for tensor, value in tensors.items():
        value.astype(peers.np.float32).tofile(os.path.join(folder, f"{name}.{tensor}.f32"))
    with open(os.path.join(folder, name + ".json"), "w") as f:
        json.dump({"kind": kind, "learning_rate": 0.5, "loss": loss,
                   "tensors": [[t, list(v.shape)] for t, v in tensors.items()]}, f)


def mlp_tensors(rng):
    np = peers.np
    return {"x": rng.random((4, 3)), "labels": np.array([0, 1, 1, 0]),
            "w1": rng.standard_normal((3, 5)), "b1": np.zeros(5),
            "w2": rng.standard_normal((5, 2)), "b2": np.zeros(2)}


@unittest.skipIf(peers.np is None, "numpy is not installed")
class PytorchPeersTest(unittest.TestCase):
    def test_reads_a_steps_tensors_with_their_shapes(self):
        np = peers.np
        with tempfile.TemporaryDirectory() as d:
            write_step(d, "mlp_step", "mlp", 2.25, {"x": np.arange(6).reshape(2, 3),
                                                    "labels": np.array([1, 0])})
            kind, rate, loss, tensors = pytorch_peers.load_step(d, "mlp_step")
        self.assertEqual((kind, rate, loss), ("mlp", 0.5, 2.25))
        self.assertEqual(list(tensors), ["x", "labels"])
        self.assertEqual((tensors["x"].shape, tensors["x"][1, 2]), ((2, 3), 5.0))
        self.assertEqual(tensors["labels"].tolist(), [1.0, 0.0])

    def test_without_pytorch_it_says_so_and_succeeds(self):
        out = io.StringIO()
        argv = ["pytorch_peers.py", "--models", "unused", "--results", "unused"]
        with mock.patch.dict(sys.modules, {"torch": None}), mock.patch.object(sys, "argv", argv), \
                contextlib.redirect_stdout(out):
            code = pytorch_peers.main()
        self.assertEqual(code, 0)
        self.assertIn("PyTorch is not installed", out.getvalue())

    @unittest.skipIf(torch is None, "PyTorch is not installed: its step is not checked")
    def test_a_step_that_agrees_passes_and_one_that_does_not_is_named(self):
        tensors = {k: v.astype(peers.np.float32) for k, v in
                   mlp_tensors(peers.np.random.default_rng(1)).items()}
        reference = pytorch_peers.TorchStep(torch, "mlp", 0.5, tensors)
        loss = reference.step().item()
        for name, value in reference.weights().items():
            tensors[name + ".updated"] = value
        step = pytorch_peers.TorchStep(torch, "mlp", 0.5, tensors)
        self.assertIsNone(pytorch_peers.disagreement(step, step.step().item(), loss, tensors))
        self.assertRegex(pytorch_peers.disagreement(step, loss + 0.1, loss, tensors), r"^loss ")
        tensors["w2.updated"] = tensors["w2.updated"] + 0.01
        self.assertRegex(pytorch_peers.disagreement(step, loss, loss, tensors),
                         r"^w2 after one step \(max \|difference\| 0\.01")

    @unittest.skipIf(torch is None, "PyTorch is not installed: the layouts are not checked")
    def test_filters_go_to_oihw_and_back(self):
        hwio = torch.arange(2 * 3 * 4 * 5, dtype=torch.float32).reshape(2, 3, 4, 5)
        oihw = pytorch_peers.hwio_to_oihw(hwio)
        self.assertEqual(tuple(oihw.shape), (5, 4, 2, 3))
        self.assertEqual(oihw[4, 3, 1, 2].item(), hwio[1, 2, 3, 4].item())
        self.assertTrue(torch.equal(pytorch_peers.oihw_to_hwio(oihw), hwio))


if __name__ == "__main__":
    unittest.main()
