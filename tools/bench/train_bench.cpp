// train_bench: one training step of an MLP, run three ways in one
// process, side by side (as runtime_bench.cpp and control_bench.cpp):
//   mlp_step/hand   hand-written C++: forward and backward with cblas_sgemm
//                   and plain loops, gradients into buffers, then the SGD
//                   update (written once, for this benchmark)
//   mlp_step/eager  the ag train step: GradientTape, tape.gradient over the
//                   Variables, SGD's apply_gradients, op by op
//   mlp_step/graph  the same train step in ag::function (forward, backward
//                   and update in one graph), after a warm-up call
//   mlp_step/torch  the peer: the same step with torch::autograd and
//                   torch::optim::SGD on one intra-op thread (torch_peer.h);
//                   only where CMake found LibTorch (AG_BENCH_TORCH)
// The model: x [64, 784] -> dense 256 -> relu -> dense 10 -> softmax
// cross-entropy against one-hot labels, mean over the batch; float32; SGD
// with learning rate 0.1. Each variant trains its own copy of the weights.
// Before timing, one step of each from the same weights is checked: the
// losses and updated weights of eager, graph (and torch) must equal hand's
// within float32 rounding. Rows get x_hand (time / hand) and graph rows x_eager;
// run.sh's summary has the target (graph <= 1.3x hand). Times are CPU time
// per step.
//
// The gradient of a staged loop, side by side with its forward:
//   rnn/forward           the TensorFlow guide's dynamic_rnn with a real cell,
//                         h = tanh(x_t W + h U + b), over 100 steps (a
//                         tensor, so a staged While), states stacked by a
//                         TensorArray; batch 32, 128 features and units;
//                         loss = sum of the states; in ag::function
//   rnn/forward_backward  the same loss and its gradient w.r.t. W, U, b by a
//                         GradientTape in the same graph (the forward loop
//                         stacks what the backward While pops)
//   rnn/torch_forward, rnn/torch_forward_backward
//                         the peer: the same loss with torch::autograd (a
//                         C++ loop of torch ops, the tape recording each),
//                         where LibTorch was found; its gradients are checked
//                         against ag's
// run.sh's summary has the target: backward (forward_backward - forward) <= 3x
// forward. Times are CPU time per call.
//
// LeNet-5's training step (torch_peer.h says the model), batch 64 of 28x28x1
// images, sparse softmax cross-entropy, SGD:
//   lenet_step/eager, lenet_step/graph   the ag step, op by op and traced
//   lenet_step/torch                     the same step in LibTorch, NCHW,
//                                        where LibTorch was found
// run.sh's summary has the target: graph <= 1.0x torch. Run tools/bench/run.sh.
//
// With AG_BENCH_MODELS=<folder>, both training steps (mlp_step, lenet_step)
// are also written there (ag_bench::write_training_step) for
// tools/bench/pytorch_peers.py, which runs them in PyTorch from pip.
#include <benchmark/benchmark.h>
#include <cblas.h>

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
#include <utility>
#include <vector>

#include <ag/ag.h>

#include "bench_util.h"
#include "model_workloads.h"
#if AG_BENCH_TORCH
#include "torch_peer.h"
#endif

namespace {

using ag::Tensor;
using ag::Variable;

constexpr int kBatch = 64, kIn = 784, kHidden = 256, kOut = 10;
constexpr float kLearningRate = 0.1f;

// ---- The ag train step, written once --------------------------------------------------

// Mean softmax cross-entropy of `logits` against one-hot `labels`, with the
// row max subtracted for stability (its gradient cancels).
Tensor softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
  Tensor shifted = logits - ag::reduce_max(logits, 1, /*keepdims=*/true);
  Tensor log_probs = shifted - ag::log(ag::reduce_sum(ag::exp(shifted), 1, /*keepdims=*/true));
  return -ag::reduce_mean(ag::reduce_sum(labels * log_probs, 1));
}

struct Mlp {
  Variable w1, b1, w2, b2;
  std::vector<Variable> variables() const { return {w1, b1, w2, b2}; }
  Tensor operator()(const Tensor& x) const {
    Tensor h = ag::relu(ag::matmul(x, w1.read()) + b1.read());
    return ag::matmul(h, w2.read()) + b2.read();
  }
};

struct Trainer {
  explicit Trainer(Mlp m) : model(std::move(m)) {}
  Mlp model;
  ag::optimizers::SGD optimizer{{.learning_rate = kLearningRate}};

