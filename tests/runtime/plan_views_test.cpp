// Copies the executor avoids (runtime/exec/plan_views.cpp): x[i] of a value
// no step writes during the run is a view of the row, and a static-size
// TensorArray written at every index of a for loop over its size starts
// without a copy of its zeros. Each test checks the graph against eager
// execution, and the plan's counts show whether the copy was avoided.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <typeinfo>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"
#include "function_cache_util.h"
#include "staged_test_util.h"

namespace {

using ag::Tensor;
using ag_test::plan_for;
using ag_test::recurrence;

Tensor row_plus_one(Tensor x, Tensor i) {
  return x[i] + 1;
}

TEST(PlanViews, LeadingIndexOfAnInputIsAViewOfTheRow) {
  auto f = ag::function(row_plus_one, {.name = "row_plus_one"});
  Tensor x = ag::reshape(ag::range(ag::constant(0.0f), ag::constant(12.0f)), {3, 4});
  for (int64_t i : {0, 2, 1}) {
    Tensor index = ag::constant(i);
    EXPECT_EQ(f(x, index).values_string(), row_plus_one(x, index).values_string());
  }
  EXPECT_EQ(f(x, ag::constant(int64_t(2))).to_vector<float>(), (std::vector<float>{9, 10, 11, 12}));
  EXPECT_EQ(plan_for(f, x, ag::constant(int64_t(0))).num_row_views(), 1u);
}

TEST(PlanViews, ARowViewOutOfRangeFailsAsGatherDoes) {
  auto f = ag::function(row_plus_one, {.name = "row_plus_one"});
  Tensor x = ag::zeros({3, 4}, ag::float32);
  std::string err = ag_test::error_of([&] { f(x, ag::constant(3)); });
  EXPECT_CONTAINS(err, "gather: indices = 3 is not in [0, 3)");
  err = ag_test::error_of([&] { f(x, ag::constant(-1)); });
  EXPECT_CONTAINS(err, "gather: indices = -1 is not in [0, 3)");
}

TEST(PlanViews, ARowReturnedByTheFunctionIsItsOwnTensor) {
  auto f = ag::function([](Tensor x, Tensor i) { return x[i]; }, {.name = "row"});
  Tensor x = ag::reshape(ag::range(ag::constant(0), ag::constant(6)), {3, 2});
  Tensor row = f(x, ag::constant(1));
  EXPECT_EQ(row.to_vector<int32_t>(), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(f(x, ag::constant(2)).to_vector<int32_t>(), (std::vector<int32_t>{4, 5}));
  EXPECT_EQ(row.to_vector<int32_t>(), (std::vector<int32_t>{2, 3}));
}

// A loop variable that is a row of a captured value each iteration (a body
// output that is a row: copied into the variable, not a view).
Tensor last_row_by_loop(Tensor x) {
  Tensor row = x[0];
  ag::for_stmt(
      ag::range(Tensor(x.shape()[0])), ag::no_extra_test, [&](Tensor i) { row = x[i] * 2; },
      ag::state({"row"}, row));
  return row;
}

TEST(PlanViews, ARowAsALoopVariableIsCopiedIntoIt) {
  auto f = ag::function(last_row_by_loop, {.name = "last_row_by_loop"});
  Tensor x = ag::reshape(ag::range(ag::constant(0.0), ag::constant(8.0)), {4, 2});
  EXPECT_EQ(f(x).to_vector<double>(), (std::vector<double>{12, 14}));
  EXPECT_EQ(f(x).values_string(), last_row_by_loop(x).values_string());
}

// Writes rows 0 .. count - 1 of an array of `size` rows (the rest stay
// zero), each row i the input's row i plus the previous one.
Tensor running_rows(Tensor input, int64_t size, Tensor count) {
  ag::TensorArray rows(ag::float32, size);
  Tensor state = ag::zeros({2}, ag::float32);
  ag::for_stmt(
      ag::range(count), ag::no_extra_test,
      [&](Tensor i) {
        state = input[i] + state;
        rows.write(i, state);
      },
      ag::state({"state", "rows"}, state, rows));
  return rows.stack();
}

TEST(PlanViews, AnArrayWrittenAtEveryIndexStartsWithoutItsZeros) {
  auto f =
      ag::function([](Tensor input) { return running_rows(input, 3, Tensor(input.shape()[0])); },
                   {.name = "all_rows"});
  Tensor a = ag::ones({3, 2}, ag::float32);
  Tensor b = ag::fill({3, 2}, 5.0);
  EXPECT_EQ(f(a).to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(f(b).to_vector<float>(), (std::vector<float>{5, 5, 10, 10, 15, 15}));
  EXPECT_EQ(plan_for(f, a).num_uncopied_loop_variables(), 1u);
}

TEST(PlanViews, AnArrayWrittenAtSomeIndicesKeepsItsZerosOnEveryCall) {
  // Two rows of three: the plan's arena keeps the array's buffer between
  // calls, and the third row must be zero again, not the last call's.
  auto two = ag::function([](Tensor input) { return running_rows(input, 3, ag::constant(2)); },
                          {.name = "two_rows"});
  Tensor a = ag::ones({3, 2}, ag::float32);
  Tensor b = ag::fill({3, 2}, 5.0);
  EXPECT_EQ(two(a).to_vector<float>(), (std::vector<float>{1, 1, 2, 2, 0, 0}));
  EXPECT_EQ(two(b).to_vector<float>(), (std::vector<float>{5, 5, 10, 10, 0, 0}));
  EXPECT_EQ(plan_for(two, a).num_uncopied_loop_variables(), 0u);
  // A loop whose length comes from an input may be shorter than the array.
  auto some = ag::function([](Tensor input, Tensor n) { return running_rows(input, 3, n); },
                           {.name = "some_rows"});
  EXPECT_EQ(some(b, ag::constant(3)).to_vector<float>(),
            (std::vector<float>{5, 5, 10, 10, 15, 15}));
  EXPECT_EQ(some(a, ag::constant(1)).to_vector<float>(), (std::vector<float>{1, 1, 0, 0, 0, 0}));
  EXPECT_EQ(plan_for(some, a, ag::constant(1)).num_uncopied_loop_variables(), 0u);
}

// Strided views: x[:, i, :] of an input, read in place by binary
// elementwise steps (as either operand); each case against eager execution.
Tensor slices_through_ops(Tensor x, Tensor i, Tensor y) {
  Tensor slice = ag::gather(x, i, 1);
  return ag::stack({slice + y, y - slice, slice * y});
}

TEST(PlanViews, ASliceOnALaterAxisIsAStridedView) {
  auto f = ag::function(slices_through_ops, {.name = "slices_through_ops"});
  Tensor x = ag::random_uniform({5, 4, 6}, -2.0, 2.0, ag::float32, 1);
  Tensor y = ag::random_uniform({5, 6}, -2.0, 2.0, ag::float32, 2);
  for (int64_t i : {0, 3, 1}) {
    Tensor index = ag::constant(i);
    EXPECT_EQ(f(x, index, y).values_string(), slices_through_ops(x, index, y).values_string());
  }
  Tensor xi = ag::random_uniform({3, 7, 2, 4}, -50.0, 50.0, ag::int32, 3);
  Tensor yi = ag::random_uniform({3, 2, 4}, -50.0, 50.0, ag::int32, 4);
  Tensor two = ag::constant(int64_t{2});
  EXPECT_EQ(f(xi, two, yi).values_string(), slices_through_ops(xi, two, yi).values_string());
  EXPECT_EQ(plan_for(f, x, ag::constant(int64_t{0}), y).num_strided_views(), 1u);
  EXPECT_EQ(plan_for(f, xi, two, yi).num_strided_views(), 1u);
}

TEST(PlanViews, AStridedViewOutOfRangeFailsAsGatherDoes) {
  auto f = ag::function(slices_through_ops, {.name = "slices_through_ops"});
  Tensor x = ag::zeros({5, 4, 6}, ag::float32);
  Tensor y = ag::zeros({5, 6}, ag::float32);
  std::string err = ag_test::error_of([&] { f(x, ag::constant(int64_t{4}), y); });
  EXPECT_CONTAINS(err, "gather: indices = 4 is not in [0, 4)");
  err = ag_test::error_of([&] { f(x, ag::constant(int64_t{-1}), y); });
  EXPECT_CONTAINS(err, "gather: indices = -1 is not in [0, 4)");
  EXPECT_EQ(plan_for(f, x, ag::constant(int64_t{4}), y).num_strided_views(), 1u);
}

// A slice also read by an op that needs it contiguous (a broadcast, a
// reduction, the function's output, a small flat step), or twice by one op,
// is gathered into a buffer as before.
TEST(PlanViews, ASliceReadOtherwiseIsCopied) {
  auto broadcast = ag::function(
      [](Tensor x, Tensor i) { return ag::gather(x, i, 1) + ag::constant({1.0f, 2.0f, 3.0f}); },
      {.name = "broadcast"});
  auto reduced = ag::function(
      [](Tensor x, Tensor i, Tensor y) {
        Tensor slice = ag::gather(x, i, 1);
        return slice + y + ag::reduce_sum(slice);
      },
      {.name = "reduced"});
  auto returned = ag::function(
      [](Tensor x, Tensor i, Tensor y) {
        Tensor slice = ag::gather(x, i, 1);
        return std::make_tuple(slice + y, slice);
      },
      {.name = "returned"});
  auto squared = ag::function(
      [](Tensor x, Tensor i) {
        Tensor slice = ag::gather(x, i, 1);
        return slice * slice;
      },
      {.name = "squared"});
  Tensor x = ag::random_uniform({8, 4, 3}, -2.0, 2.0, ag::float32, 5);
  Tensor y = ag::random_uniform({8, 3}, -2.0, 2.0, ag::float32, 6);
  Tensor i = ag::constant(int64_t{2});
  Tensor slice = ag::gather(x, i, 1);
  EXPECT_EQ(broadcast(x, i).values_string(),
            (slice + ag::constant({1.0f, 2.0f, 3.0f})).values_string());
  EXPECT_EQ(reduced(x, i, y).values_string(), (slice + y + ag::reduce_sum(slice)).values_string());
  auto [sum, same] = returned(x, i, y);
  EXPECT_EQ(sum.values_string(), (slice + y).values_string());
  EXPECT_EQ(same.values_string(), slice.values_string());
  EXPECT_EQ(squared(x, i).values_string(), (slice * slice).values_string());
  EXPECT_EQ(plan_for(broadcast, x, i).num_strided_views(), 0u);
  EXPECT_EQ(plan_for(reduced, x, i, y).num_strided_views(), 0u);
  EXPECT_EQ(plan_for(squared, x, i).num_strided_views(), 0u);
  // 2 x 3 elements: a flat step, which reads its operands contiguous.
  Tensor small = ag::random_uniform({2, 4, 3}, -2.0, 2.0, ag::float32, 7);
  Tensor small_y = ag::random_uniform({2, 3}, -2.0, 2.0, ag::float32, 8);
  EXPECT_EQ(reduced(small, i, small_y).values_string(),
            (ag::gather(small, i, 1) + small_y + ag::reduce_sum(ag::gather(small, i, 1)))
                .values_string());
  auto added = ag::function([](Tensor x, Tensor i, Tensor y) { return ag::gather(x, i, 1) + y; },
                            {.name = "added"});
  EXPECT_EQ(added(small, i, small_y).values_string(),
            (ag::gather(small, i, 1) + small_y).values_string());
  EXPECT_EQ(plan_for(added, small, i, small_y).num_strided_views(), 0u);
  EXPECT_EQ(added(x, i, y).values_string(), (slice + y).values_string());
  EXPECT_EQ(plan_for(added, x, i, y).num_strided_views(), 1u);
}

// A loop variable kept in the rows of a TensorArray (keep_rows_in_arrays):
// ag_test::recurrence, with `sub` (the state as its second operand) or `mul`
// (first), the array's rows along axis 0 or along axis 1, over an int64 or an
// int32 range.
TEST(PlanViews, ALoopVariableLivesInTheRowsOfItsArray) {
  for (bool transposed : {false, true}) {
    for (bool multiply : {false, true}) {
      for (ag::DType dtype : {ag::float32, ag::int32}) {
        for (ag::DType counter : {ag::int64, ag::int32}) {
          SCOPED_TRACE(std::string(transposed ? "transposed " : "") + (multiply ? "mul " : "sub ") +
                       std::string(ag::dtype_name(dtype)) + ", counter " +
                       std::string(ag::dtype_name(counter)));
          const ag_test::Recurrence form{
              .transposed = transposed, .multiply = multiply, .counter = counter};
          auto f = ag::function([=](Tensor x, Tensor init) { return recurrence(x, init, form); });
          Tensor x = ag::random_uniform(transposed ? ag::Shape{4, 6, 5} : ag::Shape{6, 4, 5}, -3.0,
                                        3.0, dtype, 1);
          Tensor init = ag::random_uniform({4, 5}, -3.0, 3.0, dtype, 2);
          for (Tensor input : {x, x * 2 - 1}) {
            EXPECT_EQ(f(input, init).values_string(),
                      recurrence(input, init, form).values_string());
          }
          const ag::exec::Plan& plan = plan_for(f, x, init);
          EXPECT_EQ(plan.num_row_outputs(), 1u);
          EXPECT_EQ(plan.num_uncopied_loop_variables(), 1u);
          EXPECT_EQ(plan.num_strided_views(), transposed ? 1u : 0u);
        }
      }
    }
  }
}

// The variable stays in its own buffer when something else reads it or the
// op's result (another op, the condition, the function's output), when the
// loop may leave rows unwritten, or when the op is a flat step (at most 16
// elements).
TEST(PlanViews, ALoopVariableReadOtherwiseKeepsItsBuffer) {
  auto also_summed = [](Tensor x) {
    ag::TensorArray rows(ag::float32, 3);
    Tensor state = ag::zeros({4, 5}, ag::float32), total = ag::zeros({4, 5}, ag::float32);
    ag::for_stmt(
        ag::range(Tensor(int64_t{3})), ag::no_extra_test,
        [&](Tensor i) {
          state = x[i] + state;
          rows.write(i, state);
          total = total + state;
        },
        ag::state({"state", "rows", "total"}, state, rows, total));
    return rows.stack() + ag::reduce_sum(total);
  };
  auto returned = [](Tensor x) {
    ag::TensorArray rows(ag::float32, 3);
    Tensor state = ag::zeros({4, 5}, ag::float32);
    ag::for_stmt(
        ag::range(Tensor(int64_t{3})), ag::no_extra_test,
        [&](Tensor i) {
          state = x[i] + state;
          rows.write(i, state);
        },
        ag::state({"state", "rows"}, state, rows));
    return rows.stack() + state;
  };
  auto tested = [](Tensor x) {
    ag::TensorArray rows(ag::float32, 3);
    Tensor state = ag::zeros({4, 5}, ag::float32);
    Tensor i = ag::constant(int64_t{0});
    ag::while_stmt([&] { return ag::logical_and(i < 3, ag::reduce_sum(state) < 1000.0f); },
                   [&] {
                     state = x[i] + state;
                     rows.write(i, state);
                     i = i + 1;
                   },
                   ag::state({"state", "rows", "i"}, state, rows, i));
    return rows.stack();
  };
  auto shorter = [](Tensor x) {
    ag::TensorArray rows(ag::float32, 3);
    Tensor state = ag::zeros({4, 5}, ag::float32);
    ag::for_stmt(
        ag::range(Tensor(int64_t{2})), ag::no_extra_test,
        [&](Tensor i) {
          state = x[i] + state;
          rows.write(i, state);
        },
        ag::state({"state", "rows"}, state, rows));
    return rows.stack();
  };
  auto small = [](Tensor x) {
    ag::TensorArray rows(ag::float32, 3);
    Tensor state = ag::zeros({5}, ag::float32);
    ag::for_stmt(
        ag::range(Tensor(int64_t{3})), ag::no_extra_test,
        [&](Tensor i) {
          state = x[i][0] + state;
          rows.write(i, state);
        },
        ag::state({"state", "rows"}, state, rows));
    return rows.stack();
  };
  Tensor x = ag::random_uniform({3, 4, 5}, -2.0, 2.0, ag::float32, 4);
  for (auto eager :
       std::vector<std::function<Tensor(Tensor)>>{also_summed, returned, tested, shorter, small}) {
    auto f = ag::function(eager);
    EXPECT_EQ(f(x).values_string(), eager(x).values_string());
    EXPECT_EQ(f(x * 3).values_string(), eager(x * 3).values_string());
    EXPECT_EQ(plan_for(f, x).num_row_outputs(), 0u);
  }
}

// A loop longer than its array: the write past the end fails with its own
// error, as eagerly, after the op wrote over the variable; over an int64
// range and an int32 one.
// A running sum over x's rows written into an array of 3 rows by a loop of
// `length` (4) iterations, its state of shape `state`: the staged write past
// the end fails with the eager message, in tensor_array_write. Returns the
// plan's counters.
struct PlanCounts {
  size_t num_row_outputs, num_static_copies, num_interchanged_loops;
};
PlanCounts expect_write_past_the_end_fails(Tensor length, ag::Shape state_shape) {
  auto too_long = [length, state_shape](Tensor x) {
    ag::TensorArray rows(ag::float32, 3);
    Tensor state = ag::zeros(state_shape, ag::float32);
    ag::for_stmt(
        ag::range(length), ag::no_extra_test,
        [&](Tensor i) {
          state = x[i] + state;
          rows.write(i, state);
        },
        ag::state({"state", "rows"}, state, rows));
    return rows.stack();
  };
  auto f = ag::function(too_long);
  ag::Shape x_shape{4};
  for (int64_t d : state_shape) x_shape.push_back(d);
  Tensor x = ag::random_uniform(x_shape, -2.0, 2.0, ag::float32, 4);
  const std::string message = "TensorArray.write: index 3 is out of range for size 3";
  EXPECT_CONTAINS(ag_test::error_of([&] { too_long(x); }), message);
  const std::string err = ag_test::error_of([&] { f(x); });
  EXPECT_CONTAINS(err, message);
  EXPECT_CONTAINS(err, "in op tensor_array_write");
  const ag::exec::Plan& plan = plan_for(f, x);
  return {plan.num_row_outputs(), plan.num_static_copies(), plan.num_interchanged_loops()};
}

TEST(PlanViews, ALoopVariableInTheRowsOfAnArrayTooShortFailsAsEagerly) {
  for (Tensor length : {Tensor(int64_t{4}), Tensor(int32_t{4})}) {
    SCOPED_TRACE(ag::dtype_name(length.dtype()));
    const PlanCounts counts = expect_write_past_the_end_fails(length, {4, 5});
    EXPECT_EQ(counts.num_row_outputs, 1u);
    // Not run batch-major: the loop does not stop at the array's end
    // (exec/plan_interchange.cpp).
    EXPECT_EQ(counts.num_interchanged_loops, 0u);
  }
}

}  // namespace

namespace {

// Static copies (plan_views.cpp, mark_static_copies): a small transpose of
// static shapes copies runs fixed when compiling, bit for bit what its
// kernel copies, over permutations that keep 0 to 3 trailing axes, merge
// none, reverse (no permutation given) or count from the end, for element
// sizes 1 (bool) to 8; one of more than 64 runs, and one that is the function's
// output (a fresh tensor), run the kernel.
TEST(PlanStaticCopies, SmallTransposesCopyFixedRuns) {
  struct Case {
    ag::Shape shape;
    std::vector<int64_t> perm;
    size_t static_copies;
  };
  const std::vector<Case> cases = {{{2, 3}, {1, 0}, 1},
                                   {{2, 3, 4}, {1, 0, 2}, 1},
                                   {{2, 3, 4}, {0, 2, 1}, 1},
                                   {{2, 3, 4}, {2, 0, 1}, 1},
                                   {{2, 3, 4}, {}, 1},
                                   {{2, 3, 4}, {-2, -3, -1}, 1},
                                   {{3, 1, 4}, {1, 0, 2}, 1},
                                   {{2, 3, 2, 5}, {1, 0, 2, 3}, 1},
                                   {{2, 3, 2, 5}, {0, 3, 2, 1}, 1},
                                   {{2, 3, 4}, {0, 1, 2}, 1},
                                   {{10, 10}, {1, 0}, 0}};
  for (const Case& c : cases) {
    for (ag::DType dtype : {ag::float32, ag::bool_, ag::int64, ag::float64}) {
      SCOPED_TRACE(c.shape.to_string() + " " + std::string(ag::dtype_name(dtype)));
      const std::vector<int64_t> perm = c.perm;
      auto transposed = [perm, dtype](Tensor x, Tensor y) {
        return dtype == ag::bool_ ? ag::logical_and(ag::transpose(x, perm), y)
                                  : ag::transpose(x, perm) + y;
      };
      auto f = ag::function(transposed);
      // (Bools: true for the positive values.)
      auto values = [&](uint64_t seed) {
        Tensor v = ag::random_uniform(c.shape, -100.0, 100.0, ag::float64, seed);
        return dtype == ag::bool_ ? v > 0.0 : ag::cast(v, dtype);
      };
      Tensor x = values(5), x2 = values(6);
      Tensor y = ag::ones_like(ag::transpose(x, perm));
      for (Tensor input : {x, x2}) {
        EXPECT_EQ(f(input, y).values_string(), transposed(input, y).values_string());
      }
      EXPECT_EQ(plan_for(f, x, y).num_static_copies(), c.static_copies);
      auto returned = ag::function([perm](Tensor x) { return ag::transpose(x, perm); });
      EXPECT_EQ(returned(x).values_string(), ag::transpose(x, perm).values_string());
      EXPECT_EQ(plan_for(returned, x).num_static_copies(), 0u);
    }
  }
}

// A TensorArray write in place in an inline loop's body copies the value's
// runs into row i: rows along axis 0 (one run) and along axis 1 (a
// transposed array: one run per batch row), a state of a flat step (its own
// buffer) and one kept in the array's rows (written there already), int32
// and float32, against eager execution; a write past the end runs the
// kernel, which fails as eagerly.
TEST(PlanStaticCopies, TensorArrayWritesCopyTheirRowsInPlace) {
  for (bool transposed : {false, true}) {
    for (ag::DType dtype : {ag::float32, ag::int32}) {
      for (int64_t features : {2, 5}) {
        SCOPED_TRACE(std::string(transposed ? "transposed " : "") +
                     std::string(ag::dtype_name(dtype)) + " features " + std::to_string(features));
        auto f = ag::function(
            [=](Tensor x, Tensor init) { return recurrence(x, init, {.transposed = transposed}); });
        Tensor x =
            ag::random_uniform(transposed ? ag::Shape{4, 6, features} : ag::Shape{6, 4, features},
                               -3.0, 3.0, dtype, 1);
        Tensor init = ag::random_uniform({4, features}, -3.0, 3.0, dtype, 2);
        for (Tensor input : {x, x * 2 - 1}) {
          EXPECT_EQ(f(input, init).values_string(),
                    recurrence(input, init, {.transposed = transposed}).values_string());
        }
        const ag::exec::Plan& plan = plan_for(f, x, init);
        EXPECT_EQ(plan.num_static_copies(), 1u);
        // 4 x 2 elements: a flat step in its own buffer; 4 x 5: in the rows.
        EXPECT_EQ(plan.num_row_outputs(), features == 5 ? 1u : 0u);
      }
    }
  }
  const PlanCounts counts = expect_write_past_the_end_fails(Tensor(int64_t{4}), {2, 3});
  EXPECT_EQ(counts.num_static_copies, 1u);
  EXPECT_EQ(counts.num_row_outputs, 0u);
}

}  // namespace
