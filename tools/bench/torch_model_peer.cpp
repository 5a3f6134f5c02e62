// model_bench's LibTorch peers (torch_peer.h): an LSTM language model's
// training step, a transformer encoder layer's forward and backward, and
// examples/digits's CNN training step, written with torch::nn's modules as a
// PyTorch user writes them, their weights copied from ag's.
#include <torch/torch.h>

#include <cmath>

#include "torch_peer.h"

namespace ag_bench {

namespace {

torch::Tensor copy_of(const std::vector<float>& data, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(data.data()), shape, torch::kFloat32).clone();
}

// A dense kernel [in, out] as torch::nn::Linear's weight [out, in].
torch::Tensor linear_weight_of(const std::vector<float>& kernel, int64_t in, int64_t out) {
  return copy_of(kernel, {in, out}).t().contiguous();
}

std::vector<float> values_of(const torch::Tensor& t) {
  torch::Tensor c = t.detach().contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

torch::Tensor indices_of(const int32_t* data, int64_t batch, int64_t time) {
  return torch::from_blob(const_cast<int32_t*>(data), {batch, time}, torch::kInt32)
      .to(torch::kInt64);
}

}  // namespace

struct TorchLstmLm::State {
  int64_t vocab = 0, embed = 0, units = 0;
  torch::nn::Embedding embedding{nullptr};
  torch::nn::LSTM lstm{nullptr};
  torch::nn::Linear dense{nullptr};
  torch::Tensor tokens, targets;
  std::unique_ptr<torch::optim::SGD> optimizer;
};

TorchLstmLm::TorchLstmLm(int64_t batch, int64_t time, int64_t vocab, int64_t embed, int64_t units,
                         float learning_rate, const LstmLmWeights& w, const int32_t* tokens,
                         const int32_t* targets)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.vocab = vocab, s.embed = embed, s.units = units;
  s.embedding = torch::nn::Embedding(vocab, embed);
  s.lstm = torch::nn::LSTM(torch::nn::LSTMOptions(embed, units).batch_first(true));
  s.dense = torch::nn::Linear(units, vocab);
  {
    torch::NoGradGuard no_grad;
    s.embedding->weight.copy_(copy_of(w.embedding, {vocab, embed}));
    auto params = s.lstm->named_parameters();
    params["weight_ih_l0"].copy_(linear_weight_of(w.kernel, embed, 4 * units));
    params["weight_hh_l0"].copy_(linear_weight_of(w.recurrent_kernel, units, 4 * units));
    params["bias_ih_l0"].copy_(copy_of(w.bias, {4 * units}));
    params["bias_hh_l0"].zero_();
    params["bias_hh_l0"].set_requires_grad(false);
    s.dense->weight.copy_(linear_weight_of(w.dense, units, vocab));
    s.dense->bias.copy_(copy_of(w.dense_bias, {vocab}));
  }
  s.tokens = indices_of(tokens, batch, time);
  s.targets = indices_of(targets, batch, time).reshape({-1});
  std::vector<torch::Tensor> trained;
  for (const torch::Tensor& p : s.embedding->parameters()) trained.push_back(p);
  for (const torch::Tensor& p : s.lstm->parameters())
    if (p.requires_grad()) trained.push_back(p);
  for (const torch::Tensor& p : s.dense->parameters()) trained.push_back(p);
  s.optimizer =
      std::make_unique<torch::optim::SGD>(trained, torch::optim::SGDOptions(learning_rate));
}

TorchLstmLm::~TorchLstmLm() = default;

float TorchLstmLm::train_step() {
  State& s = *state_;
  s.optimizer->zero_grad();
  torch::Tensor outputs = std::get<0>(s.lstm->forward(s.embedding->forward(s.tokens)));
  torch::Tensor logits = s.dense->forward(outputs).reshape({-1, s.vocab});
  torch::Tensor loss = torch::nn::functional::cross_entropy(logits, s.targets);
  loss.backward();
  s.optimizer->step();
  return loss.item<float>();
}

