// Inline loops (exec/plan_compile.cpp, emit_program): a While whose loop
// variables all have static shapes runs its condition and body in its
// parent's program and arena (a backward jump), any other in child arenas.
// Which loops run inline, and that they compute what eager execution
// computes: break and continue flags, Ifs inside, no iteration at all,
// variables trading values, nested loops, maximum_iterations, in-place
// updates, and errors that still name the user's line.
#include <gtest/gtest.h>

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"
#include "exec/plan.h"
#include "graph/graph.h"

namespace ag {
namespace {

using ag_test::error_of;

// The plan the executor would compile from `fn`'s trace for `specs`.
template <class F, class... Specs>
std::unique_ptr<exec::Plan> traced_plan_of(F fn, const Specs&... specs) {
  auto traced = ag::function(fn);
  auto concrete = traced.get_concrete_function(specs...);
  return std::make_unique<exec::Plan>(std::make_shared<const graph::Body>(concrete.graph().body()));
}

// Expects the staged `fn` to give eager execution's values (bit for bit)
// on `args`, twice (the second call reuses the arena).
template <class F, class... Args>
void expect_eager_values(F fn, const Args&... args) {
  auto staged = ag::function(fn);
  const Tensor eager = fn(args...);
  for (int call = 0; call < 2; ++call) {
    const Tensor graph = staged(args...);
    ASSERT_EQ(graph.dtype(), eager.dtype());
    ASSERT_EQ(graph.shape(), eager.shape());
    EXPECT_EQ(graph.to_string(), eager.to_string()) << "call " << call;
  }
}

const TensorSpec kInt32Scalar({}, int32);

// sum of 0 .. n - 1, as a while loop over two scalar variables.
Tensor sum_below(Tensor n) {
  Tensor i = constant(0), total = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               total = total + i;
               i = i + 1;
             },
             state({"i", "total"}, i, total));
  return stack({i, total});
}

TEST(PlanInlineWhile, StaticLoopVariablesRunInline) {
  auto plan = traced_plan_of(sum_below, kInt32Scalar);
  EXPECT_EQ(plan->num_inline_loops(), 1u);
  EXPECT_EQ(plan->num_child_arena_loops(), 0u);
  for (int n : {0, 1, 7, 100}) expect_eager_values(sum_below, constant(n));
}

// A loop variable whose shape changes (a dynamic TensorArray) keeps the
// child arenas.
Tensor squares(Tensor n) {
  TensorArray out(int32, 0, /*dynamic_size=*/true);
  Tensor i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               out.write(i, i * i);
               i = i + 1;
             },
             state({"out", "i"}, out, i));
  return out.stack();
}

TEST(PlanInlineWhile, AGrowingLoopVariableKeepsChildArenas) {
  auto plan = traced_plan_of(squares, kInt32Scalar);
  EXPECT_EQ(plan->num_inline_loops(), 0u);
  EXPECT_EQ(plan->num_child_arena_loops(), 1u);
  for (int n : {0, 1, 5}) expect_eager_values(squares, constant(n));
}

// Counters updated only by themselves are written in place: no copy ends
// the iteration.
TEST(PlanInlineWhile, ScalarCountersAreWrittenInPlace) {
  auto plan = traced_plan_of(sum_below, kInt32Scalar);
  // total + i and i + 1 both overwrite their variable (i is read last by i + 1).
  EXPECT_EQ(plan->num_in_place_steps(), 2u);
  EXPECT_EQ(plan->num_scalar_steps_in_all_plans(), 3u);  // i < n, total + i, i + 1
}

// The flags agc emits for break and continue: the loop stops after the
// first i with i * i > limit; odd i are skipped (continue) before adding.
Tensor break_and_continue(Tensor limit) {
  Tensor i = constant(0), total = constant(0), done = constant(false);
  while_stmt([&] { return logical_and(i < 100, logical_not(done)); },
             [&] {
               Tensor skip = i % 2 == 1;
               if_stmt(
                   i * i > limit, [&] { done = constant(true); },
                   [&] {
                     if_stmt(
                         logical_not(skip), [&] { total = total + i; }, [] {},
                         state({"total"}, total));
                   },
                   state({"done", "total"}, done, total));
               i = i + 1;
             },
             state({"i", "total", "done"}, i, total, done));
  return stack({i, total, cast(done, int32)});
}

