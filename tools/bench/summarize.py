#!/usr/bin/env python3
"""The benchmark summary: every workload of the main table (and the other
targets, and memory_bench's peak bytes) from the JSON files that Google Benchmark writes with
--benchmark_out=FILE --benchmark_out_format=json, with eager, graph and hand,
the ratio or per-iteration figure, the target, and "met" or "missed by N%"
(by Nx from 2x).
The LibTorch peer rows of train_bench, conv_bench, model_bench and onnx_bench
(mlp_step/torch, lenet_step/torch, rnn/torch_forward_backward,
conv_guide/torch, lstm_lm_step/torch, encoder_layer/torch,
digits_step/torch, resnet18/torch, mobilenet_v2/torch, lstm_lm/torch, bigru/torch; built only where
LibTorch is found) add a torch column to the table, and the row's figure
says graph over torch too; a workload with no hand row (lenet_step,
lstm_lm_step, encoder_layer, digits_step, and the models from PyTorch, whose
loaded row stands for the graph) has its target against torch. The models
from PyTorch also say their time over ONNX Runtime's where tools/bench/peers.py
ran them (its --out file among the results: <model>/onnxruntime rows), and
the training steps their time over PyTorch eager from pip where
tools/bench/pytorch_peers.py ran them (<workload>/pytorch rows); a row with
two peers is judged by the worse ratio. A row
whose result check failed (Google Benchmark's error_occurred) is listed
under the tables, not timed.
tools/bench/run.sh calls it last. The targets live here and nowhere else.

    summarize.py RESULTS.json...                  print the tables
    summarize.py RESULTS.json... --readme README.md
        also rewrite README.md between <!-- bench-table:begin --> and
        <!-- bench-table:end --> (the README's table is never edited by hand)

Times are CPU time, medians over the repetitions (the aggregate "median"
when present, else the median of the repetitions found); threads_bench's rows
are real time (two threads share one call), and so are distribute_bench's
(a step waits for the other ranks). Stdlib only.
"""

import argparse
import json
import math
import re
import statistics
import sys
from dataclasses import dataclass

BEGIN_MARKER = "<!-- bench-table:begin -->"
END_MARKER = "<!-- bench-table:end -->"
NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class Results:
    """Medians by benchmark name (run_name, e.g. "mse_f32_1e6/graph")."""

    def __init__(self, documents):
        cpu, real, counters = {}, {}, {}
        self.contexts = []
        self.errors = {}  # name -> why the row was not timed
        for doc in documents:
            self.contexts.append(doc.get("context", {}))
            for b in doc.get("benchmarks", []):
                # A benchmark with its own minimum time or iteration count
                # is named "<name>/min_time:0.300" or "<name>/iterations:1".
                name = re.sub(r"/(min_time:[0-9.]+|iterations:[0-9]+)", "",
                              b.get("run_name", b["name"]))
                # A row whose check failed (SkipWithError) has no time.
                if b.get("error_occurred"):
                    self.errors[name] = b.get("error_message", "")
                    continue
                scale = NS_PER_UNIT[b.get("time_unit", "ns")]
                if b.get("run_type") == "aggregate":
                    if b.get("aggregate_name") != "median":
                        continue
                    key = (name, "median")
                else:
                    key = (name, "iteration")
                cpu.setdefault(key, []).append(b["cpu_time"] * scale)
                if "real_time" in b:  # peers.py's ONNX Runtime rows have CPU time only
                    real.setdefault(key, []).append(b["real_time"] * scale)
                counters.setdefault(name, {}).update(
                    {k: v for k, v in b.items() if isinstance(v, (int, float))})
        self.cpu, self.real, self.counters = {}, {}, counters
        for (name, kind), values in cpu.items():
            # An aggregate median wins over the single repetitions.
            if kind == "median" or name not in self.cpu:
                self.cpu[name] = statistics.median(values)
                if (name, kind) in real:
                    self.real[name] = statistics.median(real[(name, kind)])

    def time(self, name):
        return self.cpu.get(name)

    def real_time(self, name):
        return self.real.get(name)

    def best_hand(self, workload):
        """The fastest of <workload>/hand and <workload>/hand_<how>."""
        hands = [t for n, t in self.cpu.items()
                 if n == workload + "/hand" or n.startswith(workload + "/hand_")]
        return min(hands) if hands else None

    def counter(self, name, key):
        return self.counters.get(name, {}).get(key)


