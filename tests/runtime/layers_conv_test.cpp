// ag::layers: Conv2D, Conv1D, MaxPool2D, AveragePooling2D and
// GlobalAveragePooling2D against references computed by plain loops, eager
// against traced, gradients against finite differences, and their errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"
#include "layers_test_util.h"

namespace {

using ag_test::error_of;
using layers_test::as_doubles;
using layers_test::expect_near;
using layers_test::expect_same;
using layers_test::Vec;
using layers_test::wavy;
namespace L = ag::layers;

// One spatial dim's output size and leading padding, as TensorFlow's.
struct Extent {
  int64_t out, pad_before;
};
Extent extent(int64_t in, int64_t window, int64_t stride, int64_t dilation, bool same) {
  const int64_t span = (window - 1) * dilation + 1;
  if (!same) return {(in - span) / stride + 1, 0};
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>((out - 1) * stride + span - in, 0);
  return {out, total / 2};
}

struct Conv {
  int64_t n, h, w, c, kh, kw, f, stride_h, stride_w, dilation;
  bool same;
};

// NHWC input by an HWIO kernel, plus bias, by loops.
Vec conv_reference(const Conv& p, const Vec& x, const Vec& k, const Vec& bias, int64_t* out_h,
                   int64_t* out_w) {
  Extent eh = extent(p.h, p.kh, p.stride_h, p.dilation, p.same);
  Extent ew = extent(p.w, p.kw, p.stride_w, p.dilation, p.same);
  *out_h = eh.out;
  *out_w = ew.out;
  Vec out(static_cast<size_t>(p.n * eh.out * ew.out * p.f));
  for (int64_t b = 0; b < p.n; ++b)
    for (int64_t oy = 0; oy < eh.out; ++oy)
      for (int64_t ox = 0; ox < ew.out; ++ox)
        for (int64_t f = 0; f < p.f; ++f) {
          double sum = bias[size_t(f)];
          for (int64_t ky = 0; ky < p.kh; ++ky)
            for (int64_t kx = 0; kx < p.kw; ++kx) {
              int64_t iy = oy * p.stride_h + ky * p.dilation - eh.pad_before;
              int64_t ix = ox * p.stride_w + kx * p.dilation - ew.pad_before;
              if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w) continue;
              for (int64_t c = 0; c < p.c; ++c)
                sum += x[size_t(((b * p.h + iy) * p.w + ix) * p.c + c)] *
                       k[size_t(((ky * p.kw + kx) * p.c + c) * p.f + f)];
            }
          out[size_t(((b * eh.out + oy) * ew.out + ox) * p.f + f)] = sum;
        }
  return out;
}

void check_conv2d(const Conv& p) {
  L::Conv2D conv(p.f, {p.kh, p.kw},
                 {.strides = {p.stride_h, p.stride_w},
                  .padding = p.same ? "same" : "valid",
                  .dilation_rate = p.dilation,
                  .bias_initializer = {"uniform", 4}});
  ag::Tensor x = wavy({p.n, p.h, p.w, p.c});
  ag::Tensor y = conv(x);
  ASSERT_EQ(conv.variables().size(), 2u);
  EXPECT_EQ(conv.variables()[0].shape(), ag::Shape({p.kh, p.kw, p.c, p.f}));
  int64_t oh = 0, ow = 0;
  Vec expected = conv_reference(p, as_doubles(x), as_doubles(conv.variables()[0].read()),
                                as_doubles(conv.variables()[1].read()), &oh, &ow);
  ASSERT_EQ(y.shape(), ag::Shape({p.n, oh, ow, p.f}));
  expect_near(as_doubles(y), expected, 1e-5, "Conv2D");
  auto f = ag::function([&](ag::Tensor in) { return conv(in); });
  expect_same(f(x), y, "traced vs eager Conv2D");
}

TEST(LayersConv2D, ValidAndSamePaddingStridesAndDilationsMatchLoops) {
  check_conv2d({2, 6, 5, 3, 3, 3, 4, 1, 1, 1, false});
  check_conv2d({1, 7, 6, 2, 3, 2, 3, 2, 1, 1, true});
  check_conv2d({1, 8, 8, 2, 3, 3, 2, 1, 1, 2, false});
  check_conv2d({1, 5, 7, 1, 2, 2, 5, 2, 3, 1, true});
}

