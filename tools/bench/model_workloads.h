// The op library's models, written once with ag ops: an LSTM language
// model's training step, a transformer encoder layer's forward and
// backward, and examples/digits's CNN training step (ag::layers), which
// model_bench.cpp times (and describes), and LeNet-5's training step, which
// train_bench.cpp times; memory_bench.cpp weighs them.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <ag/ag.h>
#include <ag/rnn.h>

namespace ag_models {

using ag::Tensor;
using ag::Variable;

// A float32 weight of `shape`, uniform in +-1/sqrt(fan_in) (torch::nn::Linear's
// initialisation); fan_in is the first dim unless given.
inline Tensor init_weight(std::vector<int64_t> shape, uint64_t seed, int64_t fan_in = 0) {
  const double bound = 1.0 / std::sqrt(double(fan_in ? fan_in : shape.front()));
  return ag::random_uniform(ag::Shape(std::move(shape)), -bound, bound, ag::float32, seed);
}

// ---- The LSTM language model's training step --------------------------------------------------

constexpr int64_t kLmBatch = 16, kLmTime = 32, kLmVocab = 512, kLmEmbed = 64, kLmUnits = 128;
constexpr float kLmLearningRate = 0.05f;

struct LstmLmInputs {
  Tensor tokens, targets;       // int32 [batch, time]
  std::vector<Tensor> weights;  // embedding, kernel, recurrent_kernel, bias, dense, dense_bias
  std::vector<int32_t> token_values, target_values;
};

inline const LstmLmInputs& lm_inputs() {
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
    Tensor embedded = ag::gather(w(0), tokens);
    Tensor h0 = ag::zeros({kLmBatch, kLmUnits});
    Tensor outputs = ag::rnn::lstm(embedded, {h0, h0}, {w(1), w(2), w(3), {}}).outputs;
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

// ---- The transformer encoder layer's forward and backward ------------------------------------

constexpr int64_t kEncBatch = 8, kEncTime = 64, kEncWidth = 128, kEncHeads = 4, kEncFf = 512;
constexpr double kEncEpsilon = 1e-5;  // torch::nn::LayerNorm's

struct EncoderInputs {
  Tensor x, probe;
  // wq, bq, wk, bk, wv, bv, wo, bo, w1, b1, w2, b2, gamma1, beta1, gamma2, beta2
  std::vector<Tensor> weights;
};

inline const EncoderInputs& encoder_inputs() {
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
inline Tensor split_heads(const Tensor& x) {
  return ag::transpose(ag::reshape(x, {kEncBatch, kEncTime, kEncHeads, kEncWidth / kEncHeads}),
                       {0, 2, 1, 3});
}

inline Tensor encoder_layer(const Tensor& x, const std::vector<Variable>& weights) {
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

// ---- examples/digits's CNN training step --------------------------------------------------------

constexpr int64_t kDigitsBatch = 32;
constexpr float kDigitsLearningRate = 0.01f;

struct DigitsInputs {
  Tensor images;  // [batch, 8, 8, 1]
  Tensor labels;  // int32 [batch]
  // conv1 [3, 3, 1, 16], bias1, conv2 [3, 3, 16, 32], bias2, dense [128, 10], bias3
  std::vector<Tensor> weights;
  std::vector<int32_t> label_values;
};

inline const DigitsInputs& digits_inputs() {
  static const DigitsInputs in = [] {
    DigitsInputs in;
    in.images = ag::random_uniform({kDigitsBatch, 8, 8, 1}, 0.0, 1.0, ag::float32, 51);
    in.labels = ag::cast(ag::random_uniform({kDigitsBatch}, 0.0, 10.0, ag::float32, 52), ag::int32);
    in.label_values = in.labels.to_vector<int32_t>();
    in.weights = {init_weight({3, 3, 1, 16}, 53, 9),    init_weight({16}, 54, 9),
                  init_weight({3, 3, 16, 32}, 55, 144), init_weight({32}, 56, 144),
                  init_weight({128, 10}, 57),           init_weight({10}, 58, 128)};
    return in;
  }();
  return in;
}

// examples/digits's Classifier: two 3x3 "same" convolutions with relu, each
// followed by a 2x2 max pool, then a dense layer to 10 logits; mean sparse
// softmax cross-entropy; Adam.
struct DigitsCnn {
  ag::layers::Sequential model;
  ag::optimizers::Adam optimizer{{.learning_rate = kDigitsLearningRate}};
  ag::losses::SparseCategoricalCrossentropy cross_entropy{/*from_logits=*/true};

  DigitsCnn() {
    model.add(ag::layers::Conv2D(16, 3, {.padding = "same", .activation = "relu"}));
    model.add(ag::layers::MaxPool2D());
    model.add(ag::layers::Conv2D(32, 3, {.padding = "same", .activation = "relu"}));
    model.add(ag::layers::MaxPool2D());
    model.add(ag::layers::Flatten());
    model.add(ag::layers::Dense(10));
    model.build({kDigitsBatch, 8, 8, 1});
    std::vector<Variable> variables = model.trainable_variables();
    for (size_t i = 0; i < variables.size(); ++i) variables[i].assign(digits_inputs().weights[i]);
  }

  Tensor train_step(const Tensor& images, const Tensor& labels) {
    ag::GradientTape tape;
    Tensor loss = cross_entropy(labels, model(images, true));
    std::vector<Variable> variables = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, variables), variables);
    return loss;
  }

  std::vector<Tensor> current() const {
    std::vector<Tensor> out;
    for (const Variable& v : model.trainable_variables()) out.push_back(v.read());
    return out;
  }
};

// ---- LeNet-5's training step ------------------------------------------------------------------

constexpr int kLenetBatch = 64;
constexpr float kLenetLearningRate = 0.05f;

struct LenetInputs {
  Tensor x, labels;
  std::vector<Tensor> weights;
  std::vector<int32_t> labels_vector;
};

inline const LenetInputs& lenet_inputs() {
  static const LenetInputs in = [] {
    LenetInputs in;
    in.x = ag::random_uniform({kLenetBatch, 28, 28, 1}, 0.0, 1.0, ag::float32, 21);
    in.labels = ag::cast(ag::random_uniform({kLenetBatch}, 0.0, 10.0, ag::float32, 22), ag::int32);
    in.labels_vector = in.labels.to_vector<int32_t>();
    // He initialisation: fan-in of each layer's kernel.
    const std::vector<std::vector<int64_t>> kernels = {
        {5, 5, 1, 6}, {5, 5, 6, 16}, {256, 120}, {120, 84}, {84, 10}};
    uint64_t seed = 23;
    for (const std::vector<int64_t>& dims : kernels) {
      int64_t fan_in = 1;
      for (size_t i = 0; i + 1 < dims.size(); ++i) fan_in *= dims[i];
      in.weights.push_back(ag::random_normal(ag::Shape(dims), 0.0, std::sqrt(2.0 / double(fan_in)),
                                             ag::float32, seed++));
      in.weights.push_back(ag::zeros({dims.back()}));
    }
    return in;
  }();
  return in;
}

// torch_peer.h's LenetWeights, as Variables: the layers named in order.
struct Lenet {
  std::vector<Variable> weights;  // conv1, bias1, conv2, bias2, dense1, bias3, ...
  Tensor operator()(const Tensor& x) const {
    auto w = [this](size_t i) { return weights[i].read(); };
    Tensor h = ag::relu(ag::conv2d(x, w(0), {1}, "VALID") + w(1));
    h = ag::max_pool2d(h, {2}, {2}, "VALID");
    h = ag::relu(ag::conv2d(h, w(2), {1}, "VALID") + w(3));
    h = ag::reshape(ag::max_pool2d(h, {2}, {2}, "VALID"), {kLenetBatch, 256});
    h = ag::relu(ag::matmul(h, w(4)) + w(5));
    h = ag::relu(ag::matmul(h, w(6)) + w(7));
    return ag::matmul(h, w(8)) + w(9);
  }
};

// LeNet-5 from lenet_inputs()'s weights, trained by SGD on a mean sparse
// softmax cross-entropy.
struct LenetTrainer {
  Lenet model;
  ag::optimizers::SGD optimizer{{.learning_rate = kLenetLearningRate}};

  LenetTrainer() {
    for (const Tensor& w : lenet_inputs().weights) model.weights.emplace_back(w);
  }

  Tensor train_step(const Tensor& x, const Tensor& labels) {
    ag::GradientTape tape;
    Tensor loss = ag::reduce_mean(ag::sparse_softmax_cross_entropy_with_logits(labels, model(x)));
    optimizer.apply_gradients(tape.gradient(loss, model.weights), model.weights);
    return loss;
  }
};

}  // namespace ag_models
