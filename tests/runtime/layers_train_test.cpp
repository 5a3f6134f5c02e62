// Training ag::layers: a Sequential of Conv2D, MaxPool2D, Flatten and Dense
// trained with SGD and Adam eagerly and in a traced train step gives the same
// losses; Keras's loss classes and metrics against references computed by
// plain loops.
#include <gtest/gtest.h>

#include <algorithm>
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

L::Sequential conv_net() {
  L::Sequential model;
  model.add(L::Conv2D(4, 3, {.activation = "relu", .kernel_initializer = {"glorot_uniform", 1}}));
  model.add(L::MaxPool2D());
  model.add(L::Flatten());
  model.add(L::Dense(3, {.kernel_initializer = {"glorot_uniform", 2}}));
  return model;
}

ag::Tensor train_step(L::Sequential& model, ag::optimizers::Optimizer& optimizer,
                      const ag::Tensor& x, const ag::Tensor& y) {
  ag::losses::SparseCategoricalCrossentropy loss_fn(/*from_logits=*/true);
  ag::GradientTape tape;
  ag::Tensor loss = loss_fn(y, model(x, /*training=*/true));
  std::vector<ag::Variable> vars = model.trainable_variables();
  optimizer.apply_gradients(tape.gradient(loss, vars), vars);
  return loss;
}

template <class Optimizer, class Options>
void check_training(Options options) {
  ag::Tensor x = wavy({4, 8, 8, 2}, 1.0, 0.1);
  ag::Tensor y = ag::constant(std::vector<int32_t>{0, 2, 1, 2}, {4});
  L::Sequential eager_model = conv_net(), traced_model = conv_net();
  Optimizer eager_opt(options), traced_opt(options);
  auto step = ag::function(
      [&](ag::Tensor images, ag::Tensor labels) {
        return train_step(traced_model, traced_opt, images, labels);
      },
      {.name = "train_step"});
  std::vector<double> losses;
  for (int i = 0; i < 5; ++i) {
    ag::Tensor eager_loss = train_step(eager_model, eager_opt, x, y);
    ag::Tensor traced_loss = step(x, y);  // the first call builds the model in the trace
    expect_same(traced_loss, eager_loss, "loss of step " + std::to_string(i + 1));
    losses.push_back(eager_loss.item<float>());
  }
  EXPECT_EQ(step.tracing_count(), 1);
  EXPECT_LT(losses.back(), losses.front()) << "training lowers the loss";
  auto eager_vars = eager_model.variables(), traced_vars = traced_model.variables();
  ASSERT_EQ(eager_vars.size(), 4u);
  ASSERT_EQ(traced_vars.size(), 4u);
  for (size_t i = 0; i < eager_vars.size(); ++i)
    expect_same(traced_vars[i].read(), eager_vars[i].read(), eager_vars[i].name());
  EXPECT_EQ(eager_vars[0].shape(), ag::Shape({3, 3, 2, 4}));
  EXPECT_EQ(eager_vars[2].shape(), ag::Shape({36, 3})) << "[(8 - 2) / 2]^2 * 4 features";
}

TEST(LayersTraining, ConvNetWithSgdGivesTheSameLossesEagerAndTraced) {
  check_training<ag::optimizers::SGD>(ag::optimizers::SGDOptions{.learning_rate = 0.1});
}

TEST(LayersTraining, ConvNetWithAdamGivesTheSameLossesEagerAndTraced) {
  check_training<ag::optimizers::Adam>(ag::optimizers::AdamOptions{.learning_rate = 0.01});
}

TEST(LayersTraining, VariablePathsOfASequentialFollowKeras) {
  L::Sequential model = conv_net();
  model(wavy({1, 8, 8, 2}));
  std::vector<std::string> paths;
  for (const auto& [path, v] : model.named_variables()) paths.push_back(path);
  ASSERT_EQ(paths.size(), 4u);
  const std::string& seq = model.name();
  EXPECT_EQ(seq.substr(0, 10), "sequential");
  const std::string conv = model.layers()[0]->name(), dense = model.layers()[3]->name();
  EXPECT_EQ(conv.substr(0, 6), "conv2d");
  EXPECT_EQ(paths[0], seq + "/" + conv + "/kernel");
  EXPECT_EQ(paths[1], seq + "/" + conv + "/bias");
  EXPECT_EQ(paths[2], seq + "/" + dense + "/kernel");
  EXPECT_EQ(model.layers()[1]->name().substr(0, 13), "max_pooling2d");
}

