// train_bench's LibTorch peers (torch_peer.h): the MLP step and the RNN loss
// with torch::autograd.
#include "torch_peer.h"

#include <torch/torch.h>

namespace ag_bench {

namespace {

torch::Tensor copy_of(const float* data, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(data), shape, torch::kFloat32).clone();
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

void TorchMlp::use_one_thread() {
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

}  // namespace ag_bench
