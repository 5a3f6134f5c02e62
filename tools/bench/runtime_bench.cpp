// docs/architecture.md "Performance targets" benchmarks: for each workload, the same code run three
// ways in one process, side by side:
//   <workload>/hand_<how>  hand-written C++ (plain loops, Eigen or cblas)
//   <workload>/eager       plain ag ops, no ag::function
//   <workload>/graph       ag::function, trace cached by a warm-up call
// The hand variants run first, so every later row of a workload gets the
// counters x_hand (its time over the fastest hand variant) and, for graph,
// x_eager (ag_bench::RatioReporter). Times are CPU time per call. Run
// tools/bench/run.sh: its summary (tools/bench/summarize.py) compares the
// medians with the targets.
//
// Diagnostic rows: cache_hit/graph_lookup (the signature lookup of a
// repeated call only), cache_hit/graph_plan (the cached plan's run only),
// mse_f32_1e6/graph_square (square() in place of pow(., 2)), and
// mse_f32_5/{eager,graph}{,_check_numerics}: a float32 MSE of length 5, call
// overhead only, with ag::debugging::enable_check_numerics off (every other
// row runs with it off too) and on.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include <ag/ag.h>

#include "bench_util.h"
#include "guide_workloads.h"
#include "native_eigen.h"
#include "ops/isa.h"

#if AG_BENCH_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace {

// The CPU's model, as /proc/cpuinfo names it ("" elsewhere): the table's
// figures hold for that CPU only.
std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    return colon == std::string::npos ? "" : line.substr(line.find_first_not_of(' ', colon + 1));
  }
  return "";
}

using ag::Tensor;
using ag_bench::check_close;
using ag_bench::check_same;
using ag_bench::fail;
using ag_workloads::mean_squared_error;

// Graph and eager run the same kernels; hand versions may round differently.
constexpr ag_bench::Tolerance kTolerance{1e-3, 1e-3};

// ---- The workloads, written once with ag ops --------------------------------------

constexpr int kPowerN = 10;
constexpr int kPowerSteps = 100;

// The TensorFlow guide's power(x, y): y chained matmuls starting from the identity.
Tensor power(const Tensor& x, int steps) {
  Tensor result = ag::eye(kPowerN, x.dtype());
  for (int i = 0; i < steps; ++i) result = ag::matmul(x, result);
  return result;
}

Tensor dense(const Tensor& x, const Tensor& weights, const Tensor& bias) {
  return ag::matmul(x, weights) + bias;
}

Tensor add3(const Tensor& a, const Tensor& b, const Tensor& c) {
  return a + b + c;
}

auto make_power_fn() {
  return ag::function([](Tensor x, int steps) { return power(x, steps); }, {.name = "power"});
}
auto make_mse_fn() {
  return ag::function([](Tensor a, Tensor b) { return mean_squared_error(a, b); }, {.name = "mse"});
}
// Diagnostic: MSE with square() in place of pow(., 2), what an algebraic
// rewrite pow(x, 2) -> x * x would give.
auto make_mse_square_fn() {
  return ag::function([](Tensor a, Tensor b) { return ag::reduce_mean(ag::square(a - b)); },
                      {.name = "mse_square"});
}
auto make_dense_fn() {
  return ag::function([](Tensor x, Tensor w, Tensor b) { return dense(x, w, b); },
                      {.name = "dense"});
}
auto make_add3_fn() {
  return ag::function([](Tensor a, Tensor b, Tensor c) { return add3(a, b, c); }, {.name = "add3"});
}
// Trace plus optimise: a fresh function per call, so every call traces,
// optimises and compiles a body of about `nodes` nodes (5 per round: two
// constants, mul, add, tanh) and runs it once on a 4-element vector.
Tensor long_chain(Tensor x, int rounds) {
  for (int i = 0; i < rounds; ++i) x = ag::tanh(x * 0.5f + float(i % 7));
  return x;
}
constexpr int kNodesPerRound = 5;

using PowerFn = decltype(make_power_fn());
using MseFn = decltype(make_mse_fn());
using MseSquareFn = decltype(make_mse_square_fn());
using DenseFn = decltype(make_dense_fn());
using Add3Fn = decltype(make_add3_fn());

