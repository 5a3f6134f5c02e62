// threads_bench: issue 17's intra-op threads. The graph of MSE over 1e6
// floats and of the dense layer (256x512 by 512x512 plus bias), run with
// ag::set_intra_op_threads(1) and (2), side by side in one run. The target
// on a 2-core machine: 2 threads at least 1.7x as fast as one. Run it
// through tools/bench/run.sh (AG_BENCH_BINARIES=threads_bench) with nothing
// else running: a second busy core makes the ratio meaningless.
#include <benchmark/benchmark.h>

#include <string>

#include <ag/ag.h>

#include "bench_util.h"

namespace {

using ag::Tensor;

auto make_mse_fn() {
  return ag::function([](Tensor a, Tensor b) { return ag::reduce_mean(ag::square(a - b)); },
                      {.name = "mse"});
}
auto make_dense_fn() {
  return ag::function([](Tensor x, Tensor w, Tensor b) { return ag::matmul(x, w) + b; },
                      {.name = "dense"});
}

struct Workloads {
  Tensor mse_a = ag::random_uniform({1000000}, -1.0, 1.0, ag::float32, 3);
  Tensor mse_b = ag::random_uniform({1000000}, -1.0, 1.0, ag::float32, 4);
  Tensor dense_x = ag::random_normal({256, 512}, 0.0, 1.0, ag::float32, 5);
  Tensor dense_w = ag::random_normal({512, 512}, 0.0, 0.05, ag::float32, 6);
  Tensor dense_b = ag::random_normal({512}, 0.0, 1.0, ag::float32, 7);
  decltype(make_mse_fn()) mse = make_mse_fn();
  decltype(make_dense_fn()) dense = make_dense_fn();
};

Workloads& workloads() {
  static Workloads w;
  return w;
}

// Our kernels give the same bits with any thread count; OpenBLAS splits a
// product differently with more threads, so matmul results may round
// differently (relative `tolerance`).
template <class F>
void check_same_result(const char* what, F run, float tolerance) {
  ag::set_intra_op_threads(1);
  Tensor one = run();
  ag::set_intra_op_threads(2);
  Tensor two = run();
  ag::set_intra_op_threads(1);
  ag_bench::check_close(std::string(what) + ", 2 threads against 1", one.data<float>(),
                        two.data<float>(), one.num_elements(), {tolerance, tolerance});
}

void BM_mse_f32_1e6_graph(benchmark::State& state) {
  Workloads& w = workloads();
  ag::set_intra_op_threads(int(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(w.mse(w.mse_a, w.mse_b));
  ag::set_intra_op_threads(1);
}
BENCHMARK(BM_mse_f32_1e6_graph)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();

void BM_dense_256x512x512_graph(benchmark::State& state) {
  Workloads& w = workloads();
  ag::set_intra_op_threads(int(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(w.dense(w.dense_x, w.dense_w, w.dense_b));
  ag::set_intra_op_threads(1);
}
BENCHMARK(BM_dense_256x512x512_graph)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  Workloads& w = workloads();
  check_same_result("mse", [&] { return w.mse(w.mse_a, w.mse_b); }, 0.0f);
  check_same_result("dense", [&] { return w.dense(w.dense_x, w.dense_w, w.dense_b); }, 1e-5f);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
