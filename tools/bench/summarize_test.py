#!/usr/bin/env python3
"""Tests of summarize.py on the small checked-in results in testdata/ (what
Google Benchmark's --benchmark_out_format=json writes, cut down): the rows it
produces, their ratios and verdicts, and the README rewrite. ctest runs it as
bench.summarize."""

import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402
import summarize  # noqa: E402


def load_fixture():
    docs = []
    for name in ("runtime_bench", "control_bench", "threads_bench"):
        with open(os.path.join(HERE, "testdata", name + ".json"), encoding="utf-8") as f:
            docs.append(json.load(f))
    return summarize.Results(docs)


def cpu_median(name, ms):
    """A median row of `ms` CPU time (its real time another, which the summary must not read)."""
    return {"name": name + "_median", "run_name": name, "run_type": "aggregate",
            "aggregate_name": "median", "cpu_time": ms, "real_time": ms + 1, "time_unit": "ms"}


class SummarizeTest(unittest.TestCase):
    def setUp(self):
        self.res = load_fixture()
        self.rows = {r.workload: r for r in summarize.main_rows(self.res)}

    def test_ratio_against_the_fastest_hand_variant(self):
        row = self.rows["MSE, float32, 1e6"]
        self.assertEqual(row.hand, 100e3)  # hand_loops, not hand_eigen
        self.assertEqual(row.graph, 500e3)  # the median, not the mean
        self.assertEqual(row.eager, 700e3)
        self.assertEqual(row.figure, "5.00x hand")
        self.assertEqual(row.target, "≤ 1.1x")
        self.assertEqual(row.result, "missed by 4.5x")

    def test_met_ratio(self):
        row = self.rows["power int32 (100 chained 10x10 matmuls)"]
        self.assertEqual(row.figure, "1.20x hand")
        self.assertEqual(row.result, "met")

    def test_per_iteration_divides_by_the_iters_counter(self):
        row = self.rows["fizzbuzz (n = 10000), per iteration"]
        self.assertEqual(row.figure, "40.0 ns/iter")
        self.assertEqual(row.result, "met")  # exactly the target

    def test_median_of_repetitions_without_aggregates(self):
        row = self.rows["collatz on 2 values, per iteration"]
        self.assertEqual(row.graph, 11.8e3)
        self.assertEqual(row.figure, "100 ns/iter")
        self.assertEqual(row.result, "missed by 67%")

    def test_peak_bytes_of_memory_bench(self):
        with open(os.path.join(HERE, "testdata", "memory_bench.json"), encoding="utf-8") as f:
            res = summarize.Results([json.load(f)])
        rows = {r.workload: r for r in summarize.memory_rows(res)}
        self.assertEqual(list(rows), ["MSE, float32, 1e6", "dynamic_rnn 32x100x128"])
        mse = rows["MSE, float32, 1e6"]
        self.assertEqual((mse.eager, mse.graph, mse.hand), (8388608, 13312, 0))  # not the mean
        table = summarize.memory_table(rows.values())
        self.assertIn("| MSE, float32, 1e6 | 8.00 MiB | 13.0 KiB | 0 B | 13.0 KiB |", table)
        self.assertIn("| dynamic_rnn 32x100x128 | 4.75 MiB | 1.62 MiB | 1.56 MiB | 1.00 KiB |",
                      table)
        self.assertIn("Peak heap bytes of one call", summarize.summary(res))

    def test_a_model_loaded_from_onnx_has_a_graph_row_alone(self):
        def row(name, peak, kept):
            return {"name": name + "_median", "run_name": name, "run_type": "aggregate",
                    "aggregate_name": "median", "cpu_time": 1.0, "real_time": 1.0,
                    "time_unit": "ms", "peak_bytes": peak, "kept_bytes": kept}
        res = summarize.Results([{"benchmarks": [
            row("memory/resnet18/graph/iterations:1", 3 << 20, 2 << 20)]}])
        table = summarize.memory_table(summarize.memory_rows(res))
        self.assertIn("| resnet18 from PyTorch, loaded from ONNX (its weights included) |  | "
                      "3.00 MiB |  | 2.00 MiB |", table)

    def test_backward_over_forward(self):
        doc = {"benchmarks": [
            {"name": "rnn/forward", "run_name": "rnn/forward", "run_type": "iteration",
             "cpu_time": 10.0, "real_time": 10.0, "time_unit": "ms"},
            {"name": "rnn/forward_backward", "run_name": "rnn/forward_backward",
             "run_type": "iteration", "cpu_time": 45.0, "real_time": 45.0, "time_unit": "ms"}]}
        rows = {r.workload: r for r in summarize.other_rows(summarize.Results([doc]))}
        row = rows["gradient of dynamic_rnn 32x100x128 (100 steps)"]
        self.assertEqual(row.figure, "backward 3.50x forward (10.0 ms)")
        self.assertEqual(row.result, "missed by 17%")

    def test_data_parallel_scaling_and_overlap(self):
        def median(name, ms, examples):
            return {"name": name + "_median", "run_name": name, "run_type": "aggregate",
                    "aggregate_name": "median", "cpu_time": 1.0, "real_time": ms,
                    "time_unit": "ms", "examples": examples}
        one = {"benchmarks": [
            median("dp_mlp_step/ranks:1/graph/iterations:20/real_time", 32.0, 64)]}
        two = {"benchmarks": [
            median("dp_mlp_step/ranks:2/graph/iterations:20/real_time", 40.0, 128),
            median("dp_mlp_step/ranks:2/eager/iterations:20/real_time", 44.0, 128),
            median("dp_mlp_step/ranks:2/eager_overlap/iterations:20/real_time", 40.0, 128)]}
        rows = {r.workload: r for r in summarize.other_rows(summarize.Results([one, two]))}
        scaling = rows["data-parallel training step, MLP 784-1024-1024-10, 64 rows per rank, "
                       "2 ranks against 1"]
        # 3200 examples/s on 2 ranks, 2000 on 1: 3200 / 4000.
        self.assertEqual(scaling.figure, "0.80 efficiency: 3200 examples/s on 2 ranks, 2000 on 1")
        self.assertEqual(scaling.result, "missed by 7%")
        overlap = rows["the same step eager on 2 ranks, all_reduces overlapping the backward"]
        self.assertEqual(overlap.figure,
                         "1.10x the speed of reducing after the backward (40.0 ms)")
        self.assertEqual(overlap.result, "met")
        self.assertNotIn("data-parallel training step, MLP 784-1024-1024-10, 64 rows per rank, "
                         "2 ranks against 1",
                         {r.workload for r in summarize.other_rows(summarize.Results([two]))})

    def test_all_reduce_against_mpi_called_directly(self):
        def median(row, ms):
            name = f"all_reduce_mlp_grads/ranks:2/{row}/iterations:20/real_time"
            return {"name": name + "_median", "run_name": name, "run_type": "aggregate",
                    "aggregate_name": "median", "cpu_time": 1.0, "real_time": ms,
                    "time_unit": "ms"}
        two = {"benchmarks": [median("ag", 2.6), median("mpi", 2.0),
                              median("mpi_in_place", 1.6), median("memcpy", 0.5)]}
        rows = {r.workload: r for r in summarize.other_rows(summarize.Results([two]))}
        row = rows["all_reduce of the MLP's gradients (7.1 MiB float32), 2 ranks"]
        self.assertEqual(row.figure,
                         "1.30x MPI_Allreduce (2.00 ms, in place 1.60 ms, one memcpy 500 µs)")
        self.assertEqual(row.result, "missed by 19%")
        self.assertEqual((row.eager, row.hand), (2.6e6, 2.0e6))

    def test_run_names_the_cpu_model_and_kernels(self):
        context = {"date": "2026-01-01", "num_cpus": 2, "mhz_per_cpu": 2300,
                   "cpu_model": "Intel(R) Xeon(R) Platinum 8481C", "kernel_isa": "avx512"}
        text = summarize.describe_run(summarize.Results([{"context": context, "benchmarks": []}]))
        self.assertTrue(text.startswith(
            "2026-01-01, Intel(R) Xeon(R) Platinum 8481C (avx512 kernels), 2 CPUs at 2300 MHz"),
            text)

    def test_absolute_target(self):
        row = self.rows["cache hit, full call"]
        self.assertEqual(row.figure, "150 ns")
        self.assertEqual(row.result, "missed by 50%")

    def test_trace_per_thousand_nodes(self):
        self.assertEqual(self.rows["trace + optimise, 1k nodes"].figure, "1.50 ms per 1k nodes")
        self.assertEqual(self.rows["trace + optimise, 1k nodes"].result, "met")
        self.assertEqual(self.rows["trace + optimise, 100k nodes"].result, "missed by 75%")

    def test_trace_freeing_follows_the_figure(self):
        row = self.rows["trace + optimise, 100k nodes on 4,096 elements (no run)"]
        self.assertEqual(row.figure, "1.90 ms per 1k nodes (+ 0.25 to free it)")
        self.assertEqual(row.result, "met")

    def test_workloads_not_run_are_left_out(self):
        self.assertNotIn("dynamic_rnn 32x100x128", self.rows)
        self.assertNotIn("trace + optimise, 10k nodes", self.rows)

    def test_earlier_targets(self):
        rows = {r.workload: r for r in summarize.other_rows(self.res)}
        self.assertEqual(rows["MSE, int32, length 5"].figure, "hand + 240 ns")
        self.assertEqual(rows["MSE, int32, length 5"].result, "met")
        speedup = rows["MSE 1e6, 2 intra-op threads"]  # real time: 500 / 250
        self.assertTrue(speedup.figure.startswith("2.00x the 1-thread speed"))
        self.assertTrue(speedup.figure.endswith("; hand 1.25x"))  # hand: 100 / 80
        self.assertEqual(speedup.hand, 80e3)
        self.assertEqual(speedup.result, "met")

    def test_torch_peer_column(self):
        with open(os.path.join(HERE, "testdata", "train_bench.json"), encoding="utf-8") as f:
            res = summarize.Results([json.load(f)])
        rows = {r.workload: r for r in summarize.other_rows(res)}
        row = rows["training step, MLP 64x784-256-10, SGD"]
        self.assertEqual(row.torch, 1500e3)
        self.assertEqual(row.figure, "1.20x hand, 0.80x torch")
        self.assertEqual(row.result, "met")
        table = summarize.markdown_table(list(rows.values()))
        self.assertIn("| workload | eager | graph | hand | torch | graph figure |", table)
        self.assertIn("| training step, MLP 64x784-256-10, SGD | 3.00 ms | 1.20 ms | 1.00 ms | "
                      "1.50 ms | 1.20x hand, 0.80x torch | ≤ 1.3x | met |", table)
        # The RNN gradient: the graph's forward and backward over torch's.
        self.assertIn("| 20.0 ms |  | 25.0 ms | backward 1.00x forward (10.0 ms), 0.80x torch |",
                      table)

    def test_torch_peer_as_the_target_without_a_hand_row(self):
        with open(os.path.join(HERE, "testdata", "train_bench.json"), encoding="utf-8") as f:
            res = summarize.Results([json.load(f)])
        rows = {r.workload: r for r in summarize.other_rows(res)}
        row = rows["training step, LeNet-5 on 64 28x28 images, SGD"]
        self.assertEqual((row.eager, row.graph, row.hand, row.torch), (8000e3, 4400e3, None, 4000e3))
        self.assertEqual(row.figure, "1.10x torch")
        self.assertEqual((row.target, row.result), ("≤ 1x torch", "missed by 10%"))

    def test_training_steps_against_libtorch_and_pytorch_from_pip(self):
        with open(os.path.join(HERE, "testdata", "train_bench.json"), encoding="utf-8") as f:
            train_bench = json.load(f)
        # What pytorch_peers.py --out writes: CPU time only, in ns.
        pytorch = peers.results_json({"mlp_step": 2.4e6, "lenet_step": 3.6e6}, "pytorch", "2.15.0")
        res = summarize.Results([train_bench, pytorch])
        rows = {r.workload: r for r in summarize.other_rows(res)}
        # The MLP keeps its target against hand, and names both peers...
        mlp = rows["training step, MLP 64x784-256-10, SGD"]
        self.assertEqual((mlp.figure, mlp.result), ("1.20x hand, 0.80x torch, 0.50x PyTorch", "met"))
        # ...and has a row of its own against them: 1.2 ms against 1.5 and 2.4.
        peers_row = rows["the same MLP step against the peers"]
        self.assertEqual((peers_row.figure, peers_row.target, peers_row.result),
                         ("0.80x torch, 0.50x PyTorch", "≤ 1x torch and PyTorch", "met"))
        # The verdict is the worse peer's: LeNet is 4.4 ms against 4.0 and 3.6.
        lenet = rows["training step, LeNet-5 on 64 28x28 images, SGD"]
        self.assertEqual((lenet.figure, lenet.result),
                         ("1.10x torch, 1.22x PyTorch", "missed by 23%"))
        self.assertIn("PyTorch 2.15.0 (pip, eager)", summarize.describe_run(res))
        # PyTorch alone, where LibTorch is not installed: no torch column.
        without_libtorch = {"benchmarks": [b for b in train_bench["benchmarks"]
                                           if "/torch" not in b["run_name"]]}
        rows = {r.workload: r for r in summarize.other_rows(
            summarize.Results([without_libtorch, pytorch]))}
        lenet = rows["training step, LeNet-5 on 64 28x28 images, SGD"]
        self.assertEqual((lenet.figure, lenet.target, lenet.torch),
                         ("1.22x PyTorch", "≤ 1x PyTorch", None))
        self.assertNotIn("| torch |", summarize.markdown_table(list(rows.values())))

    def test_the_guides_convolution_against_libtorch_and_onnx_runtime(self):
        conv_bench = {"benchmarks": [cpu_median("conv_guide/eager", 32.0),
                                     cpu_median("conv_guide/graph", 31.0),
                                     cpu_median("conv_guide/torch", 62.0)]}
        onnxruntime = peers.results_json({"conv_guide": 25e6}, "onnxruntime", "1.32.0")
        rows = {r.workload: r for r in summarize.other_rows(summarize.Results([conv_bench, onnxruntime]))}
        row = rows["Conv2D(100, 3) against the peers"]
        self.assertEqual((row.eager, row.graph, row.torch), (32e6, 31e6, 62e6))
        self.assertEqual((row.figure, row.target, row.result),
                         ("0.50x torch, 1.24x ONNX Runtime", "≤ 1x torch and ONNX Runtime",
                          "missed by 24%"))

    def test_models_from_pytorch_against_libtorch_and_onnx_runtime(self):
        onnx_bench = {"benchmarks": [
            cpu_median("resnet18/loaded", 27.0), cpu_median("resnet18/torch", 36.0),
            cpu_median("mobilenet_v2/loaded", 7.5), cpu_median("mobilenet_v2/torch", 6.0)]}
        # What peers.py --out writes: CPU time only, in ns.
        onnxruntime = peers.results_json({"resnet18": 30e6}, "onnxruntime", "1.32.0")
        res = summarize.Results([onnx_bench, onnxruntime])
        rows = {r.workload: r for r in summarize.other_rows(res)}
        resnet = rows["resnet18 from PyTorch, 224x224, batch 1, loaded from ONNX"]
        self.assertEqual((resnet.eager, resnet.graph, resnet.hand, resnet.torch),
                         (None, 27e6, None, 36e6))
        self.assertEqual(resnet.figure, "0.75x torch, 0.90x ONNX Runtime")
        self.assertEqual((resnet.target, resnet.result), ("≤ 1x torch and ONNX Runtime", "met"))
        # No ONNX Runtime time: the torch ratio alone.
        mobilenet = rows["mobilenet_v2 from PyTorch, 224x224, batch 1, loaded from ONNX"]
        self.assertEqual((mobilenet.figure, mobilenet.result), ("1.25x torch", "missed by 25%"))
        self.assertIn("| mobilenet_v2 from PyTorch, 224x224, batch 1, loaded from ONNX |  | "
                      "7.50 ms |  | 6.00 ms | 1.25x torch | ≤ 1x torch | **missed by 25%** |",
                      summarize.markdown_table(list(rows.values())))
        # The verdict is the worse peer's: faster than LibTorch, slower than ONNX Runtime.
        lstm_bench = {"benchmarks": [cpu_median("lstm_lm/loaded", 0.5), cpu_median("lstm_lm/torch", 0.8)]}
        lstm = {r.workload: r for r in summarize.other_rows(summarize.Results(
            [lstm_bench, peers.results_json({"lstm_lm": 0.4e6}, "onnxruntime", "1.32.0")]))}[
                "LSTM language model from PyTorch, 8 tokens, batch 1, loaded from ONNX"]
        self.assertEqual((lstm.figure, lstm.result),
                         ("0.62x torch, 1.25x ONNX Runtime", "missed by 25%"))
        self.assertIn("libraries: ONNX Runtime 1.32.0", summarize.describe_run(res))

    def test_a_row_whose_check_failed_is_listed_not_timed(self):
        why = "resnet18: LibTorch's output against the loaded model's differs at 0"
        doc = {"benchmarks": [
            {"name": "resnet18/loaded", "run_name": "resnet18/loaded", "run_type": "iteration",
             "cpu_time": 27.0, "real_time": 27.0, "time_unit": "ms"},
            {"name": "resnet18/torch", "run_name": "resnet18/torch", "run_type": "iteration",
             "error_occurred": True, "error_message": why, "iterations": 0, "cpu_time": 0.0,
             "real_time": 0.0, "time_unit": "ms"}]}
        res = summarize.Results([doc])
        self.assertIsNone(res.time("resnet18/torch"))
        self.assertNotIn("resnet18 from PyTorch, 224x224, batch 1, loaded from ONNX",
                         {r.workload for r in summarize.other_rows(res)})
        self.assertIn(f"Not timed, their check failed:\n\n- resnet18/torch: {why}",
                      summarize.summary(res))

    def test_no_torch_column_without_a_torch_row(self):
        table = summarize.markdown_table(summarize.main_rows(self.res)
                                         + summarize.other_rows(self.res))
        self.assertIn("| workload | eager | graph | hand | graph figure |", table)
        self.assertNotIn("torch", table)

    def test_verdict_of_a_lower_bound(self):
        self.assertEqual(summarize.verdict(1.2, 1.7, at_least=True), "missed by 42%")

    def test_a_small_miss_is_a_percentage(self):
        # 1.13x against a 1.1x target: "missed by 1.0x" would say nothing.
        self.assertEqual(summarize.verdict(1.13, 1.1), "missed by 3%")
        self.assertEqual(summarize.verdict(2.2, 1.1), "missed by 2.0x")
        self.assertEqual(summarize.verdict(1.1, 1.1), "met")

    def test_summary_names_the_load(self):
        text = summarize.summary(self.res)
        self.assertIn("| MSE, float32, 1e6 | 700 µs | 500 µs | 100 µs | 5.00x hand | ≤ 1.1x | "
                      "**missed by 4.5x** |", text)
        self.assertIn("load average 1.50 to 2.50", text)

    def test_dense_lists_every_hand_row_fastest_first(self):
        def row(name, ms):
            return {"name": name, "run_name": name, "run_type": "iteration", "time_unit": "ms",
                    "cpu_time": ms, "real_time": ms}
        res = summarize.Results([{
            "context": {"date": "2026-11-27", "onednn": "2.6.3", "openblas_core": "Zen"},
            "benchmarks": [row("dense/hand_cblas", 1.2), row("dense/hand_onednn", 1.0),
                           row("dense/hand_eigen_native", 1.1), row("dense/graph", 1.25)]}])
        text = summarize.summary(res)
        self.assertIn("Dense 256x512 · 512x512 + bias: graph 1.25 ms, 0.80 of the fastest "
                      "library's speed; the hand rows, fastest first: oneDNN 1.00 ms, "
                      "Eigen -march=native 1.10 ms, OpenBLAS sgemm 1.20 ms.", text)
        self.assertIn("libraries: oneDNN 2.6.3, OpenBLAS with its Zen kernels", text)

    def test_conv_against_its_hand_rows_and_an_sgemm_of_its_size(self):
        def row(name, ms):
            return {"name": name, "run_name": name, "run_type": "iteration", "time_unit": "ms",
                    "cpu_time": ms, "real_time": ms}
        res = summarize.Results([{"benchmarks": [
            row("conv_guide/hand_onednn", 100.0), row("conv_guide/hand_im2col_cblas", 150.0),
            row("conv_guide/sgemm_cblas", 90.0), row("conv_guide/sgemm_onednn", 80.0),
            row("conv_guide/graph", 125.0), row("conv_guide/eager", 126.0)]}])
        rows = {r.workload: r for r in summarize.other_rows(res)}
        ratio = rows["Conv2D(100, 3) on [1, 200, 200, 100] (7.1 GFLOP)"]
        self.assertEqual((ratio.figure, ratio.result), ("1.25x hand", "missed by 14%"))
        speed = rows["Conv2D(100, 3), against a matrix product of its size"]
        self.assertEqual((speed.figure, speed.target, speed.result),
                         ("0.64 of sgemm's speed (80.0 ms)", "≥ 0.7", "missed by 10%"))
        self.assertIn("Conv2D(100, 3) on [1, 200, 200, 100]: graph 125 ms, 0.80 of the fastest "
                      "library's speed; the hand rows, fastest first: oneDNN 100 ms, "
                      "im2col + OpenBLAS sgemm 150 ms.", summarize.summary(res))

    def test_widest_instruction_set_against_the_baseline(self):
        def row(name, us):
            return {"name": name, "run_name": name, "run_type": "iteration", "time_unit": "us",
                    "cpu_time": us, "real_time": us}
        label = "fused elementwise chain, float32 64K: widest vectors against SSE2"
        both = summarize.Results([{"benchmarks": [
            row("isa_chain_f32_64k/graph_baseline", 90.0), row("isa_chain_f32_64k/graph_avx2", 40.0),
            row("isa_chain_f32_64k/graph_avx512", 30.0)]}])
        widest = {r.workload: r for r in summarize.other_rows(both)}[label]
        self.assertEqual((widest.figure, widest.result),
                         ("3.00x the baseline's speed (avx512)", "met"))
        avx2_only = summarize.Results([{"benchmarks": [
            row("isa_chain_f32_64k/graph_baseline", 90.0), row("isa_chain_f32_64k/graph_avx2", 60.0)]}])
        slow = {r.workload: r for r in summarize.other_rows(avx2_only)}[label]
        self.assertEqual((slow.figure, slow.target), ("1.50x the baseline's speed (avx2)", "≥ 2x"))
        self.assertNotEqual(slow.result, "met")

    def test_readme_rewritten_between_the_markers_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            readme = os.path.join(tmp, "README.md")
            with open(readme, "w", encoding="utf-8") as f:
                f.write(f"# Title\n\n{summarize.BEGIN_MARKER}\nold table\n"
                        f"{summarize.END_MARKER}\n\nafter\n")
            fixture = [os.path.join(HERE, "testdata", n + ".json")
                       for n in ("runtime_bench", "control_bench")]
            with open(os.devnull, "w") as quiet:
                stdout, sys.stdout = sys.stdout, quiet
                try:
                    summarize.main(fixture + ["--readme", readme])
                finally:
                    sys.stdout = stdout
            with open(readme, encoding="utf-8") as f:
                text = f.read()
        self.assertTrue(text.startswith(f"# Title\n\n{summarize.BEGIN_MARKER}\n"))
        self.assertTrue(text.endswith(f"{summarize.END_MARKER}\n\nafter\n"))
        self.assertNotIn("old table", text)
        self.assertIn("| cache hit, full call |", text)

    def test_missing_markers_are_an_error(self):
        with self.assertRaises(ValueError):
            summarize.replace_between_markers("no markers here", "table")


if __name__ == "__main__":
    unittest.main()
