// The benchmarks' LibTorch peers (torch_peer.h): the MLP and LeNet training
// steps and the RNN loss with torch::autograd, and the guide's convolution.
#include "torch_peer.h"

#include <torch/torch.h>

namespace ag_bench {

namespace {

torch::Tensor copy_of(const float* data, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(data), shape, torch::kFloat32).clone();
}

torch::Tensor copy_of(const std::vector<float>& data, std::vector<int64_t> shape) {
  return copy_of(data.data(), std::move(shape));
}

// An HWIO filter [k, k, in, out] as torch's OIHW.
torch::Tensor oihw_of(const float* hwio, int64_t k, int64_t in, int64_t out) {
  return copy_of(hwio, {k, k, in, out}).permute({3, 2, 0, 1}).contiguous();
}

std::vector<float> values_of(const torch::Tensor& t) {
  torch::Tensor c = t.detach().contiguous();
  return {c.data_ptr<float>(), c.data_ptr<float>() + c.numel()};
}

}  // namespace

struct TorchMlp::State {
  torch::Tensor w1, b1, w2, b2, x, labels;
  std::unique_ptr<torch::optim::SGD> optimizer;
};

TorchMlp::TorchMlp(int batch, int in, int hidden, int out, float learning_rate, const float* w1,
                   const float* b1, const float* w2, const float* b2, const float* x,
                   const int32_t* labels)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.w1 = copy_of(w1, {in, hidden}).requires_grad_();
  s.b1 = copy_of(b1, {hidden}).requires_grad_();
  s.w2 = copy_of(w2, {hidden, out}).requires_grad_();
  s.b2 = copy_of(b2, {out}).requires_grad_();
  s.x = copy_of(x, {batch, in});
  // cross_entropy takes class indices as int64.
  s.labels =
      torch::from_blob(const_cast<int32_t*>(labels), {batch}, torch::kInt32).to(torch::kInt64);
  s.optimizer = std::make_unique<torch::optim::SGD>(
      std::vector<torch::Tensor>{s.w1, s.b1, s.w2, s.b2}, torch::optim::SGDOptions(learning_rate));
}

TorchMlp::~TorchMlp() = default;

float TorchMlp::train_step() {
  State& s = *state_;
  s.optimizer->zero_grad();
  torch::Tensor h = torch::relu(torch::addmm(s.b1, s.x, s.w1));
  torch::Tensor logits = torch::addmm(s.b2, h, s.w2);
  torch::Tensor loss = torch::nn::functional::cross_entropy(logits, s.labels);
  loss.backward();
  s.optimizer->step();
  return loss.item<float>();
}

