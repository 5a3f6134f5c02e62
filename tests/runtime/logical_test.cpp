// `&&` and `||` on tensors short-circuit: eagerly as C++'s own operators
// (through explicit operator bool), in a graph as ag::and_ / ag::or_ (the
// forms agc emits), whose right side is a branch that runs only when needed.
// A tensor of more than one element is an error with one message in both.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;
using ag_test::error_of;

const char* const kAmbiguous3 =
    "a condition must be a scalar bool, but this one is a tensor of shape (3,) (3 elements), "
    "whose truth value is ambiguous; reduce it first with ag::reduce_all or ag::reduce_any, or "
    "use ag::logical_and / ag::logical_or for elementwise results";

// ---- Eager: C++'s own && and || ---------------------------------------------------

TEST(Logical, EagerAndSkipsTheRightSideWhenTheLeftIsFalse) {
  // A guard: with count 0 the division never runs.
  int count = 0, total = 10;
  Tensor t(1);
  EXPECT_FALSE(count > 0 && total / count > t);
  count = 4;
  EXPECT_TRUE(count > 0 && total / count > t);
}

TEST(Logical, EagerAndOnTensorsShortCircuits) {
  Tensor count(0), total(10), t(1);
  // floordiv by an integer zero is an error, so evaluating it would throw.
  EXPECT_FALSE(count > 0 && ag::floordiv(total, count) > t);
  count = Tensor(4);
  EXPECT_TRUE(count > 0 && ag::floordiv(total, count) > t);
  int right_side_runs = 0;
  auto right = [&] {
    ++right_side_runs;
    return Tensor(true);
  };
  EXPECT_FALSE(Tensor(false) && right());
  EXPECT_TRUE(Tensor(true) || right());
  EXPECT_EQ(right_side_runs, 0);
  EXPECT_TRUE(Tensor(true) && right());
  EXPECT_FALSE(Tensor(false) || !right());
  EXPECT_EQ(right_side_runs, 2);
}

TEST(Logical, EagerOperandOfMoreThanOneElementIsAmbiguous) {
  Tensor v = ag::constant({true, false, true});
  EXPECT_CONTAINS(error_of([&] { static_cast<void>(v && Tensor(true)); }), kAmbiguous3);
  EXPECT_CONTAINS(error_of([&] { static_cast<void>(Tensor(true) && v); }), kAmbiguous3);
  EXPECT_CONTAINS(error_of([&] { static_cast<void>(v || Tensor(false)); }), kAmbiguous3);
  EXPECT_CONTAINS(
      error_of([&] { static_cast<void>(ag::constant({1, 2}) > 0 && true); }),
      "this one is a tensor of shape (2,) (2 elements), whose truth value is ambiguous");
  // Elementwise stays available under its name.
  EXPECT_EQ(ag::logical_and(v, Tensor(true)).to_vector<bool>(), (std::vector<bool>{1, 0, 1}));
}

// ---- ag::and_ / ag::or_, eagerly and in a graph -------------------------------

// The leading run of positive elements of `x`: `while (i < n && x[i] > 0)`.
Tensor leading_positives(Tensor x) {
  Tensor n = int32_t(x.shape()[0]);
  Tensor i = 0;
  ag::while_stmt([&] { return ag::and_(i < n, [&] { return ag::gather(x, i) > 0; }); },
                 [&] { i = i + 1; }, ag::state({"i"}, i));
  return i;
}

TEST(Logical, WhileGuardedByAndReadsNoElementPastTheEnd) {
  auto f = ag::function(leading_positives);
  for (const std::vector<int>& values :
       {std::vector<int>{1, 2, 3}, std::vector<int>{1, -2, 3}, std::vector<int>{-1, 2, 3}}) {
    Tensor x = ag::constant(values, {3});
    Tensor eager = leading_positives(x);
    Tensor graph = f(x);
    EXPECT_EQ(eager.item<int>(), graph.item<int>());
  }
  EXPECT_EQ(f(ag::constant({1, 2, 3})).item<int>(), 3);
  EXPECT_EQ(f(ag::constant({5, 0, 3})).item<int>(), 1);
}

