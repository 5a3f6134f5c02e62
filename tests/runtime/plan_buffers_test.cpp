// The buffers of the plans of the guide workloads (docs/benchmarks.md):
// fusion and writing in place leave MSE no intermediate buffer at all, let
// collatz's loop body update its variable in place, and let dynamic_rnn's
// state and TensorArray be written where they are. Buffers are the arena's
// allocations (made on the first call and kept), so their count is the
// count of allocations a call makes beyond its result; function_alloc_test.cpp
// checks that repeated calls and loop iterations allocate nothing more.
#include <gtest/gtest.h>

#include <algorithm>
#include <tuple>
#include <typeinfo>

#include <ag/ag.h>

#include "function_cache_util.h"
#include "staged_test_util.h"

namespace {

using ag::Tensor;
using ag_test::dynamic_rnn;
using ag_test::plan_for;

TEST(PlanBuffers, MeanSquaredErrorIsOneFusedStepWithoutBuffers) {
  auto mse = ag::function([](Tensor a, Tensor b) { return ag::reduce_mean(ag::pow(a - b, 2)); },
                          {.name = "mse"});
  Tensor a = ag::random_uniform({100000}, -1.0, 1.0, ag::float32, 1);
  Tensor b = ag::random_uniform({100000}, -1.0, 1.0, ag::float32, 2);
  mse(a, b);
  const ag::exec::Plan& plan = plan_for(mse, a, b);
  EXPECT_EQ(plan.num_steps(), 1u);  // sub, mul, reduce_mean fused
  EXPECT_EQ(plan.num_buffers_in_all_plans(), 0u);
}

Tensor collatz_steps(Tensor x) {
  Tensor steps = ag::constant(0);
  ag::while_stmt([&] { return ag::reduce_max(x) > 1; },
                 [&] {
                   Tensor next = ag::where(x % 2 == 0, ag::floordiv(x, 2), 3 * x + 1);
                   x = ag::where(x > 1, next, x);
                   steps = steps + 1;
                 },
                 ag::state({"x", "steps"}, x, steps));
  return steps;
}

TEST(PlanBuffers, CollatzUpdatesItsVectorInPlace) {
  auto collatz = ag::function(collatz_steps, {.name = "collatz_steps"});
  Tensor x = ag::range(ag::constant(1), ag::constant(3001));
  EXPECT_EQ(collatz(x).item<int32_t>(), 216);
  const ag::exec::Plan& plan = plan_for(collatz, x);
  // The While's loop variables x and x's maximum, which the condition reads
  // (passes/loop_condition_reductions.cpp; the counter, the function's
  // output, lives in its fresh tensor from the start); the maximum of x's
  // initial value; in the condition, the comparison; in the body, the
  // maximum of the new x. The body's step computing x (and its maximum) is
  // one fused step writing x into x itself, and the counter's increment (a
  // scalar step) writes into the counter (the loop runs inline:
  // plan_inline_while_test.cpp).
  EXPECT_EQ(plan.num_buffers_in_all_plans(), 5u);
  EXPECT_EQ(plan.num_in_place_steps(), 2u);
}

TEST(PlanBuffers, DynamicRnnWritesStateAndTensorArrayInPlace) {
  auto rnn = ag::function(dynamic_rnn, {.name = "dynamic_rnn"});
  Tensor input = ag::random_uniform({4, 10, 8}, -1.0, 1.0, ag::float32, 3);
  Tensor state = ag::zeros({4, 8}, ag::float32);
  EXPECT_EQ(rnn(input, state).values_string(), dynamic_rnn(input, state).values_string());
  const ag::exec::Plan& plan = plan_for(rnn, input, state);
  // The TensorArray write and the index's increment write into their loop
  // variables, without buffers of their own (the loop runs inline, its
  // variables' sizes static: plan_inline_while_test.cpp). The state's add
  // writes its result straight into row i of the array, where the state
  // then lives (runtime/exec/plan_views.cpp): the write finds it there.
  EXPECT_EQ(plan.num_in_place_steps(), 2u);
  EXPECT_EQ(plan.num_row_outputs(), 1u);
  // The loop reads input[:, i, :] from the input itself, not a row of its
  // transpose (passes/transposed_gathers.cpp), as a strided view that the
  // add reads in place; the array is written at every index before it is
  // read, so the While does not copy its zeros in (runtime/exec/plan_views.cpp).
  EXPECT_EQ(plan.num_row_views(), 1u);
  EXPECT_EQ(plan.num_strided_views(), 1u);
  EXPECT_EQ(plan.num_uncopied_loop_variables(), 1u);
  // And the loop runs batch-major, each batch entry's running sum along
  // all the time steps at once (runtime/exec/plan_interchange.cpp).
  EXPECT_EQ(plan.num_interchanged_loops(), 1u);
  // Top level: the loop index. The array, laid out [batch, time, features]
  // and written along axis 1 (passes/transposed_arrays.cpp), is the
  // function's output and lives in its fresh tensor from the start (it was
  // a buffer, transposed into the output after the loop); the state lives
  // in its rows (it was a buffer; so was the transposed input before the
  // input's transpose went). Condition: the comparison. Body: none (a view
  // and three writes into loop variables).
  EXPECT_EQ(plan.num_buffers_in_all_plans(), 2u);
}

// Elements of the largest constant of `body` and its nested bodies.
int64_t largest_constant(const ag::graph::Body& body) {
  int64_t largest = 0;
  for (const ag::graph::Node& n : body.nodes) {
    if (n.kind == ag::graph::NodeKind::Const) largest = std::max(largest, n.value.num_elements());
    for (const auto& nested : n.subgraphs) largest = std::max(largest, largest_constant(*nested));
  }
  return largest;
}

// An array larger than constant folding folds zeros of (1,600 elements):
// its zeros are a zeros node in the trace and in the optimised graph, not a
// constant either keeps, and the plan never computes them, because the loop
// writes every row before it reads one.
TEST(PlanBuffers, DynamicRnnNeitherStoresNorComputesItsArraysZeros) {
  auto rnn = ag::function(dynamic_rnn, {.name = "dynamic_rnn"});
  Tensor input = ag::random_uniform({4, 50, 8}, -1.0, 1.0, ag::float32, 3);
  Tensor state = ag::zeros({4, 8}, ag::float32);
  ag_test::expect_same_bits(dynamic_rnn(input, state), rnn(input, state));
  const ag::Graph trace = rnn.get_concrete_function(input, state).graph();
  const auto ops = trace.ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "zeros"), ops.end()) << trace.to_string();
  EXPECT_LT(largest_constant(trace.body()), 1600) << trace.to_string();
  const auto optimized = ag_test::optimized_body(rnn, input, state);
  EXPECT_LT(largest_constant(*optimized), 1600);
  const ag::exec::Plan& plan = plan_for(rnn, input, state);
  EXPECT_EQ(plan.num_shape_only_steps(), 1u);  // the zeros
  EXPECT_EQ(plan.num_uncopied_loop_variables(), 1u);
  EXPECT_EQ(plan.num_buffers_in_all_plans(), 2u);
}