// ---- Hand-written C++ ---------------------------------------------------------------

// Integer power wraps on overflow, as the ag kernels do (they compute in the
// unsigned type), so the hand versions use uint32_t to stay defined.
template <class T>
using PowerMatrix = Eigen::Matrix<T, kPowerN, kPowerN, Eigen::RowMajor>;

// One fixed-size product out = x * in, i-k-j order so the inner loop is
// contiguous; __restrict and the constant size let the compiler vectorise it.
template <class T>
void matmul_fixed(const T* __restrict x, const T* __restrict in, T* __restrict out) {
  constexpr int n = kPowerN;
  for (int i = 0; i < n; ++i) {
    T row[n] = {};
    for (int k = 0; k < n; ++k) {
      T xik = x[i * n + k];
      for (int j = 0; j < n; ++j) row[j] += xik * in[k * n + j];
    }
    for (int j = 0; j < n; ++j) out[i * n + j] = row[j];
  }
}

template <class T>
void power_loops(const T* x, T* out) {
  constexpr int n = kPowerN;
  T a[n * n], b[n * n];
  for (int i = 0; i < n * n; ++i) a[i] = T(i % (n + 1) == 0);
  for (int s = 0; s < kPowerSteps; s += 2) {
    matmul_fixed(x, a, b);
    matmul_fixed(x, b, a);
  }
  static_assert(kPowerSteps % 2 == 0);
  std::memcpy(out, a, sizeof(T) * n * n);
}

template <class T>
void power_eigen(const T* x_data, T* out) {
  Eigen::Map<const PowerMatrix<T>> x(x_data);
  PowerMatrix<T> current = PowerMatrix<T>::Identity();
  PowerMatrix<T> next;
  for (int s = 0; s < kPowerSteps; ++s) {
    next.noalias() = x * current;
    current = next;
  }
  Eigen::Map<PowerMatrix<T>> result(out);
  result = current;
}

void power_cblas(const float* x, float* out) {
  constexpr int n = kPowerN;
  float a[n * n], b[n * n];
  for (int i = 0; i < n * n; ++i) a[i] = float(i % (n + 1) == 0);
  float* current = a;
  float* next = b;
  for (int s = 0; s < kPowerSteps; ++s) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, x, n, current, n, 0.0f,
                next, n);
    std::swap(current, next);
  }
  std::memcpy(out, current, sizeof(float) * n * n);
}

// int32 MSE as TensorFlow computes it: wrapping int32 arithmetic and a
// truncating mean.
int32_t mse_loops(const int32_t* a, const int32_t* b, int64_t n) {
  uint32_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t d = uint32_t(a[i]) - uint32_t(b[i]);
    sum += d * d;
  }
  return int32_t(sum) / int32_t(n);
}

float mse_loops(const float* a, const float* b, int64_t n) {
  return ag_bench::sum_of_squares(a, b, n) / float(n);
}

float mse_eigen(const float* a, const float* b, int64_t n) {
  Eigen::Map<const Eigen::VectorXf> va(a, n), vb(b, n);
  return (va - vb).squaredNorm() / float(n);
}

constexpr int kDenseRows = 256;
constexpr int kDenseIn = 512;
constexpr int kDenseOut = 512;

// The bias goes into the output first; gemm then adds the product (beta = 1).
void dense_cblas(const float* x, const float* w, const float* bias, float* out) {
  for (int i = 0; i < kDenseRows; ++i)
    std::memcpy(out + i * kDenseOut, bias, sizeof(float) * kDenseOut);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kDenseRows, kDenseOut, kDenseIn, 1.0f, x,
              kDenseIn, w, kDenseOut, 1.0f, out, kDenseOut);
}

using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
void dense_eigen(const float* x, const float* w, const float* bias, float* out) {
  Eigen::Map<const RowMatrixF> mx(x, kDenseRows, kDenseIn), mw(w, kDenseIn, kDenseOut);
  Eigen::Map<const Eigen::RowVectorXf> mb(bias, kDenseOut);
  Eigen::Map<RowMatrixF> mo(out, kDenseRows, kDenseOut);
  mo.noalias() = mx * mw;
  mo.rowwise() += mb;
}

