// Convolution's values against a direct loop, TensorFlow's shapes and SAME
// padding, its two engines against each other, and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <ag/ag.h>

#include "ops/conv_kernels.h"
#include "ops/gemm.h"
#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag_test::expect_error;

Tensor random_tensor(const Shape& shape, ag::DType dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(size_t(shape.num_elements()));
  for (double& x : v) x = u(rng);
  return ag::cast(ag::constant(v, shape), dtype);
}

// One 2-D convolution, spelled out: padding before each spatial dim, the
// dims of the output, strides, dilations; TensorFlow's layouts.
struct Conv2d {
  Shape input, filter;  // NHWC or NCHW; [kh, kw, in / groups, out]
  int64_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, out_h, out_w;
  bool nchw = false;
};

// sum over (kh, kw, c) of x[n, oh * s - pad + kh * d, ..., group's c] * w[kh, kw, c, o].
std::vector<double> direct_conv2d(const Conv2d& c, const std::vector<double>& x,
                                  const std::vector<double>& w) {
  const int64_t n = c.input[0], ch = c.input[c.nchw ? 1 : 3];
  const int64_t h = c.input[c.nchw ? 2 : 1], wd = c.input[c.nchw ? 3 : 2];
  const int64_t kh = c.filter[0], kw = c.filter[1], cg = c.filter[2], oc = c.filter[3];
  const int64_t og = oc / (ch / cg);
  auto in_at = [&](int64_t b, int64_t i, int64_t j, int64_t k) {
    return c.nchw ? ((b * ch + k) * h + i) * wd + j : ((b * h + i) * wd + j) * ch + k;
  };
  std::vector<double> y(size_t(n * c.out_h * c.out_w * oc));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oh = 0; oh < c.out_h; ++oh)
      for (int64_t ow = 0; ow < c.out_w; ++ow)
        for (int64_t o = 0; o < oc; ++o) {
          double acc = 0;
          for (int64_t i = 0; i < kh; ++i)
            for (int64_t j = 0; j < kw; ++j)
              for (int64_t k = 0; k < cg; ++k) {
                const int64_t ih = oh * c.stride_h - c.pad_top + i * c.dilation_h;
                const int64_t iw = ow * c.stride_w - c.pad_left + j * c.dilation_w;
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                acc += x[size_t(in_at(b, ih, iw, (o / og) * cg + k))] *
                       w[size_t(((i * kw + j) * cg + k) * oc + o)];
              }
          const int64_t at = c.nchw ? ((b * oc + o) * c.out_h + oh) * c.out_w + ow
                                    : ((b * c.out_h + oh) * c.out_w + ow) * oc + o;
          y[size_t(at)] = acc;
        }
  return y;
}

