// threads_bench: intra-op threads. The graph of MSE over 1e6
// floats and of the dense layer (256x512 by 512x512 plus bias), run with
// ag::set_intra_op_threads(1) and (2), side by side in one run. The target
// on a 2-core machine: 2 threads at least 1.7x as fast as one. MSE has a
// hand-written reference on 1 and 2 threads too (the second half on a
// spinning worker: no thread start, no wake-up), which shows what the
// machine's memory allows a 1e6-element pass to gain from a second core; the
// dense layer has oneDNN's sgemm called directly on 1 and 2 OpenMP threads,
// which shows what the two cores give a matrix product. Run it
// through tools/bench/run.sh (AG_BENCH_BINARIES=threads_bench) with nothing
// else running: a second busy core makes the ratio meaningless.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <ag/ag.h>

#include "bench_util.h"

#if AG_BENCH_ONEDNN
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#endif

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

// A worker thread that computes sum_of_squares of one range per request,
// waiting for requests by spinning (yielding the core to whatever else
// runs): the best case for a split of one call.
class SpinningWorker {
 public:
  SpinningWorker() : thread_([this] { serve(); }) {}
  ~SpinningWorker() {
    start(nullptr, nullptr, 0);  // a null range stops the worker
    thread_.join();
  }
  void start(const float* a, const float* b, int64_t n) {
    a_ = a, b_ = b, n_ = n;
    requested_.fetch_add(1, std::memory_order_release);
  }
  float wait() const {
    while (done_.load(std::memory_order_acquire) != requested_.load(std::memory_order_relaxed)) {
      std::this_thread::yield();
    }
    return sum_;
  }

 private:
  void serve() {
    for (uint64_t seen = 0;;) {
      uint64_t request;
      while ((request = requested_.load(std::memory_order_acquire)) == seen) {
        std::this_thread::yield();
      }
      seen = request;
      if (a_ == nullptr) return;
      sum_ = ag_bench::sum_of_squares(a_, b_, n_);
      done_.store(seen, std::memory_order_release);
    }
  }

  const float *a_ = nullptr, *b_ = nullptr;
  int64_t n_ = 0;
  float sum_ = 0;
  std::atomic<uint64_t> requested_{0}, done_{0};
  std::thread thread_;
};

float mse_hand(const float* a, const float* b, int64_t n, SpinningWorker* worker) {
  if (worker == nullptr) return ag_bench::sum_of_squares(a, b, n) / float(n);
  const int64_t half = n / 2;
  worker->start(a + half, b + half, n - half);
  float first = ag_bench::sum_of_squares(a, b, half);
  return (first + worker->wait()) / float(n);
}

void BM_mse_f32_1e6_hand(benchmark::State& state) {
  Workloads& w = workloads();
  std::unique_ptr<SpinningWorker> worker;
  if (state.range(0) == 2) worker = std::make_unique<SpinningWorker>();
  const float *a = w.mse_a.data<float>(), *b = w.mse_b.data<float>();
  for (auto _ : state)
    benchmark::DoNotOptimize(mse_hand(a, b, w.mse_a.num_elements(), worker.get()));
}
BENCHMARK(BM_mse_f32_1e6_hand)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();

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

#if AG_BENCH_ONEDNN
void BM_dense_256x512x512_hand(benchmark::State& state) {
  Workloads& w = workloads();
  const int64_t rows = 256, in = 512, out = 512;
  std::vector<float> y(size_t(rows * out));
  const float *x = w.dense_x.data<float>(), *weights = w.dense_w.data<float>(),
              *bias = w.dense_b.data<float>();
  omp_set_num_threads(int(state.range(0)));
  for (auto _ : state) {
    for (int64_t i = 0; i < rows; ++i) std::memcpy(y.data() + i * out, bias, sizeof(float) * out);
    if (dnnl_sgemm('N', 'N', rows, out, in, 1.0f, x, in, weights, out, 1.0f, y.data(), out) !=
        dnnl_success)
      ag_bench::fail("dense: dnnl_sgemm failed");
    benchmark::DoNotOptimize(y.data());
  }
  omp_set_num_threads(1);
}
BENCHMARK(BM_dense_256x512x512_hand)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime();
#endif

}  // namespace

int main(int argc, char** argv) {
  Workloads& w = workloads();
  check_same_result("mse", [&] { return w.mse(w.mse_a, w.mse_b); }, 0.0f);
  check_same_result("dense", [&] { return w.dense(w.dense_x, w.dense_w, w.dense_b); }, 1e-5f);
  {
    const float *a = w.mse_a.data<float>(), *b = w.mse_b.data<float>();
    const int64_t n = w.mse_a.num_elements();
    const float graph = w.mse(w.mse_a, w.mse_b).item<float>();
    SpinningWorker worker;
    for (float hand : {mse_hand(a, b, n, nullptr), mse_hand(a, b, n, &worker)}) {
      ag_bench::check_close("mse, hand against the graph", &graph, &hand, 1, {1e-6, 1e-4});
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
