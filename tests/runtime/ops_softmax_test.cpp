// softmax and log_softmax: values, large logits without overflow, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <ag/ag.h>

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
  EXPECT_NEAR(logs[1], -std::log1p(std::exp(-1.0f)), 1e-6);
  EXPECT_NEAR(logs[2], -2001 - std::log1p(std::exp(-1.0f)), 1e-2);
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
