// ag::GradientTape, ag::grad and ag::value_and_grad (include/ag/gradients.h):
// sources and their structures, persistence, unconnected sources, seeds,
// higher-order gradients, variables, integer errors, tapes inside traced
// functions and traced functions called under a tape.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "ag/ag.h"
#include "error_test_util.h"

namespace {

using ag::Tensor;
using ag_test::doubles;

// A float64 tensor (ag::constant makes C++ doubles float32, as TensorFlow).
Tensor f64(std::initializer_list<double> values) {
  return doubles(std::vector<double>(values), ag::Shape{int64_t(values.size())});
}

void expect_values(const Tensor& t, const std::vector<double>& expected, double tol = 1e-12) {
  ASSERT_TRUE(t.defined());
  std::vector<double> v = ag::cast(t, ag::float64).to_vector<double>();
  ASSERT_EQ(v.size(), expected.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], expected[i], tol) << "element " << i;
}

TEST(GradientTape, SquareOfAWatchedScalar) {
  Tensor x = ag::constant(3.0, ag::float64);
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  expect_values(tape.gradient(y, x), {6.0});
}

TEST(GradientTape, UnwatchedTensorsAreNotRecorded) {
  Tensor x = ag::constant(3.0, ag::float64);
  ag::GradientTape tape;
  Tensor y = x * x;
  EXPECT_FALSE(tape.gradient(y, x).defined());
}

TEST(GradientTape, NonScalarTargetIsSummedAndOutputGradientsSeedIt) {
  Tensor x = f64({1, 2, 3});
  {
    ag::GradientTape tape;
    tape.watch(x);
    expect_values(tape.gradient(x * x, x), {2, 4, 6});
  }
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = x * 2.0;
  expect_values(tape.gradient(y, x, ag::UnconnectedGradients::None, f64({1, 10, 100})),
                {2, 20, 200});
}

TEST(GradientTape, OutputGradientsOfTheWrongShapeAreAnError) {
  Tensor x = f64({1, 2, 3});
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = x * 2.0;
  EXPECT_THROW_CONTAINS(tape.gradient(y, x, ag::UnconnectedGradients::None, f64({1, 2})),
                        ag::InvalidArgumentError, "output_gradients has shape (2,)");
}

struct Params {
  Tensor w;
  Tensor b;
};
auto ag_fields(Params& p) {
  return std::tie(p.w, p.b);
}

TEST(GradientTape, SourcesComeBackInTheirStructure) {
  Tensor a = f64({1, 2}), b = f64({3, 4});
  ag::Variable v(f64({5, 6}), "v");
  ag::GradientTape tape(/*persistent=*/true);
  tape.watch(a);
  tape.watch(b);
  Tensor y = ag::reduce_sum(a * b + v * a);

  std::vector<Tensor> list = tape.gradient(y, std::vector<Tensor>{a, b});
  ASSERT_EQ(list.size(), 2u);
  expect_values(list[0], {3 + 5, 4 + 6});
  expect_values(list[1], {1, 2});

  std::tuple<Tensor, Tensor> tuple = tape.gradient(y, std::make_tuple(b, v));
  expect_values(std::get<0>(tuple), {1, 2});
  expect_values(std::get<1>(tuple), {1, 2});

  std::vector<Tensor> vars = tape.gradient(y, std::vector<ag::Variable>{v});
  expect_values(vars[0], {1, 2});

  std::array<Tensor, 2> array = tape.gradient(y, std::array<Tensor, 2>{b, a});
  expect_values(array[0], {1, 2});

  Params p = tape.gradient(y, Params{a, b});
  expect_values(p.w, {8, 10});
  expect_values(p.b, {1, 2});
}

TEST(GradientTape, NonPersistentTapeComputesOnce) {
  Tensor x = ag::constant(2.0, ag::float64);
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = x * x * x;
  expect_values(tape.gradient(y, x), {12});
  EXPECT_THROW_CONTAINS(tape.gradient(y, x), ag::FailedPreconditionError,
                        "can only compute one set of gradients");
}

