// ag::layers: BatchNormalization (training and inference, moving
// statistics), LayerNormalization and Embedding against references computed
// by plain loops, eager against traced, gradients against finite
// differences, and their errors.
#include <gtest/gtest.h>

#include <cmath>
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

struct ChannelStats {
  Vec mean, variance;  // the biased variance
};

// Per channel of the last axis of `x` (rows of `channels` values).
ChannelStats channel_stats(const Vec& x, size_t channels) {
  ChannelStats s{Vec(channels, 0.0), Vec(channels, 0.0)};
  const double rows = double(x.size() / channels);
  for (size_t i = 0; i < x.size(); ++i) s.mean[i % channels] += x[i] / rows;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = x[i] - s.mean[i % channels];
    s.variance[i % channels] += d * d / rows;
  }
  return s;
}

Vec normalize(const Vec& x, const Vec& mean, const Vec& variance, const Vec& gamma, const Vec& beta,
              double epsilon) {
  const size_t c = mean.size();
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = (x[i] - mean[i % c]) / std::sqrt(variance[i % c] + epsilon) * gamma[i % c] + beta[i % c];
  return y;
}

TEST(LayersBatchNormalization, KerasDefaultsAndVariables) {
  L::BatchNormalization bn;
  bn(wavy({4, 3}));
  std::vector<std::string> paths;
  for (const auto& [path, v] : bn.named_variables()) paths.push_back(path.substr(path.find('/')));
  EXPECT_EQ(paths,
            (std::vector<std::string>{"/gamma", "/beta", "/moving_mean", "/moving_variance"}));
  EXPECT_EQ(bn.trainable_variables().size(), 2u);
  ASSERT_EQ(bn.non_trainable_variables().size(), 2u);
  EXPECT_EQ(as_doubles(bn.non_trainable_variables()[0].read()), Vec(3, 0.0));
  EXPECT_EQ(as_doubles(bn.non_trainable_variables()[1].read()), Vec(3, 1.0));
  EXPECT_EQ(as_doubles(bn.trainable_variables()[0].read()), Vec(3, 1.0)) << "gamma: ones";
}

TEST(LayersBatchNormalization, TrainingUsesTheBatchAndMovesTheStatistics) {
  L::BatchNormalization bn({.momentum = 0.9,
                            .epsilon = 1e-3,
                            .beta_initializer = {"uniform", 1},
                            .gamma_initializer = {"uniform", 2}});
  ag::Tensor x = wavy({2, 3, 2, 4}, 2.0, 0.5);
  ag::Tensor inference_before = bn(x);  // builds; moving stats 0 and 1
  Vec gamma = as_doubles(bn.trainable_variables()[0].read());
  Vec beta = as_doubles(bn.trainable_variables()[1].read());
  expect_near(as_doubles(inference_before),
              normalize(as_doubles(x), Vec(4, 0.0), Vec(4, 1.0), gamma, beta, 1e-3), 1e-5,
              "inference with the initial moving statistics");
  EXPECT_EQ(as_doubles(bn.non_trainable_variables()[0].read()), Vec(4, 0.0))
      << "inference leaves the moving mean";

  ChannelStats s = channel_stats(as_doubles(x), 4);
  ag::Tensor y = bn(x, /*training=*/true);
  expect_near(as_doubles(y), normalize(as_doubles(x), s.mean, s.variance, gamma, beta, 1e-3), 1e-5,
              "training: the batch's statistics");
  Vec moving_mean(4), moving_variance(4);
  for (size_t c = 0; c < 4; ++c) {
    moving_mean[c] = 0.0 * 0.9 + s.mean[c] * 0.1;
    moving_variance[c] = 1.0 * 0.9 + s.variance[c] * 0.1;
  }
  expect_near(as_doubles(bn.non_trainable_variables()[0].read()), moving_mean, 1e-6, "moving_mean");
  expect_near(as_doubles(bn.non_trainable_variables()[1].read()), moving_variance, 1e-6,
              "moving_variance");
  expect_near(as_doubles(bn(x)),
              normalize(as_doubles(x), moving_mean, moving_variance, gamma, beta, 1e-3), 1e-5,
              "inference: the moving statistics");
}

TEST(LayersBatchNormalization, TracedTrainingStepsMatchEager) {
  auto make = [] {
    return L::BatchNormalization({.momentum = 0.8, .gamma_initializer = {"uniform", 3}});
  };
  L::BatchNormalization eager = make(), traced = make();
  auto f = ag::function([&](ag::Tensor x, bool training) { return traced(x, training); });
  for (int step = 0; step < 3; ++step) {
    ag::Tensor x = wavy({5, 3}, 1.0 + step, 0.2 * step);
    expect_same(f(x, true), eager(x, true), "training step " + std::to_string(step));
    expect_same(traced.non_trainable_variables()[1].read(),
                eager.non_trainable_variables()[1].read(), "moving_variance");
  }
  ag::Tensor x = wavy({5, 3});
  expect_same(f(x, false), eager(x, false), "inference");
  EXPECT_EQ(f.tracing_count(), 2) << "one trace per value of training";
}