TEST(PlanInlineWhile, BreakAndContinueFlagsGiveEagerValues) {
  auto plan = traced_plan_of(break_and_continue, kInt32Scalar);
  EXPECT_EQ(plan->num_inline_loops(), 1u);
  for (int limit : {-1, 0, 10, 50, 100000})
    expect_eager_values(break_and_continue, constant(limit));
}

Tensor fizzbuzz(Tensor n) {
  Tensor fb = constant(0), fizz = constant(0), buzz = constant(0), other = constant(0);
  for_stmt(
      range(1, n + 1), no_extra_test,
      [&](Tensor i) {
        if_stmt(
            i % 15 == 0, [&] { fb = fb + 1; },
            [&] {
              if_stmt(
                  i % 3 == 0, [&] { fizz = fizz + 1; },
                  [&] {
                    if_stmt(
                        i % 5 == 0, [&] { buzz = buzz + 1; }, [&] { other = other + 1; },
                        state({"buzz", "other"}, buzz, other));
                  },
                  state({"fizz", "buzz", "other"}, fizz, buzz, other));
            },
            state({"fb", "fizz", "buzz", "other"}, fb, fizz, buzz, other));
      },
      state({"fb", "fizz", "buzz", "other"}, fb, fizz, buzz, other));
  return stack({fb, fizz, buzz, other});
}

TEST(PlanInlineWhile, NestedIfsInALoopGiveEagerValues) {
  auto plan = traced_plan_of(fizzbuzz, kInt32Scalar);
  EXPECT_EQ(plan->num_inline_loops(), 1u);
  for (int n : {0, 1, 15, 100}) expect_eager_values(fizzbuzz, constant(n));
  auto staged = ag::function(fizzbuzz);
  EXPECT_EQ(staged(constant(100)).to_vector<int32_t>(), (std::vector<int32_t>{6, 27, 14, 53}));
}

// a, b = b, a + b: each new value reads the other's old value; and a plain
// swap, whose body outputs are the other variable's memory.
Tensor fibonacci(Tensor n) {
  Tensor a = constant(0), b = constant(1), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               Tensor next = a + b;
               a = b;
               b = next;
               i = i + 1;
             },
             state({"a", "b", "i"}, a, b, i));
  return stack({a, b});
}

Tensor swapped(Tensor n) {
  Tensor a = constant({1.5f, 2.5f}), b = constant({-1.0f, 4.0f}), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               Tensor old_a = a;
               a = b;
               b = old_a;
               i = i + 1;
             },
             state({"a", "b", "i"}, a, b, i));
  return stack({a, b});
}

TEST(PlanInlineWhile, VariablesTradingValuesKeepTheOldValues) {
  EXPECT_EQ(traced_plan_of(fibonacci, kInt32Scalar)->num_inline_loops(), 1u);
  EXPECT_EQ(traced_plan_of(swapped, kInt32Scalar)->num_inline_loops(), 1u);
  for (int n : {0, 1, 2, 3, 10}) {
    expect_eager_values(fibonacci, constant(n));
    expect_eager_values(swapped, constant(n));
  }
  auto staged = ag::function(fibonacci);
  EXPECT_EQ(staged(constant(10)).to_vector<int32_t>(), (std::vector<int32_t>{55, 89}));
}

// A loop inside a loop, both inline: the inner one is entered afresh on
// every outer iteration (its variables start from their initial values).
Tensor triangle_sums(Tensor n) {
  Tensor i = constant(0), total = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               Tensor j = constant(0), inner = constant(0);
               while_stmt([&] { return j <= i; },
                          [&] {
                            inner = inner + j;
                            j = j + 1;
                          },
                          state({"j", "inner"}, j, inner));
               total = total * 3 + inner;
               i = i + 1;
             },
             state({"i", "total"}, i, total));
  return total;
}