TEST(LayersLosses, SparseCategoricalCrossentropyIsTheBatchMean) {
  Vec logits = {1.0, 2.0, 0.5, -1.0, 0.0, 3.0};
  std::vector<int32_t> labels = {1, 2};
  double expected = 0;
  for (size_t r = 0; r < 2; ++r) {
    double sum = 0;
    for (size_t k = 0; k < 3; ++k) sum += std::exp(logits[r * 3 + k]);
    expected += -(logits[r * 3 + size_t(labels[r])] - std::log(sum)) / 2;
  }
  ag::Tensor z = ag::constant(std::vector<float>(logits.begin(), logits.end()), {2, 3});
  ag::Tensor y = ag::constant(labels, {2});
  ag::losses::SparseCategoricalCrossentropy from_logits(true), from_probs;
  EXPECT_NEAR(from_logits(y, z).item<float>(), expected, 1e-6);
  EXPECT_NEAR(from_probs(y, ag::softmax(z)).item<float>(), expected, 1e-5);
  EXPECT_NEAR(from_logits(ag::constant(labels, {2, 1}), z).item<float>(), expected, 1e-6)
      << "labels of shape [batch, 1]";
  EXPECT_EQ(from_logits(y, z).shape(), ag::Shape({}));
}

TEST(LayersLosses, MeanSquaredErrorIsTheMeanOverEverything) {
  ag::Tensor a = wavy({3, 4}), b = wavy({3, 4}, 0.5, 1.0);
  Vec av = as_doubles(a), bv = as_doubles(b);
  double expected = 0;
  for (size_t i = 0; i < av.size(); ++i) expected += (av[i] - bv[i]) * (av[i] - bv[i]) / 12;
  EXPECT_NEAR(ag::losses::MeanSquaredError()(a, b).item<float>(), expected, 1e-6);
}

TEST(LayersMetrics, AccuracyAccumulatesAndResets) {
  ag::metrics::Accuracy accuracy;
  EXPECT_EQ(accuracy.result().item<float>(), 0.0f) << "before any update";
  accuracy.update_state(ag::constant({1, 2, 3, 4}), ag::constant({1.0f, 2.0f, 0.0f, 4.0f}));
  EXPECT_FLOAT_EQ(accuracy.result().item<float>(), 0.75f);
  accuracy.update_state(ag::constant({1, 1}), ag::constant({0, 0}));
  EXPECT_FLOAT_EQ(accuracy.result().item<float>(), 3.0f / 6.0f);
  accuracy.reset_state();
  EXPECT_EQ(accuracy.result().item<float>(), 0.0f);
  EXPECT_EQ(accuracy.name(), "accuracy");
}

TEST(LayersMetrics, SparseCategoricalAccuracyComparesTheArgmaxEagerAndTraced) {
  ag::metrics::SparseCategoricalAccuracy eager, traced;
  ag::Tensor probs = ag::constant({{0.1f, 0.8f, 0.1f}, {0.6f, 0.3f, 0.1f}, {0.2f, 0.3f, 0.5f}});
  ag::Tensor labels = ag::constant({1, 1, 2});
  auto update = ag::function([&](ag::Tensor y, ag::Tensor p) {
    traced.update_state(y, p);
    return traced.result();
  });
  eager.update_state(labels, probs);
  EXPECT_FLOAT_EQ(eager.result().item<float>(), 2.0f / 3.0f);
  EXPECT_FLOAT_EQ(update(labels, probs).item<float>(), 2.0f / 3.0f);
  EXPECT_FLOAT_EQ(update(ag::constant({{0}, {0}, {0}}), probs).item<float>(), 3.0f / 6.0f)
      << "labels [batch, 1]; the traced update accumulates";
  EXPECT_CONTAINS(error_of([&] { eager.update_state(ag::constant({1, 2}), ag::ones({2, 3, 4})); }),
                  "do not fit predictions of shape (2, 3, 4)");
}

}  // namespace
