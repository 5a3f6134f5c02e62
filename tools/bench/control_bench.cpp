// control_bench: staged loops, each workload run three ways in one
// process, side by side (as in runtime_bench.cpp):
//   <workload>/hand   hand-written C++, the same algorithm with plain loops
//   <workload>/eager  the same ag code without ag::function: the control-flow
//                     statements run as ordinary C++ loops over eager tensors
//   <workload>/graph  ag::function: the loop is staged into a While node and
//                     runs in the executor; the trace is cached by a warm-up
// Every row gets the counters `iters` (loop iterations per call) and
// `ns_per_iter` (CPU time per call / iters); eager and graph rows get
// `x_hand`, graph rows `x_eager` (ag_bench::RatioReporter); run.sh's summary
// (tools/bench/summarize.py) compares them with the targets. Times are CPU
// time per call. Before timing, graph and eager results
// are checked to be bit-identical and the hand results to agree with them.
// Run tools/bench/run.sh (it runs runtime_bench, then this).
//
// The workloads (the TensorFlow guide examples):
//   tanh_loop        while (reduce_sum(x) > 1) x = tanh(x), x = uniform(5)
//                    (seed 7) in [0, 1). No print: the guide's print is
//                    left out so the loop, not the formatting, is timed.
//   fizzbuzz_<n>     for i in range(1, n + 1): counts i by class (fizzbuzz,
//                    fizz, buzz, other) in four int32 tensors, with the
//                    guide's if / else if chain, instead of printing.
//   collatz_<len>    the guide's vectorised step next_collatz(x) =
//                    where(x % 2 == 0, x // 2, 3 * x + 1), applied where
//                    x > 1 (so 1 stays 1), iterated while reduce_max(x) > 1;
//                    returns the number of steps. int32. len 2: x = [27, 97]
//                    (118 steps); len 100000: x = 1..100000 (350 steps; the
//                    largest value on the way is 1,570,824,736 < 2^31).
//   collatz_scalar   the guide's scalar collatz(27.0): while (a != 1) { if
//                    (a % 2 == 0) a = a / 2; else a = 3 * a + 1; ++counter }
//                    on a float64 scalar (111 iterations; an If per iteration).
//   rnn_<b>x<t>x<f>  the guide's dynamic_rnn: [batch, time, features] ->
//                    transpose -> for i in range(time) { state = input[i] +
//                    state; states.write(i, state) } -> stack -> transpose,
//                    with a static-size TensorArray. 2x3x4 (the guide's shape)
//                    and 32x100x128.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "bench_util.h"
#include "guide_workloads.h"