// `count > 0 && total / count > t` and its `||` twin, with tensors.
Tensor guarded_average(Tensor count, Tensor total, Tensor t) {
  Tensor above = ag::and_(count > 0, [&] { return ag::floordiv(total, count) > t; });
  Tensor empty_or_below = ag::or_(count == 0, [&] { return ag::floordiv(total, count) <= t; });
  return ag::stack({above, empty_or_below});
}

TEST(Logical, GraphRunsTheRightSideOnlyWhenNeeded) {
  auto f = ag::function(guarded_average);
  for (int count : {0, 2, 5}) {
    Tensor eager = guarded_average(Tensor(count), Tensor(10), Tensor(3));
    Tensor graph = f(Tensor(count), Tensor(10), Tensor(3));
    EXPECT_EQ(eager.to_vector<bool>(), graph.to_vector<bool>()) << "count " << count;
  }
  EXPECT_EQ(f(Tensor(0), Tensor(10), Tensor(3)).to_vector<bool>(), (std::vector<bool>{0, 1}));
  EXPECT_EQ(f(Tensor(2), Tensor(10), Tensor(3)).to_vector<bool>(), (std::vector<bool>{1, 0}));
  EXPECT_EQ(f(Tensor(5), Tensor(10), Tensor(3)).to_vector<bool>(), (std::vector<bool>{0, 1}));
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(Logical, MixedBoolAndTensorOperands) {
  auto f = ag::function([](Tensor x) {
    bool yes = true, no = false;
    return ag::stack({ag::and_(yes, [&] { return x > 0; }), ag::and_(x > 0, [&] { return no; }),
                      ag::or_(no, [&] { return x > 0; }), ag::or_(x > 0, [&] { return yes; })});
  });
  EXPECT_EQ(f(Tensor(1)).to_vector<bool>(), (std::vector<bool>{1, 0, 1, 1}));
  EXPECT_EQ(f(Tensor(-1)).to_vector<bool>(), (std::vector<bool>{0, 0, 0, 1}));
}

TEST(Logical, CxxOperandsCountAsTheirTruthValue) {
  // As C++'s `count && t`: a number or pointer operand is its truth value.
  auto f = ag::function([](Tensor x, int count) {
    const int* none = nullptr;
    return ag::stack({ag::and_(count, [&] { return x > 0; }), ag::or_(x > 0, [&] { return count; }),
                      ag::or_(none, [&] { return x > 0; })});
  });
  EXPECT_EQ(f(Tensor(1), 2).to_vector<bool>(), (std::vector<bool>{1, 1, 1}));
  EXPECT_EQ(f(Tensor(-1), 2).to_vector<bool>(), (std::vector<bool>{0, 1, 0}));
  EXPECT_EQ(f(Tensor(1), 0).to_vector<bool>(), (std::vector<bool>{0, 1, 1}));
  EXPECT_EQ(f(Tensor(-1), 0).to_vector<bool>(), (std::vector<bool>{0, 0, 0}));
  EXPECT_TRUE(ag::and_(3, [] { return 0.5; }));
}

TEST(Logical, GraphOperandOfMoreThanOneElementIsAmbiguous) {
  auto left = ag::function([](Tensor x, Tensor y) { return ag::and_(x > 0, [&] { return y; }); });
  auto right = ag::function([](Tensor x, Tensor y) { return ag::or_(y, [&] { return x > 0; }); });
  Tensor v = ag::constant({1, 2, 3});
  EXPECT_CONTAINS(error_of([&] { left(v, Tensor(true)); }), kAmbiguous3);
  EXPECT_CONTAINS(error_of([&] { left(Tensor(1), ag::constant({true, true, false})); }),
                  kAmbiguous3);
  EXPECT_CONTAINS(error_of([&] { right(v, Tensor(false)); }), kAmbiguous3);
  // Eagerly, ag::and_ says the same.
  EXPECT_CONTAINS(error_of([&] { ag::and_(v > 0, [] { return true; }); }), kAmbiguous3);
}

TEST(Logical, StagedIfConditionOfMoreThanOneElementIsAmbiguous) {
  auto f = ag::function([](Tensor x) {
    ag::if_stmt(x > 0, [&] { x = x + 1; }, [&] {}, ag::state({"x"}, x));
    return x;
  });
  EXPECT_CONTAINS(error_of([&] { f(ag::constant({1, 2, 3})); }), kAmbiguous3);
}

}  // namespace