@dataclass
class Row:
    workload: str
    eager: float = None  # ns per call
    graph: float = None
    hand: float = None
    figure: str = ""
    target: str = ""
    result: str = ""
    torch: float = None  # the LibTorch peer, where it ran


def verdict(value, target, at_least=False):
    """'met', or 'missed by N%' / 'missed by Nx' (how far the value is from
    the target: a percentage below 2x, where "1.0x" would say nothing)."""
    if (value >= target) if at_least else (value <= target):
        return "met"
    factor = target / value if at_least else value / target
    if factor < 2:
        # Rounded first: 4.4 / 4.0 is 1.1000000000000001, missed by 10%, not 11%.
        return f"missed by {math.ceil(round((factor - 1) * 100, 9))}%"
    return f"missed by {factor:.1f}x"


# The peers a row's time is set against, (name in the figure, row suffix):
# LibTorch (train_bench's and model_bench's <workload>/torch rows, and
# onnx_bench's TorchScript models), PyTorch eager from pip
# (pytorch_peers.py's <workload>/pytorch rows) and ONNX Runtime (peers.py's
# <model>/onnxruntime rows).
TRAINING_PEERS = (("torch", "torch"), ("PyTorch", "pytorch"))
INFERENCE_PEERS = (("torch", "torch"), ("ONNX Runtime", "onnxruntime"))


def over_peer(res, workload, ours, peer_row, peer_name):
    """", 0.80x torch": our time over a peer's row, where the peer ran; else ""."""
    peer = res.time(f"{workload}/{peer_row}")
    return f", {ours / peer:.2f}x {peer_name}" if peer else ""


def ratio_row(res, label, workload, target, over="hand"):
    """Graph over hand (or over eager), against a target ratio."""
    graph, eager, hand = (res.time(workload + "/graph"), res.time(workload + "/eager"),
                          res.best_hand(workload))
    base = hand if over == "hand" else eager
    if graph is None or base is None:
        return None
    value = graph / base
    figure = f"{value:.2f}x {over}" + "".join(
        over_peer(res, workload, graph, row, name) for name, row in TRAINING_PEERS)
    return Row(label, eager, graph, hand, figure, f"≤ {target:g}x", verdict(value, target),
               torch=res.time(workload + "/torch"))


def over_peers_row(res, label, workload, target, ours, peers, eager=None):
    """Our time over each of `peers` that ran the workload; the verdict is the
    worse ratio. None where no peer ran it."""
    times = [(name, res.time(f"{workload}/{row}")) for name, row in peers]
    times = [(name, time) for name, time in times if time]
    if ours is None or not times:
        return None
    figure = ", ".join(f"{ours / time:.2f}x {name}" for name, time in times)
    worst = max(ours / time for _, time in times)
    names = " and ".join(name for name, _ in times)
    return Row(label, eager, ours, None, figure, f"≤ {target:g}x {names}",
               verdict(worst, target), torch=res.time(workload + "/torch"))


def peer_row(res, label, workload, target):
    """The graph over LibTorch and PyTorch, for a training workload."""
    return over_peers_row(res, label, workload, target, res.time(workload + "/graph"),
                          TRAINING_PEERS, eager=res.time(workload + "/eager"))


def inference_peer_row(res, label, workload, target):
    """The graph over LibTorch and ONNX Runtime, for an inference workload."""
    return over_peers_row(res, label, workload, target, res.time(workload + "/graph"),
                          INFERENCE_PEERS, eager=res.time(workload + "/eager"))


def deployed_model_row(res, label, workload, target):
    """A model loaded from ONNX over LibTorch and ONNX Runtime (peers.py)."""
    return over_peers_row(res, label, workload, target, res.time(workload + "/loaded"),
                          INFERENCE_PEERS)


