// Peak heap bytes of one call: graph against eager against hand-written C++
// on the workloads whose plans plan_buffers_test.cpp counts (MSE over 1e6
// floats, collatz over 1e5 ints, dynamic_rnn 32x100x128); graph against
// eager on the guide's Conv2D(100, 3) and on the models of model_workloads.h
// (an LSTM language model's training step, a transformer encoder layer's
// forward and backward, LeNet-5's training step), whose weights are made
// with their function and counted with it; and, with
// AG_BENCH_TORCH_MODELS=<folder> (run.sh exports it), resnet18 from PyTorch
// loaded from ONNX (its `graph` row: the load and its weights counted with
// the call).
//
// This binary replaces malloc and its family (forwarding to glibc's own
// __libc_* functions) and counts the bytes every block holds
// (malloc_usable_size), so the runtime's blocks, arenas and graphs and the
// hand code's vectors are counted alike. One measurement:
//   1. the runtime's cache of freed large blocks is emptied, and the bytes
//      live then are the baseline (the inputs already exist);
//   2. the function is made (ag::function for the graph) and called once:
//      the graph traces and compiles, eager fills the block cache;
//   3. a second call; its peak over the baseline is `peak_bytes`, and what
//      is still live after it (the result gone) is `kept_bytes`.
// So peak_bytes is what one call needs with what its function keeps between
// calls (trace, plan, buffers, cached blocks), and kept_bytes that part.
// Run through tools/bench/run.sh; its summary prints the table.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <ag/ag.h>
#if AG_BENCH_ONNX
#include <ag/onnx.h>
#endif

#include "bench_util.h"
#include "core/block_cache.h"
#include "guide_workloads.h"
#include "model_workloads.h"

// ---- Counting malloc ------------------------------------------------------------------

extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* block);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* block, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void* __libc_valloc(size_t size);
void* __libc_pvalloc(size_t size);
}

namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

void count_allocated(void* block) {
  if (!block) return;
  const auto bytes = int64_t(malloc_usable_size(block));
  const int64_t live = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void count_freed(void* block) {
  if (block) g_live.fetch_sub(int64_t(malloc_usable_size(block)), std::memory_order_relaxed);
}

}  // namespace