  Tensor train_step(const Tensor& x, const Tensor& labels) {
    std::vector<Variable> vars = model.variables();
    ag::GradientTape tape;
    Tensor loss = softmax_cross_entropy(model(x), labels);
    std::vector<Tensor> grads = tape.gradient(loss, vars);
    optimizer.apply_gradients(grads, vars);
    return loss;
  }
};

// ---- Hand-written C++ ------------------------------------------------------------------

struct HandMlp {
  explicit HandMlp(const std::vector<float>& w1, const std::vector<float>& b1,
                   const std::vector<float>& w2, const std::vector<float>& b2)
      : w1(w1),
        b1(b1),
        w2(w2),
        b2(b2),
        h_pre(kBatch * kHidden),
        h(kBatch * kHidden),
        logits(kBatch * kOut),
        dlogits(kBatch * kOut),
        dh(kBatch * kHidden),
        dw1(w1.size()),
        db1(b1.size()),
        dw2(w2.size()),
        db2(b2.size()) {}

  std::vector<float> w1, b1, w2, b2;                 // the weights, row-major
  std::vector<float> h_pre, h, logits, dlogits, dh;  // activations and their gradients
  std::vector<float> dw1, db1, dw2, db2;             // the weights' gradients

  // One SGD step on (x [kBatch, kIn], labels [kBatch]); returns the loss.
  float train_step(const float* x, const int32_t* labels) {
    // Forward: h_pre = x w1 + b1, h = relu(h_pre), logits = h w2 + b2.
    for (int i = 0; i < kBatch; ++i) std::memcpy(&h_pre[i * kHidden], b1.data(), kHidden * 4);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kBatch, kHidden, kIn, 1.0f, x, kIn,
                w1.data(), kHidden, 1.0f, h_pre.data(), kHidden);
    for (size_t i = 0; i < h.size(); ++i) h[i] = std::max(h_pre[i], 0.0f);
    for (int i = 0; i < kBatch; ++i) std::memcpy(&logits[i * kOut], b2.data(), kOut * 4);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kBatch, kOut, kHidden, 1.0f, h.data(),
                kHidden, w2.data(), kOut, 1.0f, logits.data(), kOut);
    // Loss and dloss/dlogits = (softmax - one_hot) / batch.
    double loss = 0;
    for (int i = 0; i < kBatch; ++i) {
      const float* row = &logits[i * kOut];
      float* drow = &dlogits[i * kOut];
      float max = *std::max_element(row, row + kOut);
      float sum = 0;
      for (int j = 0; j < kOut; ++j) sum += drow[j] = std::exp(row[j] - max);
      loss -= row[labels[i]] - max - std::log(sum);
      for (int j = 0; j < kOut; ++j) drow[j] = (drow[j] / sum - (j == labels[i])) / kBatch;
    }
    // Backward: dw2 = h^T dlogits, db2 = sum(dlogits), dh = dlogits w2^T masked by relu,
    // dw1 = x^T dh, db1 = sum(dh).
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kHidden, kOut, kBatch, 1.0f, h.data(),
                kHidden, dlogits.data(), kOut, 0.0f, dw2.data(), kOut);
    column_sums(dlogits.data(), kOut, db2.data());
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kBatch, kHidden, kOut, 1.0f,
                dlogits.data(), kOut, w2.data(), kOut, 0.0f, dh.data(), kHidden);
    for (size_t i = 0; i < dh.size(); ++i)
      if (h_pre[i] <= 0) dh[i] = 0;
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, kIn, kHidden, kBatch, 1.0f, x, kIn,
                dh.data(), kHidden, 0.0f, dw1.data(), kHidden);
    column_sums(dh.data(), kHidden, db1.data());
    // SGD.
    for (auto [w, g] : {std::pair{&w1, &dw1}, {&b1, &db1}, {&w2, &dw2}, {&b2, &db2}})
      for (size_t i = 0; i < w->size(); ++i) (*w)[i] -= kLearningRate * (*g)[i];
    return float(loss / kBatch);
  }

  static void column_sums(const float* m, int cols, float* out) {
    std::fill(out, out + cols, 0.0f);
    for (int i = 0; i < kBatch; ++i)
      for (int j = 0; j < cols; ++j) out[j] += m[i * cols + j];
  }
};

// ---- Inputs, shared by the variants ------------------------------------------------------

struct Inputs {
  Tensor x, labels, one_hot;  // the batch
  Tensor w1, b1, w2, b2;      // the initial weights
  std::vector<int32_t> labels_vector;
};

