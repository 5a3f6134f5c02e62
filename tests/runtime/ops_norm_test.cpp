// batch_norm, layer_norm, moments and fused_batch_norm: values against
// plain loops, float32 (oneDNN where built with it) against float64 (the
// loops), NaN, errors, and a plan step that makes its primitive once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <ag/ag.h>

#include "ops/gemm.h"
#include "ops/norm_kernels.h"
#include "ops_test_util.h"

namespace {

using ag::Shape;
using ag::Tensor;
using ag_test::expect_error;
using Tensors = std::vector<Tensor>;

// Uniform values in [lo, hi) as float64 (ag::constant would make them float32).
Tensor uniform(const Shape& shape, unsigned seed, double lo = -2, double hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor t = ag::empty(shape, ag::float64);
  double* data = t.mutable_data<double>();
  for (int64_t i = 0; i < shape.num_elements(); ++i) data[i] = u(rng);
  return t;
}

Tensor doubles(const std::vector<double>& values, const Shape& shape) {
  Tensor t = ag::empty(shape, ag::float64);
  std::copy(values.begin(), values.end(), t.mutable_data<double>());
  return t;
}

std::vector<double> as_doubles(const Tensor& t) {
  return ag::cast(t, ag::float64).to_vector<double>();
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << "element " << i;
}

// x as [outer, channels, inner] normalised per channel by the given vectors.
std::vector<double> batch_norm_reference(const std::vector<double>& x, int64_t outer,
                                         int64_t channels, int64_t inner,
                                         const std::vector<double>& mean,
                                         const std::vector<double>& variance,
                                         const std::vector<double>& offset,
                                         const std::vector<double>& scale, double epsilon) {
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        const size_t at = size_t((o * channels + c) * inner + i);
        y[at] = (x[at] - mean[size_t(c)]) / std::sqrt(variance[size_t(c)] + epsilon) *
                    scale[size_t(c)] +
                offset[size_t(c)];
      }
  return y;
}

// Each row of `length` normalised by its own mean and biased variance.
std::vector<double> layer_norm_reference(const std::vector<double>& x, int64_t length,
                                         const std::vector<double>& scale,
                                         const std::vector<double>& offset, double epsilon) {
  std::vector<double> y(x.size());
  for (size_t row = 0; row < x.size() / size_t(length); ++row) {
    double mean = 0, variance = 0;
    for (int64_t k = 0; k < length; ++k) mean += x[row * size_t(length) + size_t(k)];
    mean /= double(length);
    for (int64_t k = 0; k < length; ++k)
      variance += std::pow(x[row * size_t(length) + size_t(k)] - mean, 2);
    variance /= double(length);
    for (int64_t k = 0; k < length; ++k) {
      const size_t at = row * size_t(length) + size_t(k);
      y[at] = (x[at] - mean) / std::sqrt(variance + epsilon) * scale[size_t(k)] + offset[size_t(k)];
    }
  }
  return y;
}

struct BatchNormInputs {
  Tensor x, mean, variance, offset, scale;
};

BatchNormInputs batch_norm_inputs(const Shape& x, int64_t channels, unsigned seed) {
  return {uniform(x, seed), uniform({channels}, seed + 1), uniform({channels}, seed + 2, 0.1, 2),
          uniform({channels}, seed + 3), uniform({channels}, seed + 4)};
}

TEST(BatchNorm, ChannelsLastMatchesLoops) {
  const BatchNormInputs in = batch_norm_inputs({4, 3, 5}, 5, 1);
  for (ag::DType dtype : {ag::float64, ag::float32}) {
    auto as = [&](const Tensor& t) { return ag::cast(t, dtype); };
    const Tensor y = ag::batch_normalization(as(in.x), as(in.mean), as(in.variance), as(in.offset),
                                             as(in.scale), 0.01);
    EXPECT_EQ(y.dtype(), dtype);
    const std::vector<double> want = batch_norm_reference(
        as_doubles(as(in.x)), 12, 5, 1, as_doubles(as(in.mean)), as_doubles(as(in.variance)),
        as_doubles(as(in.offset)), as_doubles(as(in.scale)), 0.01);
    expect_near_all(as_doubles(y), want, dtype == ag::float64 ? 1e-12 : 1e-5);
  }
}

