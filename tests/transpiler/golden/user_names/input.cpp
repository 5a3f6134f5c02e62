#include <ag/ag.h>

#include <iostream>

// The TensorFlow guide's `add` and `dense_layer`, and a `square` of the
// program's own, called unqualified on tensors: each call finds the program's
// function, not ag::add or ag::square (argument-dependent lookup on ag::Tensor
// finds only its operators). The ops are called qualified.

AG_FUNCTION ag::Tensor add(ag::Tensor a, ag::Tensor b) {
  return a + b;
}

AG_FUNCTION ag::Tensor square(ag::Tensor x) {
  if (ag::reduce_sum(x) > 0) {
    x = ag::square(x);
  } else {
    x = -x;
  }
  return x + 1;  // not what ag::square gives, so the output shows which one ran
}

AG_FUNCTION ag::Tensor dense_layer(ag::Tensor x, ag::Tensor w, ag::Tensor b) {
  return add(ag::matmul(x, w), b);
}

AG_FUNCTION ag::Tensor model(ag::Tensor x) {
  ag::Tensor y = dense_layer(x, ag::ones({2, 2}), ag::ones({2}));
  for (auto i : ag::range(2)) {
    y = add(y, square(y * ag::cast(i, ag::float32)));
  }
  return y;
}

int main() {
  std::cout << add(ag::constant(1), ag::constant(2)) << "\n";
  std::cout << square(ag::constant(3)) << " " << square(ag::constant(-3)) << "\n";
  std::cout << dense_layer(ag::ones({3, 2}), ag::ones({2, 2}), ag::ones({2})) << "\n";
  std::cout << model(ag::constant({{1.0, -2.0}})) << "\n";
}