TEST(PlanInlineWhile, NestedLoopsRunInline) {
  auto plan = traced_plan_of(triangle_sums, kInt32Scalar);
  EXPECT_EQ(plan->num_inline_loops(), 2u);
  EXPECT_EQ(plan->num_child_arena_loops(), 0u);
  for (int n : {0, 1, 2, 6}) expect_eager_values(triangle_sums, constant(n));
}

// A small vector state (collatz on two values) and a float vector (the
// tanh loop), each updated by an elementwise step in place.
Tensor collatz(Tensor x) {
  Tensor steps = constant(0);
  while_stmt([&] { return reduce_max(x) > 1; },
             [&] {
               x = where(x > 1, where(x % 2 == 0, floordiv(x, 2), 3 * x + 1), x);
               steps = steps + 1;
             },
             state({"x", "steps"}, x, steps));
  return concat({x, reshape(steps, {1})}, 0);
}

Tensor tanh_loop(Tensor x) {
  while_stmt([&] { return reduce_sum(x) > 1; }, [&] { x = tanh(x); }, state({"x"}, x));
  return x;
}

TEST(PlanInlineWhile, SmallVectorStatesGiveEagerValues) {
  EXPECT_EQ(traced_plan_of(collatz, TensorSpec({2}, int32))->num_inline_loops(), 1u);
  EXPECT_EQ(traced_plan_of(tanh_loop, TensorSpec({5}, float32))->num_inline_loops(), 1u);
  expect_eager_values(collatz, constant({27, 97}));
  expect_eager_values(collatz, constant({1, 1}));  // no iteration
  expect_eager_values(tanh_loop, constant({0.9f, 0.8f, 0.7f, 0.6f, 0.5f}));
  expect_eager_values(tanh_loop, constant({0.1f, 0.1f, 0.1f, 0.1f, 0.1f}));  // no iteration
}

// maximum_iterations stops the loop although its condition still holds; a
// loop entered again (inside another) counts from 0 again.
Tensor capped(Tensor n) {
  Tensor i = constant(0), outer = constant(0), total = constant(0);
  while_stmt([&] { return outer < 3; },
             [&] {
               i = constant(0);
               while_stmt([&] { return i < n; }, [&] { i = i + 1; }, state({"i"}, i),
                          WhileOptions{.maximum_iterations = 4});
               total = total + i;
               outer = outer + 1;
             },
             state({"i", "outer", "total"}, i, outer, total));
  return total;
}

TEST(PlanInlineWhile, MaximumIterationsStopsTheLoopOnEveryEntry) {
  auto plan = traced_plan_of(capped, kInt32Scalar);
  EXPECT_EQ(plan->num_inline_loops(), 2u);
  auto staged = ag::function(capped);
  EXPECT_EQ(staged(constant(2)).item<int32_t>(), 6);
  EXPECT_EQ(staged(constant(10)).item<int32_t>(), 12);  // 4 per entry, not 4 in all
  EXPECT_EQ(staged(constant(0)).item<int32_t>(), 0);
  for (int n : {0, 2, 10}) expect_eager_values(capped, constant(n));
}

// A static TensorArray written at every index (dynamic_rnn's states), in
// place, next to a row view of a captured input.
Tensor running_sums(Tensor x) {
  TensorArray states(float32, 3);
  Tensor sum = zeros({2}, float32);
  for_stmt(
      range(Tensor(int64_t(3))), no_extra_test,
      [&](Tensor i) {
        sum = x[i] + sum;
        states.write(i, sum);
      },
      state({"sum", "states"}, sum, states));
  return states.stack();
}

TEST(PlanInlineWhile, TensorArrayWritesInPlace) {
  auto plan = traced_plan_of(running_sums, TensorSpec({3, 2}, float32));
  EXPECT_EQ(plan->num_inline_loops(), 1u);
  EXPECT_GE(plan->num_in_place_steps(), 2u);  // the write and x[i] + sum
  expect_eager_values(running_sums,
                      reshape(constant({1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}), {3, 2}));
}

// Loop variables' slots (plan_compile.cpp, keep_in_variables): a counter
// written in place, and an If's output that is a variable's next value when
// each branch passes the variable through or computes it as the only reader
// of the variable, are the variable's memory for the whole loop. Each body
// below takes both branches for n >= 3.