void dense_eigen_march_native(const float* x, const float* w, const float* bias, float* out) {
  dense_eigen_native(x, w, bias, out, kDenseRows, kDenseIn, kDenseOut);
}

#if AG_BENCH_ONEDNN
// As dense_cblas, on oneDNN's sgemm (one thread: OMP_NUM_THREADS, run.sh).
void dense_onednn(const float* x, const float* w, const float* bias, float* out) {
  for (int i = 0; i < kDenseRows; ++i)
    std::memcpy(out + i * kDenseOut, bias, sizeof(float) * kDenseOut);
  if (dnnl_sgemm('N', 'N', kDenseRows, kDenseOut, kDenseIn, 1.0f, x, kDenseIn, w, kDenseOut, 1.0f,
                 out, kDenseOut) != dnnl_success)
    fail("dense: dnnl_sgemm failed");
}
#endif

// ---- Inputs and result checks ----------------------------------------------------------

struct Inputs {
  Tensor power_x_i32, power_x_f32;
  Tensor mse_true_i32, mse_pred_i32, mse_true_f32, mse_pred_f32, mse_true_f32_5, mse_pred_f32_5;
  Tensor dense_x, dense_w, dense_b;
  Tensor scalar_a, scalar_b, scalar_c;
  std::unique_ptr<PowerFn> power_fn;
  std::unique_ptr<MseFn> mse_fn;
  std::unique_ptr<MseSquareFn> mse_square_fn;
  Tensor trace_x, trace_blocked_x;  // the traced chains' arguments
  std::unique_ptr<DenseFn> dense_fn;
  std::unique_ptr<Add3Fn> add3_fn;
};

Inputs& inputs() {
  static Inputs in;
  return in;
}