TEST(GradientTape, PersistentTapeComputesSeveralTimes) {
  Tensor x = ag::constant(2.0, ag::float64);
  ag::GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = x * x;
  Tensor z = y * y;
  expect_values(tape.gradient(y, x), {4});
  expect_values(tape.gradient(z, x), {32});
  expect_values(tape.gradient(z, y), {8});
}

TEST(GradientTape, UnconnectedSourcesGiveNoneOrZeros) {
  Tensor x = f64({1, 2}), unused = f64({1, 2, 3});
  ag::GradientTape tape(true);
  tape.watch(x);
  tape.watch(unused);
  Tensor y = ag::reduce_sum(x * x);
  EXPECT_FALSE(tape.gradient(y, unused).defined());
  Tensor zero = tape.gradient(y, unused, ag::UnconnectedGradients::Zero);
  EXPECT_EQ(zero.shape(), ag::Shape({3}));
  expect_values(zero, {0, 0, 0});
  ag::Variable never_read(f64({7}), "never_read");
  expect_values(tape.gradient(y, never_read, ag::UnconnectedGradients::Zero), {0});
}

TEST(GradientTape, AGradientReachingASourceTwiceIsSummed) {
  Tensor x = ag::constant(3.0, ag::float64);
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = ag::tanh(x) + x * x + x;
  double t = std::tanh(3.0);
  expect_values(tape.gradient(y, x), {1 - t * t + 6 + 1});
}

TEST(GradientTape, MaskFromAComparisonCarriesNoGradient) {
  Tensor x = f64({-1, 2, -3, 4});
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = ag::reduce_sum(x * ag::cast(x > 0, ag::float64));
  expect_values(tape.gradient(y, x), {0, 1, 0, 1});
}

TEST(GradientTape, TrainableVariablesAreWatchedWhenRead) {
  ag::Variable w(f64({1, 2}), "w");
  ag::Variable frozen(f64({3, 4}), "frozen", /*trainable=*/false);
  EXPECT_TRUE(w.trainable());
  EXPECT_FALSE(frozen.trainable());
  ag::GradientTape tape(true);
  Tensor y = ag::reduce_sum(w * frozen + w * w);
  expect_values(tape.gradient(y, w), {3 + 2, 4 + 4});
  EXPECT_FALSE(tape.gradient(y, frozen).defined());
}

TEST(GradientTape, WatchAccessedVariablesFalseWatchesOnlyWhatIsAsked) {
  ag::Variable a(f64({1}), "a"), b(f64({2}), "b");
  ag::GradientTape tape(true, /*watch_accessed_variables=*/false);
  tape.watch(b);
  Tensor y = ag::reduce_sum(a * b);
  EXPECT_FALSE(tape.gradient(y, a).defined());
  expect_values(tape.gradient(y, b), {1});
}

TEST(GradientTape, AVariableReadIsToldFromItsInitialValue) {
  Tensor init = f64({2});
  ag::Variable v(init, "v");
  ag::GradientTape tape;
  Tensor y = ag::reduce_sum(v * 3.0 + init * 100.0);
  expect_values(tape.gradient(y, v), {3});
}

TEST(GradientTape, GradientThroughAnIntegerTensorIsAnErrorNamingTheOp) {
  Tensor x = f64({1.5, 2.5});
  ag::GradientTape tape;
  tape.watch(x);
  Tensor i = ag::cast(x, ag::int32);
  Tensor y = ag::reduce_sum(ag::cast(i * 2, ag::float64));
  EXPECT_THROW_CONTAINS(tape.gradient(y, x), ag::InvalidArgumentError,
                        "the gradient flows through cast (defined at ");
}