LstmLmWeights TorchLstmLm::weights() const {
  const State& s = *state_;
  auto params = s.lstm->named_parameters();
  return {values_of(s.embedding->weight),        values_of(params["weight_ih_l0"].t()),
          values_of(params["weight_hh_l0"].t()), values_of(params["bias_ih_l0"]),
          values_of(s.dense->weight.t()),        values_of(s.dense->bias)};
}

struct TorchEncoderLayer::State {
  int64_t width = 0, ff = 0;
  torch::nn::TransformerEncoderLayer layer{nullptr};
  torch::Tensor x, probe;  // [time, batch, width]: torch's C++ layer is sequence first
};

TorchEncoderLayer::TorchEncoderLayer(int64_t batch, int64_t time, int64_t width, int64_t heads,
                                     int64_t ff, const EncoderLayerWeights& w, const float* x,
                                     const float* probe)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.width = width, s.ff = ff;
  s.layer = torch::nn::TransformerEncoderLayer(
      torch::nn::TransformerEncoderLayerOptions(width, heads).dim_feedforward(ff).dropout(0.0));
  {
    torch::NoGradGuard no_grad;
    torch::nn::MultiheadAttention& attention = s.layer->self_attn;
    attention->in_proj_weight.copy_(
        torch::cat({linear_weight_of(w.wq, width, width), linear_weight_of(w.wk, width, width),
                    linear_weight_of(w.wv, width, width)}));
    attention->in_proj_bias.copy_(
        torch::cat({copy_of(w.bq, {width}), copy_of(w.bk, {width}), copy_of(w.bv, {width})}));
    attention->out_proj->weight.copy_(linear_weight_of(w.wo, width, width));
    attention->out_proj->bias.copy_(copy_of(w.bo, {width}));
    s.layer->linear1->weight.copy_(linear_weight_of(w.w1, width, ff));
    s.layer->linear1->bias.copy_(copy_of(w.b1, {ff}));
    s.layer->linear2->weight.copy_(linear_weight_of(w.w2, ff, width));
    s.layer->linear2->bias.copy_(copy_of(w.b2, {width}));
    s.layer->norm1->weight.copy_(copy_of(w.gamma1, {width}));
    s.layer->norm1->bias.copy_(copy_of(w.beta1, {width}));
    s.layer->norm2->weight.copy_(copy_of(w.gamma2, {width}));
    s.layer->norm2->bias.copy_(copy_of(w.beta2, {width}));
  }
  auto sequence_first = [&](const float* data) {
    std::vector<float> copy(data, data + batch * time * width);
    return copy_of(copy, {batch, time, width}).transpose(0, 1).contiguous();
  };
  s.x = sequence_first(x);
  s.probe = sequence_first(probe);
}

TorchEncoderLayer::~TorchEncoderLayer() = default;

float TorchEncoderLayer::forward_backward() {
  State& s = *state_;
  s.layer->zero_grad();
  torch::Tensor loss = (s.layer->forward(s.x) * s.probe).sum();
  loss.backward();
  return loss.item<float>();
}

std::vector<std::vector<float>> TorchEncoderLayer::gradients() const {
  const State& s = *state_;
  const int64_t width = s.width;
  const torch::nn::MultiheadAttention& attention = s.layer->self_attn;
  torch::Tensor in_weight = attention->in_proj_weight.grad(),
                in_bias = attention->in_proj_bias.grad();
  auto kernel = [](const torch::Tensor& weight_grad) { return values_of(weight_grad.t()); };
  std::vector<std::vector<float>> out;
  for (int64_t part = 0; part < 3; ++part) {
    out.push_back(kernel(in_weight.slice(0, part * width, (part + 1) * width)));
    out.push_back(values_of(in_bias.slice(0, part * width, (part + 1) * width)));
  }
  out.push_back(kernel(attention->out_proj->weight.grad()));
  out.push_back(values_of(attention->out_proj->bias.grad()));
  out.push_back(kernel(s.layer->linear1->weight.grad()));
  out.push_back(values_of(s.layer->linear1->bias.grad()));
  out.push_back(kernel(s.layer->linear2->weight.grad()));
  out.push_back(values_of(s.layer->linear2->bias.grad()));
  for (const torch::nn::LayerNorm& norm : {s.layer->norm1, s.layer->norm2}) {
    out.push_back(values_of(norm->weight.grad()));
    out.push_back(values_of(norm->bias.grad()));
  }
  return out;
}

