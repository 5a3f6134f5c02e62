#include <ag/ag.h>

#include <iostream>

// The tanh loop of the tf.function guide.
AG_FUNCTION ag::Tensor tanh_loop(ag::Tensor x) {
  ag::Tensor i = 0;
  while (ag::reduce_sum(x) > 1) {
    x = ag::tanh(x);
    i = i + 1;
  }
  return x;
}

AG_FUNCTION ag::Tensor nested(ag::Tensor x, ag::Tensor n) {
  ag::Tensor count = 0;
  while (count < n) {
    ag::Tensor tmp = x * 2;  // declared inside: never state
    while (x > tmp) {
      x = x - 1;
    }
    count = count + 1;
  }
  // A plain loop unrolls at trace time: kept as written.
  for (int k = 0; k < 3; ++k) x = x + 1;
  return x;
}

int main() {
  std::cout << tanh_loop(ag::constant({1.0, 2.0})) << "\n";
  std::cout << nested(ag::constant(-3.0), 2) << "\n";
  std::cout << nested(ag::constant(2.0), 3) << "\n";
  ag::print("tanh", tanh_loop(ag::constant(5.0)));
}
