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
//                  128 units (ag::rnn::dynamic_rnn of lstm_cell: a staged
//                  While when traced), a dense layer to the vocabulary, mean
//                  sparse softmax cross-entropy against the next tokens, SGD
//   encoder_layer  a transformer encoder layer's forward and backward:
//                  x [8, 64, 128], 4 heads, feed-forward 512, post-norm,
//                  relu; loss = sum(layer(x) * probe) and its gradient with
//                  respect to the layer's 16 weights
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
#if AG_BENCH_TORCH
#include "torch_peer.h"
#endif

namespace {

using ag::Tensor;
using ag::Variable;

std::vector<float> values(const Tensor& t) {
  return t.to_vector<float>();
}

// A float32 weight of `shape`, uniform in +-1/sqrt(fan_in) (torch::nn::Linear's
// initialisation); fan_in is the first dim unless given.
Tensor init_weight(std::vector<int64_t> shape, uint64_t seed, int64_t fan_in = 0) {
  const double bound = 1.0 / std::sqrt(double(fan_in ? fan_in : shape.front()));
  return ag::random_uniform(ag::Shape(std::move(shape)), -bound, bound, ag::float32, seed);
}

// The gradients (or updated weights) of two variants agree within float32
// rounding, relative to each one's largest magnitude.
void check_all_close(const std::string& what, const std::vector<std::vector<float>>& expected,
                     const std::vector<std::vector<float>>& actual) {
  if (expected.size() != actual.size()) ag_bench::fail(what + ": counts differ");
  for (size_t i = 0; i < expected.size(); ++i) {
    float largest = 0;
    for (float v : expected[i]) largest = std::max(largest, std::abs(v));
    ag_bench::check_close(what + " " + std::to_string(i), expected[i], actual[i],
                          {1e-3 * (1 + largest), 0});
  }
}

std::vector<std::vector<float>> values_of(const std::vector<Tensor>& tensors, size_t from = 0) {
  std::vector<std::vector<float>> out;
  for (size_t i = from; i < tensors.size(); ++i) out.push_back(values(tensors[i]));
  return out;
}

// ---- The LSTM language model's training step --------------------------------------------------

constexpr int64_t kLmBatch = 16, kLmTime = 32, kLmVocab = 512, kLmEmbed = 64, kLmUnits = 128;
constexpr float kLmLearningRate = 0.05f;

struct LstmLmInputs {
  Tensor tokens, targets;       // int32 [batch, time]
  std::vector<Tensor> weights;  // embedding, kernel, recurrent_kernel, bias, dense, dense_bias
  std::vector<int32_t> token_values, target_values;
};

const LstmLmInputs& lm_inputs() {
  static const LstmLmInputs in = [] {
    LstmLmInputs in;
    // A sequence and itself shifted by one: the next token is the target.
    Tensor text = ag::cast(
        ag::random_uniform({kLmBatch, kLmTime + 1}, 0.0, double(kLmVocab), ag::float32, 31),
        ag::int32);
    in.tokens = ag::slice(text, {0, 0}, {kLmBatch, kLmTime});
    in.targets = ag::slice(text, {0, 1}, {kLmBatch, kLmTime});
    in.token_values = in.tokens.to_vector<int32_t>();
    in.target_values = in.targets.to_vector<int32_t>();
    in.weights = {
        init_weight({kLmVocab, kLmEmbed}, 32),     init_weight({kLmEmbed, 4 * kLmUnits}, 33),
        init_weight({kLmUnits, 4 * kLmUnits}, 34), ag::zeros({4 * kLmUnits}),
        init_weight({kLmUnits, kLmVocab}, 35),     ag::zeros({kLmVocab})};
    return in;
  }();
  return in;
}

struct LstmLm {
  std::vector<Variable> weights;
  ag::optimizers::SGD optimizer{{.learning_rate = kLmLearningRate}};

  LstmLm() {
    for (const Tensor& w : lm_inputs().weights) weights.emplace_back(w);
  }

  Tensor loss(const Tensor& tokens, const Tensor& targets) const {
    auto w = [this](size_t i) { return weights[i].read(); };
    const ag::rnn::LSTMWeights cell_weights{w(1), w(2), w(3), {}};
    ag::rnn::Cell cell = [&](const Tensor& x, const std::vector<Tensor>& states) {
      return ag::rnn::lstm_cell(x, states, cell_weights);
    };
    Tensor embedded = ag::gather(w(0), tokens);
    Tensor h0 = ag::zeros({kLmBatch, kLmUnits});
    Tensor outputs = ag::rnn::dynamic_rnn(cell, embedded, {h0, h0}).outputs;
    Tensor logits = ag::matmul(outputs, w(4)) + w(5);
    return ag::reduce_mean(ag::sparse_softmax_cross_entropy_with_logits(targets, logits));
  }

  Tensor train_step(const Tensor& tokens, const Tensor& targets) {
    ag::GradientTape tape;
    Tensor value = loss(tokens, targets);
    optimizer.apply_gradients(tape.gradient(value, weights), weights);
    return value;
  }