TEST(GradientTape, IntegerTargetsAndSourcesAreErrors) {
  Tensor x = ag::constant({1, 2});
  {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor y = x * 2;
    EXPECT_THROW_CONTAINS(tape.gradient(y, x), ag::InvalidArgumentError,
                          "the target must be floating (float32 or float64), got int32");
  }
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = ag::cast(x, ag::float32);
  EXPECT_THROW_CONTAINS(tape.gradient(y, x), ag::InvalidArgumentError,
                        "source 0 must be floating (float32 or float64), got int32");
}

// d/dx of the sum of the first derivative, by nested tapes and by central
// differences of the first derivative.
void expect_second_derivative(const std::function<Tensor(const Tensor&)>& f, const Tensor& x0) {
  auto first = [&](const Tensor& x) {
    ag::GradientTape inner;
    inner.watch(x);
    Tensor y = f(x);
    return ag::reduce_sum(inner.gradient(y, x));
  };
  ag::GradientTape outer;
  outer.watch(x0);
  Tensor g = first(x0);
  Tensor second = outer.gradient(g, x0);
  ASSERT_TRUE(second.defined());
  std::vector<double> base = x0.to_vector<double>();
  std::vector<double> expected(base.size());
  const double h = 1e-5;
  for (size_t k = 0; k < base.size(); ++k) {
    std::vector<double> p = base, m = base;
    p[k] += h;
    m[k] -= h;
    expected[k] = (first(doubles(p, x0.shape())).item<double>() -
                   first(doubles(m, x0.shape())).item<double>()) /
                  (2 * h);
  }
  expect_values(second, expected, 1e-6);
}

TEST(GradientTape, NestedTapesGiveSecondDerivatives) {
  Tensor x = doubles({0.3, -0.7, 1.1, 0.2}, ag::Shape{2, 2});
  expect_second_derivative([](const Tensor& x) { return ag::tanh(x); }, x);
  expect_second_derivative([](const Tensor& x) { return x * x * x; }, x);
  expect_second_derivative([](const Tensor& x) { return ag::matmul(x, ag::matmul(x, x)); }, x);
  expect_second_derivative(
      [](const Tensor& x) { return ag::reduce_sum(x * x, {1}) * ag::reduce_sum(x, {0}); }, x);
  // tanh'' = -2 tanh (1 - tanh^2), exactly.
  Tensor s = ag::constant(0.5, ag::float64);
  ag::GradientTape outer;
  outer.watch(s);
  Tensor d1;
  {
    ag::GradientTape inner;
    inner.watch(s);
    d1 = inner.gradient(ag::tanh(s), s);
  }
  double t = std::tanh(0.5);
  expect_values(outer.gradient(d1, s), {-2 * t * (1 - t * t)});
}

Tensor loss(const Tensor& x, const Tensor& y) {
  return ag::reduce_sum(ag::tanh(x) * y + x * x);
}

TEST(Grad, GradAndValueAndGradEagerly) {
  Tensor x = f64({0.5, -1}), y = f64({2, 3});
  Tensor gx = ag::grad(loss)(x, y);
  double t0 = std::tanh(0.5), t1 = std::tanh(-1.0);
  std::vector<double> dx = {(1 - t0 * t0) * 2 + 1, (1 - t1 * t1) * 3 - 2};
  expect_values(gx, dx);
  auto [value, grads] = ag::value_and_grad<0, 1>(loss)(x, y);
  expect_values(value, {t0 * 2 + t1 * 3 + 0.25 + 1});
  expect_values(std::get<0>(grads), dx);
  expect_values(std::get<1>(grads), {t0, t1});
}

TEST(Grad, SameTensorTwiceGetsItsOwnGradientPerArgument) {
  Tensor x = f64({2});
  auto [ga, gb] = ag::grad<0, 1>(
      [](const Tensor& a, const Tensor& b) { return ag::reduce_sum(a * 3.0 + b * 5.0); })(x, x);
  expect_values(ga, {3});
  expect_values(gb, {5});
}