Inputs& inputs() {
  static Inputs in;
  return in;
}

std::vector<float> values(const Tensor& t) {
  return t.to_vector<float>();
}

void prepare_inputs() {
  Inputs& in = inputs();
  in.x = ag::random_uniform({kBatch, kIn}, 0.0, 1.0, ag::float32, /*seed=*/1);
  in.labels = ag::cast(ag::random_uniform({kBatch}, 0.0, kOut, ag::float32, /*seed=*/2), ag::int32);
  in.one_hot = ag::one_hot(in.labels, kOut);
  in.labels_vector = in.labels.to_vector<int32_t>();
  // He initialisation for the relu layer, Glorot-like scale for the output layer.
  in.w1 = ag::random_normal({kIn, kHidden}, 0.0, std::sqrt(2.0 / kIn), ag::float32, /*seed=*/3);
  in.b1 = ag::zeros({kHidden});
  in.w2 = ag::random_normal({kHidden, kOut}, 0.0, std::sqrt(1.0 / kHidden), ag::float32, 4);
  in.b2 = ag::zeros({kOut});
}

std::unique_ptr<Trainer> make_trainer() {
  const Inputs& in = inputs();
  return std::make_unique<Trainer>(Mlp{Variable(in.w1, "w1"), Variable(in.b1, "b1"),
                                       Variable(in.w2, "w2"), Variable(in.b2, "b2")});
}

HandMlp make_hand() {
  const Inputs& in = inputs();
  return HandMlp(values(in.w1), values(in.b1), values(in.w2), values(in.b2));
}

#if AG_BENCH_TORCH
std::unique_ptr<ag_bench::TorchMlp> make_torch() {
  const Inputs& in = inputs();
  return std::make_unique<ag_bench::TorchMlp>(
      kBatch, kIn, kHidden, kOut, kLearningRate, in.w1.data<float>(), in.b1.data<float>(),
      in.w2.data<float>(), in.b2.data<float>(), in.x.data<float>(), in.labels_vector.data());
}
#endif

auto make_graph_step(Trainer& trainer) {
  return ag::function(
      [&trainer](const Tensor& x, const Tensor& labels) { return trainer.train_step(x, labels); },
      {.name = "train_step", .arg_names = {"x", "labels"}});
}

// Within float32 rounding of hand's result.
void check_close(const std::string& what, const std::vector<float>& expected,
                 const std::vector<float>& actual) {
  ag_bench::check_close(what, expected, actual, {1e-5, 1e-4});
}

// One step of each variant from the same weights: the same loss and weights.
void check_variants_agree() {
  const Inputs& in = inputs();
  HandMlp hand = make_hand();
  float hand_loss = hand.train_step(in.x.data<float>(), in.labels_vector.data());
  auto eager = make_trainer();
  Tensor eager_loss = eager->train_step(in.x, in.one_hot);
  auto graph = make_trainer();
  Tensor graph_loss = make_graph_step(*graph)(in.x, in.one_hot);
  for (const auto& [name, trainer, loss] :
       {std::tuple{"eager", eager.get(), eager_loss}, {"graph", graph.get(), graph_loss}}) {
    std::string prefix = std::string(name) + " ";
    check_close(prefix + "loss", {hand_loss}, {loss.item<float>()});
    check_close(prefix + "w1", hand.w1, values(trainer->model.w1.read()));
    check_close(prefix + "b1", hand.b1, values(trainer->model.b1.read()));
    check_close(prefix + "w2", hand.w2, values(trainer->model.w2.read()));
    check_close(prefix + "b2", hand.b2, values(trainer->model.b2.read()));
  }
  const Mlp& updated = graph->model;
  ag_bench::write_training_step("mlp_step", "mlp", kLearningRate, graph_loss.item<float>(),
                                {{"x", in.x},
                                 {"labels", in.labels},
                                 {"w1", in.w1},
                                 {"b1", in.b1},
                                 {"w2", in.w2},
                                 {"b2", in.b2},
                                 {"w1.updated", updated.w1.read()},
                                 {"b1.updated", updated.b1.read()},
                                 {"w2.updated", updated.w2.read()},
                                 {"b2.updated", updated.b2.read()}});
#if AG_BENCH_TORCH
  auto torch = make_torch();
  check_close("torch loss", {hand_loss}, {torch->train_step()});
  std::vector<std::vector<float>> weights = torch->weights();
  check_close("torch w1", hand.w1, weights[0]);
  check_close("torch b1", hand.b1, weights[1]);
  check_close("torch w2", hand.w2, weights[2]);
  check_close("torch b2", hand.b2, weights[3]);
#endif
}