TEST(LayersBatchNormalization, ChannelsFirstAxisOne) {
  L::BatchNormalization last, first({.axis = 1});
  ag::Tensor x = wavy({2, 3, 2, 2});  // NHWC with 2 channels
  ag::Tensor y_first = first(ag::transpose(x, {0, 3, 1, 2}), true);
  EXPECT_EQ(first.variables()[0].shape(), ag::Shape({2}));
  expect_near(as_doubles(ag::transpose(y_first, {0, 2, 3, 1})), as_doubles(last(x, true)), 1e-6,
              "axis 1");
  EXPECT_CONTAINS(error_of([] { L::BatchNormalization({.axis = 3})(ag::ones({2, 3})); }),
                  "its axis 3 is outside an input of shape (2, 3)");
}

TEST(LayersBatchNormalization, GradientsMatchFiniteDifferencesInTrainingAndInference) {
  L::BatchNormalization bn(
      {.beta_initializer = {"uniform", 5}, .gamma_initializer = {"uniform", 6}});
  layers_test::check_gradients(bn, wavy({4, 2}, 1.0, 0.3, ag::float64), /*training=*/true, 1e-5);
  layers_test::check_gradients(bn, wavy({4, 2}, 1.0, 0.9, ag::float64), /*training=*/false);
}

TEST(LayersBatchNormalization, ChannelCountFixedByTheBuild) {
  L::BatchNormalization bn;
  bn(ag::ones({2, 3}));
  std::string message = error_of([&] { bn(ag::ones({2, 4})); });
  EXPECT_CONTAINS(message, "(BatchNormalization) called at layers_norm_test.cpp:");
  EXPECT_CONTAINS(message, "built for inputs with 3 at axis -1");
}

TEST(LayersLayerNormalization, NormalizesEachRowOverTheLastAxis) {
  L::LayerNormalization ln(
      {.beta_initializer = {"uniform", 1}, .gamma_initializer = {"uniform", 2}});
  ag::Tensor x = wavy({3, 2, 5}, 3.0);
  ag::Tensor y = ln(x);
  Vec gamma = as_doubles(ln.variables()[0].read()), beta = as_doubles(ln.variables()[1].read());
  Vec xs = as_doubles(x), expected(xs.size());
  for (size_t row = 0; row < 6; ++row) {
    double mean = 0, var = 0;
    for (size_t i = 0; i < 5; ++i) mean += xs[row * 5 + i] / 5;
    for (size_t i = 0; i < 5; ++i) var += (xs[row * 5 + i] - mean) * (xs[row * 5 + i] - mean) / 5;
    for (size_t i = 0; i < 5; ++i)
      expected[row * 5 + i] = (xs[row * 5 + i] - mean) / std::sqrt(var + 1e-3) * gamma[i] + beta[i];
  }
  expect_near(as_doubles(y), expected, 1e-5, "LayerNormalization");
  auto f = ag::function([&](ag::Tensor in) { return ln(in); });
  expect_same(f(x), y, "traced vs eager");
  L::LayerNormalization ln64({.gamma_initializer = {"uniform", 3}});
  layers_test::check_gradients(ln64, wavy({2, 4}, 1.0, 0.1, ag::float64), false, 1e-5);
  EXPECT_CONTAINS(error_of([] { L::LayerNormalization({.axis = 1})(ag::ones({2, 3, 4})); }),
                  "only the last axis (-1) is");
}

TEST(LayersEmbedding, LooksUpRowsOfItsTable) {
  L::Embedding embedding(10, 3);
  ag::Tensor ids = ag::constant(std::vector<int32_t>{4, 0, 9, 4, 2, 7}, {2, 3});
  ag::Tensor y = embedding(ids);
  ASSERT_EQ(y.shape(), ag::Shape({2, 3, 3}));
  ASSERT_EQ(embedding.variables().size(), 1u);
  ag::Variable table = embedding.variables()[0];
  EXPECT_EQ(table.shape(), ag::Shape({10, 3}));
  EXPECT_EQ(table.dtype(), ag::float32);
  Vec t = as_doubles(table.read()), expected;
  double max_abs = 0;
  for (double v : t) max_abs = std::max(max_abs, std::abs(v));
  EXPECT_LE(max_abs, 0.05) << "RandomUniform(-0.05, 0.05)";
  EXPECT_GT(max_abs, 0.0);
  for (int32_t id : {4, 0, 9, 4, 2, 7})
    for (size_t k = 0; k < 3; ++k) expected.push_back(t[size_t(id) * 3 + k]);
  EXPECT_EQ(as_doubles(y), expected);
  auto f = ag::function([&](ag::Tensor in) { return embedding(in); });
  expect_same(f(ids), y, "traced vs eager");
  // The table's gradient: each looked-up row gets the output's gradient once per lookup.
  ag::GradientTape tape;
  ag::Tensor loss = ag::reduce_sum(embedding(ids));
  Vec grad = as_doubles(tape.gradient(loss, std::vector{table})[0]);
  Vec counts = {1, 0, 1, 0, 2, 0, 0, 1, 0, 1};
  for (size_t row = 0; row < 10; ++row)
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(grad[row * 3 + k], counts[row]) << "row " << row;
  EXPECT_CONTAINS(error_of([&] { embedding(ag::constant({true, false})); }),
                  "Embedding takes integer indices");
}

}  // namespace
