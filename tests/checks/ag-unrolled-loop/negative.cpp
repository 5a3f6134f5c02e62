#include <ag/ag.h>

#include <array>
#include <memory>
#include <vector>

// Staged loops: over ag::range with a tensor bound, over a tensor, with a
// tensor condition.
AG_FUNCTION ag::Tensor staged(ag::Tensor x, ag::Tensor n) {
  for (auto i : ag::range(n)) {
    x = x + ag::cast(i, ag::float64);
    ag::print(x);
  }
  for (auto row : x) x = x + row;
  for (int i = 0; i < n; ++i) x = x * 2;
  while (ag::reduce_sum(x) > 1) x = x / 2;
  return x;
}

// Small constant loops, as -Wall would leave them.
AG_FUNCTION ag::Tensor small(ag::Tensor x) {
  for (int i = 0; i < 3; ++i) x = ag::tanh(x);
  for (int i = 0; i < 16; ++i) x = x + 1;
  std::array<double, 3> scales = {1.0, 2.0, 3.0};
  for (double s : scales) x = x * s;
  for (double s : {0.5, 0.25}) x = x * s;
  return x;
}

// Loops over structure (layers), and loops that make no tensors.
struct Layer {
  ag::Tensor w;
  ag::Tensor apply(const ag::Tensor& x) const { return ag::matmul(x, w); }
};

class Net : public ag::Module {
 public:
  AG_FUNCTION ag::Tensor operator_call(ag::Tensor x) {
    for (const auto& layer : layers_) x = layer->apply(x);
    int total = 0;
    for (int i = 0; i < 1000; ++i) total += i;
    const std::vector<int> sizes = {4, 8};
    for (int size : sizes) total += size;
    return x + total;
  }

 private:
  std::vector<std::unique_ptr<Layer>> layers_;
};

// A C++ bound: the caller chooses the unrolling (and traces per value).
AG_FUNCTION void train(ag::Variable& w, int num_steps) {
  for (int step = 0; step < num_steps; ++step) w.assign(w.read() * 2);
}

// Loops over data outside marked code.
ag::Tensor eager_sum(const std::vector<ag::Tensor>& values) {
  ag::Tensor total = ag::constant(0.0);
  for (const ag::Tensor& v : values) total = total + v;
  return total;
}

int main() {
  staged(ag::constant({1.0}), ag::constant(3));
  small(ag::constant(1.0));
  Net net;
  net.operator_call(ag::constant({{1.0}}));
  ag::Variable w(1.0);
  train(w, 3);
  eager_sum({ag::constant(1.0)});
}