// ---- The benchmarks ----------------------------------------------------------------------

void bm_mlp_hand(benchmark::State& state) {
  const Inputs& in = inputs();
  HandMlp hand = make_hand();
  for (auto _ : state)
    benchmark::DoNotOptimize(hand.train_step(in.x.data<float>(), in.labels_vector.data()));
}

void bm_mlp_eager(benchmark::State& state) {
  const Inputs& in = inputs();
  auto trainer = make_trainer();
  for (auto _ : state) benchmark::DoNotOptimize(trainer->train_step(in.x, in.one_hot));
}

void bm_mlp_graph(benchmark::State& state) {
  const Inputs& in = inputs();
  auto trainer = make_trainer();
  auto step = make_graph_step(*trainer);
  step(in.x, in.one_hot);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(step(in.x, in.one_hot));
}

#if AG_BENCH_TORCH
void bm_mlp_torch(benchmark::State& state) {
  auto torch = make_torch();
  for (auto _ : state) benchmark::DoNotOptimize(torch->train_step());
}
#endif

// ---- LeNet-5 (model_workloads.h) -------------------------------------------------------------

using ag_models::kLenetBatch;
using ag_models::kLenetLearningRate;
using ag_models::lenet_inputs;
using ag_models::LenetInputs;
using ag_models::LenetTrainer;

std::unique_ptr<LenetTrainer> make_lenet() {
  return std::make_unique<LenetTrainer>();
}

auto make_lenet_graph_step(LenetTrainer& trainer) {
  return ag::function(
      [&trainer](const Tensor& x, const Tensor& labels) { return trainer.train_step(x, labels); },
      {.name = "lenet_step", .arg_names = {"x", "labels"}});
}

#if AG_BENCH_TORCH
ag_bench::LenetWeights lenet_weights_of(const std::vector<Tensor>& w) {
  return {values(w[0]), values(w[1]), values(w[2]), values(w[3]), values(w[4]),
          values(w[5]), values(w[6]), values(w[7]), values(w[8]), values(w[9])};
}

std::unique_ptr<ag_bench::TorchLenet> make_torch_lenet() {
  const LenetInputs& in = lenet_inputs();
  return std::make_unique<ag_bench::TorchLenet>(kLenetBatch, kLenetLearningRate,
                                                lenet_weights_of(in.weights), in.x.data<float>(),
                                                in.labels_vector.data());
}
#endif

// One step of eager and graph (and torch) from the same weights: the same
// loss and updated weights, within float32 rounding (the convolutions and
// products sum in other orders).
void check_lenet_variants_agree() {
  const LenetInputs& in = lenet_inputs();
  auto eager = make_lenet(), graph = make_lenet();
  const float eager_loss = eager->train_step(in.x, in.labels).item<float>();
  const float graph_loss = make_lenet_graph_step(*graph)(in.x, in.labels).item<float>();
  const ag_bench::Tolerance tolerance{1e-4, 1e-3};
  ag_bench::check_close("lenet graph loss", std::vector<float>{eager_loss},
                        std::vector<float>{graph_loss}, tolerance);
  std::vector<Tensor> eager_weights;
  for (size_t i = 0; i < eager->model.weights.size(); ++i) {
    eager_weights.push_back(eager->model.weights[i].read());
    ag_bench::check_close("lenet graph weight " + std::to_string(i), values(eager_weights[i]),
                          values(graph->model.weights[i].read()), tolerance);
  }
  std::vector<std::pair<std::string, Tensor>> tensors = {{"x", in.x}, {"labels", in.labels}};
  const char* names[] = {"conv1", "bias1",  "conv2", "bias2",  "dense1",
                         "bias3", "dense2", "bias4", "dense3", "bias5"};
  for (size_t i = 0; i < in.weights.size(); ++i) tensors.emplace_back(names[i], in.weights[i]);
  for (size_t i = 0; i < in.weights.size(); ++i)
    tensors.emplace_back(std::string(names[i]) + ".updated", graph->model.weights[i].read());
  ag_bench::write_training_step("lenet_step", "lenet", kLenetLearningRate, graph_loss, tensors);
#if AG_BENCH_TORCH
  auto torch = make_torch_lenet();
  ag_bench::check_close("lenet torch loss", std::vector<float>{eager_loss},
                        std::vector<float>{torch->train_step()}, tolerance);
  const ag_bench::LenetWeights want = lenet_weights_of(eager_weights), got = torch->weights();
  ag_bench::check_close("lenet torch conv1", want.conv1, got.conv1, tolerance);
  ag_bench::check_close("lenet torch conv2", want.conv2, got.conv2, tolerance);
  ag_bench::check_close("lenet torch dense1", want.dense1, got.dense1, tolerance);
  ag_bench::check_close("lenet torch bias5", want.bias5, got.bias5, tolerance);
#endif
}

