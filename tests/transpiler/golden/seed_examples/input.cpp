#include <ag/ag.h>

// The seed guides' examples, written in C++.

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