TEST(LayersConv2D, ChannelsFirstMatchesChannelsLastTransposed) {
  L::Conv2D last(3, 2, {.kernel_initializer = {"glorot_uniform", 6}});
  L::Conv2D first(3, 2,
                  {.data_format = "channels_first", .kernel_initializer = {"glorot_uniform", 6}});
  ag::Tensor x = wavy({2, 4, 5, 3});
  ag::Tensor y_first = first(ag::transpose(x, {0, 3, 1, 2}));
  EXPECT_EQ(first.variables()[0].shape(), ag::Shape({2, 2, 3, 3}));
  expect_near(as_doubles(ag::transpose(y_first, {0, 2, 3, 1})), as_doubles(last(x)), 1e-6,
              "channels_first");
}

TEST(LayersConv2D, GradientsMatchFiniteDifferences) {
  L::Conv2D conv(2, 2,
                 {.padding = "same", .activation = "tanh", .bias_initializer = {"uniform", 1}});
  layers_test::check_gradients(conv, wavy({1, 3, 4, 2}, 1.0, 0.7, ag::float64));
}

TEST(LayersConv2D, ErrorsSayWhatWhereAndWhatToDo) {
  L::Conv2D conv(4, 3);
  std::string rank = error_of([&] { conv(ag::ones({5, 5, 3})); });
  EXPECT_CONTAINS(rank, "(Conv2D) called at layers_conv_test.cpp:");
  EXPECT_CONTAINS(rank, "expected an input of rank 4, but got one of shape (5, 5, 3)");
  EXPECT_CONTAINS(rank, "ag::expand_dims");
  conv(ag::ones({1, 5, 5, 3}));
  std::string channels = error_of([&] { conv(ag::ones({1, 5, 5, 4})); });
  EXPECT_CONTAINS(channels,
                  "its weights were built for inputs with 3 at axis -1, but got an "
                  "input of shape (1, 5, 5, 4)");
  EXPECT_CONTAINS(error_of([] { L::Conv2D(4, 3, {.padding = "full"}); }),
                  "padding is 'full'; expected 'valid' or 'same'");
  EXPECT_CONTAINS(error_of([] { L::Conv2D(4, 3, {.data_format = "NHWC"}); }),
                  "expected 'channels_last' or 'channels_first'");
  // Channels unknown while tracing: the weights cannot be made.
  L::Conv2D unknown(2, 1);
  auto f = ag::function(
      [&](ag::Tensor in) { return unknown(in); },
      {.input_signature = std::vector{ag::TensorSpec({1, 4, 4, ag::kUnknownDim}, ag::float32)}});
  EXPECT_CONTAINS(error_of([&] { f(ag::ones({1, 4, 4, 2})); }),
                  "the input's axis -1 is unknown (shape (1, 4, 4, None))");
}

TEST(LayersConv1D, MatchesConv2DOnARowOfHeightOne) {
  L::Conv1D conv1(3, 2, {.strides = 2, .padding = "same", .kernel_initializer = {"he_uniform", 2}});
  ag::Tensor x = wavy({2, 7, 4});
  ag::Tensor y = conv1(x);
  EXPECT_EQ(conv1.variables()[0].shape(), ag::Shape({2, 4, 3}));
  Conv p{2, 1, 7, 4, 1, 2, 3, 1, 2, 1, true};
  int64_t oh = 0, ow = 0;
  Vec expected = conv_reference(p, as_doubles(x), as_doubles(conv1.variables()[0].read()),
                                as_doubles(conv1.variables()[1].read()), &oh, &ow);
  ASSERT_EQ(y.shape(), ag::Shape({2, ow, 3}));
  expect_near(as_doubles(y), expected, 1e-5, "Conv1D");
  auto f = ag::function([&](ag::Tensor in) { return conv1(in); });
  expect_same(f(x), y, "traced vs eager Conv1D");
  L::Conv1D conv64(2, 2, {.dilation_rate = 2, .bias_initializer = {"uniform", 3}});
  layers_test::check_gradients(conv64, wavy({1, 5, 2}, 1.0, 0.5, ag::float64));
}

// Max or mean over each window of an NHWC input; a mean counts only the
// positions inside the input.
Vec pool_reference(const Vec& x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t ph, int64_t pw,
                   int64_t sh, int64_t sw, bool same, bool average, int64_t* out_h,
                   int64_t* out_w) {
  Extent eh = extent(h, ph, sh, 1, same), ew = extent(w, pw, sw, 1, same);
  *out_h = eh.out;
  *out_w = ew.out;
  Vec out;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t oy = 0; oy < eh.out; ++oy)
      for (int64_t ox = 0; ox < ew.out; ++ox)
        for (int64_t ch = 0; ch < c; ++ch) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int count = 0;
          for (int64_t ky = 0; ky < ph; ++ky)
            for (int64_t kx = 0; kx < pw; ++kx) {
              int64_t iy = oy * sh + ky - eh.pad_before, ix = ox * sw + kx - ew.pad_before;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              double v = x[size_t(((b * h + iy) * w + ix) * c + ch)];
              best = std::max(best, v);
              sum += v;
              ++count;
            }
          out.push_back(average ? sum / count : best);
        }
  return out;
}