TEST(BatchNorm, ChannelsFirstMatchesLoops) {
  const BatchNormInputs in = batch_norm_inputs({2, 3, 4, 5}, 3, 11);
  for (ag::DType dtype : {ag::float64, ag::float32}) {
    auto as = [&](const Tensor& t) { return ag::cast(t, dtype); };
    const Tensor y = ag::fused_batch_norm(as(in.x), as(in.scale), as(in.offset), as(in.mean),
                                          as(in.variance), 0.001, "NCHW", false)
                         .y;
    const std::vector<double> want = batch_norm_reference(
        as_doubles(as(in.x)), 2, 3, 20, as_doubles(as(in.mean)), as_doubles(as(in.variance)),
        as_doubles(as(in.offset)), as_doubles(as(in.scale)), 0.001);
    expect_near_all(as_doubles(y), want, dtype == ag::float64 ? 1e-12 : 1e-5);
  }
}

// Parameters of [3, 1] against [2, 3, 4] are no channel's: TensorFlow's
// broadcasting formula, with offset and scale left out.
TEST(BatchNorm, BroadcastParametersFollowTheFormula) {
  const Tensor x = uniform({2, 3, 4}, 21), mean = uniform({3, 1}, 22),
               variance = uniform({3, 1}, 23, 0.5, 1);
  const std::vector<double> got =
      as_doubles(ag::batch_normalization(x, mean, variance, Tensor(), Tensor(), 0.1));
  const std::vector<double> xs = as_doubles(x), ms = as_doubles(mean), vs = as_doubles(variance);
  for (size_t i = 0; i < xs.size(); ++i) {
    const size_t row = (i / 4) % 3;
    EXPECT_NEAR(got[i], (xs[i] - ms[row]) / std::sqrt(vs[row] + 0.1), 1e-12) << i;
  }
}

TEST(FusedBatchNorm, TrainingUsesTheBatchStatistics) {
  const Tensor x = uniform({3, 2, 2, 4}, 31), scale = uniform({4}, 32), offset = uniform({4}, 33);
  const auto [y, mean, variance] = ag::fused_batch_norm(x, scale, offset, {}, {}, 0.001);
  const std::vector<double> xs = as_doubles(x);
  std::vector<double> means(4, 0), biased(4, 0);
  for (size_t i = 0; i < xs.size(); ++i) means[i % 4] += xs[i] / 12;
  for (size_t i = 0; i < xs.size(); ++i) biased[i % 4] += std::pow(xs[i] - means[i % 4], 2) / 12;
  expect_near_all(as_doubles(mean), means, 1e-12);
  std::vector<double> corrected = biased;
  for (double& v : corrected) v *= 12.0 / 11.0;
  expect_near_all(as_doubles(variance), corrected, 1e-12);
  expect_near_all(as_doubles(y),
                  batch_norm_reference(xs, 12, 4, 1, means, biased, as_doubles(offset),
                                       as_doubles(scale), 0.001),
                  1e-12);
}

TEST(Moments, MeanAndBiasedVariance) {
  const Tensor x = doubles({1, 2, 3, 4, 5, 9}, {2, 3});
  const auto [mean, variance] = ag::moments(x, {1});
  EXPECT_EQ(mean.shape(), Shape({2}));
  expect_near_all(as_doubles(mean), {2, 6}, 1e-7);
  expect_near_all(as_doubles(variance), {2.0 / 3, 14.0 / 3}, 1e-6);
  EXPECT_EQ(ag::moments(x, {0}, true).variance.shape(), Shape({1, 3}));
}

