// Losses (ag/losses.h): Keras's documented values, the cross-entropies
// against their definitions, the gradient of the softmax cross-entropy
// (softmax - one_hot), a wrong label as NaN, and a traced loss equal to the
// eager one.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <ag/ag.h>

#include "staged_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;

std::vector<double> values(const Tensor& t) {
  return ag::cast(t, ag::float64).to_vector<double>();
}

// A float64 constant, for checks at float64's precision.
Tensor f64(const std::vector<double>& v, ag::Shape shape) {
  return ag::cast(ag::constant(v, shape), ag::float64);
}

void expect_values_near(const Tensor& t, const std::vector<double>& expected, double tolerance) {
  const std::vector<double> v = values(t);
  ASSERT_EQ(v.size(), expected.size());
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_NEAR(v[i], expected[i], tolerance) << "element " << i;
}

// The examples of Keras's documentation of each loss function.
TEST(Losses, KerasDocumentedValues) {
  const Tensor probs = ag::constant(std::vector<float>{0.05f, 0.95f, 0, 0.1f, 0.8f, 0.1f}, {2, 3});
  expect_values_near(ag::losses::sparse_categorical_crossentropy(
                         ag::constant(std::vector<int32_t>{1, 2}, {2}), probs),
                     {0.0513, 2.303}, 1e-3);
  expect_values_near(ag::losses::categorical_crossentropy(
                         ag::constant(std::vector<float>{0, 1, 0, 0, 0, 1}, {2, 3}), probs),
                     {0.0513, 2.303}, 1e-3);
  expect_values_near(ag::losses::binary_crossentropy(
                         ag::constant(std::vector<float>{0, 1, 0, 0}, {2, 2}),
                         ag::constant(std::vector<float>{0.6f, 0.4f, 0.4f, 0.6f}, {2, 2})),
                     {0.916, 0.714}, 1e-3);
  expect_values_near(
      ag::losses::mean_squared_error(ag::constant(std::vector<float>{0, 1, 0, 0}, {2, 2}),
                                     ag::constant(std::vector<float>{1, 1, 1, 0}, {2, 2})),
      {0.5, 0.5}, 1e-6);
}

TEST(Losses, CrossEntropiesFromLogitsFollowTheirDefinitions) {
  const std::vector<double> z = {2.0, -1.0, 0.5, 0.0, 3.0, -2.0};
  const Tensor logits = f64(z, {2, 3});
  const Tensor labels = ag::constant(std::vector<int64_t>{0, 1}, {2});
  auto log_sum_exp = [&](int row) {
    return std::log(std::exp(z[3 * row]) + std::exp(z[3 * row + 1]) + std::exp(z[3 * row + 2]));
  };
  expect_values_near(ag::sparse_softmax_cross_entropy_with_logits(labels, logits),
                     {log_sum_exp(0) - z[0], log_sum_exp(1) - z[4]}, 1e-12);
  expect_values_near(ag::losses::sparse_categorical_crossentropy(labels, logits, true),
                     {log_sum_exp(0) - z[0], log_sum_exp(1) - z[4]}, 1e-12);
  // Soft labels: the weighted sum of each class's -log softmax.
  const Tensor soft = f64({0.5, 0.5, 0, 0, 0.25, 0.75}, {2, 3});
  expect_values_near(
      ag::softmax_cross_entropy_with_logits(soft, logits),
      {log_sum_exp(0) - 0.5 * z[0] - 0.5 * z[1], log_sum_exp(1) - 0.25 * z[4] - 0.75 * z[5]},
      1e-12);
  // Sigmoid: -z log s(x) - (1 - z) log(1 - s(x)), also where exp(x) overflows.
  const Tensor x = f64({-3, 0.5, 800}, {3});
  const Tensor t = f64({1, 0.25, 0}, {3});
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  expect_values_near(ag::sigmoid_cross_entropy_with_logits(t, x),
                     {-std::log(sigmoid(-3)),
                      -0.25 * std::log(sigmoid(0.5)) - 0.75 * std::log(1 - sigmoid(0.5)), 800},
                     1e-12);
}

TEST(Losses, SoftmaxCrossEntropyGradientIsSoftmaxMinusOneHot) {
  const Tensor logits = f64({2.0, -1.0, 0.5, 0.0, 3.0, -2.0}, {2, 3});
  const Tensor labels = ag::constant(std::vector<int32_t>{2, 1}, {2});
  ag::GradientTape tape;
  tape.watch(logits);
  const Tensor loss = ag::reduce_sum(ag::sparse_softmax_cross_entropy_with_logits(labels, logits));
  const Tensor grad = tape.gradient(loss, std::vector<Tensor>{logits})[0];
  const Tensor expected = ag::softmax(logits) - ag::one_hot(labels, 3, 1.0, 0.0, -1, ag::float64);
  expect_values_near(grad, values(expected), 1e-12);
}

TEST(Losses, ALabelOutsideTheClassesGivesNaN) {
  const Tensor logits = ag::constant(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  const std::vector<double> loss = values(ag::sparse_softmax_cross_entropy_with_logits(
      ag::constant(std::vector<int32_t>{3, 0}, {2}), logits));
  EXPECT_TRUE(std::isnan(loss[0]));
  EXPECT_FALSE(std::isnan(loss[1]));
  EXPECT_TRUE(std::isnan(values(ag::sparse_softmax_cross_entropy_with_logits(
      ag::constant(std::vector<int32_t>{-1, 0}, {2}), logits))[0]));
}

TEST(Losses, TracedLossesMatchEagerLosses) {
  const Tensor labels = ag::constant(std::vector<int64_t>{1, 0, 2, 2}, {4});
  const Tensor logits = ag::random_normal({4, 3}, 0, 1, ag::float32, 7);
  auto eager = [&](const Tensor& y, const Tensor& z) {
    return ag::losses::sparse_categorical_crossentropy(y, z, true) +
           ag::losses::categorical_crossentropy(ag::one_hot(y, 3), ag::softmax(z), false, 0.1) +
           ag::losses::binary_crossentropy(ag::sigmoid(z), ag::sigmoid(z * 2)) +
           ag::losses::mean_squared_error(z, z * 3);
  };
  auto traced = ag::function(eager);
  ag_test::expect_same_bits(eager(labels, logits), traced(labels, logits), "traced losses");
}

TEST(Losses, LabelsMustBeIntegers) {
  try {
    ag::negative_log_likelihood(ag::constant(std::vector<float>{0, 0}, {1, 2}),
                                ag::constant(std::vector<float>{1}, {1}));
    FAIL() << "float labels were accepted";
  } catch (const ag::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("labels must be int32 or int64, not float32"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