TEST(Grad, FunctionOfGradIsOneGraphWithTheEagerNumbers) {
  Tensor x = f64({0.5, -1}), y = f64({2, 3});
  auto traced = ag::function(ag::grad(loss));
  expect_values(traced(x, y), ag::grad(loss)(x, y).to_vector<double>());
  auto both = ag::function(ag::value_and_grad<0, 1>(loss));
  auto [value, grads] = both(x, y);
  expect_values(value, loss(x, y).to_vector<double>());
  expect_values(std::get<1>(grads), ag::tanh(x).to_vector<double>());
  EXPECT_EQ(traced.tracing_count(), 1);
}

TEST(Grad, BackwardReusesTheForwardsTanh) {
  auto traced = ag::function(ag::grad([](const Tensor& x) { return ag::reduce_sum(ag::tanh(x)); }));
  Tensor x = f64({0.1, 0.2, 0.3});
  std::string graph = traced.get_concrete_function(x).graph().to_string();
  std::vector<std::string> ops = traced.get_concrete_function(x).graph().ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "tanh"), 1) << graph;
  // The derivative 1 - y*y multiplies the forward node's output by itself.
  EXPECT_NE(graph.find("['tanh', 'tanh'] -> mul"), std::string::npos) << graph;
}

TEST(GradientTape, TapeInsideATracedFunctionMatchesEager) {
  ag::Variable w(f64({0.5, -0.25}), "w");
  auto step = [&w](const Tensor& x) {
    ag::GradientTape tape;
    Tensor y = ag::reduce_mean(ag::sigmoid(x * w) * x);
    return tape.gradient(y, w);
  };
  Tensor x = f64({1, 2});
  Tensor eager = step(x);
  auto traced = ag::function(step);
  expect_values(traced(x), eager.to_vector<double>());
}

TEST(GradientTape, TracedFunctionCalledUnderATapeIsDifferentiated) {
  ag::Variable w(f64({0.5, -0.25}), "w");
  auto model = ag::function([&w](const Tensor& x) {
    Tensor h = ag::tanh(x * w);
    // A staged if and while on tensors: the tape sees the branch taken and
    // each iteration.
    Tensor y = ag::cond(ag::reduce_sum(h) > 0, [&] { return h * 3.0; }, [&] { return h * 5.0; });
    return ag::while_loop([](const Tensor& v) { return ag::reduce_sum(v * v) < 10.0; },
                          [](const Tensor& v) { return v * 2.0; }, y);
  });
  auto eager_model = [&w](const Tensor& x) {
    Tensor h = ag::tanh(x * w);
    Tensor y = ag::reduce_sum(h).item<double>() > 0 ? h * 3.0 : h * 5.0;
    while (ag::reduce_sum(y * y).item<double>() < 10.0) y = y * 2.0;
    return y;
  };
  Tensor x = f64({1, 2});
  std::vector<Tensor> expected, actual;
  {
    ag::GradientTape tape;
    tape.watch(x);
    auto [gx, gw] = tape.gradient(ag::reduce_sum(eager_model(x)), std::make_tuple(x, w));
    expected = {gx, gw};
  }
  model(x);  // traced outside any tape
  {
    ag::GradientTape tape;
    tape.watch(x);
    auto [gx, gw] = tape.gradient(ag::reduce_sum(model(x)), std::make_tuple(x, w));
    actual = {gx, gw};
  }
  expect_values(actual[0], expected[0].to_vector<double>());
  expect_values(actual[1], expected[1].to_vector<double>());
}

// y = 3x or 5x^2 + c by the sign of sum(x), with a nested if in the else
// branch; its gradient, an If of the branches' gradients, in the graph.
Tensor branchy(const Tensor& x, const Tensor& c) {
  return ag::cond(
      ag::reduce_sum(x) > 0, [&] { return x * 3.0; },
      [&] {
        Tensor sq = x * x * 5.0;
        return ag::cond(ag::reduce_sum(c) > 1.0, [&] { return sq + c * c; }, [&] { return sq; });
      });
}

