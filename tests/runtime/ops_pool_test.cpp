// Pooling's values as TensorFlow computes them (padding never counts), its
// gradients' placement, its two engines against each other, and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "ops/gemm.h"
#include "ops/isa.h"
#include "ops/pool_kernels.h"
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
  const Tensor dy = ag::constant(std::vector<float>{10, 20}, Shape{1, 2, 1});
  EXPECT_EQ(ag::max_pool_grad(x, dy, {2}, {2}, "VALID").to_vector<float>(),
            (std::vector<float>{0, 10, 20, 0}));
}

TEST(Pool, WindowsWhollyInThePadding) {
  // Padding 3 before a window of 2: the first two windows read no input.
  const Tensor x = ag::constant(std::vector<float>{1, 2, 3}, Shape{1, 3, 1});
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(ag::max_pool(x, {2}, {1}, ag::Padding({{3, 0}})).to_vector<float>(),
            (std::vector<float>{-inf, -inf, 1, 2, 3}));
  EXPECT_EQ(ag::avg_pool(x, {2}, {1}, ag::Padding({{3, 0}})).to_vector<float>(),
            (std::vector<float>{0, 0, 1, 1.5f, 2.5f}));
}

// oneDNN's primitives and the loops compute the same, for every pass: the
// same values, and a max pool's gradient at the same position of a window
// whose maximum is there more than once.
TEST(Pool, EnginesAgree) {
  if (!ag::ops::built_with_onednn()) GTEST_SKIP() << "this build has no oneDNN (AG_GEMM=openblas)";
  struct Case {
    Shape input;
    ag::ops::ConvAttrs attrs;
    bool ties = false;  // inputs of a few small integers
  };
  auto attrs = [](int rank, std::vector<int64_t> ksize, std::vector<int64_t> strides,
                  ag::Padding padding, std::string_view format, std::vector<int64_t> dilations) {
    return ag::ops::pool_attrs("pool", rank, ksize, strides, padding, format, dilations);
  };
  const std::vector<Case> cases = {
      {{2, 9, 8, 5}, attrs(2, {3}, {2}, "SAME", "NHWC", {1})},
      {{1, 4, 10, 9}, attrs(2, {3, 2}, {2, 1}, "VALID", "NCHW", {1, 2})},
      {{1, 7, 6, 2}, attrs(2, {2, 3}, {1}, "SAME", "NHWC", {2, 1})},
      {{2, 3, 7, 6}, attrs(2, {3}, {1, 2}, "SAME", "NCHW", {2})},
      {{2, 11, 3}, attrs(1, {3}, {2}, ag::Padding({{1, 2}}), "NWC", {1})},
      {{1, 3, 12}, attrs(1, {4}, {3}, "VALID", "NCW", {1})},
      {{1, 2, 4, 5, 3}, attrs(3, {2}, {1}, "SAME", "NCDHW", {1})},
      {{1, 4, 4, 3, 2}, attrs(3, {2}, {1, 2, 1}, "VALID", "NDHWC", {1})},
      {{2, 6, 6, 4}, attrs(2, {3}, {1}, "SAME", "NHWC", {1}), true},
      {{1, 3, 6, 6}, attrs(2, {2}, {1}, "VALID", "NCHW", {1}), true},
      // Windows that share no input: LeNet's pools,
      // the padding at the end, gaps between windows, a dilated window.
      {{2, 7, 9, 6}, attrs(2, {2}, {2}, "SAME", "NHWC", {1}), true},
      {{1, 6, 8, 8}, attrs(2, {2}, {2}, "VALID", "NCHW", {1}), true},
      {{2, 11, 3}, attrs(1, {2}, {3}, "VALID", "NWC", {1})},
      {{1, 10, 4}, attrs(1, {2}, {3}, "VALID", "NWC", {2}), true},
  };
  unsigned seed = 21;
  for (const Case& c : cases) {
    const auto g = ag::ops::pool_geometry("pool", c.attrs, c.input);
    ASSERT_TRUE(ag::ops::pool_onednn::supports(g)) << c.input.to_list_string();
    std::mt19937 rng(seed++);
    auto random = [&](const Shape& shape) {
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      std::vector<float> v(size_t(shape.num_elements()));
      for (float& e : v) e = c.ties ? std::floor(u(rng) * 2) : u(rng);
      return v;
    };
    const std::vector<float> x = random(g.input_shape()), dy = random(g.output_shape());
    auto compare = [&](auto onednn, auto loops, size_t n, const std::string& what) {
      // NaN where a pass leaves an element unwritten fails the comparison.
      std::vector<float> a(n, std::nanf("")), b(n, std::nanf(""));
      onednn(a.data());
      loops(b.data());
      for (size_t i = 0; i < n; ++i)
        ASSERT_NEAR(a[i], b[i], 1e-5)
            << what << " of " << c.input.to_list_string() << " element " << i;
    };
    namespace onednn = ag::ops::pool_onednn;
    namespace loops = ag::ops::pool_loops;
    compare([&](float* y) { onednn::max_pool(g, x.data(), y); },
            [&](float* y) { loops::max_pool<float>(g, x.data(), y); }, dy.size(), "max_pool");
    compare([&](float* y) { onednn::avg_pool(g, x.data(), y); },
            [&](float* y) { loops::avg_pool<float>(g, x.data(), y); }, dy.size(), "avg_pool");
    compare([&](float* dx) { onednn::max_pool_grad(g, x.data(), dy.data(), dx); },
            [&](float* dx) { loops::max_pool_grad<float>(g, x.data(), dy.data(), dx); }, x.size(),
            "max_pool_grad");
    compare([&](float* dx) { onednn::avg_pool_grad(g, dy.data(), dx); },
            [&](float* dx) { loops::avg_pool_grad<float>(g, dy.data(), dx); }, x.size(),
            "avg_pool_grad");
  }
}

