// softmax and log_softmax: values, large logits without overflow, NaN, the
// float32 kernels (oneDNN's primitives) against the float64 loops, forward
// and gradient, a plan step's primitive made once, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <ag/ag.h>

#include "ops/gemm.h"
#include "ops/norm_kernels.h"
#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag_test::expect_error;

TEST(Softmax, RowsSumToOneInProportionToExp) {
  const Tensor x = ag::constant(std::vector<double>{1, 2, 3, 0, 0, 0}, Shape{2, 3});
  const std::vector<double> y = ag::cast(ag::softmax(x), ag::float64).to_vector<double>();
  const double total = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(y[0], std::exp(1.0) / total, 1e-7);
  EXPECT_NEAR(y[2], std::exp(3.0) / total, 1e-7);
  EXPECT_NEAR(y[4], 1.0 / 3, 1e-7);
  const std::vector<double> columns = ag::cast(ag::softmax(x, 0), ag::float64).to_vector<double>();
  EXPECT_NEAR(columns[0] + columns[3], 1.0, 1e-7);
  EXPECT_NEAR(columns[0], std::exp(1.0) / (std::exp(1.0) + 1), 1e-7);
}

TEST(Softmax, LargeLogitsDoNotOverflow) {
  const Tensor x = ag::constant(std::vector<float>{1000, 1001, -1000}, Shape{3});
  const std::vector<float> y = ag::softmax(x).to_vector<float>();
  EXPECT_NEAR(y[0], 1 / (1 + std::exp(1.0f)), 1e-6);
  EXPECT_NEAR(y[1], std::exp(1.0f) / (1 + std::exp(1.0f)), 1e-6);
  EXPECT_EQ(y[2], 0.0f);
  const std::vector<float> logs = ag::log_softmax(x).to_vector<float>();
  // oneDNN's float32 log is within 2e-6 here.
  EXPECT_NEAR(logs[1], -std::log1p(std::exp(-1.0f)), 1e-6);
  EXPECT_NEAR(logs[2], -2001 - std::log1p(std::exp(-1.0f)), 1e-2);
}

Tensor uniform_doubles(const Shape& shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-4, 4);
  Tensor t = ag::empty(shape, ag::float64);
  for (int64_t i = 0; i < shape.num_elements(); ++i) t.mutable_data<double>()[i] = u(rng);
  return t;
}

std::vector<double> softmax_doubles(const Tensor& t) {
  return ag::cast(t, ag::float64).to_vector<double>();
}

// The value of f and its gradient by x (sum(f(x) * w) differentiated).
std::vector<double> with_gradient(const std::function<Tensor(const Tensor&)>& f, const Tensor& x,
                                  const Tensor& w) {
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = f(x);
  std::vector<double> out = softmax_doubles(y);
  const std::vector<double> grad =
      softmax_doubles(tape.gradient(ag::reduce_sum(y * w), std::vector<Tensor>{x})[0]);
  out.insert(out.end(), grad.begin(), grad.end());
  return out;
}

TEST(Softmax, Float32AgreesWithFloat64AlongEveryAxis) {
  const Tensor x = uniform_doubles({5, 37, 3}, 1), w = uniform_doubles({5, 37, 3}, 2);
  auto f32 = [](const Tensor& t) { return ag::cast(t, ag::float32); };
  for (int64_t axis : {0, 1, 2, -1}) {
    for (bool log : {false, true}) {
      auto f = [&](const Tensor& v) {
        return log ? ag::log_softmax(v, axis) : ag::softmax(v, axis);
      };
      const std::vector<double> narrow = with_gradient(f, f32(x), f32(w));
      const std::vector<double> wide = with_gradient(f, x, w);
      ASSERT_EQ(narrow.size(), wide.size());
      for (size_t i = 0; i < wide.size(); ++i)
        ASSERT_NEAR(narrow[i], wide[i], 2e-5 * (1 + std::abs(wide[i])))
            << "axis " << axis << (log ? " log_softmax" : " softmax") << " element " << i;
    }
  }
}

TEST(Softmax, NanMakesItsRowNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (ag::DType dtype : {ag::float32, ag::float64}) {
    const Tensor x =
        ag::cast(ag::constant(std::vector<float>{1, nan, 2, 0, 1, 2, 3, 4}, Shape{2, 4}), dtype);
    for (bool log : {false, true}) {
      const std::vector<double> y = softmax_doubles(log ? ag::log_softmax(x) : ag::softmax(x));
      for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(std::isnan(y[i]), i < 4) << i;
    }
  }
}

// A traced function's plan makes its float32 primitives once, when it is
// built: the forward's and the gradient's.
TEST(Softmax, PlanStepPreparesItsPrimitiveOnce) {
  if (!ag::ops::built_with_onednn()) GTEST_SKIP() << "a build without oneDNN";
  auto f = ag::function([](const Tensor& x) {
    ag::GradientTape tape;
    tape.watch(x);
    const Tensor y = ag::softmax(x);
    return tape.gradient(ag::reduce_sum(y * y), std::vector<Tensor>{x})[0];
  });
  const Tensor x = ag::cast(uniform_doubles({4, 9}, 3), ag::float32);
  const int64_t before = ag::ops::norm_onednn::primitives_made();
  const std::vector<float> first = f(x).to_vector<float>();
  for (int call = 0; call < 3; ++call) EXPECT_EQ(f(x).to_vector<float>(), first) << call;
  EXPECT_EQ(ag::ops::norm_onednn::primitives_made() - before, 2);
}

TEST(Softmax, Errors) {
  expect_error<ag::InvalidArgumentError>(
      [] { ag::softmax(ag::ones({2, 3}), 2); },
      "softmax: axis 2 is out of range for a tensor of shape [2,3]");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::log_softmax(ag::ones({2}, ag::int32)); },
      "log_softmax: unsupported dtype int32 (float32 or float64)");
}

}  // namespace