// Both branches compute a; b reads the new a after the If.
Tensor increment_or_double(Tensor n) {
  Tensor a = constant(1), b = constant(0), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               if_stmt(i % 3 == 0, [&] { a = a + 1; }, [&] { a = a * 2; }, state({"a"}, a));
               b = b * 10 + a;
               i = i + 1;
             },
             state({"a", "b", "i"}, a, b, i));
  return stack({a, b, i});
}

// a's old value is read after the If: the If's output is not a's memory.
Tensor old_value_after_the_if(Tensor n) {
  Tensor a = constant(1), b = constant(0), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               Tensor old = a;
               if_stmt(i % 2 == 0, [&] { a = a + 1; }, [] {}, state({"a"}, a));
               b = b * 10 + old;
               i = i + 1;
             },
             state({"a", "b", "i"}, a, b, i));
  return stack({a, b, i});
}

// A branch passes a to b's output while it computes a: neither is kept.
Tensor passed_to_another_output(Tensor n) {
  Tensor a = constant(1), b = constant(0), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               if_stmt(
                   i % 2 == 0,
                   [&] {
                     b = a;
                     a = a + 3;
                   },
                   [&] { a = a - 1; }, state({"a", "b"}, a, b));
               i = i + 1;
             },
             state({"a", "b", "i"}, a, b, i));
  return stack({a, b, i});
}

// b = a * 2 reads a before a + 1 writes it: a is read twice in the branch
// (not kept), b once (kept); and the other order, which reads the new a.
Tensor read_before_written(Tensor n) {
  Tensor a = constant(1), b = constant(0), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               if_stmt(
                   i % 3 != 1,
                   [&] {
                     b = a * 2;
                     a = a + 1;
                   },
                   [] {}, state({"a", "b"}, a, b));
               i = i + 1;
             },
             state({"a", "b", "i"}, a, b, i));
  return stack({a, b, i});
}

Tensor read_after_written(Tensor n) {
  Tensor a = constant(1), b = constant(0), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               if_stmt(
                   i % 3 != 1,
                   [&] {
                     a = a + 1;
                     b = a * 2;
                   },
                   [] {}, state({"a", "b"}, a, b));
               i = i + 1;
             },
             state({"a", "b", "i"}, a, b, i));
  return stack({a, b, i});
}

// Swapped in one branch, computed in the other: neither is kept.
Tensor swapped_or_incremented(Tensor n) {
  Tensor a = constant(1), b = constant(10), total = constant(0), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               if_stmt(
                   i % 3 == 0,
                   [&] {
                     Tensor old_a = a;
                     a = b;
                     b = old_a;
                   },
                   [&] { a = a + 1; }, state({"a", "b"}, a, b));
               total = total * 7 + a * 100 + b;
               i = i + 1;
             },
             state({"a", "b", "total", "i"}, a, b, total, i));
  return stack({a, b, total, i});
}

// A nested If computes a in the outer branch, which then reads a's old
// value: a is not kept; b, computed last, is.
Tensor nested_if_then_old_value(Tensor n) {
  Tensor a = constant(1), b = constant(0), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               if_stmt(
                   i % 2 == 0,
                   [&] {
                     Tensor old = a;
                     if_stmt(i % 4 == 0, [&] { a = a + 5; }, [] {}, state({"a"}, a));
                     b = old * 3 + b;
                   },
                   [] {}, state({"a", "b"}, a, b));
               i = i + 1;
             },
             state({"a", "b", "i"}, a, b, i));
  return stack({a, b, i});
}

// A vector variable computed in a branch (a flat step) is not kept.
Tensor vector_in_a_branch(Tensor n) {
  Tensor v = constant({1, -2}), i = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               if_stmt(i % 2 == 0, [&] { v = v * 3 + 1; }, [] {}, state({"v"}, v));
               i = i + 1;
             },
             state({"v", "i"}, v, i));
  return concat({v, reshape(i, {1})}, 0);
}

