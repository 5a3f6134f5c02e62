// model_bench: the models of the op library, each run three ways in one
// process, side by side:
//   <workload>/eager   the ag code, op by op
//   <workload>/graph   the same code in ag::function, after a warm-up call
//   <workload>/torch   the same model written with torch::nn's modules, on
//                      one intra-op thread (torch_peer.h), where CMake found
//                      LibTorch (AG_BENCH_TORCH)
// Workloads:
//   lstm_lm_step   an LSTM language model's training step: tokens [16, 32]
//                  from a vocabulary of 512, embedding 64, one LSTM layer of
//                  128 units (ag::rnn::lstm: one op, oneDNN's LSTM
//                  primitives for float32), a dense layer to the vocabulary, mean
//                  sparse softmax cross-entropy against the next tokens, SGD
//   encoder_layer  a transformer encoder layer's forward and backward:
//                  x [8, 64, 128], 4 heads, feed-forward 512, post-norm,
//                  relu; loss = sum(layer(x) * probe) and its gradient with
//                  respect to the layer's 16 weights
//   digits_step    examples/digits's CNN training step (ag::layers): images
//                  [32, 8, 8, 1], two 3x3 "same" convolutions (16, 32
//                  channels) with relu and 2x2 max pools, a dense layer to
//                  10 logits, mean sparse softmax cross-entropy, Adam
// Before timing, one call of each variant from the same weights is checked
// against eager: the losses and the updated weights (or gradients), within
// float32 rounding. run.sh's summary has the targets: graph <= 1.0x torch.
// Times are CPU time per call. Run it through tools/bench/run.sh.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>
#include <ag/rnn.h>

#include "bench_util.h"
#include "model_workloads.h"
#if AG_BENCH_TORCH
#include "torch_peer.h"
#endif

namespace {

using ag::Tensor;
using namespace ag_models;

std::vector<float> values(const Tensor& t) {
  return t.to_vector<float>();
}

auto make_lm_graph_step(LstmLm& model) {
  return ag::function([&model](const Tensor& tokens,
                               const Tensor& targets) { return model.train_step(tokens, targets); },
                      {.name = "lstm_lm_step", .arg_names = {"tokens", "targets"}});
}

#if AG_BENCH_TORCH
std::unique_ptr<ag_bench::TorchLstmLm> make_torch_lm() {
  const LstmLmInputs& in = lm_inputs();
  const std::vector<Tensor>& w = in.weights;
  return std::make_unique<ag_bench::TorchLstmLm>(
      kLmBatch, kLmTime, kLmVocab, kLmEmbed, kLmUnits, kLmLearningRate,
      ag_bench::LstmLmWeights{values(w[0]), values(w[1]), values(w[2]), values(w[3]), values(w[4]),
                              values(w[5])},
      in.token_values.data(), in.target_values.data());
}

std::vector<std::vector<float>> torch_lm_weights(const ag_bench::TorchLstmLm& torch) {
  ag_bench::LstmLmWeights w = torch.weights();
  return {w.embedding, w.kernel, w.recurrent_kernel, w.bias, w.dense, w.dense_bias};
}
#endif

// One step of each variant from the same weights: the same loss and updated weights.
void check_lm_variants_agree() {
  const LstmLmInputs& in = lm_inputs();
  LstmLm eager, graph;
  const float eager_loss = eager.train_step(in.tokens, in.targets).item<float>();
  const float graph_loss = make_lm_graph_step(graph)(in.tokens, in.targets).item<float>();
  const ag_bench::Tolerance loss_tolerance{1e-5, 1e-4};
  ag_bench::check_close("lstm_lm graph loss", std::vector<float>{eager_loss},
                        std::vector<float>{graph_loss}, loss_tolerance);
  ag_bench::check_all_close("lstm_lm graph weight", ag_bench::values_of(eager.current()),
                            ag_bench::values_of(graph.current()));
#if AG_BENCH_TORCH
  auto torch = make_torch_lm();
  ag_bench::check_close("lstm_lm torch loss", std::vector<float>{eager_loss},
                        std::vector<float>{torch->train_step()}, loss_tolerance);
  ag_bench::check_all_close("lstm_lm torch weight", ag_bench::values_of(eager.current()),
                            torch_lm_weights(*torch));
#endif
}

void bm_lm_eager(benchmark::State& state) {
  const LstmLmInputs& in = lm_inputs();
  LstmLm model;
  for (auto _ : state) benchmark::DoNotOptimize(model.train_step(in.tokens, in.targets));
}

void bm_lm_graph(benchmark::State& state) {
  const LstmLmInputs& in = lm_inputs();
  LstmLm model;
  auto step = make_lm_graph_step(model);
  step(in.tokens, in.targets);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(step(in.tokens, in.targets));
}

#if AG_BENCH_TORCH
void bm_lm_torch(benchmark::State& state) {
  auto torch = make_torch_lm();
  for (auto _ : state) benchmark::DoNotOptimize(torch->train_step());
}
#endif

auto make_encoder_graph(const EncoderLayer& layer) {
  return ag::function(
      [&layer](const Tensor& x, const Tensor& probe) { return layer.forward_backward(x, probe); },
      {.name = "encoder_layer", .arg_names = {"x", "probe"}});
}

#if AG_BENCH_TORCH
std::unique_ptr<ag_bench::TorchEncoderLayer> make_torch_encoder() {
  const EncoderInputs& in = encoder_inputs();
  std::vector<std::vector<float>> w = ag_bench::values_of(in.weights);
  ag_bench::EncoderLayerWeights weights{w[0], w[1], w[2],  w[3],  w[4],  w[5],  w[6],  w[7],
                                        w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15]};
  return std::make_unique<ag_bench::TorchEncoderLayer>(kEncBatch, kEncTime, kEncWidth, kEncHeads,
                                                       kEncFf, weights, in.x.data<float>(),
                                                       in.probe.data<float>());
}
#endif