struct TorchDigitsCnn::State {
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear dense{nullptr};
  torch::Tensor images, labels;  // images NCHW
  std::unique_ptr<torch::optim::Adam> optimizer;
};

TorchDigitsCnn::TorchDigitsCnn(int64_t batch, float learning_rate, const DigitsCnnWeights& w,
                               const float* images, const int32_t* labels)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.conv1 = torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1));
  s.conv2 = torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1));
  s.dense = torch::nn::Linear(128, 10);
  {
    torch::NoGradGuard no_grad;
    auto oihw = [](const std::vector<float>& hwio, int64_t in, int64_t out) {
      return copy_of(hwio, {3, 3, in, out}).permute({3, 2, 0, 1}).contiguous();
    };
    s.conv1->weight.copy_(oihw(w.conv1, 1, 16));
    s.conv1->bias.copy_(copy_of(w.bias1, {16}));
    s.conv2->weight.copy_(oihw(w.conv2, 16, 32));
    s.conv2->bias.copy_(copy_of(w.bias2, {32}));
    s.dense->weight.copy_(linear_weight_of(w.dense, 128, 10));
    s.dense->bias.copy_(copy_of(w.bias3, {10}));
  }
  std::vector<float> nhwc(images, images + batch * 64);
  s.images = copy_of(nhwc, {batch, 8, 8, 1}).permute({0, 3, 1, 2}).contiguous();
  s.labels =
      torch::from_blob(const_cast<int32_t*>(labels), {batch}, torch::kInt32).to(torch::kInt64);
  std::vector<torch::Tensor> trained;
  for (const auto& module : {s.conv1->parameters(), s.conv2->parameters(), s.dense->parameters()})
    trained.insert(trained.end(), module.begin(), module.end());
  // Keras adds its epsilon (1e-7) to sqrt(v) before the bias correction,
  // torch after it: this epsilon makes the first steps the same.
  const double epsilon = 1e-7 / std::sqrt(1 - 0.999);
  s.optimizer = std::make_unique<torch::optim::Adam>(
      trained, torch::optim::AdamOptions(learning_rate).eps(epsilon));
}

TorchDigitsCnn::~TorchDigitsCnn() = default;

float TorchDigitsCnn::train_step() {
  State& s = *state_;
  s.optimizer->zero_grad();
  torch::Tensor h = torch::max_pool2d(torch::relu(s.conv1->forward(s.images)), 2);
  h = torch::max_pool2d(torch::relu(s.conv2->forward(h)), 2);
  h = h.permute({0, 2, 3, 1}).reshape({h.size(0), -1});  // flattened as NHWC, as ag's Flatten
  torch::Tensor loss = torch::nn::functional::cross_entropy(s.dense->forward(h), s.labels);
  loss.backward();
  s.optimizer->step();
  return loss.item<float>();
}

std::vector<std::vector<float>> TorchDigitsCnn::weights() const {
  const State& s = *state_;
  auto hwio = [](const torch::Tensor& oihw) { return values_of(oihw.permute({2, 3, 1, 0})); };
  return {hwio(s.conv1->weight),    values_of(s.conv1->bias),       hwio(s.conv2->weight),
          values_of(s.conv2->bias), values_of(s.dense->weight.t()), values_of(s.dense->bias)};
}

}  // namespace ag_bench
