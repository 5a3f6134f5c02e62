#include <ag/ag.h>

#include <iostream>

// The TensorFlow guide examples, written in C++.

AG_FUNCTION ag::Tensor simple_relu(ag::Tensor x) {
  if (ag::reduce_sum(x) > 0) {
    return x;
  } else {
    return ag::constant(0.0);
  }
}

AG_FUNCTION ag::Tensor g(ag::Tensor x) {
  if (ag::reduce_sum(x) > 0) {
    x = x * x;
  } else {
    x = -x;
  }
  return x;
}

AG_FUNCTION ag::Tensor collatz(ag::Tensor a) {
  ag::Tensor counter = 0;
  while (a != 1) {
    if (a % 2 == 0) {
      a = a / 2;
    } else {
      a = 3 * a + 1;
    }
    counter = counter + 1;
  }
  return counter;
}

AG_FUNCTION ag::Tensor dynamic_rnn(ag::Tensor input_data, ag::Tensor initial_state) {
  ag::TensorArray outputs(ag::float32, 0, /*dynamic_size=*/true);
  ag::Tensor state = initial_state;
  for (auto i : ag::range(ag::reduce_sum(input_data))) {
    state = ag::tanh(ag::matmul(input_data[0], state) + state);
    outputs = outputs.write(i, state);
  }
  return outputs.stack();
}

int main() {
  std::cout << simple_relu(ag::constant(-3.0)) << " " << simple_relu(ag::constant(2.0)) << "\n";
  // Same signature on every call: the transpiled build traces g once.
  std::cout << g(ag::constant({1.0, 2.0})) << "\n";
  std::cout << g(ag::constant({-1.0, -2.0})) << "\n";
  std::cout << g(ag::constant({0.5, -2.0})) << "\n";
#ifdef AG_E2E_EXPECTED_TRACES
  if (ag::function_of(&g).tracing_count() != AG_E2E_EXPECTED_TRACES) {
    std::cerr << "g traced " << ag::function_of(&g).tracing_count() << " times, expected "
              << AG_E2E_EXPECTED_TRACES << "\n";
    return 1;
  }
#endif
  std::cout << collatz(ag::constant(6.0)) << " " << collatz(ag::constant(27.0)) << "\n";
  ag::Tensor input_data = ag::constant({{{0.5, 0.25}, {0.25, 0.5}}, {{1.0, 0.0}, {0.0, 0.5}}});
  ag::Tensor state = ag::constant({{0.1}, {-0.2}});
  std::cout << dynamic_rnn(input_data, state) << "\n";
}