TEST(LayerNorm, MatchesLoops) {
  const Tensor x = uniform({2, 3, 4}, 41), scale = uniform({3, 4}, 42),
               offset = uniform({3, 4}, 43);
  for (ag::DType dtype : {ag::float64, ag::float32}) {
    auto as = [&](const Tensor& t) { return ag::cast(t, dtype); };
    const Tensor y = ag::layer_normalization(as(x), as(scale), as(offset), 1, 1e-5);
    const std::vector<double> want = layer_norm_reference(
        as_doubles(as(x)), 12, as_doubles(as(scale)), as_doubles(as(offset)), 1e-5);
    expect_near_all(as_doubles(y), want, dtype == ag::float64 ? 1e-12 : 1e-5);
  }
  // No gamma and beta: 1 and 0, over the last axis.
  const std::vector<double> plain = as_doubles(ag::layer_normalization(x));
  expect_near_all(plain, layer_norm_reference(as_doubles(x), 4, {1, 1, 1, 1}, {0, 0, 0, 0}, 0.001),
                  1e-12);
}

// The float32 kernels (oneDNN's primitives where the build has oneDNN)
// against the float64 loops, on shapes that oneDNN's vector kernels block.
TEST(Normalization, Float32AgreesWithFloat64) {
  const BatchNormInputs in = batch_norm_inputs({6, 5, 7, 19}, 19, 51);
  auto f32 = [](const Tensor& t) { return ag::cast(t, ag::float32); };
  auto batch_norm = [&](auto as) {
    return as_doubles(ag::batch_normalization(as(in.x), as(in.mean), as(in.variance), as(in.offset),
                                              as(in.scale), 1e-3));
  };
  expect_near_all(batch_norm(f32), batch_norm([](const Tensor& t) { return t; }), 1e-5);
  // Training: y, the statistics, and the gradients by x, scale and offset.
  const Tensor dy = uniform({6, 5, 7, 19}, 56);
  auto training = [&](auto as) {
    const Tensors inputs = {as(in.x), as(in.scale), as(in.offset)};
    ag::GradientTape tape;
    for (const Tensor& t : inputs) tape.watch(t);
    const auto [y, mean, variance] = ag::fused_batch_norm(inputs[0], inputs[1], inputs[2]);
    std::vector<double> all = as_doubles(y);
    for (const Tensor& t : {mean, variance}) {
      const std::vector<double> v = as_doubles(t);
      all.insert(all.end(), v.begin(), v.end());
    }
    for (const Tensor& g : tape.gradient(ag::reduce_sum(y * as(dy)), inputs)) {
      const std::vector<double> v = as_doubles(g);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  expect_near_all(training(f32), training([](const Tensor& t) { return t; }), 1e-4);
  const Tensor x = uniform({5, 3, 33}, 52), scale = uniform({3, 33}, 53),
               offset = uniform({3, 33}, 54);
  expect_near_all(as_doubles(ag::layer_normalization(f32(x), f32(scale), f32(offset), 1)),
                  as_doubles(ag::layer_normalization(x, scale, offset, 1)), 1e-5);
  // layer_norm's gradients by each input (layer_norm_grad for x).
  const Tensor w = uniform({5, 3, 33}, 55);
  auto gradients = [&](auto as) {
    const Tensors inputs = {as(x), as(scale), as(offset)};
    ag::GradientTape tape;
    for (const Tensor& t : inputs) tape.watch(t);
    const Tensor y = ag::layer_normalization(inputs[0], inputs[1], inputs[2], 1) * as(w);
    std::vector<double> all;
    for (const Tensor& g : tape.gradient(ag::reduce_sum(y), inputs)) {
      const std::vector<double> v = as_doubles(g);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  expect_near_all(gradients(f32), gradients([](const Tensor& t) { return t; }), 2e-5);
}

TEST(Normalization, NanReachesOnlyItsChannelOrRow) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (ag::DType dtype : {ag::float64, ag::float32}) {
    Tensor x = uniform({2, 3}, 61);
    std::vector<double> xs = as_doubles(x);
    xs[4] = nan;
    x = ag::cast(doubles(xs, {2, 3}), dtype);
    const Tensor ones = ag::ones({3}, dtype), zeros = ag::zeros({3}, dtype);
    const std::vector<double> bn =
        as_doubles(ag::batch_normalization(x, zeros, ones, zeros, ones, 0));
    for (size_t i = 0; i < bn.size(); ++i) EXPECT_EQ(std::isnan(bn[i]), i == 4) << i;
    const std::vector<double> ln = as_doubles(ag::layer_normalization(x, ones, zeros));
    for (size_t i = 0; i < ln.size(); ++i) EXPECT_EQ(std::isnan(ln[i]), i >= 3) << i;
  }
}

TEST(Normalization, Errors) {
  const Tensor x = ag::ones({2, 3, 4});
  // Parameters that are no channel's broadcast as TensorFlow's formula does.
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::batch_normalization(x, ag::ones({4}), ag::ones({4}), ag::ones({3}), {}, 0.1); },
      "Incompatible shapes: [3] vs. [4]");
  expect_error<ag::InvalidArgumentError>(
      [&] {
        ag::fused_batch_norm(x, ag::ones({4}), ag::ones({3}), ag::ones({4}), ag::ones({4}), 0.1,
                             "NWC", false);
      },
      "batch_norm: offset has shape [3], but x [2,3,4] has 4 channels (axis 2); each parameter "
      "must be [4]");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::fused_batch_norm(x, ag::ones({4}), ag::ones({4}), {}, {}, 0.1, "NCW"); },
      "fused_batch_norm: scale has shape [4], but x [2,3,4] has 3 channels (axis 1); each "
      "parameter must be [3]");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::fused_batch_norm(x, ag::ones({4}), ag::ones({4}), {}, {}, 0.1, "HWCN"); },
      "fused_batch_norm: data_format \"HWCN\" has its channels neither second nor last");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::fused_batch_norm(x, ag::ones({4}), ag::ones({4}), {}, {}, 0.1, "NWC", false); },
      "fused_batch_norm: inference (is_training=false) needs the mean and the variance");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::layer_normalization(x, {}, {}, 3); },
      "layer_normalization: begin_axis 3 is out of range for an input of shape [2,3,4]");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::layer_normalization(x, ag::ones({3, 4}), ag::ones({4}), 1); },
      "layer_norm: offset has shape [4], but x [2,3,4] is normalised over its axes from 1 on, "
      "[3,4]");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::layer_normalization(ag::ones({2, 3}, ag::int32), ag::ones({3}, ag::int32), {}); },
      "layer_norm: x has unsupported dtype int32 (float32 or float64)");
  expect_error<ag::InvalidArgumentError>(
      [&] { ag::layer_normalization(x, ag::ones({4}, ag::float64), {}); },
      "layer_norm: scale is float64, x float32; give them one dtype");
}