// When the loop reads the array before writing every row, the zeros are
// computed (into a buffer), and the values are eager's.
TEST(PlanBuffers, ArrayReadBeforeItIsWrittenStartsFromComputedZeros) {
  auto shifted = [](Tensor x) {
    ag::TensorArray rows(ag::float32, 40, false, ag::Shape{50});
    Tensor i = ag::constant(int64_t{1});
    ag::while_stmt([&] { return i < 40; },
                   [&] {
                     rows.write(i, rows.read(i - 1) + x);
                     i = i + 1;
                   },
                   ag::state({"i", "rows"}, i, rows));
    return rows.stack();
  };
  auto traced = ag::function(shifted, {.name = "shifted"});
  Tensor x = ag::random_uniform({50}, -1.0, 1.0, ag::float32, 4);
  ag_test::expect_same_bits(shifted(x), traced(x));
  EXPECT_EQ(plan_for(traced, x).num_shape_only_steps(), 0u);
  EXPECT_LT(largest_constant(*ag_test::optimized_body(traced, x)), 2000);
}

// A TensorArray written in an `if` in a loop: the branch writes its row
// into the loop variable's memory (the If reads the array last), so no
// iteration copies the array, and the If's result is the variable itself.
// When the array as it was before the If is read after it, the branch must
// not overwrite it: it writes a copy. The values are eager's in both forms.
Tensor rows_written_in_an_if(Tensor n, bool old_rows_read_after_the_if) {
  ag::TensorArray rows(ag::float32, 3000, false, ag::Shape{});
  Tensor total = ag::constant(0.0f);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor i) {
        const Tensor old_rows = rows.stack();
        ag::if_stmt(
            i % 3 != 1, [&] { rows.write(i, ag::cast(i, ag::float32) + old_rows[i]); }, [] {},
            ag::state({"rows"}, rows));
        total = total + (old_rows_read_after_the_if ? old_rows : rows.stack())[i];
      },
      ag::state({"rows", "total"}, rows, total));
  return ag::reduce_sum(rows.stack()) + total;
}

TEST(PlanBuffers, ATensorArrayWrittenInAnIfInALoopIsWrittenInPlace) {
  for (bool old_read : {false, true}) {
    SCOPED_TRACE(old_read ? "the old rows read after the if" : "the old rows read before");
    auto f = ag::function([=](Tensor n) { return rows_written_in_an_if(n, old_read); });
    for (int32_t n : {0, 7, 3000}) {
      const Tensor count = ag::constant(n);
      ag_test::expect_same_bits(rows_written_in_an_if(count, old_read), f(count));
    }
    const ag::exec::Plan& plan = plan_for(f, ag::constant(1));
    // The counter's increment and the total's add; and the branch's write,
    // which copies nothing but its row (a static copy).
    EXPECT_EQ(plan.num_in_place_steps(), old_read ? 2u : 3u);
    EXPECT_EQ(plan.num_static_copies(), old_read ? 0u : 1u);
  }
}

}  // namespace
