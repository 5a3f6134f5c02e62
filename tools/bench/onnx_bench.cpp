// onnx_bench: models loaded with ag::onnx::load against the traced functions
// they were exported from (target: the same speed, within 5%). Each workload
// runs both ways in one process, side by side:
//   <workload>/traced   the ag::function, its trace cached by a warm-up call
//   <workload>/loaded   ag::onnx::load of what ag::onnx::save wrote of that trace
// Workloads:
//   dense_256x512x512  relu(x w + b): x [256, 512]; w [512, 512] and b [512]
//                      are ag::Variables, initializers in the model
//   tanh_loop          the TensorFlow guide's while (reduce_sum(x) > 1) x = tanh(x),
//                      x = uniform(5): 18 iterations
//   add_one            x + 1 on a float32 scalar: the cost of a call itself
//   conv_guide         the guide's Conv2D(100, 3) with its bias on a [1, 200, 200,
//                      100] image; filter and bias are ag::Variables
// The loaded results are checked against the traced ones before timing.
// With AG_BENCH_TORCH_MODELS=<folder> (run.sh exports resnet18 and
// mobilenet_v2 there with tests/onnx/torch_models.py, 224x224 images, batch 1,
// its LSTM language model on 8 tokens and its bidirectional GRU (8 steps,
// batch 1, 24 units), where Debian's python3-torch and
// python3-torchvision are installed), each
// model of the folder is also a workload, <name>/loaded, its output checked
// against PyTorch's within 1e-3 of its largest value. Where the folder also
// holds the model as TorchScript (model.pt, torch_models.py --torchscript)
// and CMake found LibTorch (AG_BENCH_TORCH), <name>/torch runs it in
// LibTorch (torch_peer.h: torch::jit::load, eval, optimize_for_inference,
// torch::InferenceMode, one intra-op thread) on the same input, its (first)
// output first checked against the loaded model's the same way; a model that does
// not load or disagrees is reported as the row's error, never timed.
// Times are CPU time per call. Run it through tools/bench/run.sh.
//
// With AG_BENCH_MODELS=<folder>, each workload's model is also written there
// for tools/bench/peers.py, which runs it in ONNX Runtime: <name>.onnx, and
// its input and this runtime's output as <name>.input.f32 / <name>.output.f32
// (raw float32) with their shapes in <name>.json.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ag/ag.h>
#include <ag/onnx.h>
#include <onnx/onnx_pb.h>

#include "bench_util.h"
#include "tensor_proto.h"
#if AG_BENCH_TORCH
#include "torch_peer.h"
#endif