def per_iteration_row(res, label, workload, target_ns):
    """Graph time per loop iteration (the counter `iters`)."""
    graph = res.time(workload + "/graph")
    iters = res.counter(workload + "/graph", "iters")
    if graph is None or not iters:
        return None
    value = graph / iters
    return Row(label, res.time(workload + "/eager"), graph, res.best_hand(workload),
               f"{format_ns(value)}/iter", f"≤ {target_ns:g} ns/iter", verdict(value, target_ns))


def call_row(res, label, workload, target_ns):
    """The graph's time per call against an absolute target."""
    graph = res.time(workload + "/graph")
    if graph is None:
        return None
    return Row(label, res.time(workload + "/eager"), graph, res.best_hand(workload),
               format_ns(graph), f"≤ {target_ns:g} ns", verdict(graph, target_ns))


def overhead_row(res, label, workload, extra_ns):
    """Graph at most `extra_ns` over hand (tiny workloads)."""
    graph, hand = res.time(workload + "/graph"), res.best_hand(workload)
    if graph is None or hand is None:
        return None
    return Row(label, res.time(workload + "/eager"), graph, hand,
               f"hand + {format_ns(graph - hand)}", f"≤ hand + {format_ns(extra_ns)}",
               verdict(graph - hand, extra_ns))


def trace_row(res, label, workload, target_ms):
    """Trace + optimise + compile (+ one run), per 1,000 traced nodes; the
    time to free the function, measured apart, follows the figure."""
    graph = res.time(workload + "/graph")
    nodes = res.counter(workload + "/graph", "nodes")
    if graph is None or not nodes:
        return None
    value = graph / 1e6 / (nodes / 1000)
    figure = f"{value:.2f} ms per 1k nodes"
    freeing = res.counter(workload + "/graph", "free_ms_per_1k_nodes")
    if freeing is not None:
        figure += f" (+ {freeing:.2f} to free it)"
    return Row(label, None, graph, None, figure, f"≤ {target_ms:g} ms per 1k",
               verdict(value, target_ms))


def speedup_row(res, label, benchmark, target, hand=None):
    """threads_bench: 2 threads against 1 (real time). With `hand`, the
    hand-written reference's 2 threads against 1 too: the machine's ceiling."""
    one = res.real_time(f"{benchmark}/threads:1/real_time")
    two = res.real_time(f"{benchmark}/threads:2/real_time")
    if one is None or two is None:
        return None
    value = one / two
    figure = f"{value:.2f}x the 1-thread speed ({format_ns(one)})"
    hand_two = None
    if hand:
        hand_one = res.real_time(f"{hand}/threads:1/real_time")
        hand_two = res.real_time(f"{hand}/threads:2/real_time")
        if hand_one and hand_two:
            figure += f"; hand {hand_one / hand_two:.2f}x"
    return Row(label, None, two, hand_two, figure, f"≥ {target:g}x",
               verdict(value, target, at_least=True))


def isa_row(res, label, workload, target):
    """The widest instruction set's graph (graph_avx512, else graph_avx2)
    against the baseline's (graph_baseline), in one run: what a portable
    build gains from its multiversioned loops."""
    baseline = res.time(workload + "/graph_baseline")
    widest = [(isa, res.time(f"{workload}/graph_{isa}")) for isa in ("avx512", "avx2")]
    widest = [(isa, t) for isa, t in widest if t is not None]
    if baseline is None or not widest:
        return None
    isa, time = widest[0]
    value = baseline / time
    return Row(label, None, time, baseline, f"{value:.2f}x the baseline's speed ({isa})",
               f"≥ {target:g}x", verdict(value, target, at_least=True))


def sgemm_speed_row(res, label, workload, target):
    """The graph's speed as a fraction of the fastest <workload>/sgemm_* row:
    a matrix product of the same multiply-adds."""
    graph = res.time(workload + "/graph")
    sgemms = [t for n, t in res.cpu.items() if n.startswith(workload + "/sgemm_")]
    if graph is None or not sgemms:
        return None
    value = min(sgemms) / graph
    return Row(label, res.time(workload + "/eager"), graph, res.best_hand(workload),
               f"{value:.2f} of sgemm's speed ({format_ns(min(sgemms))})", f"≥ {target:g}",
               verdict(value, target, at_least=True))


