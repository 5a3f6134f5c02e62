// ag::optimizers::SGD and Adam: their updates against Keras's formulas
// computed by hand, eager against ag::function (bit-identical), and the
// errors and skips of apply_gradients. Gradients are passed in directly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "error_test_util.h"

namespace {

using ag::Tensor;
using ag::Variable;
using ag::optimizers::Adam;
using ag::optimizers::SGD;
using ag_test::error_of;

// Three gradients for a two-element variable, one per step.
const std::vector<std::vector<double>> kGrads = {{0.5, -1.0}, {0.25, 2.0}, {-0.75, 0.125}};
const std::vector<double> kStart = {1.0, -2.0};

// A float64 vector (ag::constant makes C++ doubles float32, as TensorFlow).
Tensor f64(const std::vector<double>& v) {
  Tensor t = ag::empty({int64_t(v.size())}, ag::float64);
  std::copy(v.begin(), v.end(), t.mutable_data<double>());
  return t;
}

void expect_values(const Variable& v, const std::vector<double>& expected, double tolerance) {
  std::vector<double> actual = v.read().to_vector<double>();
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
}

TEST(Optimizers, SgdSubtractsRateTimesGradient) {
  SGD opt({.learning_rate = 0.1});
  Variable w(f64(kStart), "w");
  std::vector<double> expected = kStart;
  for (const auto& g : kGrads) {
    opt.apply_gradients({f64(g)}, {w});
    for (size_t i = 0; i < g.size(); ++i) expected[i] -= 0.1 * g[i];
    expect_values(w, expected, 1e-15);
  }
  EXPECT_EQ(opt.iterations().read().item<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(opt.learning_rate(), 0.1);
}

void check_sgd_momentum(bool nesterov) {
  SCOPED_TRACE(nesterov ? "nesterov" : "momentum");
  const double lr = 0.1, momentum = 0.9;
  SGD opt({.learning_rate = lr, .momentum = momentum, .nesterov = nesterov});
  Variable w(f64(kStart), "w");
  std::vector<double> expected = kStart, m = {0, 0};
  for (const auto& g : kGrads) {
    opt.apply_gradients({f64(g)}, {w});
    for (size_t i = 0; i < g.size(); ++i) {
      m[i] = momentum * m[i] - lr * g[i];
      expected[i] += nesterov ? momentum * m[i] - lr * g[i] : m[i];
    }
    expect_values(w, expected, 1e-15);
  }
}

TEST(Optimizers, SgdMomentumFollowsKeras) {
  check_sgd_momentum(false);
}

TEST(Optimizers, SgdNesterovFollowsKeras) {
  check_sgd_momentum(true);
}

// Adam with Keras's defaults, in float64 and float32.
void check_adam(ag::DType dtype, double tolerance) {
  const double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-7;
  Adam opt;
  EXPECT_DOUBLE_EQ(opt.learning_rate(), lr);
  Variable w(ag::cast(f64(kStart), dtype), "w");
  std::vector<double> expected = kStart, m = {0, 0}, v = {0, 0};
  for (size_t t = 1; t <= kGrads.size(); ++t) {
    const auto& g = kGrads[t - 1];
    opt.apply_gradients({ag::cast(f64(g), dtype)}, {w});
    double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
    for (size_t i = 0; i < g.size(); ++i) {
      m[i] += (g[i] - m[i]) * (1 - b1);
      v[i] += (g[i] * g[i] - v[i]) * (1 - b2);
      expected[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
    }
    expect_values(w, expected, tolerance);
  }
}

TEST(Optimizers, AdamFollowsKerasInFloat64) {
  check_adam(ag::float64, 1e-14);
}

TEST(Optimizers, AdamFollowsKerasInFloat32) {
  check_adam(ag::float32, 1e-6);
}

TEST(Optimizers, AdamFirstStepMovesByLearningRate) {
  // The bias correction makes Adam's first step lr * sign(g), up to epsilon's
  // share: 1e-7 / (|g| * sqrt(1 - beta_2)) = 1.3e-5 of it for g = -0.25.
  Adam opt({.learning_rate = 0.5});
  Variable w(f64({0.0, 0.0}), "w");
  opt.apply_gradients({f64({3.0, -0.25})}, {w});
  expect_values(w, {-0.5, 0.5}, 1e-5);
}

// The same updates eagerly and inside an ag::function give identical bits.
template <class Opt, class Options>
void check_eager_equals_graph(Options options) {
  Opt eager_opt(options), graph_opt(options);
  Variable eager_w(ag::constant({{1.0f, -2.0f}, {0.5f, 3.0f}}), "w");
  Variable eager_b(ag::constant({0.25f, -0.5f}), "b");
  Variable graph_w(eager_w.read(), "w"), graph_b(eager_b.read(), "b");
  auto step = ag::function(
      [&](Tensor gw, Tensor gb) {
        graph_opt.apply_gradients({gw, gb}, {graph_w, graph_b});
        return graph_opt.iterations().read();
      },
      {.name = "train_step", .arg_names = {"gw", "gb"}});
  for (int i = 0; i < 4; ++i) {
    Tensor gw = ag::random_normal({2, 2}, 0, 1, ag::float32, uint64_t(10 + i));
    Tensor gb = ag::random_normal({2}, 0, 1, ag::float32, uint64_t(20 + i));
    eager_opt.apply_gradients({gw, gb}, {eager_w, eager_b});
    Tensor iterations = step(gw, gb);
    EXPECT_EQ(iterations.item<int64_t>(), i + 1);
    EXPECT_EQ(graph_w.read().to_vector<float>(), eager_w.read().to_vector<float>()) << "step " << i;
    EXPECT_EQ(graph_b.read().to_vector<float>(), eager_b.read().to_vector<float>()) << "step " << i;
  }
  EXPECT_EQ(step.tracing_count(), 1);
  EXPECT_NE(eager_w.read().to_vector<float>(), (std::vector<float>{1.0f, -2.0f, 0.5f, 3.0f}));
}

TEST(Optimizers, SgdEagerEqualsGraph) {
  check_eager_equals_graph<SGD>(ag::optimizers::SGDOptions{.learning_rate = 0.1});
}

TEST(Optimizers, SgdMomentumEagerEqualsGraph) {
  check_eager_equals_graph<SGD>(
      ag::optimizers::SGDOptions{.learning_rate = 0.1, .momentum = 0.9, .nesterov = true});
}

TEST(Optimizers, AdamEagerEqualsGraph) {
  check_eager_equals_graph<Adam>(ag::optimizers::AdamOptions{.learning_rate = 0.01});
}

TEST(Optimizers, TracedStepIsOneGraphOfVariableOps) {
  Adam opt;
  Variable w(ag::constant({1.0f, 2.0f}), "w");
  auto step = ag::function([&](Tensor g) {
    opt.apply_gradients({g}, {w});
    return opt.iterations().read();
  });
  std::vector<std::string> ops =
      step.get_concrete_function(ag::TensorSpec({2}, ag::float32)).graph().ops();
  auto count = [&](const std::string& op) { return std::count(ops.begin(), ops.end(), op); };
  EXPECT_EQ(count("AssignSubVariableOp"), 1);  // w
  EXPECT_EQ(count("AssignAddVariableOp"), 3);  // m, v, iterations
  // The slots were created once, eagerly, while tracing.
  EXPECT_EQ(step(ag::constant({1.0f, 1.0f})).item<int64_t>(), 1);
}

TEST(Optimizers, NewLearningRateReachesTracedStep) {
  SGD opt({.learning_rate = 1.0});
  Variable w(ag::constant({0.0f}), "w");
  auto step = ag::function([&](Tensor g) {
    opt.apply_gradients({g}, {w});
    return w.read();
  });
  EXPECT_EQ(step(ag::constant({1.0f})).to_vector<float>(), std::vector<float>{-1.0f});
  opt.set_learning_rate(0.5);
  EXPECT_EQ(step(ag::constant({1.0f})).to_vector<float>(), std::vector<float>{-1.5f});
  EXPECT_EQ(step.tracing_count(), 1);
}

TEST(Optimizers, AcceptsGradientVariablePairs) {
  SGD opt({.learning_rate = 0.5});
  Variable a(ag::constant({1.0f}), "a"), b(ag::constant({2.0f}), "b");
  opt.apply_gradients({{ag::constant({2.0f}), a}, {ag::constant({-2.0f}), b}});
  EXPECT_FLOAT_EQ(a.read().to_vector<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(b.read().to_vector<float>()[0], 3.0f);
}

TEST(Optimizers, MismatchedLengthsAreAValueError) {
  SGD opt;
  Variable a(ag::constant({1.0f}), "a"), b(ag::constant({2.0f}), "b");
  std::string err = error_of([&] { opt.apply_gradients({ag::constant({1.0f})}, {a, b}); });
  EXPECT_CONTAINS(err, "ValueError: SGD.apply_gradients: 1 gradients for 2 variables");
}

TEST(Optimizers, WrongDtypeOrShapeNamesTheVariableAndChangesNothing) {
  SGD opt({.learning_rate = 0.1, .momentum = 0.5});
  Variable a(ag::constant({1.0f}), "a"), b(ag::constant({1.0f, 2.0f}), "b");
  std::string err =
      error_of([&] { opt.apply_gradients({ag::constant({1.0f}), f64({1.0, 2.0})}, {a, b}); });
  EXPECT_CONTAINS(err,
                  "InvalidArgumentError: SGD.apply_gradients: the gradient of variable 'b' "
                  "(float32, shape=(2,)) has dtype float64 and shape (2,) (gradient 1)");
  err = error_of([&] {
    opt.apply_gradients({ag::constant({1.0f}), ag::constant({1.0f, 2.0f, 3.0f})}, {a, b});
  });
  EXPECT_CONTAINS(err,
                  "the gradient of variable 'b' (float32, shape=(2,)) has dtype float32 and "
                  "shape (3,)");
  // Checked before any update: `a` and the step count did not move.
  EXPECT_EQ(a.read().to_vector<float>(), std::vector<float>{1.0f});
  EXPECT_EQ(opt.iterations().read().item<int64_t>(), 0);
}

TEST(Optimizers, IntegerVariableIsATypeError) {
  Adam opt;
  Variable n(ag::constant({1, 2}), "n");
  std::string err = error_of([&] { opt.apply_gradients({ag::constant({1, 1})}, {n}); });
  EXPECT_CONTAINS(err,
                  "TypeError: Adam.apply_gradients: variable 'n' (int32, shape=(2,)) is not "
                  "floating-point");
}

TEST(Optimizers, UndefinedGradientIsSkippedWithAWarning) {
  std::vector<std::string> warnings;
  ag::set_log_hook([&](ag::LogLevel, const std::string& m) { warnings.push_back(m); });
  Adam opt;
  Variable a(ag::constant({1.0f}), "a"), unused(ag::constant({2.0f}), "unused");
  opt.apply_gradients({ag::constant({1.0f}), Tensor()}, {a, unused});
  ag::set_log_hook(nullptr);
  EXPECT_NE(a.read().to_vector<float>(), std::vector<float>{1.0f});
  EXPECT_EQ(unused.read().to_vector<float>(), std::vector<float>{2.0f});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "Gradients do not exist for variables ['unused'] when minimizing the loss; they are "
            "not updated");
}

TEST(Optimizers, NoGradientAtAllIsAValueError) {
  SGD opt;
  Variable a(ag::constant({1.0f}), "a"), b(ag::constant({2.0f}), "b");
  std::string err = error_of([&] { opt.apply_gradients({Tensor(), Tensor()}, {a, b}); });
  EXPECT_CONTAINS(err, "ValueError: No gradients provided for any variable: ['a', 'b']");
  EXPECT_EQ(opt.iterations().read().item<int64_t>(), 0);
}

TEST(Optimizers, SlotsForANewVariableOnALaterTraceAreAnError) {
  SGD opt({.momentum = 0.9});
  Variable a(ag::constant({1.0f}), "a");
  std::vector<Variable> vars = {a};
  // Updates the last variable of `vars`.
  auto step = ag::function(
      [&](Tensor g) {
        opt.apply_gradients({g}, {vars.back()});
        return opt.iterations().read();
      },
      {.name = "step"});
  step(ag::constant({1.0f}));
  vars.push_back(Variable(f64({1.0, 2.0}), "b"));
  // A new signature retraces; b's momentum slot cannot be created then.
  std::string err = error_of([&] { step(f64({1.0, 1.0})); });
  EXPECT_CONTAINS(err, "only supports Variables created on its first call");
}

TEST(Optimizers, BuildCreatesSlotsAheadOfALaterTrace) {
  SGD opt({.momentum = 0.9});
  Variable a(ag::constant({1.0f}), "a");
  std::vector<Variable> vars = {a};
  // Updates the last variable of `vars`.
  auto step = ag::function(
      [&](Tensor g) {
        opt.apply_gradients({g}, {vars.back()});
        return opt.iterations().read();
      },
      {.name = "step"});
  step(ag::constant({1.0f}));
  Variable b(f64({1.0, 2.0}), "b");
  opt.build({b});
  vars.push_back(b);
  step(f64({1.0, 1.0}));
  EXPECT_EQ(step.tracing_count(), 2);
  expect_values(b, {1.0 - 0.01, 2.0 - 0.01}, 1e-15);
}

TEST(Optimizers, MomentumOutOfRangeIsAValueError) {
  EXPECT_CONTAINS(error_of([] { SGD opt({.momentum = 1.5}); }),
                  "ValueError: SGD: `momentum` must be between [0, 1], got 1.5");
}

// The typical train step: a tape, its gradients, apply_gradients. Eagerly and
// traced it gives the same numbers, and the loss goes down.
TEST(Optimizers, TapeTrainStepEagerEqualsGraph) {
  Tensor x = ag::random_normal({8, 3}, 0, 1, ag::float32, uint64_t(1));
  Tensor y = ag::matmul(x, ag::constant({{1.0f}, {-2.0f}, {0.5f}})) + 0.25f;
  struct Model {
    Variable w{ag::zeros({3, 1}), "w"};
    Variable b{ag::zeros({1}), "b"};
    Adam opt{{.learning_rate = 0.1}};
    Tensor step(const Tensor& x, const Tensor& y) {
      std::vector<Variable> vars = {w, b};
      ag::GradientTape tape;
      Tensor loss = ag::reduce_mean(ag::square(ag::matmul(x, w.read()) + b.read() - y));
      opt.apply_gradients(tape.gradient(loss, vars), vars);
      return loss;
    }
  } eager, graph;
  auto graph_step = ag::function([&](Tensor x, Tensor y) { return graph.step(x, y); });
  std::vector<float> losses;
  for (int i = 0; i < 20; ++i) {
    Tensor eager_loss = eager.step(x, y), graph_loss = graph_step(x, y);
    EXPECT_EQ(eager_loss.item<float>(), graph_loss.item<float>()) << "step " << i;
    losses.push_back(eager_loss.item<float>());
  }
  EXPECT_EQ(graph.w.read().to_vector<float>(), eager.w.read().to_vector<float>());
  EXPECT_EQ(graph.b.read().to_vector<float>(), eager.b.read().to_vector<float>());
  EXPECT_LT(losses.back(), losses.front() / 4);
  EXPECT_EQ(graph_step.tracing_count(), 1);
}

}  // namespace
