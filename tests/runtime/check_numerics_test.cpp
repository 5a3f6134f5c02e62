// ag::debugging::enable_check_numerics (ag/debugging.h): the first op whose
// floating-point output holds a NaN or an infinity raises an error naming the
// op and the line that called it, with the same text eagerly, from a traced
// function (traced before or after the check was turned on), inside a staged
// loop and in a gradient; nothing is checked while it is off.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;
using ag_test::error_of;

std::string defined_at(int line) {
  return "defined at " + std::string(__FILE__) + ":" + std::to_string(line);
}

// Turns the check on for one test, and off again whatever happens.
class CheckNumerics : public ::testing::Test {
 protected:
  void SetUp() override { ag::debugging::enable_check_numerics(); }
  void TearDown() override { ag::debugging::disable_check_numerics(); }
};

int g_log_line = 0;

// log(x * 2) + 1: log of a negative element is NaN, of zero -inf.
Tensor log_of_double(const Tensor& x) {
  Tensor y = x * 2;
  g_log_line = __LINE__ + 1;
  Tensor z = ag::log(y);
  return z + 1;
}

TEST_F(CheckNumerics, AnEagerOpThatMakesANaNNamesItselfAndItsLine) {
  EXPECT_TRUE(ag::debugging::check_numerics_enabled());
  const std::string err = error_of([] { log_of_double(ag::constant({1.0f, -1.0f, 2.0f})); });
  EXPECT_EQ(err,
            "InvalidArgumentError: check_numerics: op 'log' produced NaN in 1 of 3 elements of "
            "its output (float32, shape (3,)), " +
                defined_at(g_log_line));
}

TEST_F(CheckNumerics, CountsNaNsAndInfinitiesApart) {
  const std::string err =
      error_of([] { log_of_double(ag::constant(std::vector{0.0, -1.0, -3.0, 4.0}, {2, 2})); });
  EXPECT_CONTAINS(err,
                  "op 'log' produced NaN in 2 and Inf in 1 of 4 elements of its output "
                  "(float32, shape (2, 2))");
  // Finite values, integers and bools pass.
  EXPECT_FLOAT_EQ(log_of_double(ag::constant(0.5f)).item<float>(), 1.0f);
  EXPECT_EQ(ag::floordiv(ag::constant({6}), ag::constant({3})).to_vector<int>(),
            std::vector<int>{2});
  EXPECT_EQ(ag::is_nan(ag::constant(1.0f)).item<bool>(), false);
}

TEST_F(CheckNumerics, AGraphNamesTheSameOpWithTheSameText) {
  const Tensor bad = ag::constant({1.0f, -1.0f, 2.0f});
  const std::string eager = error_of([&] { log_of_double(bad); });
  auto traced = ag::function(log_of_double);
  EXPECT_EQ(error_of([&] { traced(bad); }), eager);
  EXPECT_FLOAT_EQ(traced(ag::constant({0.5f, 1.0f, 2.0f})).to_vector<float>()[0], 1.0f);
}

TEST(CheckNumericsSwitch, AFunctionTracedBeforeTheCheckIsCheckedAfterIt) {
  auto traced = ag::function(log_of_double);
  const Tensor bad = ag::constant({-1.0f, 1.0f});
  EXPECT_TRUE(std::isnan(traced(bad).to_vector<float>()[0]));  // off: NaN flows on
  ag::debugging::enable_check_numerics();
  const std::string err = error_of([&] { traced(bad); });
  ag::debugging::disable_check_numerics();
  EXPECT_CONTAINS(err, "check_numerics: op 'log' produced NaN in 1 of 2 elements");
  EXPECT_CONTAINS(err, defined_at(g_log_line));
  EXPECT_FALSE(ag::debugging::check_numerics_enabled());
  EXPECT_TRUE(std::isnan(traced(bad).to_vector<float>()[0]));
  EXPECT_EQ(traced.tracing_count(), 1);
}

int g_step_line = 0;

// x halves until its sum is below 1, then 1 / (x - x): a division by zero
// on the iteration after the last, in a staged while loop.
Tensor halve_then_divide(Tensor x) {
  ag::while_stmt([&] { return ag::reduce_sum(x) > 1.0f; }, [&] { x = x / 2.0f; },
                 ag::state({"x"}, x));
  g_step_line = __LINE__ + 1;
  return 1.0f / (x - x);
}

TEST_F(CheckNumerics, TheFirstBadOpInAStagedLoopProgramIsNamed) {
  auto traced = ag::function(halve_then_divide);
  const std::string err = error_of([&] { traced(ag::constant({8.0f, 8.0f})); });
  EXPECT_EQ(err,
            "InvalidArgumentError: check_numerics: op 'truediv' produced Inf in 2 of 2 elements of "
            "its output (float32, shape (2,)), " +
                defined_at(g_step_line));
  EXPECT_EQ(error_of([] { halve_then_divide(ag::constant({8.0f, 8.0f})); }), err);
}

TEST_F(CheckNumerics, AGradientThatOverflowsIsCaught) {
  // d sqrt(x) / dx = 0.5 / sqrt(x): infinite at 0, in the gradient's ops.
  auto gradient = ag::function([](const Tensor& x) {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor y = ag::reduce_sum(ag::sqrt(x));
    return tape.gradient(y, x);
  });
  EXPECT_FLOAT_EQ(gradient(ag::constant({4.0f})).to_vector<float>()[0], 0.25f);
  EXPECT_CONTAINS(error_of([&] { gradient(ag::constant({0.0f, 1.0f})); }),
                  "produced Inf in 1 of 2");
}

TEST(CheckNumericsSwitch, OffByDefaultAndNothingIsChecked) {
  EXPECT_FALSE(ag::debugging::check_numerics_enabled());
  const Tensor nan = ag::log(ag::constant(-1.0f));
  EXPECT_TRUE(std::isnan(nan.item<float>()));
  EXPECT_TRUE(std::isinf((ag::constant(1.0) / 0.0).item<double>()));
}

}  // namespace