// Each variant's loss and gradients from the same weights agree.
void check_encoder_variants_agree() {
  const EncoderInputs& in = encoder_inputs();
  EncoderLayer layer;
  std::vector<Tensor> eager = layer.forward_backward(in.x, in.probe);
  std::vector<Tensor> graph = make_encoder_graph(layer)(in.x, in.probe);
  // A sum of 65,536 products, accumulated in other orders.
  const ag_bench::Tolerance loss_tolerance{1e-2, 1e-4};
  const float loss = eager[0].item<float>();
  ag_bench::check_close("encoder graph loss", std::vector<float>{loss},
                        std::vector<float>{graph[0].item<float>()}, loss_tolerance);
  ag_bench::check_all_close("encoder graph gradient", ag_bench::values_of(eager, 1),
                            ag_bench::values_of(graph, 1));
#if AG_BENCH_TORCH
  auto torch = make_torch_encoder();
  ag_bench::check_close("encoder torch loss", std::vector<float>{loss},
                        std::vector<float>{torch->forward_backward()}, loss_tolerance);
  ag_bench::check_all_close("encoder torch gradient", ag_bench::values_of(eager, 1),
                            torch->gradients());
#endif
}

void bm_encoder_eager(benchmark::State& state) {
  const EncoderInputs& in = encoder_inputs();
  EncoderLayer layer;
  for (auto _ : state) benchmark::DoNotOptimize(layer.forward_backward(in.x, in.probe));
}

void bm_encoder_graph(benchmark::State& state) {
  const EncoderInputs& in = encoder_inputs();
  EncoderLayer layer;
  auto both = make_encoder_graph(layer);
  both(in.x, in.probe);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(both(in.x, in.probe));
}

#if AG_BENCH_TORCH
void bm_encoder_torch(benchmark::State& state) {
  auto torch = make_torch_encoder();
  for (auto _ : state) benchmark::DoNotOptimize(torch->forward_backward());
}
#endif

