// Workloads and helpers shared by the tests of traced functions: the TensorFlow guide's
// dynamic_rnn and fizzbuzz, and the optimised body of a staged function's
// trace.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "../../tools/bench/guide_workloads.h"
#include "graph/graph.h"
#include "passes/passes.h"

namespace ag_test {

// `actual` (a graph's result) has `expected`'s (eager's) dtype, shape and
// bytes: bit for bit, with both values in the message.
inline void expect_same_bits(const ag::Tensor& expected, const ag::Tensor& actual,
                             const std::string& what = "") {
  ASSERT_TRUE(actual.defined()) << what;
  ASSERT_EQ(expected.dtype(), actual.dtype()) << what;
  ASSERT_EQ(expected.shape(), actual.shape()) << what;
  const size_t bytes = size_t(expected.num_elements()) * ag::dtype_size(expected.dtype());
  EXPECT_EQ(std::memcmp(expected.raw_data(), actual.raw_data(), bytes), 0)
      << what << ": eager " << expected.values_string() << " vs graph " << actual.values_string();
}

// The guide's dynamic_rnn ([batch, time, features] -> the running sums over
// time, [batch, time, features]) and fizzbuzz counting (three nested ifs in a
// for loop over range(1, n + 1); [fizzbuzz, fizz, buzz, other]), as the
// benchmarks run them.
using ag_workloads::dynamic_rnn;
using ag_workloads::fizzbuzz_count;

// A recurrence state = op(rows of x, state), written to a TensorArray at
// each index of a loop over its size, the array stacked: what
// exec/plan_views.cpp keeps in the array's rows and exec/plan_interchange.cpp
// runs batch-major. x's rows are x[i], or gather(x, i, 1) when `transposed`
// (the array then stacked and transposed to [batch, time, ...], rows along
// its axis 1, passes/transposed_arrays.cpp); with `invariant`, x itself every
// iteration. `multiply`: state * row, else row - state (the state as the
// second operand). `counter` int32 is what agc emits for `for (int i = 0; i
// < n; ++i)` (its index the counter cast to int32, passes/range_loops.cpp).
struct Recurrence {
  bool transposed = false;
  bool multiply = false;
  ag::DType counter = ag::int64;
  bool invariant = false;
  int64_t steps = -1;  // iterations and rows of the array; -1: x's rows
};
inline ag::Tensor recurrence(ag::Tensor x, ag::Tensor init, const Recurrence& form) {
  const int64_t n = form.steps >= 0 ? form.steps : x.shape()[form.transposed ? 1 : 0];
  ag::TensorArray rows(x.dtype(), n);
  ag::Tensor state = init;
  ag::for_stmt(
      ag::range(form.counter == ag::int32 ? ag::Tensor(int32_t(n)) : ag::Tensor(n)),
      ag::no_extra_test,
      [&](ag::Tensor i) {
        ag::Tensor row = form.invariant ? x : form.transposed ? ag::gather(x, i, 1) : x[i];
        state = form.multiply ? state * row : row - state;
        rows.write(i, state);
      },
      ag::state({"state", "rows"}, state, rows));
  return form.transposed ? ag::transpose(rows.stack(), {1, 0, 2}) : rows.stack();
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