TEST(GradientTape, GradientOfAStagedIfIsAnIfOfTheBranchGradients) {
  auto dbranchy = [](const Tensor& x, const Tensor& c) {
    ag::GradientTape tape;
    tape.watch(x);
    tape.watch(c);
    Tensor y = branchy(x, c);
    auto [gx, gc] =
        tape.gradient(ag::reduce_sum(y * y), std::make_tuple(x, c), ag::UnconnectedGradients::Zero);
    return std::vector<Tensor>{gx, gc};
  };
  auto traced = ag::function(dbranchy);
  Tensor c = f64({0.5, 1.5});
  for (Tensor x : {f64({1, 2}), f64({-1, -2}), f64({-1, 0.5})}) {
    for (Tensor cc : {c, c * 0.1}) {
      std::vector<Tensor> eager = dbranchy(x, cc), graph = traced(x, cc);
      expect_values(graph[0], eager[0].to_vector<double>());
      expect_values(graph[1], eager[1].to_vector<double>());
    }
  }
  // d/dx sum((5x^2 + c^2)^2) = 20 x (5x^2 + c^2) in the nested branch.
  std::vector<Tensor> g = traced(f64({-1, -2}), c);
  expect_values(g[0], {20 * -1 * (5 + 0.25), 20 * -2 * (20 + 2.25)});
  std::vector<std::string> ops = traced.get_concrete_function(f64({1, 2}), c).graph().ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "If"), 2);  // forward and gradient
}

// The branch's print runs once, in the forward If; the gradient If runs the
// branch again for its values only.
TEST(GradientTape, AStagedIfWithAPrintPrintsOnceAndIsDifferentiated) {
  auto dscaled = [](const Tensor& x) {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor y = x;
    ag::if_stmt(
        ag::reduce_sum(x) > 0.0,
        [&] {
          ag::print("scaling", x);
          y = x * x * 3.0;
        },
        [&] { y = x * 2.0; }, ag::state({"y"}, y));
    return tape.gradient(ag::reduce_sum(y), x);
  };
  std::ostringstream printed;
  ag::set_print_stream(&printed);
  Tensor graph = ag::function(dscaled)(f64({1, 2}));
  std::string graph_printed = printed.str();
  printed.str("");
  Tensor eager = dscaled(f64({1, 2}));
  ag::set_print_stream(nullptr);
  EXPECT_EQ(graph_printed, "scaling [1. 2.]\n");
  EXPECT_EQ(printed.str(), graph_printed);
  expect_values(graph, eager.to_vector<double>());
  expect_values(graph, {6, 12});
}

TEST(GradientTape, BroadcastAlongADimUnknownWhileTracing) {
  // x's batch dim is unknown, but b has no such axis: b's gradient sums it.
  auto bias_grad = ag::function(
      [](const Tensor& x, const Tensor& b) {
        ag::GradientTape tape;
        tape.watch(b);
        Tensor y = x + b;
        return tape.gradient(ag::reduce_sum(y * y), b);
      },
      {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim, 3}, ag::float64),
                                      ag::TensorSpec({3}, ag::float64)}});
  expect_values(bias_grad(doubles({1, 2, 3, 4, 5, 6}, {2, 3}), f64({1, 1, 1})), {14, 18, 22});
  // An unknown dim against a known 3: it is 1 (broadcast) or 3 when the
  // graph runs, and the gradient follows what it is.
  auto against_known = ag::function(
      [](const Tensor& a, const Tensor& b) {
        ag::GradientTape tape;
        tape.watch(a);
        return tape.gradient(ag::reduce_sum(a * b), a);
      },
      {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim}, ag::float64),
                                      ag::TensorSpec({3}, ag::float64)}});
  expect_values(against_known(f64({1}), f64({3, 4, 5})), {12});
  expect_values(against_known(f64({1, 1, 1}), f64({3, 4, 5})), {3, 4, 5});
}