def loaded_row(res, label, workload, target):
    """onnx_bench: the loaded model over the trace it came from."""
    traced, loaded = res.time(workload + "/traced"), res.time(workload + "/loaded")
    if traced is None or loaded is None:
        return None
    value = loaded / traced
    return Row(label, None, loaded, None, f"{value:.2f}x traced ({format_ns(traced)})",
               f"≤ {target:g}x", verdict(value, target))


def backward_row(res, label, workload, target):
    """train_bench: the backward's time (forward_backward - forward) over the forward's."""
    forward, both = res.time(workload + "/forward"), res.time(workload + "/forward_backward")
    if forward is None or both is None:
        return None
    value = (both - forward) / forward
    figure = (f"backward {value:.2f}x forward ({format_ns(forward)})"
              + over_peer(res, workload, both, "torch_forward_backward", "torch"))
    return Row(label, None, both, None, figure, f"≤ {target:g}x forward", verdict(value, target),
               torch=res.time(workload + "/torch_forward_backward"))


def scaling_row(res, label, workload, target):
    """distribute_bench: the step's throughput on 2 ranks over twice that on 1
    (real time; the counter `examples` is one step's global batch)."""
    names = [f"{workload}/ranks:{n}/graph/real_time" for n in (1, 2)]
    times = [res.real_time(n) for n in names]
    examples = [res.counter(n, "examples") for n in names]
    if None in times or not all(examples):
        return None
    one, two = (e / t * 1e9 for e, t in zip(examples, times))
    value = two / (2 * one)
    return Row(label, None, times[1], None,
               f"{value:.2f} efficiency: {two:.0f} examples/s on 2 ranks, {one:.0f} on 1",
               f"≥ {target:g}", verdict(value, target, at_least=True))


def overlap_row(res, label, workload, target):
    """distribute_bench: the eager step on 2 ranks with the all_reduces
    overlapping the backward against the same step reducing after it."""
    after = res.real_time(f"{workload}/ranks:2/eager/real_time")
    overlapped = res.real_time(f"{workload}/ranks:2/eager_overlap/real_time")
    if after is None or overlapped is None:
        return None
    value = after / overlapped
    return Row(label, after, None, None,
               f"{value:.2f}x the speed of reducing after the backward ({format_ns(overlapped)})",
               f"≥ {target:g}x", verdict(value, target, at_least=True))


def all_reduce_row(res, label, workload, target):
    """distribute_bench: ag::distribute::all_reduce on 2 ranks (eager, its
    input kept) over MPI_Allreduce called directly from one buffer into
    another, with the in-place call and one memcpy of the floats for scale."""
    ours, mpi, in_place, copy = (res.real_time(f"{workload}/ranks:2/{row}/real_time")
                                 for row in ("ag", "mpi", "mpi_in_place", "memcpy"))
    if ours is None or mpi is None:
        return None
    value = ours / mpi
    scale = f", in place {format_ns(in_place)}" if in_place else ""
    scale += f", one memcpy {format_ns(copy)}" if copy else ""
    return Row(label, ours, None, mpi, f"{value:.2f}x MPI_Allreduce ({format_ns(mpi)}{scale})",
               f"≤ {target:g}x", verdict(value, target))


def main_rows(res):
    """The main table, in its order."""
    rows = [
        ratio_row(res, "MSE, float32, 1e6", "mse_f32_1e6", 1.1),
        ratio_row(res, "collatz over 1e5 ints (350 iterations)", "collatz_100000", 1.2),
        ratio_row(res, "dynamic_rnn 32x100x128", "rnn_32x100x128", 1.3),
        ratio_row(res, "power int32 (100 chained 10x10 matmuls)", "power_i32", 1.3),
        per_iteration_row(res, "fizzbuzz (n = 10000), per iteration", "fizzbuzz_10000", 40),
        per_iteration_row(res, "collatz on 2 values, per iteration", "collatz_2", 60),
        per_iteration_row(res, "tanh loop, per iteration", "tanh_loop", 50),
        per_iteration_row(res, "dynamic_rnn 2x3x4, per iteration", "rnn_2x3x4", 80),
        call_row(res, "cache hit, full call", "cache_hit", 100),
    ]
    for size in ("1k", "10k", "100k"):
        rows.append(trace_row(res, f"trace + optimise, {size} nodes", f"trace_{size}", 2))
    for size in ("1k", "10k", "100k"):
        rows.append(trace_row(res, f"trace + optimise, {size} nodes on 4,096 elements (no run)",
                              f"trace_blocked_{size}", 2))
    return [r for r in rows if r]


