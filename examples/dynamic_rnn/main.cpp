// Accumulating values in a loop (tf.function guide, "Accumulating values in a
// loop").
//
// The loop runs over a tensor range, so agc stages it: pushing to a
// std::vector in its body would happen once, while tracing. An ag::TensorArray
// is the staged accumulator: each iteration writes one state, and stack()
// gathers them. The input is random with a fixed seed.
#include <cstdint>
#include <iostream>

#include <ag/ag.h>

constexpr int64_t batch_size = 2;
constexpr int64_t seq_len = 3;
constexpr int64_t feature_size = 4;

// The TensorFlow guide passes rnn_step as an argument; here dynamic_rnn calls it.
ag::Tensor rnn_step(ag::Tensor inp, ag::Tensor state) {
  return inp + state;
}

AG_FUNCTION ag::Tensor dynamic_rnn(ag::Tensor input_data, ag::Tensor initial_state) {
  // [batch, time, features] -> [time, batch, features]
  input_data = ag::transpose(input_data, {1, 0, 2});
  int64_t max_seq_len = input_data.shape()[0];

  ag::TensorArray states(ag::float32, max_seq_len);
  ag::Tensor state = initial_state;
  for (auto i : ag::range(max_seq_len)) {
    state = rnn_step(input_data[i], state);
    states = states.write(i, state);
  }
  return ag::transpose(states.stack(), {1, 0, 2});
}

int main() {
  ag::Tensor input_data =
      ag::random_uniform({batch_size, seq_len, feature_size}, 0.0, 1.0, ag::float32, /*seed=*/7);
  std::cout << "input_data:\n" << input_data << "\n";
  std::cout << "dynamic_rnn(rnn_step, input_data, zeros([batch_size, feature_size])):\n"
            << dynamic_rnn(input_data, ag::zeros({batch_size, feature_size})) << "\n";
}