// Two inputs whose one axis is unknown while tracing: at run time one of
// them is 1 and the other 5, and the size-1 input's gradient is the sum over
// the broadcast, as eagerly; the other way round too, and without broadcast.
TEST(GradientTape, BroadcastDecidedWhenTheGraphRuns) {
  auto grads = [](const Tensor& a, const Tensor& b) {
    ag::GradientTape tape;
    tape.watch(a);
    tape.watch(b);
    Tensor y = ag::tanh(a * b) + a;
    return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{a, b});
  };
  auto traced = ag::function(
      grads, {.input_signature = std::vector{ag::TensorSpec({ag::kUnknownDim}, ag::float64),
                                             ag::TensorSpec({ag::kUnknownDim}, ag::float64)}});
  Tensor one = f64({0.5});
  Tensor five = f64({1, -2, 0.25, 3, -0.5});
  Tensor other = f64({0.1, 0.2, 0.3, 0.4, 0.5});
  for (auto [a, b] : {std::pair{one, five}, std::pair{five, one}, std::pair{five, other}}) {
    std::vector<Tensor> eager = grads(a, b);
    std::vector<Tensor> graph = traced(a, b);
    ASSERT_EQ(graph.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      ASSERT_EQ(graph[i].shape(), eager[i].shape()) << i;
      std::vector<double> g = graph[i].to_vector<double>(), e = eager[i].to_vector<double>();
      for (size_t k = 0; k < g.size(); ++k) EXPECT_NEAR(g[k], e[k], 1e-12) << i << " " << k;
    }
  }
  // d/da of sum(tanh(a * b) + a) for a of size 1: sum(b * (1 - tanh^2(a b))) + 5.
  double expected = 5;
  for (double b : five.to_vector<double>()) {
    double t = std::tanh(0.5 * b);
    expected += b * (1 - t * t);
  }
  EXPECT_NEAR(traced(one, five)[0].item<double>(), expected, 1e-12);
  // Only the unknown dims take the run-time reduction: static shapes reduce_sum.
  ag::TensorSpec unknown({ag::kUnknownDim}, ag::float64);
  std::vector<std::string> ops = traced.get_concrete_function(unknown, unknown).graph().ops();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "reduce_sum_to"), ops.end());
  auto static_grads = ag::function(grads);
  std::vector<std::string> static_ops = static_grads.get_concrete_function(one, five).graph().ops();
  EXPECT_EQ(std::find(static_ops.begin(), static_ops.end(), "reduce_sum_to"), static_ops.end());
  EXPECT_NE(std::find(static_ops.begin(), static_ops.end(), "reduce_sum"), static_ops.end());
}