def other_rows(res):
    """The other targets: float power, small MSE, dense, small loops, training,
    gradients, intra-op threads and loaded ONNX models."""
    rows = [
        ratio_row(res, "power float32 (100 chained 10x10 matmuls)", "power_f32", 3),
        overhead_row(res, "MSE, int32, length 5", "mse_i32_5", 500),
        ratio_row(res, "dense 256x512 · 512x512 + bias", "dense", 1.1),
        isa_row(res, "fused elementwise chain, float32 64K: widest vectors against SSE2",
                "isa_chain_f32_64k", 2),
        ratio_row(res, "Conv2D(100, 3) on [1, 200, 200, 100] (7.1 GFLOP)", "conv_guide", 1.1),
        sgemm_speed_row(res, "Conv2D(100, 3), against a matrix product of its size",
                        "conv_guide", 0.7),
        inference_peer_row(res, "Conv2D(100, 3) against the peers", "conv_guide", 1.0),
        per_iteration_row(res, "fizzbuzz (n = 100), per iteration", "fizzbuzz_100", 100),
        per_iteration_row(res, "collatz scalar 27.0, per iteration", "collatz_scalar", 100),
        ratio_row(res, "training step, MLP 64x784-256-10, SGD", "mlp_step", 1.3),
        peer_row(res, "the same MLP step against the peers", "mlp_step", 1.0),
        peer_row(res, "training step, LeNet-5 on 64 28x28 images, SGD", "lenet_step", 1.0),
        peer_row(res, "training step, LSTM language model 16x32, 128 units, SGD",
                 "lstm_lm_step", 1.0),
        peer_row(res, "transformer encoder layer 8x64x128, forward and backward",
                 "encoder_layer", 1.0),
        peer_row(res, "training step, examples/digits's CNN on 32 8x8 images, Adam",
                 "digits_step", 1.0),
        backward_row(res, "gradient of dynamic_rnn 32x100x128 (100 steps)", "rnn", 3),
        speedup_row(res, "MSE 1e6, 2 intra-op threads", "BM_mse_f32_1e6_graph", 1.7,
                    hand="BM_mse_f32_1e6_hand"),
        speedup_row(res, "dense, 2 intra-op threads", "BM_dense_256x512x512_graph", 1.7,
                    hand="BM_dense_256x512x512_hand"),
        scaling_row(res, "data-parallel training step, MLP 784-1024-1024-10, 64 rows per rank, "
                    "2 ranks against 1", "dp_mlp_step", 0.85),
        scaling_row(res, "data-parallel training step, LeNet-5, 64 28x28 images per rank, "
                    "2 ranks against 1", "dp_lenet_step", 0.85),
        overlap_row(res, "the same step eager on 2 ranks, all_reduces overlapping the backward",
                    "dp_mlp_step", 1.0),
        all_reduce_row(res, "all_reduce of the MLP's gradients (7.1 MiB float32), 2 ranks",
                       "all_reduce_mlp_grads", 1.1),
        loaded_row(res, "ONNX dense + relu, loaded", "dense_256x512x512", 1.05),
        loaded_row(res, "ONNX tanh loop, loaded", "tanh_loop", 1.05),
        loaded_row(res, "ONNX Conv2D(100, 3), loaded", "conv_guide", 1.05),
        deployed_model_row(res, "resnet18 from PyTorch, 224x224, batch 1, loaded from ONNX",
                           "resnet18", 1.0),
        deployed_model_row(res, "mobilenet_v2 from PyTorch, 224x224, batch 1, loaded from ONNX",
                           "mobilenet_v2", 1.0),
        deployed_model_row(res, "LSTM language model from PyTorch, 8 tokens, batch 1, loaded "
                           "from ONNX", "lstm_lm", 1.0),
        deployed_model_row(res, "bidirectional GRU from PyTorch, 8 steps, batch 1, 24 units, "
                           "loaded from ONNX", "bigru", 1.0),
    ]
    return [r for r in rows if r]