namespace {

using ag::Tensor;
using ag_bench::check_same;
using ag_bench::fail;

void check_close(const std::string& what, const auto* expected, const auto* actual, int64_t n) {
  ag_bench::check_close(what + ": hand and graph", expected, actual, n, {1e-4, 1e-4});
}

// ---- The workloads (guide_workloads.h) ---------------------------------------------

using ag_workloads::collatz_scalar;
using ag_workloads::collatz_steps;
using ag_workloads::dynamic_rnn;
using ag_workloads::fizzbuzz_count;
using ag_workloads::tanh_loop;

// ---- Hand-written C++ -------------------------------------------------------------------

// Returns the number of iterations.
int64_t tanh_loop_hand(float* x, int n) {
  int64_t iterations = 0;
  while (true) {
    float sum = 0;
    for (int i = 0; i < n; ++i) sum += x[i];
    if (!(sum > 1)) break;
    for (int i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
    ++iterations;
  }
  return iterations;
}

void fizzbuzz_hand(int32_t n, int32_t counts[4]) {
  int32_t fizzbuzz = 0, fizz = 0, buzz = 0, other = 0;
  for (int32_t i = 1; i <= n; ++i) {
    if (i % 15 == 0) {
      ++fizzbuzz;
    } else if (i % 3 == 0) {
      ++fizz;
    } else if (i % 5 == 0) {
      ++buzz;
    } else {
      ++other;
    }
  }
  counts[0] = fizzbuzz;
  counts[1] = fizz;
  counts[2] = buzz;
  counts[3] = other;
}

int32_t collatz_scalar_hand(double a) {
  int32_t counter = 0;
  while (a != 1) {
    a = std::fmod(a, 2.0) == 0 ? a / 2 : 3 * a + 1;
    ++counter;
  }
  return counter;
}

// ---- Inputs, functions and result checks ------------------------------------------------

auto make_tanh_fn() {
  return ag::function(tanh_loop, {.name = "tanh_loop"});
}
auto make_fizzbuzz_fn() {
  return ag::function(fizzbuzz_count, {.name = "fizzbuzz_count"});
}
auto make_collatz_fn() {
  return ag::function(collatz_steps, {.name = "collatz_steps"});
}
auto make_collatz_scalar_fn() {
  return ag::function(collatz_scalar, {.name = "collatz_scalar"});
}
auto make_rnn_fn() {
  return ag::function(dynamic_rnn, {.name = "dynamic_rnn"});
}

struct RnnShape {
  int64_t batch, time, features;
};
constexpr RnnShape kRnnSmall{2, 3, 4};
constexpr RnnShape kRnnLarge{32, 100, 128};

struct Inputs {
  Tensor tanh_x;
  Tensor collatz_2, collatz_1e5, collatz_scalar_a;
  Tensor rnn_small_in, rnn_small_init, rnn_large_in, rnn_large_init;
  std::unique_ptr<decltype(make_tanh_fn())> tanh_fn;
  std::unique_ptr<decltype(make_fizzbuzz_fn())> fizzbuzz_fn;
  std::unique_ptr<decltype(make_collatz_fn())> collatz_fn;
  std::unique_ptr<decltype(make_collatz_scalar_fn())> collatz_scalar_fn;
  std::unique_ptr<decltype(make_rnn_fn())> rnn_fn;
  // Loop iterations per call, from the hand versions.
  std::map<std::string, int64_t> iterations;
};

Inputs& inputs() {
  static Inputs in;
  return in;
}

Tensor iota_i32(int64_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = int32_t(i + 1);
  return ag::constant(v, ag::Shape{n});
}

void prepare_inputs() {
  Inputs& in = inputs();
  in.tanh_x = ag::random_uniform({5}, 0.0, 1.0, ag::float32, 7);
  in.collatz_2 = ag::constant({27, 97});
  in.collatz_1e5 = iota_i32(100000);
  in.collatz_scalar_a = ag::constant(27.0);
  in.rnn_small_in = ag::random_uniform({kRnnSmall.batch, kRnnSmall.time, kRnnSmall.features}, 0.0,
                                       1.0, ag::float32, 3);
  in.rnn_small_init = ag::zeros({kRnnSmall.batch, kRnnSmall.features});
  in.rnn_large_in = ag::random_uniform({kRnnLarge.batch, kRnnLarge.time, kRnnLarge.features}, 0.0,
                                       1.0, ag::float32, 4);
  in.rnn_large_init = ag::zeros({kRnnLarge.batch, kRnnLarge.features});
  in.tanh_fn = std::make_unique<decltype(make_tanh_fn())>(make_tanh_fn());
  in.fizzbuzz_fn = std::make_unique<decltype(make_fizzbuzz_fn())>(make_fizzbuzz_fn());
  in.collatz_fn = std::make_unique<decltype(make_collatz_fn())>(make_collatz_fn());
  in.collatz_scalar_fn =
      std::make_unique<decltype(make_collatz_scalar_fn())>(make_collatz_scalar_fn());
  in.rnn_fn = std::make_unique<decltype(make_rnn_fn())>(make_rnn_fn());

  // Warm-up calls trace and cache every signature; they also check results.
  {
    Tensor graph = (*in.tanh_fn)(in.tanh_x);
    check_same("tanh_loop", tanh_loop(in.tanh_x), graph);
    std::vector<float> hand = in.tanh_x.to_vector<float>();
    in.iterations["tanh_loop"] = tanh_loop_hand(hand.data(), 5);
    check_close("tanh_loop", hand.data(), graph.data<float>(), 5);
  }
  for (int32_t n : {100, 10000}) {
    std::string name = "fizzbuzz_" + std::to_string(n);
    Tensor graph = (*in.fizzbuzz_fn)(ag::constant(n));
    check_same(name, fizzbuzz_count(ag::constant(n)), graph);
    int32_t hand[4];
    fizzbuzz_hand(n, hand);
    check_close(name, hand, graph.data<int32_t>(), 4);
    in.iterations[name] = n;
  }
  for (const auto& [name, x] :
       {std::pair{"collatz_2", &in.collatz_2}, std::pair{"collatz_100000", &in.collatz_1e5}}) {
    Tensor graph = (*in.collatz_fn)(*x);
    check_same(name, collatz_steps(*x), graph);
    std::vector<int32_t> hand = x->to_vector<int32_t>();
    int32_t steps = ag_bench::collatz_hand(hand.data(), int64_t(hand.size()));
    check_close(name, &steps, graph.data<int32_t>(), 1);
    in.iterations[name] = steps;
  }
  {
    Tensor graph = (*in.collatz_scalar_fn)(in.collatz_scalar_a);
    check_same("collatz_scalar", collatz_scalar(in.collatz_scalar_a), graph);
    int32_t hand = collatz_scalar_hand(27.0);
    check_close("collatz_scalar", &hand, graph.data<int32_t>(), 1);
    in.iterations["collatz_scalar"] = hand;
  }
  for (const auto& [name, shape, input, init] :
       {std::tuple{"rnn_2x3x4", kRnnSmall, &in.rnn_small_in, &in.rnn_small_init},
        std::tuple{"rnn_32x100x128", kRnnLarge, &in.rnn_large_in, &in.rnn_large_init}}) {
    Tensor graph = (*in.rnn_fn)(*input, *init);
    check_same(name, dynamic_rnn(*input, *init), graph);
    std::vector<float> hand(size_t(input->num_elements()));
    ag_bench::dynamic_rnn_hand(input->data<float>(), init->data<float>(), hand.data(), shape.batch,
                               shape.time, shape.features);
    check_close(name, hand.data(), graph.data<float>(), int64_t(hand.size()));
    in.iterations[name] = shape.time;
  }
  if (in.tanh_fn->tracing_count() != 1 || in.fizzbuzz_fn->tracing_count() != 1 ||
      in.collatz_scalar_fn->tracing_count() != 1 || in.rnn_fn->tracing_count() != 2) {
    fail("a function traced more often than once per signature");
  }
}

// ---- Benchmarks -------------------------------------------------------------------------

void set_iterations(benchmark::State& state, const std::string& workload) {
  state.counters["iters"] = double(inputs().iterations.at(workload));
}

void bm_tanh_hand(benchmark::State& state) {
  const std::vector<float> x0 = inputs().tanh_x.to_vector<float>();
  float x[5];
  for (auto _ : state) {
    std::memcpy(x, x0.data(), sizeof x);
    benchmark::DoNotOptimize(x);
    benchmark::DoNotOptimize(tanh_loop_hand(x, 5));
  }
  set_iterations(state, "tanh_loop");
}
void bm_tanh_eager(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(tanh_loop(inputs().tanh_x));
  set_iterations(state, "tanh_loop");
}
void bm_tanh_graph(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize((*in.tanh_fn)(in.tanh_x));
  set_iterations(state, "tanh_loop");
}

void bm_fizzbuzz_hand(benchmark::State& state, int32_t n) {
  int32_t counts[4];
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    fizzbuzz_hand(n, counts);
    benchmark::DoNotOptimize(counts);
  }
  set_iterations(state, "fizzbuzz_" + std::to_string(n));
}
void bm_fizzbuzz_eager(benchmark::State& state, int32_t n) {
  const Tensor nt = ag::constant(n);
  for (auto _ : state) benchmark::DoNotOptimize(fizzbuzz_count(nt));
  set_iterations(state, "fizzbuzz_" + std::to_string(n));
}
void bm_fizzbuzz_graph(benchmark::State& state, int32_t n) {
  const Tensor nt = ag::constant(n);
  const auto& fn = *inputs().fizzbuzz_fn;
  for (auto _ : state) benchmark::DoNotOptimize(fn(nt));
  set_iterations(state, "fizzbuzz_" + std::to_string(n));
}

void bm_collatz_hand(benchmark::State& state, const char* name, const Tensor* x) {
  const std::vector<int32_t> x0 = x->to_vector<int32_t>();
  std::vector<int32_t> work(x0.size());
  for (auto _ : state) {
    std::copy(x0.begin(), x0.end(), work.begin());
    benchmark::DoNotOptimize(ag_bench::collatz_hand(work.data(), int64_t(work.size())));
  }
  set_iterations(state, name);
}
void bm_collatz_eager(benchmark::State& state, const char* name, const Tensor* x) {
  for (auto _ : state) benchmark::DoNotOptimize(collatz_steps(*x));
  set_iterations(state, name);
}
void bm_collatz_graph(benchmark::State& state, const char* name, const Tensor* x) {
  const auto& fn = *inputs().collatz_fn;
  for (auto _ : state) benchmark::DoNotOptimize(fn(*x));
  set_iterations(state, name);
}

void bm_collatz_scalar_hand(benchmark::State& state) {
  double a = 27.0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(collatz_scalar_hand(a));
  }
  set_iterations(state, "collatz_scalar");
}
void bm_collatz_scalar_eager(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(collatz_scalar(inputs().collatz_scalar_a));
  set_iterations(state, "collatz_scalar");
}
void bm_collatz_scalar_graph(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize((*in.collatz_scalar_fn)(in.collatz_scalar_a));
  set_iterations(state, "collatz_scalar");
}