auto make_digits_graph_step(DigitsCnn& cnn) {
  return ag::function(
      [&cnn](const Tensor& images, const Tensor& labels) { return cnn.train_step(images, labels); },
      {.name = "digits_step", .arg_names = {"images", "labels"}});
}

#if AG_BENCH_TORCH
std::unique_ptr<ag_bench::TorchDigitsCnn> make_torch_digits() {
  const DigitsInputs& in = digits_inputs();
  std::vector<std::vector<float>> w = ag_bench::values_of(in.weights);
  return std::make_unique<ag_bench::TorchDigitsCnn>(
      kDigitsBatch, kDigitsLearningRate,
      ag_bench::DigitsCnnWeights{w[0], w[1], w[2], w[3], w[4], w[5]}, in.images.data<float>(),
      in.label_values.data());
}
#endif

// One step of each variant from the same weights: the same loss and updated weights.
void check_digits_variants_agree() {
  const DigitsInputs& in = digits_inputs();
  DigitsCnn eager, graph;
  const float eager_loss = eager.train_step(in.images, in.labels).item<float>();
  const float graph_loss = make_digits_graph_step(graph)(in.images, in.labels).item<float>();
  const ag_bench::Tolerance loss_tolerance{1e-5, 1e-4};
  ag_bench::check_close("digits graph loss", std::vector<float>{eager_loss},
                        std::vector<float>{graph_loss}, loss_tolerance);
  ag_bench::check_all_close("digits graph weight", ag_bench::values_of(eager.current()),
                            ag_bench::values_of(graph.current()));
#if AG_BENCH_TORCH
  auto torch = make_torch_digits();
  ag_bench::check_close("digits torch loss", std::vector<float>{eager_loss},
                        std::vector<float>{torch->train_step()}, loss_tolerance);
  ag_bench::check_all_close("digits torch weight", ag_bench::values_of(eager.current()),
                            torch->weights());
#endif
}

void bm_digits_eager(benchmark::State& state) {
  const DigitsInputs& in = digits_inputs();
  DigitsCnn cnn;
  for (auto _ : state) benchmark::DoNotOptimize(cnn.train_step(in.images, in.labels));
}

void bm_digits_graph(benchmark::State& state) {
  const DigitsInputs& in = digits_inputs();
  DigitsCnn cnn;
  auto step = make_digits_graph_step(cnn);
  step(in.images, in.labels);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(step(in.images, in.labels));
}

#if AG_BENCH_TORCH
void bm_digits_torch(benchmark::State& state) {
  auto torch = make_torch_digits();
  for (auto _ : state) benchmark::DoNotOptimize(torch->train_step());
}
#endif

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#if AG_BENCH_TORCH
  ag_bench::use_one_torch_thread();
#endif
  check_lm_variants_agree();
  check_encoder_variants_agree();
  check_digits_variants_agree();
  const auto ms = benchmark::kMillisecond;
  benchmark::RegisterBenchmark("lstm_lm_step/eager", bm_lm_eager)->Unit(ms);
  benchmark::RegisterBenchmark("lstm_lm_step/graph", bm_lm_graph)->Unit(ms);
  benchmark::RegisterBenchmark("encoder_layer/eager", bm_encoder_eager)->Unit(ms);
  benchmark::RegisterBenchmark("encoder_layer/graph", bm_encoder_graph)->Unit(ms);
  benchmark::RegisterBenchmark("digits_step/eager", bm_digits_eager)->Unit(ms);
  benchmark::RegisterBenchmark("digits_step/graph", bm_digits_graph)->Unit(ms);
#if AG_BENCH_TORCH
  benchmark::RegisterBenchmark("lstm_lm_step/torch", bm_lm_torch)->Unit(ms);
  benchmark::RegisterBenchmark("encoder_layer/torch", bm_encoder_torch)->Unit(ms);
  benchmark::RegisterBenchmark("digits_step/torch", bm_digits_torch)->Unit(ms);
#endif
  ag_bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