@dataclass
class MemoryRow:
    workload: str
    eager: float  # peak bytes of one call
    graph: float
    hand: float
    graph_kept: float  # what the graph's function keeps between calls


def memory_rows(res):
    """memory_bench: peak heap bytes of one call, graph against eager against hand."""
    rows = []
    for label, workload in (("MSE, float32, 1e6", "mse_f32_1e6"),
                            ("collatz over 1e5 ints", "collatz_100000"),
                            ("dynamic_rnn 32x100x128", "rnn_32x100x128"),
                            ("LSTM language model training step", "lstm_lm_step"),
                            ("transformer encoder layer, forward and backward",
                             "encoder_layer"),
                            ("LeNet-5 training step", "lenet_step"),
                            ("Conv2D(100, 3) on [1, 200, 200, 100]", "conv_guide"),
                            ("resnet18 from PyTorch, loaded from ONNX (its weights included)",
                             "resnet18")):
        peak = {mode: res.counter(f"memory/{workload}/{mode}", "peak_bytes")
                for mode in ("eager", "graph", "hand")}
        if peak["graph"] is None:
            continue
        rows.append(MemoryRow(label, peak["eager"], peak["graph"], peak["hand"],
                              res.counter(f"memory/{workload}/graph", "kept_bytes")))
    return rows


def format_bytes(n):
    if n is None:
        return ""
    for unit, scale in (("B", 1), ("KiB", 1 << 10), ("MiB", 1 << 20)):
        if n < 1024 * scale:
            value = n / scale
            digits = 0 if unit == "B" or value >= 100 else 1 if value >= 10 else 2
            return f"{value:.{digits}f} {unit}"
    return f"{n / (1 << 30):.2f} GiB"


def memory_table(rows):
    lines = ["| workload | eager | graph | hand | graph: kept between calls |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.workload} | {format_bytes(r.eager)} | {format_bytes(r.graph)} | "
                     f"{format_bytes(r.hand)} | {format_bytes(r.graph_kept)} |")
    return "\n".join(lines)


def format_ns(ns):
    if ns is None:
        return ""
    magnitude = abs(ns)
    for unit, scale in (("ns", 1.0), ("µs", 1e3), ("ms", 1e6)):
        if magnitude < 1000 * scale:
            value = ns / scale
            digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
            return f"{value:.{digits}f} {unit}"
    return f"{ns / 1e9:.2f} s"


def markdown_table(rows):
    """The table; a torch column only when some row has a LibTorch figure."""
    with_torch = any(r.torch is not None for r in rows)
    torch_head, torch_rule = (" torch |", "---:|") if with_torch else ("", "")
    lines = [f"| workload | eager | graph | hand |{torch_head} graph figure | target | result |",
             f"|---|---:|---:|---:|{torch_rule}---:|---|---|"]
    for r in rows:
        result = r.result if r.result == "met" else f"**{r.result}**"
        torch = f" {format_ns(r.torch)} |" if with_torch else ""
        lines.append(f"| {r.workload} | {format_ns(r.eager)} | {format_ns(r.graph)} | "
                     f"{format_ns(r.hand)} |{torch} {r.figure} | {r.target} | {result} |")
    return "\n".join(lines)


