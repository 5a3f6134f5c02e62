// The TensorFlow guide examples in staged form, written once with ag ops as agc
// emits them: the workloads of tools/bench/control_bench.cpp (which describes
// them) and of the runtime and ONNX tests (tests/runtime/staged_test_util.h).
#pragma once

#include <cstdint>

#include <ag/ag.h>

namespace ag_workloads {

inline ag::Tensor tanh_loop(ag::Tensor x) {
  ag::while_stmt([&] { return ag::reduce_sum(x) > 1; }, [&] { x = ag::tanh(x); },
                 ag::state({"x"}, x));
  return x;
}

// Returns [fizzbuzz, fizz, buzz, other].
inline ag::Tensor fizzbuzz_count(ag::Tensor n) {
  ag::Tensor fizzbuzz = ag::constant(0), fizz = ag::constant(0), buzz = ag::constant(0),
             other = ag::constant(0);
  ag::for_stmt(
      ag::range(1, n + 1), ag::no_extra_test,
      [&](ag::Tensor i) {
        ag::if_stmt(
            i % 15 == 0, [&] { fizzbuzz = fizzbuzz + 1; },
            [&] {
              ag::if_stmt(
                  i % 3 == 0, [&] { fizz = fizz + 1; },
                  [&] {
                    ag::if_stmt(
                        i % 5 == 0, [&] { buzz = buzz + 1; }, [&] { other = other + 1; },
                        ag::state({"buzz", "other"}, buzz, other));
                  },
                  ag::state({"fizz", "buzz", "other"}, fizz, buzz, other));
            },
            ag::state({"fizzbuzz", "fizz", "buzz", "other"}, fizzbuzz, fizz, buzz, other));
      },
      ag::state({"fizzbuzz", "fizz", "buzz", "other"}, fizzbuzz, fizz, buzz, other));
  return ag::stack({fizzbuzz, fizz, buzz, other});
}

inline ag::Tensor mean_squared_error(const ag::Tensor& y_true, const ag::Tensor& y_pred) {
  return ag::reduce_mean(ag::pow(y_true - y_pred, 2));
}

inline ag::Tensor next_collatz(const ag::Tensor& x) {
  return ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1);
}

inline ag::Tensor collatz_steps(ag::Tensor x) {
  ag::Tensor steps = ag::constant(0);
  ag::while_stmt([&] { return ag::reduce_max(x) > 1; },
                 [&] {
                   x = ag::where(x > 1, next_collatz(x), x);
                   steps = steps + 1;
                 },
                 ag::state({"x", "steps"}, x, steps));
  return steps;
}

inline ag::Tensor collatz_scalar(ag::Tensor a) {
  ag::Tensor counter = ag::constant(0);
  ag::while_stmt([&] { return a != 1; },
                 [&] {
                   ag::if_stmt(
                       a % 2 == 0, [&] { a = a / 2; }, [&] { a = 3 * a + 1; }, ag::state({"a"}, a));
                   counter = counter + 1;
                 },
                 ag::state({"a", "counter"}, a, counter));
  return counter;
}

inline ag::Tensor rnn_step(const ag::Tensor& inp, const ag::Tensor& state) {
  return inp + state;
}

inline ag::Tensor dynamic_rnn(ag::Tensor input_data, ag::Tensor initial_state) {
  input_data = ag::transpose(input_data, {1, 0, 2});  // -> [time, batch, features]
  int64_t max_seq_len = input_data.shape()[0];
  ag::TensorArray states(ag::float32, max_seq_len);
  ag::Tensor state = initial_state;
  ag::for_stmt(
      ag::range(ag::Tensor(max_seq_len)), ag::no_extra_test,
      [&](ag::Tensor i) {
        state = rnn_step(input_data[i], state);
        states.write(i, state);
      },
      ag::state({"state", "states"}, state, states));
  return ag::transpose(states.stack(), {1, 0, 2});
}

}  // namespace ag_workloads