TEST(PlanInlineWhile, IfOutputsAndCountersAreTheirVariablesMemory) {
  const struct {
    const char* name;
    Tensor (*fn)(Tensor);
    size_t slots_in_variables;
  } cases[] = {
      {"sum_below", sum_below, 2},  // total + i, i + 1 in place
      {"fizzbuzz", fizzbuzz, 5},    // the four counts (nested Ifs) and the range's counter
      {"increment_or_double", increment_or_double, 3},            // a, and b, i in place
      {"old_value_after_the_if", old_value_after_the_if, 2},      // b, i
      {"passed_to_another_output", passed_to_another_output, 1},  // i
      {"read_before_written", read_before_written, 2},            // b, i
      {"read_after_written", read_after_written, 3},              // a, b, i
      {"swapped_or_incremented", swapped_or_incremented, 2},      // total, i
      // b (i + 1 is not in place: i is an input of the If, alive as long as
      // its outputs)
      {"nested_if_then_old_value", nested_if_then_old_value, 1},
      {"vector_in_a_branch", vector_in_a_branch, 1},  // i
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto plan = traced_plan_of(c.fn, kInt32Scalar);
    EXPECT_EQ(plan->num_inline_loops(), 1u);
    EXPECT_EQ(plan->num_slots_in_variables(), c.slots_in_variables);
    for (int n : {0, 1, 2, 3, 4, 9, 16}) {
      SCOPED_TRACE(n);
      expect_eager_values(c.fn, constant(n));
    }
  }
  auto staged = ag::function(increment_or_double);
  // a: 2, 4, 8, 9, 18; b: 2, 24, 248, 2489, 24908.
  EXPECT_EQ(staged(constant(5)).to_vector<int32_t>(), (std::vector<int32_t>{18, 24908, 5}));
}

// A mod and a floordiv by a constant of the body (without a division, see
// ops::binary_kernel_by_constant) on values of both signs up to the
// extremes, for divisors of each sign, 1, -1 and INT32_MIN; and by a zero
// constant, whose error names the line.
template <int32_t D>
Tensor sum_of_remainders(Tensor n) {
  Tensor i = constant(0), total = constant(0);
  while_stmt([&] { return i < n; },
             [&] {
               const Tensor r = i * 1103515245 + 12345;
               total = total * 31 + r % D + ag::floordiv(r, constant(D)) * 7;
               i = i + 1;
             },
             state({"i", "total"}, i, total));
  return stack({i, total});
}

TEST(PlanInlineWhile, ModAndFloorDivByAConstantGiveEagerValues) {
  for (int n : {0, 1, 50}) {
    SCOPED_TRACE(n);
    expect_eager_values(sum_of_remainders<15>, constant(n));
    expect_eager_values(sum_of_remainders<-7>, constant(n));
    expect_eager_values(sum_of_remainders<1>, constant(n));
    expect_eager_values(sum_of_remainders<-1>, constant(n));
    expect_eager_values(sum_of_remainders<1 << 20>, constant(n));
    expect_eager_values(sum_of_remainders<INT32_MIN>, constant(n));
  }
  auto staged = ag::function(sum_of_remainders<0>);
  EXPECT_CONTAINS(error_of([&] { staged(constant(1)); }), "division by zero");
}

TEST(PlanInlineWhile, AnErrorInAnInlineLoopNamesItsLine) {
  static int line = 0;
  auto f = ag::function(
      [](Tensor x, Tensor n) {
        Tensor i = constant(0), total = constant(0);
        while_stmt([&] { return i < n; },
                   [&] {
                     line = __LINE__ + 1;
                     total = total + x[i];
                     i = i + 1;
                   },
                   state({"i", "total"}, i, total));
        return total;
      },
      {.name = "looping", .arg_names = {"x", "n"}});
  EXPECT_EQ(f(constant({1, 2, 3}), constant(3)).item<int32_t>(), 6);
  const std::string err = error_of([&] { f(constant({1, 2, 3}), constant(4)); });
  EXPECT_CONTAINS(err, "gather: indices = 3 is not in [0, 3)");
  EXPECT_CONTAINS(err, "of function 'looping', defined at " + std::string(__FILE__) + ":" +
                           std::to_string(line));
  // The arena is whole after the error: the next call runs the loop again.
  EXPECT_EQ(f(constant({1, 2, 3}), constant(2)).item<int32_t>(), 3);
}

}  // namespace
}  // namespace ag