def describe_run(res):
    """Where and when: date, CPUs and load average, from the JSON context."""
    contexts = [c for c in res.contexts if c]
    if not contexts:
        return "no benchmark context recorded"
    first = contexts[0]
    loads = [c["load_avg"][0] for c in contexts if c.get("load_avg")]
    load = f", load average {min(loads):.2f} to {max(loads):.2f}" if loads else ""
    build = first.get("library_build_type", "")
    libraries = []
    for c in contexts:
        if c.get("onednn") and not any(x.startswith("oneDNN") for x in libraries):
            libraries.append(f"oneDNN {c['onednn']}")
        if c.get("openblas_core") and not any(x.startswith("OpenBLAS") for x in libraries):
            libraries.append(f"OpenBLAS with its {c['openblas_core']} kernels")
        if c.get("onnxruntime") and not any(x.startswith("ONNX Runtime") for x in libraries):
            libraries.append(f"ONNX Runtime {c['onnxruntime']}")
        if c.get("pytorch") and not any(x.startswith("PyTorch") for x in libraries):
            libraries.append(f"PyTorch {c['pytorch']} (pip, eager)")
    libraries_text = f"; libraries: {', '.join(libraries)}" if libraries else ""
    model = next((c["cpu_model"] for c in contexts if c.get("cpu_model")), "")
    isa = next((c["kernel_isa"] for c in contexts if c.get("kernel_isa")), "")
    cpu = f"{model} ({isa} kernels), " if model else ""
    return (f"{first.get('date', '?')}, {cpu}{first.get('num_cpus', '?')} CPUs at "
            f"{first.get('mhz_per_cpu', '?')} MHz{load} (1-minute, as each binary started); "
            f"Google Benchmark's own build: {build} (the timed code is Release){libraries_text}")


# The names of the hand rows that call a library, for the list of them.
HAND_NAMES = {"hand_onednn": "oneDNN", "hand_cblas": "OpenBLAS sgemm",
              "hand_im2col_cblas": "im2col + OpenBLAS sgemm",
              "hand_eigen_native": "Eigen -march=native", "hand_eigen": "Eigen"}


def hand_rows_line(res, workload, label):
    """Every hand row of a workload, fastest first: the best this machine offers, and the
    graph's place among them."""
    rows = sorted((t, HAND_NAMES.get(n.split("/", 1)[1], n.split("/", 1)[1]))
                  for n, t in res.cpu.items() if n.startswith(workload + "/hand"))
    graph = res.time(workload + "/graph")
    if len(rows) < 2 or graph is None:
        return None
    listed = ", ".join(f"{name} {format_ns(t)}" for t, name in rows)
    return (f"{label}: graph {format_ns(graph)}, {rows[0][0] / graph:.2f} of the fastest "
            f"library's speed; the hand rows, fastest first: {listed}.")


def summary(res):
    sections = []
    headline = main_rows(res)
    if headline:
        sections.append("Workloads (CPU time per call, medians; graph figure: "
                        "graph/hand, time per loop iteration, or per 1,000 traced nodes):\n\n"
                        + markdown_table(headline))
    others = other_rows(res)
    if others:
        sections.append("Other targets:\n\n" + markdown_table(others))
    memory = memory_rows(res)
    if memory:
        sections.append("Peak heap bytes of one call (memory_bench: every malloc counted, inputs "
                        "excluded, what the function keeps between calls included: its trace, "
                        "plan, buffers and the blocks the runtime keeps for reuse):\n\n"
                        + memory_table(memory))
    for workload, label in (("dense", "Dense 256x512 · 512x512 + bias"),
                            ("conv_guide", "Conv2D(100, 3) on [1, 200, 200, 100]")):
        line = hand_rows_line(res, workload, label)
        if line:
            sections.append(line)
    if res.errors:
        sections.append("Not timed, their check failed:\n\n" + "\n".join(
            f"- {name}: {message}" for name, message in sorted(res.errors.items())))
    sections.append(f"Measured {describe_run(res)}.")
    return "\n\n".join(sections)


def replace_between_markers(text, generated):
    begin, end = text.find(BEGIN_MARKER), text.find(END_MARKER)
    if begin < 0 or end < begin:
        raise ValueError(f"the markers {BEGIN_MARKER} ... {END_MARKER} are missing")
    head = text[:begin + len(BEGIN_MARKER)]
    return head + "\n<!-- generated by tools/bench/summarize.py; do not edit -->\n" + \
        generated + "\n" + text[end:]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="Google Benchmark JSON files")
    parser.add_argument("--readme", help="rewrite this file's table between the markers")
    args = parser.parse_args(argv)
    documents = []
    for path in args.results:
        with open(path, encoding="utf-8") as f:
            documents.append(json.load(f))
    text = summary(Results(documents))
    print(text)
    if args.readme:
        with open(args.readme, encoding="utf-8") as f:
            readme = f.read()
        with open(args.readme, "w", encoding="utf-8") as f:
            f.write(replace_between_markers(readme, text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
