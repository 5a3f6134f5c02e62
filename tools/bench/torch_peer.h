// train_bench's LibTorch peers, from the same data and initial weights as
// the ag variants: the MLP training step (784-256-10, relu, mean softmax
// cross-entropy, plain SGD) with torch::autograd and torch::optim::SGD, and
// the RNN loss (h = tanh(x_t W + h U + b) over the steps, the sum of the
// states) with and without its gradient. Compiled only where CMake finds
// LibTorch (tools/bench/CMakeLists.txt, AG_BENCH_TORCH), so that
// train_bench.cpp itself never includes the torch headers.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace ag_bench {

class TorchMlp {
 public:
  // Copies of the row-major weights ([in, hidden], [hidden], [hidden, out],
  // [out]), the batch x [batch, in] and its labels [batch].
  TorchMlp(int batch, int in, int hidden, int out, float learning_rate, const float* w1,
           const float* b1, const float* w2, const float* b2, const float* x,
           const int32_t* labels);
  ~TorchMlp();

  // Forward, backward (loss.backward()) and the SGD update; returns the loss.
  float train_step();
  // The current weights, row-major, for the result checks.
  std::vector<std::vector<float>> weights() const;

  // LibTorch's intra-op threads: 1, as every benchmark here runs.
  static void use_one_thread();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

class TorchRnn {
 public:
  // Copies of x [batch, steps, units] and of w, u [units, units], b [units].
  TorchRnn(int64_t batch, int64_t steps, int64_t units, const float* x, const float* w,
           const float* u, const float* b);
  ~TorchRnn();

  // The loss without a gradient (under torch::NoGradGuard).
  float forward();
  // The loss, then loss.backward(): the gradients of w, u and b.
  float forward_backward();
  // dW, dU, db of the last forward_backward, row-major.
  std::vector<std::vector<float>> gradients() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ag_bench