void expect_near_all(const std::vector<double>& actual, const std::vector<double>& expected,
                     double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    ASSERT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

class ConvValues : public ::testing::TestWithParam<ag::DType> {};

TEST_P(ConvValues, MatchTheDirectLoop) {
  const ag::DType dtype = GetParam();
  const double tolerance = dtype == ag::float32 ? 1e-4 : 1e-12;
  struct Case {
    Conv2d geometry;
    ag::Padding padding;
    std::vector<int64_t> strides, dilations;
  };
  const std::vector<Case> cases = {
      // SAME, stride 1: pad 1 on each side of a 3x3 kernel.
      {{{2, 5, 6, 3}, {3, 3, 3, 4}, 1, 1, 1, 1, 1, 1, 5, 6}, "SAME", {1}, {1}},
      // SAME, stride 2 on 6 and 7: total padding 1 and 2, the odd one at the end.
      {{{1, 6, 7, 2}, {3, 3, 2, 3}, 2, 2, 1, 1, 0, 1, 3, 4}, "SAME", {2}, {1}},
      // VALID with strides and dilations that differ per dim.
      {{{1, 9, 8, 2}, {2, 3, 2, 2}, 2, 1, 3, 2, 0, 0, 3, 4}, "VALID", {2, 1}, {3, 2}},
      // Explicit padding, channels first.
      {{{2, 3, 4, 5}, {2, 2, 3, 2}, 1, 2, 1, 1, 2, 1, 6, 3, true},
       ag::Padding({{2, 1}, {1, 0}}),
       {1, 2},
       {1}},
      // Groups: 4 input channels by a filter of 2 per group, 6 outputs.
      {{{1, 5, 5, 4}, {3, 3, 2, 6}, 1, 1, 1, 1, 1, 1, 5, 5}, "SAME", {1}, {1}},
  };
  unsigned seed = 1;
  for (const Case& c : cases) {
    const Conv2d& g = c.geometry;
    const Tensor x = random_tensor(g.input, dtype, seed++);
    const Tensor w = random_tensor(g.filter, dtype, seed++);
    const Tensor y = ag::conv2d(x, w, c.strides, c.padding, g.nchw ? "NCHW" : "NHWC", c.dilations);
    const Shape expected_shape = g.nchw ? Shape{g.input[0], g.filter[3], g.out_h, g.out_w}
                                        : Shape{g.input[0], g.out_h, g.out_w, g.filter[3]};
    ASSERT_EQ(y.shape(), expected_shape) << "case " << seed / 2;
    expect_near_all(y.to_vector<double>(),
                    direct_conv2d(g, x.to_vector<double>(), w.to_vector<double>()), tolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, ConvValues, ::testing::Values(ag::float32, ag::float64),
                         [](const auto& info) { return std::string(ag::dtype_name(info.param)); });

TEST(Conv, SamePutsTheOddPaddingAtTheEnd) {
  // A kernel of 2 over 3 positions, stride 1: one padding position, after.
  const Tensor x = ag::constant(std::vector<float>{1, 2, 4}, Shape{1, 3, 1});
  const Tensor w = ag::constant(std::vector<float>{1, 10}, Shape{2, 1, 1});
  EXPECT_EQ(ag::conv1d(x, w, {1}, "SAME").to_vector<float>(), (std::vector<float>{21, 42, 4}));
  EXPECT_EQ(ag::conv1d(x, w, {1}, "VALID").to_vector<float>(), (std::vector<float>{21, 42}));
}

TEST(Conv, OutputShapesAreTensorFlows) {
  // The guide's Conv2D(100, 3) on a [1, 200, 200, 100] image.
  const Tensor image = ag::zeros({1, 200, 200, 100});
  EXPECT_EQ(ag::conv2d(image, ag::zeros({3, 3, 100, 100}), {1}, "VALID").shape(),
            (Shape{1, 198, 198, 100}));
  EXPECT_EQ(ag::conv2d(ag::zeros({4, 7, 8, 3}), ag::zeros({3, 3, 3, 5}), {2}, "SAME").shape(),
            (Shape{4, 4, 4, 5}));
  EXPECT_EQ(ag::conv3d(ag::zeros({1, 2, 5, 5, 5}), ag::zeros({3, 3, 3, 2, 4}), {1, 2, 2}, "VALID",
                       "NCDHW")
                .shape(),
            (Shape{1, 4, 3, 2, 2}));
}

TEST(Conv, DepthwiseConvolvesEachChannelWithItsOwnFilters) {
  const Tensor x = random_tensor({1, 4, 4, 3}, ag::float64, 7);
  const Tensor w = random_tensor({3, 3, 3, 2}, ag::float64, 8);
  const Tensor y = ag::depthwise_conv2d(x, w, {1}, "SAME");
  ASSERT_EQ(y.shape(), (Shape{1, 4, 4, 6}));
  for (int64_t channel = 0; channel < 3; ++channel) {
    const Tensor xc = ag::slice(x, {0, 0, 0, channel}, {-1, -1, -1, 1});
    const Tensor wc = ag::slice(w, {0, 0, channel, 0}, {-1, -1, 1, -1});
    const Tensor yc = ag::slice(y, {0, 0, 0, channel * 2}, {-1, -1, -1, 2});
    expect_near_all(yc.to_vector<double>(), ag::conv2d(xc, wc, {1}, "SAME").to_vector<double>(),
                    1e-12);
  }
}

TEST(Conv, TransposeIsTheGradientByTheInput) {
  const Tensor x = random_tensor({2, 5, 6, 3}, ag::float64, 3);
  const Tensor w = random_tensor({3, 3, 3, 4}, ag::float64, 4);
  const Tensor dy = random_tensor({2, 3, 3, 4}, ag::float64, 5);
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::conv2d(x, w, {2}, "SAME");
  const Tensor dx = tape.gradient(ag::reduce_sum(y * dy), std::vector<Tensor>{x})[0];
  expect_near_all(ag::conv2d_transpose(dy, w, {2, 5, 6, 3}, {2}, "SAME").to_vector<double>(),
                  dx.to_vector<double>(), 1e-12);
}

// oneDNN's primitives and im2col on OpenBLAS compute the same, for every pass.
TEST(Conv, EnginesAgree) {
  if (!ag::ops::built_with_onednn()) GTEST_SKIP() << "this build has no oneDNN (AG_GEMM=openblas)";
  struct Case {
    Shape input, filter;
    ag::ops::ConvAttrs attrs;
  };
  auto attrs = [](std::vector<int64_t> strides, ag::Padding padding, std::string_view format,
                  std::vector<int64_t> dilations, int rank = 2) {
    return ag::ops::conv_attrs("conv", rank, strides, padding, format, dilations);
  };
  const std::vector<Case> cases = {
      {{2, 9, 8, 5}, {3, 3, 5, 7}, attrs({1}, "SAME", "NHWC", {1})},
      {{1, 4, 10, 9}, {3, 2, 2, 6}, attrs({2, 1}, "VALID", "NCHW", {1, 2})},
      {{1, 7, 7, 6}, {3, 3, 1, 12}, attrs({2}, "SAME", "NHWC", {1})},
      {{2, 11, 3}, {4, 3, 5}, attrs({3}, ag::Padding({{2, 1}}), "NWC", {1}, 1)},
      {{1, 2, 4, 5, 3}, {2, 2, 2, 2, 4}, attrs({1}, "SAME", "NCDHW", {1}, 3)},
      // LeNet-5's convolutions on a batch of 64: where oneDNN's blocked
      // kernel has narrower vectors than the machine (an AMD EPYC with
      // AVX-512), a backward pass runs on the caller's NHWC.
      {{64, 28, 28, 1}, {5, 5, 1, 6}, attrs({1}, "VALID", "NHWC", {1})},
      {{64, 12, 12, 6}, {5, 5, 6, 16}, attrs({1}, "VALID", "NHWC", {1})},
  };
  unsigned seed = 11;
  for (const Case& c : cases) {
    const auto g = ag::ops::conv_geometry("conv", c.attrs, c.input, c.filter);
    const auto x = random_tensor(c.input, ag::float32, seed++).to_vector<float>();
    const auto w = random_tensor(c.filter, ag::float32, seed++).to_vector<float>();
    const auto dy = random_tensor(g.output_shape(), ag::float32, seed++).to_vector<float>();
    auto compare = [&](auto pass_onednn, auto pass_im2col, size_t n, const std::string& what) {
      std::vector<float> a(n), b(n);
      pass_onednn(a.data());
      pass_im2col(b.data());
      for (size_t i = 0; i < n; ++i)
        ASSERT_NEAR(a[i], b[i], 1e-4 * (1 + std::abs(b[i])))
            << what << " of " << c.input.to_list_string() << " element " << i;
    };
    namespace onednn = ag::ops::conv_onednn;
    namespace im2col = ag::ops::conv_im2col;
    compare([&](float* y) { onednn::forward(g, x.data(), w.data(), y); },
            [&](float* y) { im2col::forward<float>(g, x.data(), w.data(), y); }, dy.size(),
            "forward");
    compare([&](float* dx) { onednn::backward_input(g, dy.data(), w.data(), dx); },
            [&](float* dx) { im2col::backward_input<float>(g, dy.data(), w.data(), dx); }, x.size(),
            "backward_input");
    compare([&](float* dw) { onednn::backward_filter(g, x.data(), dy.data(), dw); },
            [&](float* dw) { im2col::backward_filter<float>(g, x.data(), dy.data(), dw); },
            w.size(), "backward_filter");
  }
}

TEST(Conv, EmptyBatchAndChannels) {
  EXPECT_EQ(ag::conv2d(ag::zeros({0, 4, 4, 2}), ag::zeros({3, 3, 2, 3}), {1}, "SAME").shape(),
            (Shape{0, 4, 4, 3}));
  const Tensor y = ag::conv2d(ag::zeros({1, 4, 4, 0}), ag::zeros({3, 3, 0, 3}), {1}, "SAME");
  EXPECT_EQ(y.shape(), (Shape{1, 4, 4, 3}));
  EXPECT_EQ(ag::reduce_sum(ag::abs(y)).item<float>(), 0.0f);
}

TEST(Conv, Errors) {
  const Tensor image = ag::zeros({1, 5, 5, 4});
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::conv2d(image, ag::zeros({3, 3, 3, 2}), {1}, "SAME"); },
      "conv: the input [1,5,5,4] has 4 channels, which the filter [3,3,3,2]'s 3 input channels "
      "do not divide");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::conv2d(image, ag::zeros({3, 3, 2, 3}), {1}, "SAME"); },
      "the filter [3,3,2,3] has 3 output channels, which the 2 groups do not divide");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::conv2d(image, ag::zeros({7, 3, 4, 2}), {1}, "VALID"); },
      "spatial dim 0 of the input has 5 positions (5 padded), fewer than the kernel spans (7");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::conv2d(image, ag::zeros({3, 3, 4, 2}), {1}, "same"); },
      "conv2d: padding 'same' must be \"SAME\", \"VALID\" or (before, after) pairs");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::conv2d(image, ag::zeros({3, 3, 4, 2}), {1, 2, 3}, "SAME"); },
      "conv2d: strides [1,2,3] must have 1, 2 or 4 entries");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::conv2d(image, ag::zeros({3, 3, 4, 2}), {2, 1, 1, 1}, "SAME"); },
      "conv2d: strides [2,1,1,1] must be 1 at the batch and channel dims");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::conv2d(image, ag::zeros({3, 3, 4, 2}), {1}, "SAME", "NWHC"); },
      "conv2d: data_format 'NWHC' must be NHWC or NCHW for 2 spatial dims");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::conv2d(ag::zeros({5, 5, 4}), ag::zeros({3, 3, 4, 2}), {1}, "SAME"); },
      "conv: the input must have rank 4 (2 spatial dims), got [5,5,4]");
  expect_error<ag::InvalidArgumentError>(
      [&] {
        ag::conv2d(ag::ones({1, 5, 5, 4}, ag::int32), ag::ones({3, 3, 4, 2}, ag::int32), {1},
                   "SAME");
      },
      "conv: unsupported dtype int32 (float32 or float64)");
  expect_error<ag::InvalidArgumentError>(
      [&] {
        ag::conv2d_transpose(ag::zeros({1, 3, 3, 2}), ag::zeros({3, 3, 4, 2}), {1, 7, 7, 4}, {2},
                             "SAME");
      },
      "out_backprop has shape [1,3,3,2], but the convolution of an input of [1,7,7,4] by a "
      "filter of [3,3,4,2] gives [1,4,4,2]");
}

}  // namespace