namespace {

using ag::Tensor;

// A traced function of one tensor and the model exported from its trace.
struct Workload {
  std::string name;
  std::function<Tensor(const Tensor&)> traced;
  std::unique_ptr<ag::onnx::Model> loaded;
  Tensor input;
};

// The model, its input and output, for tools/bench/peers.py (see the top).
void write_for_peers(const std::string& name, const std::string& model_bytes, const Tensor& input,
                     const Tensor& output) {
  const std::string folder = ag_bench::peer_folder();
  if (folder.empty()) return;
  const std::string base = folder + "/" + name;
  std::ofstream(base + ".onnx", std::ios::binary) << model_bytes;
  ag_bench::write_floats(base + ".input.f32", input);
  ag_bench::write_floats(base + ".output.f32", output);
  std::ofstream(base + ".json") << "{\"input_shape\": " << ag_bench::shape_json(input)
                                << ", \"output_shape\": " << ag_bench::shape_json(output) << "}\n";
}

template <class F>
// The loaded model computes what the trace computes: bit for bit, or within
// `tolerance` where the model's layout differs (conv_guide: ONNX's NCHW
// convolution sums in another order than the trace's NHWC one).
Workload make_workload(const std::string& name, const F& fn, const Tensor& input,
                       std::optional<ag_bench::Tolerance> tolerance = std::nullopt) {
  Workload w{name, [fn](const Tensor& x) { return fn(x); }, nullptr, input};
  const std::string bytes = ag::onnx::save_to_bytes(fn.get_concrete_function(input).graph());
  w.loaded = std::make_unique<ag::onnx::Model>(ag::onnx::load_from_bytes(bytes));
  const Tensor want = w.traced(input), got = (*w.loaded)({input})[0];
  if (tolerance) {
    if (want.shape() != got.shape()) ag_bench::fail(name + ": the loaded model's shape differs");
    ag_bench::check_close(name + ": the loaded model against the trace", want.data<float>(),
                          got.data<float>(), want.num_elements(), *tolerance);
  } else {
    ag_bench::check_same("the loaded model against the trace", want, got);
  }
  write_for_peers(name, bytes, input, want);
  return w;
}

Workload& dense() {
  static ag::Variable w(ag::random_normal({512, 512}, 0.0, 0.05, ag::float32, /*seed=*/6));
  static ag::Variable b(ag::random_normal({512}, 0.0, 1.0, ag::float32, /*seed=*/7));
  static Workload workload = make_workload(
      "dense_256x512x512",
      ag::function([](Tensor x) { return ag::relu(ag::matmul(x, w.read()) + b.read()); }),
      ag::random_normal({256, 512}, 0.0, 1.0, ag::float32, /*seed=*/5));
  return workload;
}

Workload& tanh_loop() {
  static Workload workload =
      make_workload("tanh_loop", ag::function([](Tensor x) {
                      ag::while_stmt([&] { return ag::reduce_sum(x) > 1; },
                                     [&] { x = ag::tanh(x); }, ag::state({"x"}, x));
                      return x;
                    }),
                    ag::random_uniform({5}, 0.0, 1.0, ag::float32, 7));
  return workload;
}

Workload& add_one() {
  static Workload workload =
      make_workload("add_one", ag::function([](Tensor x) { return x + 1.0f; }), ag::constant(2.0f));
  return workload;
}

Workload& conv_guide() {
  static ag::Variable w(ag::random_normal({3, 3, 100, 100}, 0.0, 0.05, ag::float32, /*seed=*/2));
  static ag::Variable b(ag::random_normal({100}, 0.0, 1.0, ag::float32, /*seed=*/3));
  static Workload workload = make_workload(
      "conv_guide",
      ag::function([](Tensor x) { return ag::conv2d(x, w.read(), {1}, "VALID") + b.read(); }),
      ag::random_normal({1, 200, 200, 100}, 0.0, 1.0, ag::float32, /*seed=*/1),
      ag_bench::Tolerance{1e-4, 1e-4});
  return workload;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Tensor read_tensor(const std::filesystem::path& path) {
  ::onnx::TensorProto proto;
  if (!proto.ParseFromString(read_file(path)))
    ag_bench::fail(path.string() + " is not a TensorProto");
  return ag::onnx_io::tensor_from_proto(proto, path.filename().string());
}

// A model torch_models.py exported: the workload, its output here (which
// the peers are checked against) and its TorchScript file, if written.
struct TorchModel {
  Workload workload;
  Tensor output;
  std::filesystem::path torchscript;
};

// The 1e-3 of the largest value within which a model from PyTorch agrees.
ag_bench::Tolerance torch_model_tolerance(const std::vector<float>& expected) {
  return {1e-3 * ag_bench::largest_magnitude(expected), 0};
}

// A model torch_models.py exported (model.onnx, test_data_set_0/input_0.pb
// and output_0.pb, model.pt with --torchscript), loaded and checked against
// PyTorch's output.
TorchModel torch_model(const std::filesystem::path& folder) {
  const std::string name = folder.filename().string();
  const std::string bytes = read_file(folder / "model.onnx");
  Workload w{name, nullptr, std::make_unique<ag::onnx::Model>(ag::onnx::load_from_bytes(bytes)),
             read_tensor(folder / "test_data_set_0" / "input_0.pb")};
  const Tensor want = read_tensor(folder / "test_data_set_0" / "output_0.pb");
  Tensor got = (*w.loaded)({w.input})[0];
  if (want.shape() != got.shape()) ag_bench::fail(name + ": the loaded model's shape differs");
  const std::vector<float> expected = want.to_vector<float>();
  ag_bench::check_close(name + ": the loaded model against PyTorch", expected.data(),
                        got.data<float>(), got.num_elements(), torch_model_tolerance(expected));
  write_for_peers(name, bytes, w.input, got);
  std::filesystem::path script = folder / "model.pt";
  if (!std::filesystem::exists(script)) script.clear();
  return {std::move(w), std::move(got), std::move(script)};
}

// The models of AG_BENCH_TORCH_MODELS, in name order; none without it.
std::vector<TorchModel>& torch_models() {
  static std::vector<TorchModel> models = [] {
    std::vector<TorchModel> out;
    const char* folder = std::getenv("AG_BENCH_TORCH_MODELS");
    if (folder == nullptr || *folder == '\0') return out;
    std::vector<std::filesystem::path> folders;
    for (const auto& entry : std::filesystem::directory_iterator(folder))
      if (std::filesystem::exists(entry.path() / "model.onnx")) folders.push_back(entry.path());
    std::sort(folders.begin(), folders.end());
    for (const auto& path : folders) out.push_back(torch_model(path));
    return out;
  }();
  return models;
}

#if AG_BENCH_TORCH
// LibTorch's run of a model's TorchScript, loaded and run once, then checked
// against the output here; an error says why the row is not timed.
struct TorchPeer {
  std::shared_ptr<ag_bench::TorchScriptModel> model;
  std::string error;
};

TorchPeer torch_peer(const TorchModel& m) {
  TorchPeer peer;
  const Workload& w = m.workload;
  try {
    peer.model = std::make_shared<ag_bench::TorchScriptModel>(
        m.torchscript.string(), w.input.raw_data(),
        std::vector<int64_t>(w.input.shape().begin(), w.input.shape().end()),
        w.input.dtype() == ag::int64);
    peer.model->run();
  } catch (const std::exception& e) {
    peer.error = m.torchscript.string() + " does not run in LibTorch: " + e.what() + "; not timed";
    return peer;
  }
  const std::vector<float> want = m.output.to_vector<float>(), got = peer.model->output();
  if (ag::Shape(peer.model->output_shape()) != m.output.shape()) {
    peer.error = w.name + ": LibTorch's output shape differs from the loaded model's; not timed";
  } else if (std::string difference = ag_bench::first_difference(
                 want.data(), got.data(), int64_t(want.size()), torch_model_tolerance(want));
             !difference.empty()) {
    peer.error = w.name + ": LibTorch's output against the loaded model's " + difference +
                 " (beyond 1e-3 of its largest value); not timed";
  }
  return peer;
}

void register_torch_row(const TorchModel& m) {
  TorchPeer peer = torch_peer(m);
  benchmark::RegisterBenchmark((m.workload.name + "/torch").c_str(), [peer](
                                                                         benchmark::State& state) {
    if (!peer.error.empty()) {
      state.SkipWithError(peer.error.c_str());
      return;
    }
    for (auto _ : state) peer.model->run();
  })->Unit(benchmark::kMillisecond);
}
#endif

void bm_traced(benchmark::State& state, Workload& (*workload)()) {
  const Workload& w = workload();
  for (auto _ : state) benchmark::DoNotOptimize(w.traced(w.input));
}

void bm_loaded(benchmark::State& state, Workload& (*workload)()) {
  const Workload& w = workload();
  const std::vector<Tensor> inputs{w.input};
  for (auto _ : state) benchmark::DoNotOptimize((*w.loaded)(inputs));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (Workload& (*workload)() : {&dense, &tanh_loop, &add_one, &conv_guide}) {
    const std::string& name = workload().name;
    benchmark::RegisterBenchmark((name + "/traced").c_str(), bm_traced, workload);
    benchmark::RegisterBenchmark((name + "/loaded").c_str(), bm_loaded, workload);
  }
#if AG_BENCH_TORCH
  ag_bench::use_one_torch_thread();
#endif
  for (TorchModel& m : torch_models()) {
    const Workload& model = m.workload;
    benchmark::RegisterBenchmark((model.name + "/loaded").c_str(), [&model](
                                                                       benchmark::State& state) {
      const std::vector<Tensor> inputs{model.input};
      for (auto _ : state) benchmark::DoNotOptimize((*model.loaded)(inputs));
    })->Unit(benchmark::kMillisecond);
#if AG_BENCH_TORCH
    if (!m.torchscript.empty()) register_torch_row(m);
#endif
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
