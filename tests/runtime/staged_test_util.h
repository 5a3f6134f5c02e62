// Workloads and helpers shared by the tests of traced functions: the seed's
// dynamic_rnn and fizzbuzz, and the optimised body of a staged function's
// trace.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "graph/graph.h"
#include "passes/passes.h"

namespace ag_test {

// The seed's dynamic_rnn (tools/bench/control_bench.cpp): [batch, time,
// features] -> the running sums over time, [batch, time, features].
inline ag::Tensor dynamic_rnn(ag::Tensor input_data, ag::Tensor initial_state) {
  input_data = ag::transpose(input_data, {1, 0, 2});  // -> [time, batch, features]
  const int64_t max_seq_len = input_data.shape()[0];
  ag::TensorArray states(ag::float32, max_seq_len);
  ag::Tensor state = initial_state;
  ag::for_stmt(
      ag::range(ag::Tensor(max_seq_len)), ag::no_extra_test,
      [&](ag::Tensor i) {
        state = input_data[i] + state;
        states.write(i, state);
      },
      ag::state({"state", "states"}, state, states));
  return ag::transpose(states.stack(), {1, 0, 2});
}

// The seed's fizzbuzz counting (tools/bench/control_bench.cpp): three nested
// ifs in a for loop over range(1, n + 1); [fizzbuzz, fizz, buzz, other].
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

// The traced body of the staged function `fn` for `args`, optimised.
template <class F, class... Args>
std::shared_ptr<ag::graph::Body> optimized_body(const F& fn, const Args&... args) {
  auto body = std::make_shared<ag::graph::Body>(fn.get_concrete_function(args...).graph().body());
  ag::passes::optimize(*body);
  return body;
}

// " 1 0 2" for {1, 0, 2}: permutations in test traces.
inline std::string perm_string(const std::vector<int64_t>& perm) {
  std::string out;
  for (int64_t d : perm) out += " " + std::to_string(d);
  return out;
}

}  // namespace ag_test