TEST(LayersPooling, MaxAndAverageMatchLoops) {
  ag::Tensor x = wavy({2, 5, 6, 3});
  struct Case {
    int64_t ph, pw, sh, sw;
    bool same;
  };
  for (Case k : {Case{2, 2, 2, 2, false}, Case{3, 2, 1, 2, true}, Case{2, 3, 2, 1, false}}) {
    for (bool average : {false, true}) {
      L::PoolOptions options{.strides = L::Dims2(k.sh, k.sw), .padding = k.same ? "same" : "valid"};
      ag::Tensor y = average ? L::AveragePooling2D({k.ph, k.pw}, options)(x)
                             : L::MaxPool2D({k.ph, k.pw}, options)(x);
      int64_t oh = 0, ow = 0;
      Vec expected = pool_reference(as_doubles(x), 2, 5, 6, 3, k.ph, k.pw, k.sh, k.sw, k.same,
                                    average, &oh, &ow);
      ASSERT_EQ(y.shape(), ag::Shape({2, oh, ow, 3}));
      expect_near(as_doubles(y), expected, 1e-6, average ? "AveragePooling2D" : "MaxPool2D");
    }
  }
}

TEST(LayersPooling, DefaultsArePoolSizeTwoAndStridesOfThePoolSize) {
  L::MaxPool2D pool;
  EXPECT_TRUE(pool.variables().empty());
  ag::Tensor x = wavy({1, 4, 6, 1});
  ag::Tensor y = pool(x);
  int64_t oh = 0, ow = 0;
  ASSERT_EQ(y.shape(), ag::Shape({1, 2, 3, 1}));
  expect_near(as_doubles(y),
              pool_reference(as_doubles(x), 1, 4, 6, 1, 2, 2, 2, 2, false, false, &oh, &ow), 1e-6,
              "MaxPool2D()");
  auto f = ag::function([&](ag::Tensor in) { return pool(in); });
  expect_same(f(x), y, "traced vs eager MaxPool2D");
  L::AveragePooling2D average(3, {.strides = L::Dims2(1), .padding = "same"});
  auto g = ag::function([&](ag::Tensor in) { return average(in); });
  expect_same(g(x), average(x), "traced vs eager AveragePooling2D");
  EXPECT_CONTAINS(error_of([&] { pool(ag::ones({4, 6, 1})); }),
                  "(MaxPool2D) called at layers_conv_test.cpp:");
}

TEST(LayersPooling, GradientsMatchFiniteDifferences) {
  L::MaxPool2D max_pool(2, {.strides = L::Dims2(1)});
  layers_test::check_gradients(max_pool, wavy({1, 3, 3, 2}, 1.0, 0.1, ag::float64));
  L::AveragePooling2D avg_pool(2, {.padding = "same"});
  layers_test::check_gradients(avg_pool, wavy({1, 3, 3, 2}, 1.0, 0.2, ag::float64));
}

TEST(LayersGlobalAveragePooling2D, IsTheMeanOverHeightAndWidth) {
  ag::Tensor x = wavy({2, 3, 4, 5});
  Vec xs = as_doubles(x), expected(10, 0.0);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t p = 0; p < 12; ++p)
      for (int64_t c = 0; c < 5; ++c)
        expected[size_t(b * 5 + c)] += xs[size_t((b * 12 + p) * 5 + c)] / 12;
  L::GlobalAveragePooling2D gap;
  ag::Tensor y = gap(x);
  ASSERT_EQ(y.shape(), ag::Shape({2, 5}));
  expect_near(as_doubles(y), expected, 1e-6, "GlobalAveragePooling2D");
  L::GlobalAveragePooling2D keep({.keepdims = true});
  EXPECT_EQ(keep(x).shape(), ag::Shape({2, 1, 1, 5}));
  L::GlobalAveragePooling2D first({.data_format = "channels_first"});
  expect_near(as_doubles(first(ag::transpose(x, {0, 3, 1, 2}))), expected, 1e-6, "channels_first");
  auto f = ag::function([&](ag::Tensor in) { return gap(in); });
  expect_same(f(x), y, "traced vs eager");
  layers_test::check_gradients(gap, wavy({1, 2, 2, 3}, 1.0, 0.4, ag::float64));
}

}  // namespace
