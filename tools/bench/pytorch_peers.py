#!/usr/bin/env python3
"""Runs train_bench's training steps in PyTorch, beside this runtime's times.

train_bench writes each training step (the MLP's and LeNet-5's) to a folder
when AG_BENCH_MODELS names it (tools/bench/run.sh does so when PyTorch or
ONNX Runtime is installed): the batch, the labels, the initial weights, and
this runtime's loss and weights after one step. This script builds the same
step in PyTorch eager (torch.optim.SGD on one intra-op thread, NCHW images
as a PyTorch user has them), runs one step from those weights and checks
its loss and updated weights against this runtime's, then times it as
train_bench times its rows (median of five runs of CPU time per step) and
prints one line per workload: this runtime's graph and eager steps,
PyTorch's, and the graph's time over PyTorch's (below 1: faster here).

  pytorch_peers.py --models DIR --results train_bench.json [--out pytorch.json]

With --out, PyTorch's times are also written there as Google Benchmark's
JSON (a median row <workload>/pytorch each, CPU time), which
tools/bench/summarize.py reads beside train_bench's.

PyTorch is a peer for comparison, never a dependency: without it the script
says so and exits 0.
"""
import json
import os
import sys

import peers


def load_step(models, name):
    """(kind, learning rate, loss, {tensor: float32 array}) of a written step."""
    with open(os.path.join(models, name + ".json")) as f:
        step = json.load(f)
    tensors = {}
    for tensor, shape in step["tensors"]:
        path = os.path.join(models, f"{name}.{tensor}.f32")
        tensors[tensor] = peers.np.fromfile(path, dtype=peers.np.float32).reshape(shape)
    return step["kind"], step["learning_rate"], step["loss"], tensors


# Each kind of step: its weights in the written order, and how a weight goes
# from this runtime's layout to PyTorch's and back (HWIO filters against
# OIHW ones).
def hwio_to_oihw(w):
    return w.permute(3, 2, 0, 1).contiguous()


def oihw_to_hwio(w):
    return w.permute(2, 3, 1, 0)


def mlp_loss(torch, p, x, labels):
    h = torch.relu(torch.addmm(p["b1"], x, p["w1"]))
    return torch.nn.functional.cross_entropy(torch.addmm(p["b2"], h, p["w2"]), labels)


def lenet_loss(torch, p, x, labels):
    h = torch.max_pool2d(torch.relu(torch.conv2d(x, p["conv1"], p["bias1"])), 2)
    h = torch.max_pool2d(torch.relu(torch.conv2d(h, p["conv2"], p["bias2"])), 2)
    h = h.permute(0, 2, 3, 1).reshape(x.shape[0], -1)  # flattened as NHWC, as the ag model
    h = torch.relu(torch.addmm(p["bias3"], h, p["dense1"]))
    h = torch.relu(torch.addmm(p["bias4"], h, p["dense2"]))
    return torch.nn.functional.cross_entropy(torch.addmm(p["bias5"], h, p["dense3"]), labels)


STEPS = {
    # kind: (loss, weights, filters in HWIO, images in NHWC, (absolute, relative) tolerance)
    "mlp": (mlp_loss, ["w1", "b1", "w2", "b2"], set(), False, (1e-5, 1e-4)),
    "lenet": (lenet_loss, ["conv1", "bias1", "conv2", "bias2", "dense1", "bias3", "dense2",
                           "bias4", "dense3", "bias5"], {"conv1", "conv2"}, True, (1e-4, 1e-3)),
}


class TorchStep:
    """One workload's training step in PyTorch, from the written tensors."""

    def __init__(self, torch, kind, learning_rate, tensors):
        self.torch = torch
        self.loss_fn, self.names, self.filters, nhwc, self.tolerance = STEPS[kind]
        self.params = {}
        for name in self.names:
            w = torch.from_numpy(tensors[name].copy())
            self.params[name] = (hwio_to_oihw(w) if name in self.filters else w).requires_grad_()
        x = torch.from_numpy(tensors["x"].copy())
        self.x = x.permute(0, 3, 1, 2).contiguous() if nhwc else x
        self.labels = torch.from_numpy(tensors["labels"]).long()
        self.optimizer = torch.optim.SGD(list(self.params.values()), lr=learning_rate)

    def step(self):
        self.optimizer.zero_grad()
        loss = self.loss_fn(self.torch, self.params, self.x, self.labels)
        loss.backward()
        self.optimizer.step()
        return loss

    def weights(self):
        """The current weights in this runtime's layout, as numpy arrays."""
        out = {}
        for name, w in self.params.items():
            w = w.detach()
            out[name] = (oihw_to_hwio(w) if name in self.filters else w).numpy()
        return out


def disagreement(step, loss, want_loss, tensors):
    """Where PyTorch's first step differs from this runtime's, or None."""
    absolute, relative = step.tolerance
    if abs(loss - want_loss) > absolute + relative * abs(want_loss):
        return f"loss {loss} against {want_loss}"
    for name, got in step.weights().items():
        want = tensors[name + ".updated"]
        if not peers.np.allclose(got, want, rtol=relative, atol=absolute):
            return f"{name} after one step (max |difference| {peers.np.max(peers.np.abs(got - want))})"
    return None


def main():
    a = peers.arguments(__doc__, "train_bench", "PyTorch")
    try:
        import torch
    except ImportError:
        print("pytorch_peers.py: PyTorch is not installed (pip install torch): no PyTorch rows")
        return 0
    torch.set_num_threads(1)

    ours = peers.our_times(a.results)
    # A training step's .json has a batch beside it (onnx_bench's models do not).
    steps = (f[:-len(".json")] for f in os.listdir(a.models) if f.endswith(".json"))
    names = sorted(n for n in steps if os.path.exists(os.path.join(a.models, n + ".x.f32")))
    if not names:
        print(f"pytorch_peers.py: error: no training step in {a.models}; run train_bench with "
              f"AG_BENCH_MODELS={a.models}", file=sys.stderr)
        return 1
    print(f"PyTorch {torch.__version__}, eager, one thread, against train_bench (CPU time per step, medians)")
    print(f"{'workload':<20} {'graph here':>12} {'eager here':>12} {'PyTorch':>13} {'graph/PyTorch':>14}")
    status = 0
    peer_times = {}
    for name in names:
        kind, learning_rate, want_loss, tensors = load_step(a.models, name)
        if kind not in STEPS:
            print(f"pytorch_peers.py: error: {name}: no PyTorch step of kind '{kind}' (known: "
                  f"{', '.join(sorted(STEPS))})", file=sys.stderr)
            status = 1
            continue
        step = TorchStep(torch, kind, learning_rate, tensors)
        why = disagreement(step, step.step().item(), want_loss, tensors)
        if why:
            print(f"pytorch_peers.py: error: {name}: PyTorch's step differs from this runtime's: {why}",
                  file=sys.stderr)
            status = 1
            continue
        peer = peer_times[name] = peers.cpu_ns_per_call(step.step)
        here = ours.get(name, {})
        graph, eager = here.get("graph"), here.get("eager")
        cells = [peers.format_ns(v) if v else "-" for v in (graph, eager)]
        ratio = f"{graph / peer:.2f}x" if graph else "-"
        print(f"{name:<20} {cells[0]:>12} {cells[1]:>12} {peers.format_ns(peer):>13} {ratio:>14}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(peers.results_json(peer_times, "pytorch", torch.__version__), f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