std::vector<std::vector<float>> TorchMlp::weights() const {
  std::vector<std::vector<float>> out;
  for (const torch::Tensor& w : {state_->w1, state_->b1, state_->w2, state_->b2}) {
    torch::Tensor c = w.detach().contiguous();
    out.emplace_back(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

void use_one_torch_thread() {
  torch::set_num_threads(1);
}

struct TorchRnn::State {
  int64_t steps;
  torch::Tensor x, w, u, b;
  torch::Tensor h0;

  torch::Tensor loss() const {
    torch::Tensor inputs = x.transpose(0, 1).contiguous();  // [time, batch, units]
    torch::Tensor h = h0;
    std::vector<torch::Tensor> states;
    states.reserve(size_t(steps));
    for (int64_t t = 0; t < steps; ++t) {
      h = torch::tanh(torch::addmm(b, inputs[t], w) + torch::mm(h, u));
      states.push_back(h);
    }
    return torch::stack(states).sum();
  }
};

TorchRnn::TorchRnn(int64_t batch, int64_t steps, int64_t units, const float* x, const float* w,
                   const float* u, const float* b)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.steps = steps;
  s.x = copy_of(x, {batch, steps, units});
  s.w = copy_of(w, {units, units}).requires_grad_();
  s.u = copy_of(u, {units, units}).requires_grad_();
  s.b = copy_of(b, {units}).requires_grad_();
  s.h0 = torch::zeros({batch, units});
}

TorchRnn::~TorchRnn() = default;

float TorchRnn::forward() {
  torch::NoGradGuard no_grad;
  return state_->loss().item<float>();
}

float TorchRnn::forward_backward() {
  State& s = *state_;
  for (torch::Tensor* p : {&s.w, &s.u, &s.b}) p->mutable_grad() = torch::Tensor();
  torch::Tensor loss = s.loss();
  loss.backward();
  return loss.item<float>();
}

std::vector<std::vector<float>> TorchRnn::gradients() const {
  std::vector<std::vector<float>> out;
  for (const torch::Tensor& p : {state_->w, state_->u, state_->b}) {
    torch::Tensor g = p.grad().contiguous();
    out.emplace_back(g.data_ptr<float>(), g.data_ptr<float>() + g.numel());
  }
  return out;
}

struct TorchLenet::State {
  // conv1, bias1, conv2, bias2, dense1, bias3, dense2, bias4, dense3, bias5
  std::vector<torch::Tensor> params;
  torch::Tensor x, labels;
  std::unique_ptr<torch::optim::SGD> optimizer;

  torch::Tensor loss() const {
    const std::vector<torch::Tensor>& p = params;
    torch::Tensor h = torch::max_pool2d(torch::relu(torch::conv2d(x, p[0], p[1])), 2);
    h = torch::max_pool2d(torch::relu(torch::conv2d(h, p[2], p[3])), 2);
    h = h.permute({0, 2, 3, 1}).reshape({x.size(0), -1});
    h = torch::relu(torch::addmm(p[5], h, p[4]));
    h = torch::relu(torch::addmm(p[7], h, p[6]));
    return torch::nn::functional::cross_entropy(torch::addmm(p[9], h, p[8]), labels);
  }
};

TorchLenet::TorchLenet(int batch, float learning_rate, const LenetWeights& w, const float* x,
                       const int32_t* labels)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.params = {oihw_of(w.conv1.data(), 5, 1, 6),  copy_of(w.bias1, {6}),
              oihw_of(w.conv2.data(), 5, 6, 16), copy_of(w.bias2, {16}),
              copy_of(w.dense1, {256, 120}),     copy_of(w.bias3, {120}),
              copy_of(w.dense2, {120, 84}),      copy_of(w.bias4, {84}),
              copy_of(w.dense3, {84, 10}),       copy_of(w.bias5, {10})};
  for (torch::Tensor& p : s.params) p.requires_grad_();
  s.x = copy_of(x, {batch, 28, 28, 1}).permute({0, 3, 1, 2}).contiguous();
  s.labels =
      torch::from_blob(const_cast<int32_t*>(labels), {batch}, torch::kInt32).to(torch::kInt64);
  s.optimizer =
      std::make_unique<torch::optim::SGD>(s.params, torch::optim::SGDOptions(learning_rate));
}

TorchLenet::~TorchLenet() = default;

float TorchLenet::train_step() {
  State& s = *state_;
  s.optimizer->zero_grad();
  torch::Tensor loss = s.loss();
  loss.backward();
  s.optimizer->step();
  return loss.item<float>();
}

LenetWeights TorchLenet::weights() const {
  const std::vector<torch::Tensor>& p = state_->params;
  auto hwio = [](const torch::Tensor& oihw) { return values_of(oihw.permute({2, 3, 1, 0})); };
  return {hwio(p[0]),      values_of(p[1]), hwio(p[2]),      values_of(p[3]), values_of(p[4]),
          values_of(p[5]), values_of(p[6]), values_of(p[7]), values_of(p[8]), values_of(p[9])};
}

struct TorchConv::State {
  torch::Tensor image, filter, result;
};

TorchConv::TorchConv(int64_t side, int64_t channels, int64_t filters, int64_t kernel,
                     const float* image, const float* filter)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.image = copy_of(image, {1, side, side, channels}).permute({0, 3, 1, 2}).contiguous();
  s.filter = oihw_of(filter, kernel, channels, filters);
}

TorchConv::~TorchConv() = default;

void TorchConv::run() {
  torch::NoGradGuard no_grad;
  state_->result = torch::conv2d(state_->image, state_->filter);
}

std::vector<float> TorchConv::result_nhwc() const {
  return values_of(state_->result.permute({0, 2, 3, 1}));
}

}  // namespace ag_bench
