// Errors of a running graph say where the user's code defined the failing op,
// as TensorFlow's "defined at": the op, the marked function, file:line of the
// call (ag/tensor.h, CallSite). Eager errors name the op and nothing more.
#include <gtest/gtest.h>

#include <string>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag_test::error_of;

std::string defined_at(int line) {
  return "defined at " + std::string(__FILE__) + ":" + std::to_string(line);
}

TEST(ErrorLocation, GraphErrorNamesTheOpTheFunctionAndTheLine) {
  static int line = 0;
  auto pick = ag::function(
      [](ag::Tensor x, ag::Tensor i) {
        ag::Tensor y = x * 2;
        line = __LINE__ + 1;
        return ag::gather(y, i);
      },
      {.name = "pick", .arg_names = {"x", "i"}});
  EXPECT_EQ(pick(ag::constant({1, 2, 3}), ag::constant(1)).item<int>(), 4);
  std::string err = error_of([&] { pick(ag::constant({1, 2, 3}), ag::constant(3)); });
  EXPECT_EQ(err,
            "InvalidArgumentError: gather: indices = 3 is not in [0, 3)\n  in op gather (node "
            "'gather') of function 'pick', " +
                defined_at(line));
}

TEST(ErrorLocation, OperatorsAndIndexingKeepTheirLine) {
  static int mod_line = 0;
  static int index_line = 0;
  auto f = ag::function(
      [](ag::Tensor x, ag::Tensor d, ag::Tensor i) {
        mod_line = __LINE__ + 1;
        ag::Tensor r = x % d;
        index_line = __LINE__ + 1;
        return r + x[i];
      },
      {.name = "f", .arg_names = {"x", "d", "i"}});
  std::string by_zero =
      error_of([&] { f(ag::constant({4, 5}), ag::constant(0), ag::constant(0)); });
  EXPECT_CONTAINS(by_zero, "mod: integer division by zero");
  EXPECT_CONTAINS(by_zero, "of function 'f', " + defined_at(mod_line));
  std::string out_of_range =
      error_of([&] { f(ag::constant({4, 5}), ag::constant(3), ag::constant(2)); });
  EXPECT_CONTAINS(out_of_range, "gather: indices = 2 is not in [0, 2)");
  EXPECT_CONTAINS(out_of_range, defined_at(index_line));
}

TEST(ErrorLocation, AnOpInsideABranchNamesItsOwnLine) {
  static int line = 0;
  auto f = ag::function(
      [](ag::Tensor x, ag::Tensor i) {
        return ag::cond(
            ag::reduce_sum(x) > 0,
            [&] {
              line = __LINE__ + 1;
              return ag::gather(x, i);
            },
            [&] { return x[0]; });
      },
      {.name = "branchy", .arg_names = {"x", "i"}});
  std::string err = error_of([&] { f(ag::constant({1, 2}), ag::constant(5)); });
  EXPECT_CONTAINS(err, "gather: indices = 5 is not in [0, 2)");
  EXPECT_CONTAINS(err, "of function 'branchy', " + defined_at(line));
  EXPECT_EQ(err.find("defined at", err.find("defined at") + 1), std::string::npos) << err;
}

TEST(ErrorLocation, AnOpInAStagedLoopNamesItsLine) {
  static int line = 0;
  auto f = ag::function(
      [](ag::Tensor x, ag::Tensor n) {
        ag::Tensor s = 0;
        ag::for_stmt(
            ag::range(n), ag::no_extra_test,
            [&](ag::Tensor i) {
              line = __LINE__ + 1;
              s = s + x[i];
            },
            ag::state({"s"}, s));
        return s;
      },
      {.name = "loop", .arg_names = {"x", "n"}});
  EXPECT_EQ(f(ag::constant({1, 2}), ag::constant(2)).item<int>(), 3);
  std::string err = error_of([&] { f(ag::constant({1, 2}), ag::constant(3)); });
  EXPECT_CONTAINS(err, "gather: indices = 2 is not in [0, 2)");
  EXPECT_CONTAINS(err, "of function 'loop', " + defined_at(line));
}

TEST(ErrorLocation, AFunctionCalledInlineNamesItself) {
  static int line = 0;
  static auto pick = ag::function(
      [](ag::Tensor x, ag::Tensor i) {
        line = __LINE__ + 1;
        return ag::gather(x, i);
      },
      {.name = "pick", .arg_names = {"x", "i"}});
  auto outer = ag::function([](ag::Tensor x, ag::Tensor i) { return pick(x * 2, i) + 1; },
                            {.name = "outer", .arg_names = {"x", "i"}});
  std::string err = error_of([&] { outer(ag::constant({1, 2}), ag::constant(7)); });
  EXPECT_CONTAINS(err, "of function 'pick', " + defined_at(line));
}

TEST(ErrorLocation, AssertionsSayWhereTheyWere) {
  static int line = 0;
  auto f = ag::function(
      [](ag::Tensor x) {
        line = __LINE__ + 1;
        ag::assert_that(x > 0, "x must be positive");
        return x;
      },
      {.name = "checked", .arg_names = {"x"}});
  std::string err = error_of([&] { f(ag::constant(-1)); });
  EXPECT_CONTAINS(err, "assertion failed: x must be positive");
  EXPECT_CONTAINS(err, "of function 'checked', " + defined_at(line));
}

TEST(ErrorLocation, EagerErrorsNameTheOpOnly) {
  std::string err = error_of([] { ag::gather(ag::constant({1, 2, 3}), ag::constant(3)); });
  EXPECT_EQ(err, "InvalidArgumentError: gather: indices = 3 is not in [0, 3)");
  // A message that does not start with the op's name gets TensorFlow's suffix.
  std::string shapes = error_of([] { ag::zeros({2, 3}) + ag::zeros({4}); });
  EXPECT_EQ(shapes, "InvalidArgumentError: Incompatible shapes: [2,3] vs. [4] [Op:add]");
}

}  // namespace