namespace {

// A plan's convolution prepares its primitive once, with a constant filter
// (a captured tensor, as a loaded model's initializer) reordered to the
// primitive's layout then; each call gives the eager call's bits, on
// several threads at once too.
TEST(Conv, PreparedPlanStepMatchesEagerCalls) {
  const Tensor w = random_tensor({3, 3, 6, 8}, ag::float32, 31);
  auto with_constant_filter =
      ag::function([w](const Tensor& x) { return ag::conv2d(x, w, {2}, "SAME"); });
  auto with_filter_argument = ag::function(
      [](const Tensor& x, const Tensor& filter) { return ag::conv2d(x, filter, {2}, "SAME"); });
  for (unsigned seed : {1u, 2u}) {
    const Tensor x = random_tensor({2, 9, 7, 6}, ag::float32, seed);
    const std::vector<float> eager = ag::conv2d(x, w, {2}, "SAME").to_vector<float>();
    EXPECT_EQ(with_constant_filter(x).to_vector<float>(), eager) << "seed " << seed;
    EXPECT_EQ(with_filter_argument(x, w).to_vector<float>(), eager) << "seed " << seed;
  }
  const Tensor x = random_tensor({2, 9, 7, 6}, ag::float32, 5);
  const std::vector<float> eager = ag::conv2d(x, w, {2}, "SAME").to_vector<float>();
  std::vector<std::vector<float>> results(4);
  std::vector<std::thread> threads;
  for (auto& r : results)
    threads.emplace_back([&] { r = with_constant_filter(x).to_vector<float>(); });
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r, eager);
}

size_t threads_of_this_process() {
  return size_t(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                              std::filesystem::directory_iterator()));
}

// With one intra-op thread, a convolution prepared when its plan is built
// runs on the calling thread alone: oneDNN makes a primitive for OpenMP's
// thread count then (two here by default), and it would start a thread of its
// own. In a fresh process (the threadsafe death-test style runs the test
// binary again), so that no earlier test has started OpenMP's threads.
TEST(Conv, PreparedPlanStepRunsOnTheIntraOpThreadCount) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ag::set_intra_op_threads(1);
        const Tensor w = random_tensor({3, 3, 16, 16}, ag::float32, 3);
        const Tensor x = random_tensor({1, 48, 48, 16}, ag::float32, 4);
        const size_t before = threads_of_this_process();
        auto conv = ag::function([w](const Tensor& x) { return ag::conv2d(x, w, {1}, "SAME"); });
        for (int call = 0; call < 3; ++call) conv(x);
        std::exit(threads_of_this_process() == before ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