void bm_rnn_hand(benchmark::State& state, const char* name, RnnShape shape, const Tensor* input,
                 const Tensor* init) {
  std::vector<float> out(size_t(input->num_elements()));
  for (auto _ : state) {
    ag_bench::dynamic_rnn_hand(input->data<float>(), init->data<float>(), out.data(), shape.batch,
                               shape.time, shape.features);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_iterations(state, name);
}
void bm_rnn_eager(benchmark::State& state, const char* name, const Tensor* input,
                  const Tensor* init) {
  for (auto _ : state) benchmark::DoNotOptimize(dynamic_rnn(*input, *init));
  set_iterations(state, name);
}
void bm_rnn_graph(benchmark::State& state, const char* name, const Tensor* input,
                  const Tensor* init) {
  const auto& fn = *inputs().rnn_fn;
  for (auto _ : state) benchmark::DoNotOptimize(fn(*input, *init));
  set_iterations(state, name);
}

void register_benchmarks() {
  Inputs& in = inputs();
  auto add = [](const std::string& name, auto fn, benchmark::TimeUnit unit) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(unit);
  };
  using benchmark::kMicrosecond;
  using benchmark::kNanosecond;

  add("tanh_loop/hand", bm_tanh_hand, kNanosecond);
  add("tanh_loop/eager", bm_tanh_eager, kMicrosecond);
  add("tanh_loop/graph", bm_tanh_graph, kMicrosecond);

  for (int32_t n : {100, 10000}) {
    std::string name = "fizzbuzz_" + std::to_string(n);
    add(name + "/hand", [n](benchmark::State& s) { bm_fizzbuzz_hand(s, n); }, kNanosecond);
    add(name + "/eager", [n](benchmark::State& s) { bm_fizzbuzz_eager(s, n); }, kMicrosecond);
    add(name + "/graph", [n](benchmark::State& s) { bm_fizzbuzz_graph(s, n); }, kMicrosecond);
  }

  for (const auto& [name, x] :
       {std::pair{"collatz_2", &in.collatz_2}, std::pair{"collatz_100000", &in.collatz_1e5}}) {
    auto unit = x->num_elements() > 100 ? benchmark::kMillisecond : kMicrosecond;
    add(
        std::string(name) + "/hand",
        [name, x](benchmark::State& s) { bm_collatz_hand(s, name, x); },
        x->num_elements() > 100 ? benchmark::kMillisecond : kNanosecond);
    add(
        std::string(name) + "/eager",
        [name, x](benchmark::State& s) { bm_collatz_eager(s, name, x); }, unit);
    add(
        std::string(name) + "/graph",
        [name, x](benchmark::State& s) { bm_collatz_graph(s, name, x); }, unit);
  }

  add("collatz_scalar/hand", bm_collatz_scalar_hand, kNanosecond);
  add("collatz_scalar/eager", bm_collatz_scalar_eager, kMicrosecond);
  add("collatz_scalar/graph", bm_collatz_scalar_graph, kMicrosecond);

  for (const auto& [name, shape, input, init] :
       {std::tuple{"rnn_2x3x4", kRnnSmall, &in.rnn_small_in, &in.rnn_small_init},
        std::tuple{"rnn_32x100x128", kRnnLarge, &in.rnn_large_in, &in.rnn_large_init}}) {
    add(
        std::string(name) + "/hand",
        [name, shape, input, init](benchmark::State& s) {
          bm_rnn_hand(s, name, shape, input, init);
        },
        shape.time > 10 ? kMicrosecond : kNanosecond);
    add(
        std::string(name) + "/eager",
        [name, input, init](benchmark::State& s) { bm_rnn_eager(s, name, input, init); },
        kMicrosecond);
    add(
        std::string(name) + "/graph",
        [name, input, init](benchmark::State& s) { bm_rnn_graph(s, name, input, init); },
        kMicrosecond);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  prepare_inputs();
  register_benchmarks();
  ag_bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