extern "C" {

void* malloc(size_t size) {
  void* block = __libc_malloc(size);
  count_allocated(block);
  return block;
}

void free(void* block) {
  count_freed(block);
  __libc_free(block);
}

void* calloc(size_t count, size_t size) {
  void* block = __libc_calloc(count, size);
  count_allocated(block);
  return block;
}

void* realloc(void* block, size_t size) {
  const auto old_bytes = int64_t(block ? malloc_usable_size(block) : 0);
  void* moved = __libc_realloc(block, size);
  if (moved || size == 0) {  // otherwise the old block is still there
    g_live.fetch_sub(old_bytes, std::memory_order_relaxed);
    count_allocated(moved);
  }
  return moved;
}

void* reallocarray(void* block, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(block, bytes);
}

void* memalign(size_t alignment, size_t size) {
  void* block = __libc_memalign(alignment, size);
  count_allocated(block);
  return block;
}

void* aligned_alloc(size_t alignment, size_t size) {
  return memalign(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  void* block = memalign(alignment, size);
  if (!block) return ENOMEM;
  *out = block;
  return 0;
}

void* valloc(size_t size) {
  void* block = __libc_valloc(size);
  count_allocated(block);
  return block;
}

void* pvalloc(size_t size) {
  void* block = __libc_pvalloc(size);
  count_allocated(block);
  return block;
}

}  // extern "C"

// ---- Measuring ------------------------------------------------------------------------

namespace {

using ag::Tensor;

struct Bytes {
  int64_t peak = 0;
  int64_t kept = 0;
};

// `make()` makes the function and returns the call to measure, which
// discards its result.
using MakeCall = std::function<std::function<void()>()>;

Bytes measure(const MakeCall& make) {
  ag::detail::release_cached_blocks();
  const int64_t before = g_live.load();
  Bytes bytes;
  {
    auto call = make();
    call();
    g_peak.store(g_live.load());
    call();
    bytes.peak = g_peak.load() - before;
    bytes.kept = g_live.load() - before;
  }
  ag::detail::release_cached_blocks();
  return bytes;
}

struct Inputs {
  Tensor mse_a = ag::random_uniform({1000000}, -1.0, 1.0, ag::float32, 3);
  Tensor mse_b = ag::random_uniform({1000000}, -1.0, 1.0, ag::float32, 4);
  Tensor collatz_x = ag::range(ag::constant(1), ag::constant(100001));
  Tensor rnn_input = ag::random_uniform({32, 100, 128}, -1.0, 1.0, ag::float32, 5);
  Tensor rnn_state = ag::random_uniform({32, 128}, -1.0, 1.0, ag::float32, 6);
  Tensor conv_image = ag::random_normal({1, 200, 200, 100}, 0.0, 1.0, ag::float32, 1);
  Tensor conv_filter = ag::random_normal({3, 3, 100, 100}, 0.0, 0.05, ag::float32, 2);
  Tensor resnet_image = ag::random_uniform({1, 3, 224, 224}, 0.0, 1.0, ag::float32, 7);
};

const Inputs& inputs() {
  static const Inputs* in = new Inputs;
  return *in;
}

void add(const std::string& name, MakeCall make) {
  benchmark::RegisterBenchmark(("memory/" + name).c_str(),
                               [make](benchmark::State& state) {
                                 Bytes bytes;
                                 for (auto _ : state) bytes = measure(make);
                                 state.counters["peak_bytes"] = double(bytes.peak);
                                 state.counters["kept_bytes"] = double(bytes.kept);
                               })
      ->Iterations(1)
      ->Unit(benchmark::kMillisecond);
}

// `f`, the ag code, called on `args()` eagerly and through ag::function.
template <class F, class Args>
void add_eager_and_graph(const std::string& workload, F f, Args args) {
  add(workload + "/eager", [f, args]() -> std::function<void()> {
    return [f, args] { benchmark::DoNotOptimize(std::apply(f, args())); };
  });
  add(workload + "/graph", [f, args, workload]() -> std::function<void()> {
    auto fn = ag::function(f, {.name = workload});
    return [fn, args] { benchmark::DoNotOptimize(std::apply(fn, args())); };
  });
}

// A workload three ways: `hand` makes the hand-written call, and `f` eagerly
// and traced.
template <class F, class Args>
void add_workload(const std::string& workload, MakeCall hand, F f, Args args) {
  add(workload + "/hand", std::move(hand));
  add_eager_and_graph(workload, f, args);
}

// A model of model_workloads.h, eager and through ag::function: `make`
// makes the model, `call` runs it once.
template <class Model, class Call>
void add_model(const std::string& workload, Call call) {
  add(workload + "/eager", [call]() -> std::function<void()> {
    auto model = std::make_shared<Model>();
    return [model, call] { benchmark::DoNotOptimize(call(*model)); };
  });
  add(workload + "/graph", [call, workload]() -> std::function<void()> {
    auto model = std::make_shared<Model>();
    auto fn = ag::function([model, call] { return call(*model); }, {.name = workload});
    return [fn] { benchmark::DoNotOptimize(fn()); };
  });
}

#if AG_BENCH_ONNX
// resnet18 as run.sh exports it (tests/onnx/torch_models.py: model.onnx in
// AG_BENCH_TORCH_MODELS/resnet18), loaded and called on a [1, 3, 224, 224]
// image; nothing without the folder.
void register_loaded_models() {
  const char* folder = std::getenv("AG_BENCH_TORCH_MODELS");
  if (folder == nullptr || *folder == '\0') return;
  const std::string path = std::string(folder) + "/resnet18/model.onnx";
  add("resnet18/graph", [path]() -> std::function<void()> {
    auto model = std::make_shared<ag::onnx::Model>(ag::onnx::load(path));
    return [model] { benchmark::DoNotOptimize((*model)({inputs().resnet_image})); };
  });
}
#endif

void register_models() {
  add_model<ag_models::LstmLm>("lstm_lm_step", [](ag_models::LstmLm& model) {
    const ag_models::LstmLmInputs& in = ag_models::lm_inputs();
    return model.train_step(in.tokens, in.targets);
  });
  add_model<ag_models::EncoderLayer>("encoder_layer", [](ag_models::EncoderLayer& layer) {
    const ag_models::EncoderInputs& in = ag_models::encoder_inputs();
    return layer.forward_backward(in.x, in.probe);
  });
  add_model<ag_models::LenetTrainer>("lenet_step", [](ag_models::LenetTrainer& trainer) {
    const ag_models::LenetInputs& in = ag_models::lenet_inputs();
    return trainer.train_step(in.x, in.labels);
  });
#if AG_BENCH_ONNX
  register_loaded_models();
#endif
}

void register_benchmarks() {
  add_workload(
      "mse_f32_1e6",
      [] {
        return [] {
          const Inputs& in = inputs();
          benchmark::DoNotOptimize(
              ag_bench::sum_of_squares(in.mse_a.data<float>(), in.mse_b.data<float>(), 1000000) /
              1e6f);
        };
      },
      [](Tensor a, Tensor b) { return ag_workloads::mean_squared_error(a, b); },
      [] { return std::tie(inputs().mse_a, inputs().mse_b); });
  add_workload(
      "collatz_100000",
      [] {
        return [] {
          const Tensor& x = inputs().collatz_x;
          std::vector<int32_t> work(x.data<int32_t>(), x.data<int32_t>() + x.num_elements());
          benchmark::DoNotOptimize(ag_bench::collatz_hand(work.data(), int64_t(work.size())));
        };
      },
      [](Tensor x) { return ag_workloads::collatz_steps(x); },
      [] { return std::tie(inputs().collatz_x); });
  add_workload(
      "rnn_32x100x128",
      [] {
        return [] {
          const Inputs& in = inputs();
          std::vector<float> out(size_t(in.rnn_input.num_elements()));
          ag_bench::dynamic_rnn_hand(in.rnn_input.data<float>(), in.rnn_state.data<float>(),
                                     out.data(), 32, 100, 128);
          benchmark::DoNotOptimize(out.data());
        };
      },
      [](Tensor input, Tensor state) { return ag_workloads::dynamic_rnn(input, state); },
      [] { return std::tie(inputs().rnn_input, inputs().rnn_state); });
  add_eager_and_graph(
      "conv_guide",
      [](Tensor image, Tensor filter) { return ag::conv2d(image, filter, {1}, "VALID"); },
      [] { return std::tie(inputs().conv_image, inputs().conv_filter); });
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  (void)inputs();
  (void)ag_models::lm_inputs();
  (void)ag_models::encoder_inputs();
  (void)ag_models::lenet_inputs();
  register_benchmarks();
  register_models();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
