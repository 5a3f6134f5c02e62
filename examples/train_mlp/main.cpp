// Training a model: a two-layer MLP fits a noisy sine.
//
// The data: 64 points x uniform in [-3, 3], y = sin(x) + noise (stddev 0.1),
// seeded. The model: 1 -> 16 (relu) -> 1, mean squared error, Adam.
//
// train_step is marked: agc makes it an ag::function, so each call runs one
// cached graph that holds the forward pass, the tape's backward pass and
// Adam's updates of the variables. train_loop stages the whole training loop:
// its `while` has a tensor condition, so agc turns it into one While node
// whose body is train_step inlined; one call runs every step in the executor
// (the TensorFlow guide's "loop in a graph" lesson). Both start from the same
// weights and end with the same loss. The timings go to stderr, since they
// vary from run to run: the staged loop saves the per-call cost of entering
// a graph (about 1.3x here); with larger batches the kernels dominate and
// the two take the same time.
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <ag/ag.h>

constexpr int64_t kPoints = 64;
constexpr int64_t kHidden = 16;
constexpr int kSteps = 1000;
constexpr int kPrintEvery = 100;

class Regressor : public ag::Module {
 public:
  ag::Variable w1, b1, w2, b2;
  ag::optimizers::Adam optimizer{{.learning_rate = 0.02}};

  explicit Regressor(const std::vector<ag::Tensor>& initial)
      : w1(initial[0], "w1"), b1(initial[1], "b1"), w2(initial[2], "w2"), b2(initial[3], "b2") {}

  ag::Tensor predict(const ag::Tensor& x) const {
    ag::Tensor h = ag::relu(ag::matmul(x, w1.read()) + b1.read());
    return ag::matmul(h, w2.read()) + b2.read();
  }

  // One step of Adam on the mean squared error; returns the loss before it.
  AG_FUNCTION ag::Tensor train_step(ag::Tensor x, ag::Tensor y) {
    std::vector<ag::Variable> variables = {w1, b1, w2, b2};
    ag::GradientTape tape;
    ag::Tensor loss = ag::reduce_mean(ag::square(predict(x) - y));
    optimizer.apply_gradients(tape.gradient(loss, variables), variables);
    return loss;
  }

  // `steps` steps in one graph; returns the loss of the last one.
  AG_FUNCTION ag::Tensor train_loop(ag::Tensor x, ag::Tensor y, ag::Tensor steps) {
    ag::Tensor step = ag::constant(0);
    ag::Tensor loss = ag::constant(0.0f);
    while (step < steps) {
      loss = train_step(x, y);
      step = step + 1;
    }
    return loss;
  }
};

namespace {

// sin of each element, computed in C++: the data, not the model.
ag::Tensor sin_of(const ag::Tensor& x) {
  std::vector<float> values = x.to_vector<float>();
  for (float& v : values) v = std::sin(v);
  return ag::constant(values, x.shape());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string fixed(float value, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, double(value));
  return buf;
}

}  // namespace

int main() {
  ag::Tensor x = ag::random_uniform({kPoints, 1}, -3.0, 3.0, ag::float32, /*seed=*/1);
  ag::Tensor y = sin_of(x) + ag::random_normal({kPoints, 1}, 0.0, 0.1, ag::float32, /*seed=*/2);
  // A grid of 61 points in [-3, 3] to measure the fit against the noiseless sine.
  std::vector<float> grid_values;
  for (int i = 0; i <= 60; ++i) grid_values.push_back(-3.0f + 0.1f * float(i));
  ag::Tensor grid = ag::constant(grid_values, {int64_t(grid_values.size()), 1});

  std::vector<ag::Tensor> initial = {
      ag::random_normal({1, kHidden}, 0.0, 1.0, ag::float32, /*seed=*/3), ag::zeros({kHidden}),
      ag::random_normal({kHidden, 1}, 0.0, 1.0 / std::sqrt(double(kHidden)), ag::float32, 4),
      ag::zeros({1})};

  std::cout << "Fitting y = sin(x) + noise with a 1-" << kHidden << "-1 MLP, Adam, " << kSteps
            << " steps\n";
  Regressor model(initial);
  ag::Tensor loss = model.train_step(x, y);  // traces it (and takes the first step)
  std::cout << "step 1: loss " << fixed(loss.item<float>(), 4) << "\n";
  auto start = std::chrono::steady_clock::now();
  for (int step = 2; step <= kSteps; ++step) {
    loss = model.train_step(x, y);
    if (step % kPrintEvery == 0)
      std::cout << "step " << step << ": loss " << fixed(loss.item<float>(), 4) << "\n";
  }
  double step_by_step_s = seconds_since(start);
  ag::Tensor fit_error = ag::reduce_mean(ag::square(model.predict(grid) - sin_of(grid)));
  std::cout << "mean squared error against sin(x) on a grid: " << fixed(fit_error.item<float>(), 4)
            << "\n";

  std::cout << "\nThe whole training loop as one graph (a While node):\n";
  Regressor staged(initial);
  staged.train_loop(x, y, ag::constant(1));  // trace it (and take the first step)
  start = std::chrono::steady_clock::now();
  ag::Tensor staged_loss = staged.train_loop(x, y, ag::constant(kSteps - 1));
  double staged_s = seconds_since(start);
  std::cout << "last loss " << fixed(staged_loss.item<float>(), 4)
            << (staged_loss.item<float>() == loss.item<float>() ? " (the same as step by step)"
                                                                : " (differs from step by step)")
            << "\n";

  std::cerr << kSteps - 1 << " steps, one train_step call each: " << step_by_step_s * 1e3 << " ms\n"
            << kSteps - 1 << " steps in one train_loop call: " << staged_s * 1e3 << " ms\n"
            << "speed-up: " << step_by_step_s / staged_s << "x\n";
}