  std::vector<Tensor> current() const {
    std::vector<Tensor> out;
    for (const Variable& v : weights) out.push_back(v.read());
    return out;
  }
};

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
  check_all_close("lstm_lm graph weight", values_of(eager.current()), values_of(graph.current()));
#if AG_BENCH_TORCH
  auto torch = make_torch_lm();
  ag_bench::check_close("lstm_lm torch loss", std::vector<float>{eager_loss},
                        std::vector<float>{torch->train_step()}, loss_tolerance);
  check_all_close("lstm_lm torch weight", values_of(eager.current()), torch_lm_weights(*torch));
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

// ---- The transformer encoder layer's forward and backward ------------------------------------

constexpr int64_t kEncBatch = 8, kEncTime = 64, kEncWidth = 128, kEncHeads = 4, kEncFf = 512;
constexpr double kEncEpsilon = 1e-5;  // torch::nn::LayerNorm's

struct EncoderInputs {
  Tensor x, probe;
  // wq, bq, wk, bk, wv, bv, wo, bo, w1, b1, w2, b2, gamma1, beta1, gamma2, beta2
  std::vector<Tensor> weights;
};

const EncoderInputs& encoder_inputs() {
  static const EncoderInputs in = [] {
    EncoderInputs in;
    in.x = ag::random_normal({kEncBatch, kEncTime, kEncWidth}, 0.0, 1.0, ag::float32, 41);
    in.probe = ag::random_normal({kEncBatch, kEncTime, kEncWidth}, 0.0, 1.0, ag::float32, 42);
    uint64_t seed = 43;
    auto dense = [&](int64_t from, int64_t to) {
      in.weights.push_back(init_weight({from, to}, seed++));
      in.weights.push_back(init_weight({to}, seed++, from));
    };
    for (int i = 0; i < 4; ++i) dense(kEncWidth, kEncWidth);
    dense(kEncWidth, kEncFf);
    dense(kEncFf, kEncWidth);
    for (int i = 0; i < 2; ++i) {
      in.weights.push_back(ag::random_uniform({kEncWidth}, 0.5, 1.5, ag::float32, seed++));
      in.weights.push_back(ag::random_uniform({kEncWidth}, -0.5, 0.5, ag::float32, seed++));
    }
    return in;
  }();
  return in;
}

// [batch, time, width] -> [batch, heads, time, width / heads]
Tensor split_heads(const Tensor& x) {
  return ag::transpose(ag::reshape(x, {kEncBatch, kEncTime, kEncHeads, kEncWidth / kEncHeads}),
                       {0, 2, 1, 3});
}

Tensor encoder_layer(const Tensor& x, const std::vector<Variable>& weights) {
  auto w = [&](size_t i) { return weights[i].read(); };
  auto dense = [&](const Tensor& in, size_t first) {
    return ag::matmul(in, w(first)) + w(first + 1);
  };
  Tensor q = split_heads(dense(x, 0)), k = split_heads(dense(x, 2)), v = split_heads(dense(x, 4));
  const double scale = 1.0 / std::sqrt(double(kEncWidth / kEncHeads));
  Tensor attention = ag::softmax(ag::matmul(q, k, false, true) * scale);
  Tensor context = ag::reshape(ag::transpose(ag::matmul(attention, v), {0, 2, 1, 3}),
                               {kEncBatch, kEncTime, kEncWidth});
  Tensor x1 = ag::layer_normalization(x + dense(context, 6), w(12), w(13), -1, kEncEpsilon);
  Tensor ff = dense(ag::relu(dense(x1, 8)), 10);
  return ag::layer_normalization(x1 + ff, w(14), w(15), -1, kEncEpsilon);
}

struct EncoderLayer {
  std::vector<Variable> weights;

  EncoderLayer() {
    for (const Tensor& w : encoder_inputs().weights) weights.emplace_back(w);
  }

  // The loss, then its gradient with respect to each weight.
  std::vector<Tensor> forward_backward(const Tensor& x, const Tensor& probe) const {
    ag::GradientTape tape;
    Tensor loss = ag::reduce_sum(encoder_layer(x, weights) * probe);
    std::vector<Tensor> out = tape.gradient(loss, weights);
    out.insert(out.begin(), loss);
    return out;
  }
};

auto make_encoder_graph(const EncoderLayer& layer) {
  return ag::function(
      [&layer](const Tensor& x, const Tensor& probe) { return layer.forward_backward(x, probe); },
      {.name = "encoder_layer", .arg_names = {"x", "probe"}});
}

#if AG_BENCH_TORCH
std::unique_ptr<ag_bench::TorchEncoderLayer> make_torch_encoder() {
  const EncoderInputs& in = encoder_inputs();
  std::vector<std::vector<float>> w = values_of(in.weights);
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
  check_all_close("encoder graph gradient", values_of(eager, 1), values_of(graph, 1));
#if AG_BENCH_TORCH
  auto torch = make_torch_encoder();
  ag_bench::check_close("encoder torch loss", std::vector<float>{loss},
                        std::vector<float>{torch->forward_backward()}, loss_tolerance);
  check_all_close("encoder torch gradient", values_of(eager, 1), torch->gradients());
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

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#if AG_BENCH_TORCH
  ag_bench::use_one_torch_thread();
#endif
  check_lm_variants_agree();
  check_encoder_variants_agree();
  const auto ms = benchmark::kMillisecond;
  benchmark::RegisterBenchmark("lstm_lm_step/eager", bm_lm_eager)->Unit(ms);
  benchmark::RegisterBenchmark("lstm_lm_step/graph", bm_lm_graph)->Unit(ms);
  benchmark::RegisterBenchmark("encoder_layer/eager", bm_encoder_eager)->Unit(ms);
  benchmark::RegisterBenchmark("encoder_layer/graph", bm_encoder_graph)->Unit(ms);
#if AG_BENCH_TORCH
  benchmark::RegisterBenchmark("lstm_lm_step/torch", bm_lm_torch)->Unit(ms);
  benchmark::RegisterBenchmark("encoder_layer/torch", bm_encoder_torch)->Unit(ms);
#endif
  ag_bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
