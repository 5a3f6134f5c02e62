// Loops run batch-major (runtime/exec/plan_interchange.cpp): a recurrence
// kept in the rows of its TensorArray, over a loop of exactly the array's
// rows, runs one run position (a batch entry) at a time along all the rows.
// Each test checks the graph against eager execution, bit for bit, and the
// plan's count of interchanged loops; the loops that must run iteration by
// iteration (they do more, stop elsewhere, or fail) are counted out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"
#include "function_cache_util.h"
#include "staged_test_util.h"

namespace {

using ag::Tensor;
using ag_test::expect_same_bits;
using ag_test::plan_for;
using ag_test::recurrence;

// Every form of ag_test::recurrence: rows along axis 0 or 1, `mul` (the state
// first) or `sub` (second), float32, float64 and int32, an int64 or an int32
// counter, rows of x or x itself; a sequence longer than the loop, loops of
// one row, and a batch of one.
TEST(PlanInterchange, RecurrencesRunBatchMajorBitForBit) {
  struct Size {
    int64_t batch, steps, length;  // length: x's rows (at least steps)
  };
  for (Size size : {Size{4, 6, 6}, Size{4, 6, 9}, Size{3, 1, 1}, Size{1, 5, 5}}) {
    for (bool transposed : {false, true}) {
      for (bool multiply : {false, true}) {
        for (ag::DType dtype : {ag::float32, ag::float64, ag::int32}) {
          for (ag::DType counter : {ag::int64, ag::int32}) {
            for (bool invariant : {false, true}) {
              const ag_test::Recurrence form{.transposed = transposed,
                                             .multiply = multiply,
                                             .counter = counter,
                                             .invariant = invariant,
                                             .steps = size.steps};
              SCOPED_TRACE(std::to_string(size.batch) + " x " + std::to_string(size.steps) +
                           " of " + std::to_string(size.length) +
                           (transposed ? " transposed" : "") + (multiply ? " mul " : " sub ") +
                           std::string(ag::dtype_name(dtype)) + ", counter " +
                           std::string(ag::dtype_name(counter)) + (invariant ? ", invariant" : ""));
              auto f =
                  ag::function([=](Tensor x, Tensor init) { return recurrence(x, init, form); });
              const ag::Shape x_shape = invariant    ? ag::Shape{size.batch, 7}
                                        : transposed ? ag::Shape{size.batch, size.length, 7}
                                                     : ag::Shape{size.length, size.batch, 7};
              Tensor x = ag::random_uniform(x_shape, -1.5, 1.5, dtype, 1);
              Tensor init = ag::random_uniform({size.batch, 7}, -3.0, 3.0, dtype, 2);
              for (Tensor input : {x, x * 2 - 1}) {
                expect_same_bits(recurrence(input, init, form), f(input, init));
              }
              // (A batch of one row of 7 is a flat step: no rows kept, no interchange.)
              EXPECT_EQ(plan_for(f, x, init).num_interchanged_loops(), size.batch > 1 ? 1u : 0u);
            }
          }
        }
      }
    }
  }
}

// The same recurrence, with a second loop variable (a running total), a
// loop that stops before the array's end, or an outer loop around it: the
// first two run iteration by iteration, the nested one batch-major.
TEST(PlanInterchange, OnlyLoopsThatComputeJustTheRowsInterchange) {
  auto with_total = [](Tensor x, Tensor init) {
    ag::TensorArray rows(ag::float32, 6);
    Tensor state = init, total = ag::constant(0.0f);
    ag::for_stmt(
        ag::range(Tensor(int64_t{6})), ag::no_extra_test,
        [&](Tensor i) {
          state = x[i] - state;
          rows.write(i, state);
          total = total + 1.0f;
        },
        ag::state({"state", "rows", "total"}, state, rows, total));
    return rows.stack() * total;
  };
  auto stopping = [](Tensor x, Tensor init) {
    ag::TensorArray rows(ag::float32, 6);
    Tensor state = init;
    Tensor i = ag::constant(int64_t{0});
    ag::while_stmt([&] { return i < 6; },
                   [&] {
                     state = x[i] - state;
                     rows.write(i, state);
                     i = i + 1;
                   },
                   ag::state({"state", "rows", "i"}, state, rows, i));
    return rows.stack();
  };
  auto nested = [](Tensor x, Tensor init) {
    Tensor sum = ag::zeros({6, 4, 7}, ag::float32);
    ag::for_stmt(
        ag::range(Tensor(int64_t{2})), ag::no_extra_test,
        [&](Tensor) { sum = sum + recurrence(x, init, {}); }, ag::state({"sum"}, sum));
    return sum;
  };
  Tensor x = ag::random_uniform({6, 4, 7}, -1.5, 1.5, ag::float32, 3);
  Tensor init = ag::random_uniform({4, 7}, -3.0, 3.0, ag::float32, 4);
  struct Case {
    std::function<Tensor(Tensor, Tensor)> eager;
    size_t interchanged;
  };
  for (const Case& c : {Case{with_total, 0}, Case{stopping, 1}, Case{nested, 1}}) {
    auto f = ag::function(c.eager);
    expect_same_bits(c.eager(x, init), f(x, init));
    EXPECT_EQ(plan_for(f, x, init).num_row_outputs(), 1u);
    EXPECT_EQ(plan_for(f, x, init).num_interchanged_loops(), c.interchanged);
  }
}

// A sequence shorter than the loop fails at the row past its end, as
// eagerly, and runs iteration by iteration.
TEST(PlanInterchange, ASequenceShorterThanTheLoopFailsAsEagerly) {
  const ag_test::Recurrence form{.steps = 6};
  auto f = ag::function([=](Tensor x, Tensor init) { return recurrence(x, init, form); });
  Tensor x = ag::random_uniform({4, 3, 7}, -1.5, 1.5, ag::float32, 5);
  Tensor init = ag::random_uniform({3, 7}, -3.0, 3.0, ag::float32, 6);
  const std::string eager = ag_test::error_of([&] { recurrence(x, init, form); });
  EXPECT_CONTAINS(eager, "gather: indices = 4 is not in [0, 4)");
  const std::string graph = ag_test::error_of([&] { f(x, init); });
  EXPECT_CONTAINS(graph, eager);
  EXPECT_CONTAINS(graph, "in op gather");
  EXPECT_EQ(plan_for(f, x, init).num_interchanged_loops(), 0u);
}

// An integer division by zero in the recurrence fails as eagerly, in the
// op, with where the user's code defined it.
TEST(PlanInterchange, ADivisionByZeroFailsInTheOp) {
  auto divided = [](Tensor x, Tensor init) {
    ag::TensorArray rows(ag::int32, 5);
    Tensor state = init;
    ag::for_stmt(
        ag::range(Tensor(int64_t{5})), ag::no_extra_test,
        [&](Tensor i) {
          state = ag::floordiv(state, x[i]);
          rows.write(i, state);
        },
        ag::state({"state", "rows"}, state, rows));
    return rows.stack();
  };
  auto f = ag::function(divided, {.name = "divided"});
  Tensor x = ag::cast(ag::random_uniform({5, 4, 6}, -3.0, 4.0, ag::float32, 7), ag::int32);
  x = ag::where(x == 0, ag::constant(int32_t{2}), x);
  Tensor init = ag::cast(ag::random_uniform({4, 6}, -1e5, 1e5, ag::float32, 8), ag::int32);
  expect_same_bits(divided(x, init), f(x, init));
  EXPECT_EQ(plan_for(f, x, init).num_interchanged_loops(), 1u);
  // A zero in row 1 of batch entry 2.
  std::vector<int32_t> values(5 * 4 * 6, 3);
  values[(1 * 4 + 2) * 6 + 4] = 0;
  Tensor zero = ag::constant(values, {5, 4, 6});
  const std::string eager = ag_test::error_of([&] { divided(zero, init); });
  EXPECT_CONTAINS(eager, "floordiv: integer division by zero");
  const std::string graph = ag_test::error_of([&] { f(zero, init); });
  EXPECT_CONTAINS(graph, eager);
  EXPECT_CONTAINS(graph, "in op floordiv");
  EXPECT_CONTAINS(graph, "plan_interchange_test.cpp");
}

// With two intra-op threads, the batch entries split between them (8
// entries of 64 x 128 elements: two halves): the same bits as eagerly.
class PlanInterchangeThreads : public ::testing::Test {
 protected:
  void TearDown() override { ag::set_intra_op_threads(1); }
};

TEST_F(PlanInterchangeThreads, BatchEntriesSplitOverTheThreads) {
  auto f = ag::function(ag_test::dynamic_rnn, {.name = "dynamic_rnn"});
  Tensor x = ag::random_uniform({8, 64, 128}, -1.0, 1.0, ag::float32, 9);
  Tensor init = ag::random_uniform({8, 128}, -1.0, 1.0, ag::float32, 10);
  const Tensor eager = ag_test::dynamic_rnn(x, init);
  ag::set_intra_op_threads(2);
  expect_same_bits(eager, f(x, init));
  expect_same_bits(eager, f(x, init));
  EXPECT_EQ(plan_for(f, x, init).num_interchanged_loops(), 1u);
}

}  // namespace
