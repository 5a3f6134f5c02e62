#include <ag/ag.h>

#include <utility>
#include <vector>

// The TensorFlow guide's "looping over Python data": the graph gets one copy of the
// body per element of the data set.
AG_FUNCTION ag::Tensor train(std::vector<std::pair<int, int>> dataset) {
  ag::Tensor loss = ag::constant(0);
  for (auto [x, y] : dataset) {
    loss = loss + ag::abs(ag::constant(y - x));
  }
  return loss;
}

// Tensors in a std::vector, and a large constant trip count.
AG_FUNCTION ag::Tensor sum_all(const std::vector<ag::Tensor>& values) {
  ag::Tensor total = ag::constant(0.0);
  for (const ag::Tensor& v : values) total = total + v;
  return total;
}

AG_FUNCTION ag::Tensor iterate(ag::Tensor x) {
  for (int i = 0; i < 1000; ++i) {
    x = ag::tanh(x) * 0.5;
  }
  for (int i = 100; i > 0; i -= 2) x = x + 1;
  return x;
}

int main() {
  train({{1, 1}, {2, 2}, {3, 3}});
  sum_all({ag::constant(1.0), ag::constant(2.0)});
  iterate(ag::constant(1.0));
}