void bm_lenet_eager(benchmark::State& state) {
  const LenetInputs& in = lenet_inputs();
  auto trainer = make_lenet();
  for (auto _ : state) benchmark::DoNotOptimize(trainer->train_step(in.x, in.labels));
}

void bm_lenet_graph(benchmark::State& state) {
  const LenetInputs& in = lenet_inputs();
  auto trainer = make_lenet();
  auto step = make_lenet_graph_step(*trainer);
  step(in.x, in.labels);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(step(in.x, in.labels));
}

#if AG_BENCH_TORCH
void bm_lenet_torch(benchmark::State& state) {
  auto torch = make_torch_lenet();
  for (auto _ : state) benchmark::DoNotOptimize(torch->train_step());
}
#endif

// ---- The RNN loop and its gradient ----------------------------------------------------------

constexpr int64_t kRnnBatch = 32, kRnnSteps = 100, kRnnUnits = 128;

struct RnnInputs {
  Tensor x, w, u, b, steps;
};

RnnInputs& rnn_inputs() {
  static RnnInputs in;
  return in;
}

void prepare_rnn_inputs() {
  RnnInputs& in = rnn_inputs();
  double scale = 1.0 / std::sqrt(double(kRnnUnits));
  in.x = ag::random_uniform({kRnnBatch, kRnnSteps, kRnnUnits}, -1.0, 1.0, ag::float32, 11);
  in.w = ag::random_normal({kRnnUnits, kRnnUnits}, 0.0, scale, ag::float32, 12);
  in.u = ag::random_normal({kRnnUnits, kRnnUnits}, 0.0, scale, ag::float32, 13);
  in.b = ag::zeros({kRnnUnits});
  in.steps = Tensor(int64_t{kRnnSteps});
}

// dynamic_rnn as the guide writes it, with the cell tanh(x_t W + h U + b).
Tensor rnn_loss(const Tensor& x, const Tensor& w, const Tensor& u, const Tensor& b,
                const Tensor& steps) {
  Tensor inputs = ag::transpose(x, {1, 0, 2});  // [time, batch, features]
  ag::TensorArray states(ag::float32, kRnnSteps);
  Tensor h = ag::zeros({kRnnBatch, kRnnUnits});
  ag::for_stmt(
      ag::range(steps), ag::no_extra_test,
      [&](Tensor t) {
        h = ag::tanh(ag::matmul(inputs[t], w) + ag::matmul(h, u) + b);
        states.write(t, h);
      },
      ag::state({"h", "states"}, h, states));
  return ag::reduce_sum(states.stack());
}

auto make_rnn_forward() {
  return ag::function(rnn_loss, {.name = "rnn_forward"});
}

auto make_rnn_gradient() {
  return ag::function(
      [](const Tensor& x, const Tensor& w, const Tensor& u, const Tensor& b, const Tensor& steps) {
        ag::GradientTape tape;
        tape.watch(w);
        tape.watch(u);
        tape.watch(b);
        Tensor loss = rnn_loss(x, w, u, b, steps);
        std::vector<Tensor> grads = tape.gradient(loss, std::vector<Tensor>{w, u, b});
        grads.insert(grads.begin(), loss);
        return grads;
      },
      {.name = "rnn_forward_backward"});
}

#if AG_BENCH_TORCH
std::unique_ptr<ag_bench::TorchRnn> make_torch_rnn() {
  const RnnInputs& in = rnn_inputs();
  return std::make_unique<ag_bench::TorchRnn>(kRnnBatch, kRnnSteps, kRnnUnits, in.x.data<float>(),
                                              in.w.data<float>(), in.u.data<float>(),
                                              in.b.data<float>());
}

