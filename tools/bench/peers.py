#!/usr/bin/env python3
"""Runs onnx_bench's models in ONNX Runtime, beside this runtime's times.

onnx_bench writes each workload's model, input and output to a folder when
AG_BENCH_MODELS names it (tools/bench/run.sh does so when onnxruntime is
installed). This script loads each model in ONNX Runtime on one thread,
checks its output against this runtime's, times it as onnx_bench times its
rows (median of five runs of CPU time per call), and prints one line per
workload: the loaded model here, its trace here, ONNX Runtime, and the ratio
of the loaded model to ONNX Runtime (below 1: faster here).

  peers.py --models DIR --results onnx_bench.json [--out onnxruntime.json]

With --out, ONNX Runtime's times are also written there as Google
Benchmark's JSON (a median row <workload>/onnxruntime each, CPU time), which
tools/bench/summarize.py reads beside onnx_bench's.

ONNX Runtime is a peer for comparison, never a dependency: without it the
script says so and exits 0.
"""
import argparse
import json
import os
import statistics
import sys
import time

try:
    import numpy as np
except ImportError:  # onnxruntime needs numpy: main() stops first without it
    np = None


def our_times(results_path):
    """{workload: {"loaded": ns, "traced": ns}}: onnx_bench's medians of CPU time."""
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
    times = {}
    with open(results_path) as f:
        for row in json.load(f)["benchmarks"]:
            if row.get("aggregate_name") != "median":
                continue
            workload, form = row["run_name"].split("/", 1)
            times.setdefault(workload, {})[form] = row["cpu_time"] * scale[row["time_unit"]]
    return times


def load_case(models, name):
    with open(os.path.join(models, name + ".json")) as f:
        shapes = json.load(f)
    def floats(suffix, shape):
        return np.fromfile(os.path.join(models, f"{name}.{suffix}.f32"), dtype=np.float32).reshape(shape)
    return floats("input", shapes["input_shape"]), floats("output", shapes["output_shape"])


# ONNX Runtime's input types of the models here: the files hold float32
# values, exact for token ids too.
ONNX_INPUT_TYPES = {"tensor(float)": "float32", "tensor(double)": "float64",
                    "tensor(int64)": "int64", "tensor(int32)": "int32"}


def as_input_type(x, onnx_type):
    """The float32 values `x` in the model input's element type (token ids:
    int64)."""
    if onnx_type not in ONNX_INPUT_TYPES:
        raise ValueError(f"peers.py: the model's input type {onnx_type} is not one of "
                         f"{', '.join(sorted(ONNX_INPUT_TYPES))}")
    return x.astype(ONNX_INPUT_TYPES[onnx_type])


def ort_session(ort, path):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def cpu_ns_per_call(run, min_seconds=0.5, repetitions=5):
    """Median over `repetitions` of CPU time per call, each over at least `min_seconds`."""
    run()
    per_call = []
    for _ in range(repetitions):
        calls, start = 0, time.process_time()
        while time.process_time() - start < min_seconds:
            run()
            calls += 1
        per_call.append((time.process_time() - start) * 1e9 / calls)
    return statistics.median(per_call)


def results_json(times, peer, version):
    """{workload: ns} as Google Benchmark's JSON, one median row <workload>/<peer> each, and
    the peer's version in the context (peer: "onnxruntime", or pytorch_peers.py's "pytorch")."""
    return {"context": {peer: version},
            "benchmarks": [{"name": f"{name}/{peer}_median", "run_name": f"{name}/{peer}",
                            "run_type": "aggregate", "aggregate_name": "median", "cpu_time": ns,
                            "time_unit": "ns"} for name, ns in sorted(times.items())]}


def format_ns(ns):
    return f"{ns / 1e6:.3f} ms" if ns >= 1e5 else f"{ns / 1e3:.2f} us"


def arguments(description, bench, peer):
    """A peer script's command line: --models, --results (of `bench`) and --out."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", required=True, help=f"the folder AG_BENCH_MODELS named for {bench}")
    p.add_argument("--results", required=True, help=f"{bench}'s JSON results")
    p.add_argument("--out", help=f"also write {peer}'s times here, as Google Benchmark's JSON")
    return p.parse_args()


def main():
    a = arguments(__doc__, "onnx_bench", "ONNX Runtime")
    try:
        import onnxruntime as ort
    except ImportError:
        print("peers.py: onnxruntime is not installed (pip install onnxruntime): no peer rows")
        return 0

    ours = our_times(a.results)
    names = sorted(f[:-len(".onnx")] for f in os.listdir(a.models) if f.endswith(".onnx"))
    if not names:
        print(f"peers.py: error: no .onnx model in {a.models}; run onnx_bench with AG_BENCH_MODELS={a.models}",
              file=sys.stderr)
        return 1
    print(f"ONNX Runtime {ort.__version__}, one thread, against onnx_bench (CPU time per call, medians);")
    print("ONNX Runtime's times include its Python call, some microseconds: compare the small rows with care")
    print(f"{'workload':<20} {'loaded here':>12} {'traced here':>12} {'ONNX Runtime':>13} {'loaded/ORT':>11}")
    status = 0
    peer_times = {}
    for name in names:
        x, want = load_case(a.models, name)
        session = ort_session(ort, os.path.join(a.models, name + ".onnx"))
        model_input = session.get_inputs()[0]
        feed = {model_input.name: as_input_type(x, model_input.type)}
        got = session.run(None, feed)[0]
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            print(f"peers.py: error: {name}: ONNX Runtime's output differs from this runtime's "
                  f"(max |difference| {np.max(np.abs(got - want)) if got.shape == want.shape else 'shape'})",
                  file=sys.stderr)
            status = 1
            continue
        peer = peer_times[name] = cpu_ns_per_call(lambda: session.run(None, feed))
        here = ours.get(name, {})
        loaded, traced = here.get("loaded"), here.get("traced")
        cells = [format_ns(v) if v else "-" for v in (loaded, traced)]
        ratio = f"{loaded / peer:.2f}x" if loaded else "-"
        print(f"{name:<20} {cells[0]:>12} {cells[1]:>12} {format_ns(peer):>13} {ratio:>11}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results_json(peer_times, "onnxruntime", ort.__version__), f, indent=1)
    return status


if __name__ == "__main__":
    sys.exit(main())