void prepare_inputs() {
  Inputs& in = inputs();
  in.power_x_i32 = ag::random_uniform({kPowerN, kPowerN}, -1, 2, ag::int32, 1);
  // Rows summing to about 1 keep the float power finite and normal.
  in.power_x_f32 = ag::random_uniform({kPowerN, kPowerN}, 0.0, 0.2, ag::float32, 2);
  in.mse_true_i32 = ag::constant({1, 2, 3, 4, 5});
  in.mse_pred_i32 = ag::constant({2, 2, 5, 1, 0});
  in.mse_true_f32_5 = ag::constant({1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
  in.mse_pred_f32_5 = ag::constant({2.0f, 2.0f, 5.0f, 1.0f, 0.0f});
  in.mse_true_f32 = ag::random_uniform({1000000}, -1.0, 1.0, ag::float32, 3);
  in.mse_pred_f32 = ag::random_uniform({1000000}, -1.0, 1.0, ag::float32, 4);
  in.dense_x = ag::random_normal({kDenseRows, kDenseIn}, 0.0, 1.0, ag::float32, 5);
  in.dense_w = ag::random_normal({kDenseIn, kDenseOut}, 0.0, 0.05, ag::float32, 6);
  in.dense_b = ag::random_normal({kDenseOut}, 0.0, 1.0, ag::float32, 7);
  in.scalar_a = ag::constant(1.5f);
  in.scalar_b = ag::constant(2.25f);
  in.scalar_c = ag::constant(-0.75f);
  in.power_fn = std::make_unique<PowerFn>(make_power_fn());
  in.mse_fn = std::make_unique<MseFn>(make_mse_fn());
  in.mse_square_fn = std::make_unique<MseSquareFn>(make_mse_square_fn());
  in.trace_x = ag::constant({0.1f, 0.2f, 0.3f, 0.4f});
  in.trace_blocked_x = ag::random_uniform({4096}, -1.0, 1.0, ag::float32, 5);
  in.dense_fn = std::make_unique<DenseFn>(make_dense_fn());
  in.add3_fn = std::make_unique<Add3Fn>(make_add3_fn());

  // Warm-up calls trace and cache every signature; they also check results.
  {
    Tensor graph = (*in.power_fn)(in.power_x_i32, kPowerSteps);
    check_same("power_i32", power(in.power_x_i32, kPowerSteps), graph);
    uint32_t hand[kPowerN * kPowerN];
    power_loops(reinterpret_cast<const uint32_t*>(in.power_x_i32.data<int32_t>()), hand);
    check_close("power_i32 loops", hand, reinterpret_cast<const uint32_t*>(graph.data<int32_t>()),
                kPowerN * kPowerN, kTolerance);
    power_eigen(reinterpret_cast<const uint32_t*>(in.power_x_i32.data<int32_t>()), hand);
    check_close("power_i32 eigen", hand, reinterpret_cast<const uint32_t*>(graph.data<int32_t>()),
                kPowerN * kPowerN, kTolerance);
  }
  {
    Tensor graph = (*in.power_fn)(in.power_x_f32, kPowerSteps);
    check_same("power_f32", power(in.power_x_f32, kPowerSteps), graph);
    float hand[kPowerN * kPowerN];
    const float* x = in.power_x_f32.data<float>();
    power_loops(x, hand);
    check_close("power_f32 loops", hand, graph.data<float>(), kPowerN * kPowerN, kTolerance);
    power_eigen(x, hand);
    check_close("power_f32 eigen", hand, graph.data<float>(), kPowerN * kPowerN, kTolerance);
    power_cblas(x, hand);
    check_close("power_f32 cblas", hand, graph.data<float>(), kPowerN * kPowerN, kTolerance);
  }
  {
    Tensor graph = (*in.mse_fn)(in.mse_true_i32, in.mse_pred_i32);
    check_same("mse_i32", mean_squared_error(in.mse_true_i32, in.mse_pred_i32), graph);
    int32_t hand = mse_loops(in.mse_true_i32.data<int32_t>(), in.mse_pred_i32.data<int32_t>(), 5);
    check_close("mse_i32 loops", &hand, graph.data<int32_t>(), 1, kTolerance);
  }
  {
    Tensor graph = (*in.mse_fn)(in.mse_true_f32, in.mse_pred_f32);
    // The fused kernel sums block by block: the same values, added in another
    // order (the bound is in tests/runtime/pass_fusion_test.cpp).
    Tensor eager = mean_squared_error(in.mse_true_f32, in.mse_pred_f32);
    check_close("mse_f32", eager.data<float>(), graph.data<float>(), 1, kTolerance);
    const float *a = in.mse_true_f32.data<float>(), *b = in.mse_pred_f32.data<float>();
    float hand = mse_loops(a, b, 1000000);
    check_close("mse_f32 loops", &hand, graph.data<float>(), 1, kTolerance);
    hand = mse_eigen(a, b, 1000000);
    check_close("mse_f32 eigen", &hand, graph.data<float>(), 1, kTolerance);
    Tensor square = (*in.mse_square_fn)(in.mse_true_f32, in.mse_pred_f32);
    check_close("mse_f32 square", &hand, square.data<float>(), 1, kTolerance);
  }
  {
    Tensor graph = (*in.dense_fn)(in.dense_x, in.dense_w, in.dense_b);
    check_same("dense", dense(in.dense_x, in.dense_w, in.dense_b), graph);
    std::vector<float> hand(kDenseRows * kDenseOut);
    const float *x = in.dense_x.data<float>(), *w = in.dense_w.data<float>(),
                *b = in.dense_b.data<float>();
    dense_cblas(x, w, b, hand.data());
    check_close("dense cblas", hand.data(), graph.data<float>(), int64_t(hand.size()), kTolerance);
    dense_eigen(x, w, b, hand.data());
    check_close("dense eigen", hand.data(), graph.data<float>(), int64_t(hand.size()), kTolerance);
    dense_eigen_march_native(x, w, b, hand.data());
    check_close("dense eigen -march=native", hand.data(), graph.data<float>(), int64_t(hand.size()),
                kTolerance);
#if AG_BENCH_ONEDNN
    dense_onednn(x, w, b, hand.data());
    check_close("dense onednn", hand.data(), graph.data<float>(), int64_t(hand.size()), kTolerance);
#endif
  }
  {
    Tensor graph = (*in.add3_fn)(in.scalar_a, in.scalar_b, in.scalar_c);
    check_same("cache_hit", add3(in.scalar_a, in.scalar_b, in.scalar_c), graph);
    if ((*in.add3_fn).tracing_count() != 1) fail("cache_hit: add3 traced more than once");
  }
}

// ---- Benchmarks -------------------------------------------------------------------------

void bm_power_hand_loops_i32(benchmark::State& state) {
  const auto* x = reinterpret_cast<const uint32_t*>(inputs().power_x_i32.data<int32_t>());
  uint32_t out[kPowerN * kPowerN];
  for (auto _ : state) {
    power_loops(x, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
}
void bm_power_hand_eigen_i32(benchmark::State& state) {
  const auto* x = reinterpret_cast<const uint32_t*>(inputs().power_x_i32.data<int32_t>());
  uint32_t out[kPowerN * kPowerN];
  for (auto _ : state) {
    power_eigen(x, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
}
void bm_power_hand_loops_f32(benchmark::State& state) {
  const float* x = inputs().power_x_f32.data<float>();
  float out[kPowerN * kPowerN];
  for (auto _ : state) {
    power_loops(x, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
}
void bm_power_hand_eigen_f32(benchmark::State& state) {
  const float* x = inputs().power_x_f32.data<float>();
  float out[kPowerN * kPowerN];
  for (auto _ : state) {
    power_eigen(x, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
}
void bm_power_hand_cblas_f32(benchmark::State& state) {
  const float* x = inputs().power_x_f32.data<float>();
  float out[kPowerN * kPowerN];
  for (auto _ : state) {
    power_cblas(x, out);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
}
void bm_power_eager(benchmark::State& state, const Tensor* x) {
  for (auto _ : state) benchmark::DoNotOptimize(power(*x, kPowerSteps));
}
void bm_power_graph(benchmark::State& state, const Tensor* x) {
  const PowerFn& fn = *inputs().power_fn;
  for (auto _ : state) benchmark::DoNotOptimize(fn(*x, kPowerSteps));
}

void bm_mse_hand_loops_i32(benchmark::State& state) {
  const int32_t* a = inputs().mse_true_i32.data<int32_t>();
  const int32_t* b = inputs().mse_pred_i32.data<int32_t>();
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(mse_loops(a, b, 5));
  }
}
void bm_mse_hand_loops_f32(benchmark::State& state) {
  const float* a = inputs().mse_true_f32.data<float>();
  const float* b = inputs().mse_pred_f32.data<float>();
  for (auto _ : state) benchmark::DoNotOptimize(mse_loops(a, b, 1000000));
}
void bm_mse_hand_eigen_f32(benchmark::State& state) {
  const float* a = inputs().mse_true_f32.data<float>();
  const float* b = inputs().mse_pred_f32.data<float>();
  for (auto _ : state) benchmark::DoNotOptimize(mse_eigen(a, b, 1000000));
}
void bm_mse_eager(benchmark::State& state, const Tensor* a, const Tensor* b) {
  for (auto _ : state) benchmark::DoNotOptimize(mean_squared_error(*a, *b));
}
void bm_mse_graph(benchmark::State& state, const Tensor* a, const Tensor* b) {
  const MseFn& fn = *inputs().mse_fn;
  for (auto _ : state) benchmark::DoNotOptimize(fn(*a, *b));
}

// With ag::debugging::enable_check_numerics on for the row's duration.
template <void (*Row)(benchmark::State&, const Tensor*, const Tensor*)>
void bm_checking_numerics(benchmark::State& state, const Tensor* a, const Tensor* b) {
  ag::debugging::enable_check_numerics();
  Row(state, a, b);
  ag::debugging::disable_check_numerics();
}

void bm_mse_graph_square(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state)
    benchmark::DoNotOptimize((*in.mse_square_fn)(in.mse_true_f32, in.mse_pred_f32));
}

void bm_dense_hand(benchmark::State& state,
                   void (*hand)(const float*, const float*, const float*, float*)) {
  const Inputs& in = inputs();
  std::vector<float> out(kDenseRows * kDenseOut);
  for (auto _ : state) {
    hand(in.dense_x.data<float>(), in.dense_w.data<float>(), in.dense_b.data<float>(), out.data());
    benchmark::ClobberMemory();
  }
}
void bm_dense_eager(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize(dense(in.dense_x, in.dense_w, in.dense_b));
}
void bm_dense_graph(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize((*in.dense_fn)(in.dense_x, in.dense_w, in.dense_b));
}

void bm_cache_hit_hand(benchmark::State& state) {
  float a = 1.5f, b = 2.25f, c = -0.75f;
  for (auto _ : state) {
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(a + b + c);
  }
}
void bm_cache_hit_eager(benchmark::State& state) {
  const Inputs& in = inputs();
  for (auto _ : state) benchmark::DoNotOptimize(add3(in.scalar_a, in.scalar_b, in.scalar_c));
}
// The full call: signature hash and lookup, the plan run (two add kernels)
// and the returned tensor.
void bm_cache_hit_graph(benchmark::State& state) {
  const Inputs& in = inputs();
  const Add3Fn& fn = *in.add3_fn;
  for (auto _ : state) benchmark::DoNotOptimize(fn(in.scalar_a, in.scalar_b, in.scalar_c));
}
// Breakdown, 1: the signature lookup alone, as PolymorphicFunction::operator()
// does it for a repeated call (compare with the previous call's signature;
// no hashing).
void bm_cache_hit_lookup(benchmark::State& state) {
  namespace detail = ag::detail;
  const Inputs& in = inputs();
  const detail::FunctionCore& core = *in.add3_fn->core();
  for (auto _ : state) {
    std::tuple<const Tensor&, const Tensor&, const Tensor&> refs(in.scalar_a, in.scalar_b,
                                                                 in.scalar_c);
    benchmark::DoNotOptimize(
        core.find_recent({&refs, &detail::match_args<Tensor, Tensor, Tensor>}));
  }
}
// Breakdown, 2: running the cached plan alone (arena, kernels, output).
void bm_cache_hit_plan(benchmark::State& state) {
  namespace detail = ag::detail;
  const Inputs& in = inputs();
  const detail::FunctionCore& core = *in.add3_fn->core();
  detail::Hasher hasher;
  hasher.h = detail::mix(hasher.h, typeid(Tensor).hash_code());
  for (const Tensor* t : {&in.scalar_a, &in.scalar_b, &in.scalar_c})
    detail::visit_trace_type(hasher, *t);
  std::tuple<const Tensor&, const Tensor&, const Tensor&> refs(in.scalar_a, in.scalar_b,
                                                               in.scalar_c);
  const detail::ConcreteCore* concrete =
      core.find_exact(hasher.h, {&refs, &detail::match_args<Tensor, Tensor, Tensor>});
  if (!concrete) fail("cache_hit: no cached trace for add3");
  const Tensor* flat[] = {&in.scalar_a, &in.scalar_b, &in.scalar_c};
  std::vector<Tensor> outputs;
  for (auto _ : state) {
    detail::run_concrete(*concrete, flat, outputs);
    benchmark::DoNotOptimize(outputs.data());
  }
}

// One iteration: trace, optimise, compile the plan and, with `run`, run it
// once. The counter ms_per_1k_nodes divides by the traced body's node count.
// Freeing the function (its trace, optimised body and plan) is not tracing:
// it is timed apart, as free_ms_per_1k_nodes.
void bm_trace(benchmark::State& state, int nodes, const Tensor& x, bool run) {
  const int rounds = nodes / kNodesPerRound;
  size_t traced_nodes = 0;
  double free_seconds = 0;
  auto chain = [rounds](Tensor t) { return long_chain(t, rounds); };
  for (auto _ : state) {
    auto fn =
        std::make_unique<decltype(ag::function(chain))>(ag::function(chain, {.name = "chain"}));
    if (run) {
      benchmark::DoNotOptimize((*fn)(x));
    } else {
      benchmark::DoNotOptimize(fn->get_concrete_function(x));
    }
    state.PauseTiming();
    traced_nodes = fn->get_concrete_function(x).graph().num_nodes();
    const auto start = std::chrono::steady_clock::now();
    fn.reset();
    free_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    state.ResumeTiming();
  }
  state.counters["nodes"] = double(traced_nodes);
  // kInvert of a rate: time per iteration / value, so value = nodes / 1e6
  // gives milliseconds per 1,000 nodes.
  state.counters["ms_per_1k_nodes"] =
      benchmark::Counter(double(traced_nodes) / 1e6, benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  state.counters["free_ms_per_1k_nodes"] =
      free_seconds * 1e3 / double(state.iterations()) / (double(traced_nodes) / 1e3);
}

// The instruction sets of the fused loops (ops/isa.h): one elementwise
// chain, fused into one loop, on 64K float32 (in L2, so the arithmetic and
// not memory bounds it), traced and run with each instruction set this CPU
// has. The gain of the widest over the baseline is what a portable build
// gets from multiversioning.
void bm_isa_chain(benchmark::State& state, ag::ops::Isa isa) {
  const ag::ops::Isa saved = ag::ops::kernel_isa();
  ag::ops::set_kernel_isa(isa);
  auto chain = ag::function([](const Tensor& x) {
    return ag::maximum(x * x * 0.5f + x * 0.25f - 1.0f, 0.0f) * x - x / 3.0f;
  });
  const Tensor x = ag::random_uniform({65536}, -2, 2, ag::float32, 3);
  for (auto _ : state) benchmark::DoNotOptimize(chain(x));
  ag::ops::set_kernel_isa(saved);
}

void register_benchmarks() {
  Inputs& in = inputs();
  auto add = [](const std::string& name, auto fn, benchmark::TimeUnit unit) {
    benchmark::RegisterBenchmark(name.c_str(), fn)->Unit(unit);
  };
  using benchmark::kMicrosecond;
  using benchmark::kNanosecond;

  add("power_i32/hand_loops", bm_power_hand_loops_i32, kMicrosecond);
  add("power_i32/hand_eigen", bm_power_hand_eigen_i32, kMicrosecond);
  add(
      "power_i32/eager", [x = &in.power_x_i32](benchmark::State& s) { bm_power_eager(s, x); },
      kMicrosecond);
  add(
      "power_i32/graph", [x = &in.power_x_i32](benchmark::State& s) { bm_power_graph(s, x); },
      kMicrosecond);

  add("power_f32/hand_loops", bm_power_hand_loops_f32, kMicrosecond);
  add("power_f32/hand_eigen", bm_power_hand_eigen_f32, kMicrosecond);
  add("power_f32/hand_cblas", bm_power_hand_cblas_f32, kMicrosecond);
  add(
      "power_f32/eager", [x = &in.power_x_f32](benchmark::State& s) { bm_power_eager(s, x); },
      kMicrosecond);
  add(
      "power_f32/graph", [x = &in.power_x_f32](benchmark::State& s) { bm_power_graph(s, x); },
      kMicrosecond);

  auto mse_i32 = std::make_pair(&in.mse_true_i32, &in.mse_pred_i32);
  add("mse_i32_5/hand_loops", bm_mse_hand_loops_i32, kNanosecond);
  add(
      "mse_i32_5/eager",
      [=](benchmark::State& s) { bm_mse_eager(s, mse_i32.first, mse_i32.second); }, kNanosecond);
  add(
      "mse_i32_5/graph",
      [=](benchmark::State& s) { bm_mse_graph(s, mse_i32.first, mse_i32.second); }, kNanosecond);

  auto mse_f32_5 = std::make_pair(&in.mse_true_f32_5, &in.mse_pred_f32_5);
  add(
      "mse_f32_5/eager",
      [=](benchmark::State& s) { bm_mse_eager(s, mse_f32_5.first, mse_f32_5.second); },
      kNanosecond);
  add(
      "mse_f32_5/graph",
      [=](benchmark::State& s) { bm_mse_graph(s, mse_f32_5.first, mse_f32_5.second); },
      kNanosecond);
  add(
      "mse_f32_5/eager_check_numerics",
      [=](benchmark::State& s) {
        bm_checking_numerics<bm_mse_eager>(s, mse_f32_5.first, mse_f32_5.second);
      },
      kNanosecond);
  add(
      "mse_f32_5/graph_check_numerics",
      [=](benchmark::State& s) {
        bm_checking_numerics<bm_mse_graph>(s, mse_f32_5.first, mse_f32_5.second);
      },
      kNanosecond);

  auto mse_f32 = std::make_pair(&in.mse_true_f32, &in.mse_pred_f32);
  add("mse_f32_1e6/hand_loops", bm_mse_hand_loops_f32, kMicrosecond);
  add("mse_f32_1e6/hand_eigen", bm_mse_hand_eigen_f32, kMicrosecond);
  add(
      "mse_f32_1e6/eager",
      [=](benchmark::State& s) { bm_mse_eager(s, mse_f32.first, mse_f32.second); }, kMicrosecond);
  add(
      "mse_f32_1e6/graph",
      [=](benchmark::State& s) { bm_mse_graph(s, mse_f32.first, mse_f32.second); }, kMicrosecond);

  add("mse_f32_1e6/graph_square", bm_mse_graph_square, kMicrosecond);

  add("dense/hand_cblas", [](benchmark::State& s) { bm_dense_hand(s, dense_cblas); }, kMicrosecond);
  add("dense/hand_eigen", [](benchmark::State& s) { bm_dense_hand(s, dense_eigen); }, kMicrosecond);
  add(
      "dense/hand_eigen_native",
      [](benchmark::State& s) { bm_dense_hand(s, dense_eigen_march_native); }, kMicrosecond);
#if AG_BENCH_ONEDNN
  add(
      "dense/hand_onednn", [](benchmark::State& s) { bm_dense_hand(s, dense_onednn); },
      kMicrosecond);
#endif
  add("dense/eager", bm_dense_eager, kMicrosecond);
  add("dense/graph", bm_dense_graph, kMicrosecond);

  for (ag::ops::Isa isa : ag::ops::supported_isas()) {
    add(
        std::string("isa_chain_f32_64k/graph_") + ag::ops::isa_name(isa),
        [isa](benchmark::State& s) { bm_isa_chain(s, isa); }, kMicrosecond);
  }

  add("cache_hit/hand", bm_cache_hit_hand, kNanosecond);
  add("cache_hit/eager", bm_cache_hit_eager, kNanosecond);
  add("cache_hit/graph", bm_cache_hit_graph, kNanosecond);
  add("cache_hit/graph_lookup", bm_cache_hit_lookup, kNanosecond);
  add("cache_hit/graph_plan", bm_cache_hit_plan, kNanosecond);

  // The chain on a 4-element vector fuses into a flat program; on 4,096
  // elements into a blocked one, whose stages compose (not run here: 100k
  // nodes over 4,096 elements would time the kernels, not tracing).
  for (int nodes : {1000, 10000, 100000}) {
    std::string k = std::to_string(nodes / 1000) + "k";
    benchmark::RegisterBenchmark(
        ("trace_" + k + "/graph").c_str(),
        [nodes, x = &in.trace_x](benchmark::State& s) { bm_trace(s, nodes, *x, true); })
        ->Unit(benchmark::kMillisecond)
        ->MinTime(nodes >= 100000 ? 1.0 : 0.3);
    benchmark::RegisterBenchmark(
        ("trace_blocked_" + k + "/graph").c_str(),
        [nodes, x = &in.trace_blocked_x](benchmark::State& s) { bm_trace(s, nodes, *x, false); })
        ->Unit(benchmark::kMillisecond)
        ->MinTime(nodes >= 100000 ? 1.0 : 0.3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Which library kernels the hand rows and the runtime ran: OpenBLAS picks
  // its kernels by CPU model, and names them.
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
  // The instruction set of the runtime's elementwise and fused loops.
  benchmark::AddCustomContext("kernel_isa", ag::ops::isa_name(ag::ops::kernel_isa()));
  benchmark::AddCustomContext("cpu_model", cpu_model());
#if AG_BENCH_ONEDNN
  const dnnl_version_t* onednn = dnnl_version();
  benchmark::AddCustomContext("onednn", std::to_string(onednn->major) + "." +
                                            std::to_string(onednn->minor) + "." +
                                            std::to_string(onednn->patch));
#endif
  prepare_inputs();
  register_benchmarks();
  ag_bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