// Torch's loss and gradients equal ag's eager ones within float32 rounding.
void check_torch_rnn(const Tensor& loss, const std::vector<Tensor>& grads) {
  auto torch = make_torch_rnn();
  float torch_loss = torch->forward_backward();
  // A sum of 409,600 states, accumulated in another order.
  ag_bench::Tolerance sum_tolerance{1e-6 * double(kRnnBatch * kRnnSteps * kRnnUnits), 1e-4};
  ag_bench::check_close("torch rnn loss", std::vector<float>{loss.item<float>()},
                        std::vector<float>{torch_loss}, sum_tolerance);
  ag_bench::check_close("torch rnn loss without gradient", std::vector<float>{loss.item<float>()},
                        std::vector<float>{torch->forward()}, sum_tolerance);
  ag_bench::check_all_close("torch rnn gradient (0: dW, 1: dU, 2: db)", ag_bench::values_of(grads),
                            torch->gradients());
}
#endif

// The graph's gradient equals the eager one (the same code, a C++ loop under
// the tape) within float32 rounding.
void check_rnn_gradient() {
  const RnnInputs& in = rnn_inputs();
  std::vector<Tensor> graph = make_rnn_gradient()(in.x, in.w, in.u, in.b, in.steps);
  ag::GradientTape tape;
  tape.watch(in.w);
  tape.watch(in.u);
  tape.watch(in.b);
  Tensor loss = rnn_loss(in.x, in.w, in.u, in.b, in.steps);
  std::vector<Tensor> eager = tape.gradient(loss, std::vector<Tensor>{in.w, in.u, in.b});
  check_close("rnn loss", {loss.item<float>()}, {graph[0].item<float>()});
  ag_bench::check_all_close("rnn graph gradient (0: dW, 1: dU, 2: db)", ag_bench::values_of(eager),
                            ag_bench::values_of(graph, 1));
#if AG_BENCH_TORCH
  check_torch_rnn(loss, eager);
#endif
}

#if AG_BENCH_TORCH
void bm_rnn_torch_forward(benchmark::State& state) {
  auto torch = make_torch_rnn();
  for (auto _ : state) benchmark::DoNotOptimize(torch->forward());
}

void bm_rnn_torch_forward_backward(benchmark::State& state) {
  auto torch = make_torch_rnn();
  for (auto _ : state) benchmark::DoNotOptimize(torch->forward_backward());
}
#endif

void bm_rnn_forward(benchmark::State& state) {
  const RnnInputs& in = rnn_inputs();
  auto forward = make_rnn_forward();
  forward(in.x, in.w, in.u, in.b, in.steps);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(forward(in.x, in.w, in.u, in.b, in.steps));
}

void bm_rnn_forward_backward(benchmark::State& state) {
  const RnnInputs& in = rnn_inputs();
  auto both = make_rnn_gradient();
  both(in.x, in.w, in.u, in.b, in.steps);  // trace
  for (auto _ : state) benchmark::DoNotOptimize(both(in.x, in.w, in.u, in.b, in.steps));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
#if AG_BENCH_TORCH
  ag_bench::use_one_torch_thread();
#endif
  prepare_inputs();
  check_variants_agree();
  check_lenet_variants_agree();
  prepare_rnn_inputs();
  check_rnn_gradient();
  benchmark::RegisterBenchmark("mlp_step/hand", bm_mlp_hand)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("mlp_step/eager", bm_mlp_eager)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("mlp_step/graph", bm_mlp_graph)->Unit(benchmark::kMicrosecond);
#if AG_BENCH_TORCH
  benchmark::RegisterBenchmark("mlp_step/torch", bm_mlp_torch)->Unit(benchmark::kMicrosecond);
#endif
  benchmark::RegisterBenchmark("lenet_step/eager", bm_lenet_eager)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("lenet_step/graph", bm_lenet_graph)->Unit(benchmark::kMicrosecond);
#if AG_BENCH_TORCH
  benchmark::RegisterBenchmark("lenet_step/torch", bm_lenet_torch)->Unit(benchmark::kMicrosecond);
#endif
  benchmark::RegisterBenchmark("rnn/forward", bm_rnn_forward)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("rnn/forward_backward", bm_rnn_forward_backward)
      ->Unit(benchmark::kMillisecond);
#if AG_BENCH_TORCH
  benchmark::RegisterBenchmark("rnn/torch_forward", bm_rnn_torch_forward)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("rnn/torch_forward_backward", bm_rnn_torch_forward_backward)
      ->Unit(benchmark::kMillisecond);
#endif
  ag_bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