// A linear model trained by a traced step (tape, gradient, update in one
// graph) follows the eager steps exactly.
TEST(GradientTape, TracedTrainingStepMatchesEagerSteps) {
  Tensor x = doubles({0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor y = doubles({1, 3, 5}, {3, 1});
  auto make_step = [&](ag::Variable& w, ag::Variable& b) {
    return [&w, &b](const Tensor& x, const Tensor& y) {
      ag::GradientTape tape;
      Tensor err = ag::matmul(x, w) + b - y;
      Tensor loss = ag::reduce_mean(err * err);
      std::vector<Tensor> grads = tape.gradient(loss, std::vector<ag::Variable>{w, b});
      w.assign_sub(grads[0] * 0.05);
      b.assign_sub(grads[1] * 0.05);
      return loss;
    };
  };
  ag::Variable w1(doubles({0, 0}, {2, 1}), "w"), b1(doubles({0}, {1}), "b");
  ag::Variable w2(doubles({0, 0}, {2, 1}), "w"), b2(doubles({0}, {1}), "b");
  auto eager_step = make_step(w1, b1);
  auto traced_step = ag::function(make_step(w2, b2));
  double first = 0, last = 0;
  for (int i = 0; i < 50; ++i) {
    double e = eager_step(x, y).item<double>();
    double g = traced_step(x, y).item<double>();
    EXPECT_NEAR(g, e, 1e-9 * (1 + e)) << "step " << i;
    if (i == 0) first = e;
    last = e;
  }
  EXPECT_LT(last, first / 10);
  expect_values(w2.read(), w1.read().to_vector<double>(), 1e-9);
  EXPECT_EQ(traced_step.tracing_count(), 1);
}

TEST(GradientTape, GradientThroughAHostFunctionIsAClearError) {
  Tensor x = f64({1, 2});
  ag::GradientTape tape;
  tape.watch(x);
  std::vector<Tensor> doubled = ag::host_function(
      [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; }, {x},
      {ag::TensorSpec({2}, ag::float64)}, "double_it");
  Tensor y = ag::reduce_sum(doubled[0] + x);
  EXPECT_THROW_CONTAINS(tape.gradient(y, x), ag::UnimplementedError,
                        "the host function 'double_it' (called at ");
}

// The ready callback gets each source's gradient once the backward has
// passed every op that read it: a source nothing read first, then the last
// layer's weight, then the first layer's (read again at the end, but
// complete only after its first read is differentiated).
TEST(GradientTape, GradientReadyFollowsTheBackward) {
  ag::Variable w1(f64({0.5, -0.25, 1.0, 0.75}), "w1");
  ag::Variable w2(f64({0.3, -0.6}), "w2");
  ag::Variable unused(f64({7}), "unused");
  const Tensor x = ag::reshape(f64({1, 2, 3, 4}), {2, 2});
  ag::GradientTape tape(/*persistent=*/true);
  const Tensor h = ag::tanh(ag::matmul(x, ag::reshape(w1.read(), {2, 2})));
  const Tensor loss = ag::reduce_sum(ag::square(ag::matmul(h, ag::reshape(w2.read(), {2, 1})))) +
                      ag::reduce_sum(w1.read());
  std::vector<std::pair<size_t, Tensor>> calls;
  tape.on_gradient_ready([&](size_t k, const Tensor& g) { calls.emplace_back(k, g); });
  const std::vector<Tensor> grads = tape.gradient(loss, std::vector<ag::Variable>{w1, w2, unused});
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].first, 2u);
  EXPECT_FALSE(calls[0].second.defined());
  EXPECT_EQ(calls[1].first, 1u);
  EXPECT_EQ(calls[2].first, 0u);
  for (size_t i = 1; i < calls.size(); ++i)
    EXPECT_EQ(calls[i].second.to_vector<double>(), grads[calls[i].first].to_vector<double>());
  // The callback served one gradient() call.
  calls.clear();
  tape.gradient(loss, std::vector<ag::Variable>{w1, w2});
  EXPECT_TRUE(calls.empty());
}

// Traced, the callback gets the symbolic gradients in the same order.
TEST(GradientTape, GradientReadyInATrace) {
  ag::Variable a(f64({2}), "a"), b(f64({3}), "b");
  std::vector<size_t> order;
  auto f = ag::function([&](const Tensor& x) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_sum(ag::square(x * a.read()) * b.read());
    tape.on_gradient_ready([&](size_t k, const Tensor& g) {
      EXPECT_TRUE(g.is_symbolic());
      order.push_back(k);
    });
    const std::vector<Tensor> g = tape.gradient(loss, std::vector<ag::Variable>{a, b});
    return g[0] + g[1];
  });
  expect_values(f(f64({1})), {2 * 2 * 3 + 4});
  EXPECT_EQ(order, (std::vector<size_t>{1, 0}));
}

}  // namespace