// max_pool_grad's channels-last loop (windows found once per position, then
// searched on vectors of channels) against the per-element search of
// channels first on the same values: ties, NaNs, overlapping windows,
// windows wholly in the padding; under every instruction set of this CPU.
// The loop's code differs for each channel count up to 16 (whole vectors
// and the rest), then repeats in blocks of 16; float32 runs on the loop
// even where oneDNN could take it, since the values hold NaNs.
void expect_channels_last_gradient_matches_channels_first(ag::DType dtype, int64_t channels) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = ag::floor(ag::random_uniform({2, 5, 6, channels}, -2.0, 2.0, ag::float64, 7));
  std::vector<double> values = x.to_vector<double>();
  values[3 % size_t(channels)] = nan;
  values[size_t(channels * 7 + 5 % channels)] = nan;
  x = ag::cast(ag::constant(values, x.shape()), dtype);
  const ag::Padding padding({{3, 1}, {0, 2}});
  const Tensor last = ag::max_pool(x, {2, 3}, {1, 2}, padding);
  const Tensor dy = ag::cast(ag::random_normal(last.shape(), 0.0, 1.0, ag::float64, 8), dtype);
  const Tensor dx_first =
      ag::max_pool_grad(ag::transpose(x, {0, 3, 1, 2}), ag::transpose(dy, {0, 3, 1, 2}), {2, 3},
                        {1, 2}, padding, "NCHW");
  const std::vector<double> expected =
      ag::cast(ag::transpose(dx_first, {0, 2, 3, 1}), ag::float64).to_vector<double>();
  // Every gradient arrives, once: the rows wholly in the padding have none.
  const double dy_in_input =
      ag::reduce_sum(ag::cast(ag::slice(dy, {0, 2, 0, 0}, {-1, -1, -1, -1}), ag::float64))
          .item<double>();
  const ag::ops::Isa saved = ag::ops::kernel_isa();
  for (ag::ops::Isa isa : ag::ops::supported_isas()) {
    ag::ops::set_kernel_isa(isa);
    const Tensor dx_last = ag::max_pool_grad(x, dy, {2, 3}, {1, 2}, padding);
    const std::string what = std::string(ag::dtype_name(dtype)) + ", " + std::to_string(channels) +
                             " channels, " + ag::ops::isa_name(isa);
    EXPECT_EQ(ag::cast(dx_last, ag::float64).to_vector<double>(), expected) << what;
    EXPECT_NEAR(ag::reduce_sum(ag::cast(dx_last, ag::float64)).item<double>(), dy_in_input, 1e-4)
        << what;
  }
  ag::ops::set_kernel_isa(saved);
}

TEST(Pool, ChannelsLastGradientMatchesChannelsFirst) {
  for (int64_t channels = 1; channels <= 20; ++channels) {
    expect_channels_last_gradient_matches_channels_first(ag::float32, channels);
    expect_channels_last_gradient_matches_channels_first(ag::float64, channels);
  }
  expect_channels_last_gradient_matches_channels_first(ag::float32, 37);
  expect_channels_last_gradient_matches_channels_first(ag::float64, 70);
}

// LeNet's pools in a graph and eagerly, and the graph's gradient of
// max_pool: the loop's answers are those of the op in both modes.
TEST(Pool, FewChannelsGradientIsTheSameEagerlyAndInAGraph) {
  const Tensor x = ag::floor(ag::random_uniform({4, 8, 8, 6}, -3.0, 3.0, ag::float32, 9));
  const Tensor dy = ag::random_normal({4, 4, 4, 6}, 0.0, 1.0, ag::float32, 10);
  auto grad = [](Tensor image, Tensor out_grad) {
    return ag::max_pool_grad(image, out_grad, {2}, {2}, "VALID");
  };
  auto staged = ag::function(grad);
  EXPECT_EQ(grad(x, dy).to_vector<float>(), staged(x, dy).to_vector<float>());
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
