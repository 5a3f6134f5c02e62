// Pooling's values as TensorFlow computes them (padding never counts), its
// gradients' placement, and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <ag/ag.h>

#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag_test::expect_error;

// A [1, 3, 3, 1] image: 1 2 3 / 4 5 6 / 7 8 9.
Tensor nine() {
  return ag::constant(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape{1, 3, 3, 1});
}

TEST(Pool, MaxAndMeanOfEachWindow) {
  EXPECT_EQ(ag::max_pool2d(nine(), {2}, {1}, "VALID").to_vector<float>(),
            (std::vector<float>{5, 6, 8, 9}));
  EXPECT_EQ(ag::avg_pool2d(nine(), {2}, {1}, "VALID").to_vector<float>(),
            (std::vector<float>{3, 4, 6, 7}));
}

TEST(Pool, SamePaddingIsNeverCounted) {
  // 2x2 windows at stride 2 over 3x3: the last row and column pad at the end.
  const Tensor avg = ag::avg_pool2d(nine(), {2}, {2}, "SAME");
  EXPECT_EQ(avg.shape(), (Shape{1, 2, 2, 1}));
  EXPECT_EQ(avg.to_vector<float>(), (std::vector<float>{3, 4.5f, 7.5f, 9}));
  const Tensor negative = ag::max_pool2d(-nine(), {2}, {2}, "SAME");
  EXPECT_EQ(negative.to_vector<float>(), (std::vector<float>{-1, -3, -7, -9}));
}

TEST(Pool, ChannelsFirstAndThreeSpatialDims) {
  const Tensor x = ag::random_uniform({1, 4, 3, 2, 2}, -1.0, 1.0, ag::float64, 3);
  const Tensor channels_first = ag::transpose(x, {0, 4, 1, 2, 3});
  const Tensor last = ag::max_pool(x, {2}, {1}, "SAME");
  const Tensor first = ag::max_pool(channels_first, {2}, {1}, "SAME", "NCDHW");
  EXPECT_EQ(ag::transpose(first, {0, 2, 3, 4, 1}).to_vector<double>(), last.to_vector<double>());
}

TEST(Pool, GradientsGoToTheMaximumAndSpreadOverTheWindow) {
  const Tensor x = ag::constant(std::vector<float>{1, 9, 3, 4, 5, 6, 7, 8, 2}, Shape{1, 3, 3, 1});
  const Tensor dy = ag::constant(std::vector<float>{10, 20, 30, 40}, Shape{1, 2, 2, 1});
  // Windows' maxima: 9 (twice: top-left, top-right), 8 (twice).
  EXPECT_EQ(ag::max_pool_grad(x, dy, {2}, {1}, "VALID").to_vector<float>(),
            (std::vector<float>{0, 30, 0, 0, 0, 0, 0, 70, 0}));
  EXPECT_EQ(ag::max_pool_grad_grad(x, x * 10, {2}, {1}, "VALID").to_vector<float>(),
            (std::vector<float>{90, 90, 80, 80}));
  EXPECT_EQ(ag::avg_pool_grad({1, 3, 3, 1}, dy, {2}, {1}, "VALID").to_vector<float>(),
            (std::vector<float>{2.5f, 7.5f, 5, 10, 25, 15, 7.5f, 17.5f, 10}));
}

TEST(Pool, NanIsTheMaximum) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = ag::constant(std::vector<float>{1, nan, 3, 2}, Shape{1, 4, 1});
  const std::vector<float> y = ag::max_pool(x, {2}, {2}, "VALID").to_vector<float>();
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 3);
}

TEST(Pool, Errors) {
  expect_error<ag::InvalidArgumentError>([] { ag::max_pool2d(nine(), {2, 2, 2}, {1}, "SAME"); },
                                         "max_pool2d: ksize [2,2,2] must have 1, 2 or 4 entries");
  expect_error<ag::InvalidArgumentError>([] { ag::avg_pool2d(nine(), {4}, {1}, "VALID"); },
                                         "fewer than the kernel spans (4");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::max_pool(ag::ones({3, 3}), {2}, {1}, "SAME"); },
      "max_pool: the input must have rank 3 to 5 (1 to 3 spatial dims), got [3,3]");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::max_pool2d(ag::ones({1, 3, 3, 1}, ag::int32), {2}, {1}, "SAME"); },
      "max_pool: unsupported dtype int32 (float32 or float64)");
  expect_error<ag::InvalidArgumentError>(
      [] { ag::max_pool_grad(nine(), ag::ones({1, 3, 3, 1}), {2}, {1}, "VALID"); },
      "max_pool_grad: out_backprop has shape [1,3,3,1], the pool's [1,2,2,1]");
}

}  // namespace