// A traced function's plan makes each float32 primitive once, when it is
// built; its calls (from several threads too) give the eager values.
TEST(Normalization, PlanStepPreparesItsPrimitiveOnce) {
  if (!ag::ops::built_with_onednn()) GTEST_SKIP() << "a build without oneDNN";
  const BatchNormInputs in = batch_norm_inputs({3, 4, 5, 6}, 6, 71);
  auto f32 = [](const Tensor& t) { return ag::cast(t, ag::float32); };
  const Tensor mean = f32(in.mean), variance = f32(in.variance), offset = f32(in.offset),
               scale = f32(in.scale), gamma = f32(uniform({5, 6}, 72));
  auto f = ag::function([=](const Tensor& x) {
    const Tensor y = ag::batch_normalization(x, mean, variance, offset, scale, 1e-3);
    return ag::layer_normalization(y, gamma, {}, 2);
  });
  const Tensor x = f32(in.x);
  const std::vector<float> eager =
      ag::layer_normalization(ag::batch_normalization(x, mean, variance, offset, scale, 1e-3),
                              gamma, {}, 2)
          .to_vector<float>();
  const int64_t before = ag::ops::norm_onednn::primitives_made();
  for (int call = 0; call < 3; ++call) EXPECT_EQ(f(x).to_vector<float>(), eager) << call;
  EXPECT_EQ(ag::ops::norm_onednn::primitives_made() - before, 2);
  std::vector<std::vector<float>> results(3);
  std::vector<std::thread> threads;
  for (auto& r : results) threads.emplace_back([&] { r = f(x).to_vector<float>(); });
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_EQ(r, eager);
  EXPECT_EQ(ag::ops::norm_onednn::primitives_made() - before, 2);
}

}  // namespace
