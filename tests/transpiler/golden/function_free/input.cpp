#include <ag/ag.h>

#include <iostream>

namespace model {

AG_FUNCTION ag::Tensor scale(ag::Tensor x, int factor = 2) { return x * factor; }

AG_FUNCTION
static ag::Tensor relu(const ag::Tensor& x) {
  if (x > 0) {
    return x;
  }
  return ag::constant(0.0);
}

AG_FUNCTION void train(ag::Variable& w, int num_steps) {
  for (int step = 0; step < num_steps; ++step) {  // unrolled at trace time
    w.assign(w.read() * 2);
  }
}

// Unnamed parameters: the wrapper names them to forward them.
AG_FUNCTION ag::Tensor first_positive(ag::Tensor x, ag::Tensor /*unused*/, int) {
  if (x > 0) x = x * 10;
  return x;
}

}  // namespace model

int main() {
  std::cout << model::scale(ag::constant({1.0, 2.0})) << "\n";
  std::cout << model::scale(3, 5) << "\n";
  std::cout << model::relu(ag::constant(-2.5)) << " " << model::relu(ag::constant(2.5)) << "\n";
  ag::Variable w(ag::constant(1.0));
  model::train(w, 3);
  model::train(w, 3);
  std::cout << w.read() << "\n";
  std::cout << model::first_positive(ag::constant(4), ag::constant(0), 1) << " "
            << model::first_positive(ag::constant(-4), ag::constant(0), 2) << "\n";
}
