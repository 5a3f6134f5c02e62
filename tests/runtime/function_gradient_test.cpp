// A traced function called under a gradient tape (runtime/function/tape_call.cpp,
// function_gradient.cpp): one op on the tape whose gradient is a second
// traced function, the backward, traced once per signature and fed the
// intermediates the forward exports. Checked against the eager gradient,
// central finite differences, and in the graphs themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "ag/ag.h"
#include "error_test_util.h"
#include "graph/graph.h"

namespace {

using ag::Tensor;
using ag_test::doubles;

Tensor f64(std::initializer_list<double> values) {
  return doubles(std::vector<double>(values), ag::Shape{int64_t(values.size())});
}

void expect_close(const Tensor& actual, const Tensor& expected, double tol,
                  const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what;
  ASSERT_TRUE(expected.defined()) << what;
  ASSERT_EQ(actual.shape(), expected.shape()) << what;
  std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_NEAR(a[k], e[k], tol * (1 + std::abs(e[k]))) << what << " element " << k;
}

// How often `op` occurs in a graph, members of fused nodes and nested
// bodies included.
int count_op(const ag::graph::Body& body, const std::string& op) {
  int n = 0;
  for (const ag::graph::Node& node : body.nodes) {
    n += node.op_name() == op;
    for (const auto& sub : node.subgraphs) n += count_op(*sub, op);
  }
  return n;
}

// Counts the backward traces through the debug log.
class BackwardTraceCounter {
 public:
  BackwardTraceCounter() {
    ag::set_log_level(ag::LogLevel::Debug);
    ag::set_log_hook([this](ag::LogLevel, const std::string& message) {
      if (message.find("tracing the backward of") != std::string::npos) ++count_;
    });
  }
  ~BackwardTraceCounter() {
    ag::set_log_hook(nullptr);
    ag::set_log_level(ag::LogLevel::Warning);
  }
  int count() const { return count_; }

 private:
  int count_ = 0;
};

// The gradients of sum(f(args...)) with respect to the tensors `args`.
template <class F, class... Args>
std::vector<Tensor> gradients(const F& f, const Args&... args) {
  ag::GradientTape tape;
  (tape.watch(args), ...);
  Tensor y = f(args...);
  return tape.gradient(ag::reduce_sum(y), std::vector<Tensor>{args...},
                       ag::UnconnectedGradients::Zero);
}

Tensor smooth(const Tensor& x, const Tensor& y) {
  return ag::tanh(x * y) * x + ag::sigmoid(y) * 2.0;
}

// x [n, 3] against w [3, 2] and a bias row b [1, 2] broadcast over n, with a
// staged if on the sign of the result.
Tensor layer(const Tensor& x, const Tensor& w) {
  Tensor h = ag::matmul(x, w) + doubles({0.1, -0.2}, {1, 2});
  return ag::cond(
      ag::reduce_sum(h) > 0.0, [&] { return ag::tanh(h) * h; }, [&] { return h * h * 0.5; });
}

TEST(FunctionGradient, GradientOfACallEqualsTheEagerGradient) {
  auto traced = ag::function(smooth);
  Tensor x = f64({0.3, -1.2, 2.0}), y = f64({0.7, 0.1, -0.4});
  std::vector<Tensor> eager = gradients(smooth, x, y);
  std::vector<Tensor> graph = gradients(traced, x, y);
  for (size_t i = 0; i < 2; ++i)
    expect_close(graph[i], eager[i], 1e-12, "input " + std::to_string(i));
  // The value is the plan's too.
  expect_close(traced(x, y), smooth(x, y), 1e-12, "value");
}

TEST(FunctionGradient, SeveralOutputsAndAnOutputWithoutGradient) {
  auto two = [](const Tensor& x) { return std::make_tuple(ag::exp(x), x * x); };
  auto traced = ag::function(two);
  Tensor x = f64({0.5, -1.0});
  for (int which = 0; which < 2; ++which) {
    ag::GradientTape tape;
    tape.watch(x);
    auto [a, b] = traced(x);
    Tensor g = tape.gradient(ag::reduce_sum(which == 0 ? a : b), x);
    expect_close(g, which == 0 ? ag::exp(x) : x * 2.0, 1e-12, "output " + std::to_string(which));
  }
  ag::GradientTape tape;
  tape.watch(x);
  auto [a, b] = traced(x);
  expect_close(tape.gradient(ag::reduce_sum(a * 3.0 + b), x), ag::exp(x) * 3.0 + x * 2.0, 1e-12,
               "both outputs");
}

// An integer input gets no gradient; an output that is an input passes its
// gradient through.
TEST(FunctionGradient, IntegerInputsAndAnInputReturnedAsIs) {
  auto f = ag::function([](const Tensor& x, const Tensor& n) {
    return std::make_tuple(x, x * ag::cast(n, ag::float64));
  });
  Tensor x = f64({0.5, -1.0}), n = ag::constant(std::vector<int32_t>{2, 3}, ag::Shape{2});
  ag::GradientTape tape;
  tape.watch(x);
  tape.watch(n);
  auto [same, scaled] = f(x, n);
  Tensor g = tape.gradient(ag::reduce_sum(same + scaled), x);
  expect_close(g, f64({3, 4}), 1e-12, "d/dx (x + n x)");
}

TEST(FunctionGradient, BackwardIsTracedOncePerSignature) {
  auto traced = ag::function(smooth);
  BackwardTraceCounter backward;
  Tensor x3 = f64({0.3, -1.2, 2.0}), y3 = f64({0.7, 0.1, -0.4});
  traced(x3, y3);
  EXPECT_EQ(backward.count(), 0) << "no tape, no backward";
  std::vector<Tensor> first = gradients(traced, x3, y3);
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> again = gradients(traced, x3 * 1.0, y3 * 1.0);
    expect_close(again[0], first[0], 0, "repeated call");
  }
  EXPECT_EQ(backward.count(), 1);
  EXPECT_EQ(traced.tracing_count(), 1);
  gradients(traced, f64({1, 2}), f64({3, 4}));
  EXPECT_EQ(backward.count(), 2);
  EXPECT_EQ(traced.tracing_count(), 2);
}

TEST(FunctionGradient, ForwardExportsIntermediatesOnlyUnderATape) {
  auto f = ag::function([](const Tensor& x) { return ag::reduce_sum(ag::tanh(x) * 2.0); });
  Tensor x = f64({0.1, 0.2, 0.3});
  auto concrete = f.get_concrete_function(x);
  // The plain forward, which a call without a tape runs, returns the result only.
  EXPECT_EQ(concrete.graph().body().outputs.size(), 1u);
  auto [forward, backward] = concrete.gradient_graphs();
  EXPECT_GT(forward.body().outputs.size(), 1u) << forward.to_string();
  // tanh runs once, in the forward; the backward's 1 - y*y reads its output.
  EXPECT_EQ(count_op(forward.body(), "tanh"), 1) << forward.to_string();
  EXPECT_EQ(count_op(backward.body(), "tanh"), 0) << backward.to_string();
  // The backward's inputs: the output gradient and the exported intermediates.
  EXPECT_EQ(backward.body().placeholders.size(), forward.body().outputs.size())
      << backward.to_string();
  std::vector<Tensor> g = gradients(f, x);
  std::vector<double> expected;
  for (double v : x.to_vector<double>()) expected.push_back(2 * (1 - std::tanh(v) * std::tanh(v)));
  expect_close(g[0], doubles(expected, {3}), 1e-12, "d tanh");
}

TEST(FunctionGradient, AStagedIfInsideIsDifferentiatedInBothBranches) {
  auto traced = ag::function(layer);
  Tensor w = doubles({0.5, -0.3, 0.2, 0.8, -0.6, 0.1}, {3, 2});
  for (Tensor x :
       {doubles({1, 2, 0.5, 0.3, -0.2, 1}, {2, 3}), doubles({-1, -2, 0.5, 0.3, -2, -1}, {2, 3})}) {
    std::vector<Tensor> eager = gradients(layer, x, w);
    std::vector<Tensor> graph = gradients(traced, x, w);
    for (size_t i = 0; i < 2; ++i)
      expect_close(graph[i], eager[i], 1e-12, "input " + std::to_string(i));
  }
  auto [forward, backward] =
      traced.get_concrete_function(doubles({1, 2, 3, 4, 5, 6}, {2, 3}), w).gradient_graphs();
  EXPECT_EQ(count_op(forward.body(), "If"), 1) << forward.to_string();
  EXPECT_EQ(count_op(backward.body(), "If"), 1) << backward.to_string();
}

TEST(FunctionGradient, CapturedVariablesGetTheirGradients) {
  ag::Variable w(f64({0.5, -0.25}), "w");
  ag::Variable frozen(f64({2.0, 3.0}), "frozen", /*trainable=*/false);
  auto model = [&](const Tensor& x) { return ag::tanh(x * w) * frozen + w * w; };
  auto traced = ag::function(model);
  Tensor x = f64({1, 2});
  auto grads_of = [&](const auto& f) {
    ag::GradientTape tape;
    tape.watch(frozen);
    Tensor y = ag::reduce_sum(f(x));
    auto [gw, gf, gx] = tape.gradient(y, std::make_tuple(w, frozen, x));
    return std::vector<Tensor>{gw, gf, gx};
  };
  std::vector<Tensor> eager = grads_of(model), graph = grads_of(traced);
  expect_close(graph[0], eager[0], 1e-12, "trainable variable");
  expect_close(graph[1], eager[1], 1e-12, "watched non-trainable variable");
  EXPECT_FALSE(graph[2].defined()) << "x is not watched";
  // A variable read only by the function, with no tensor watched: still its gradient.
  {
    ag::GradientTape tape;
    Tensor gw = tape.gradient(ag::reduce_sum(traced(x)), w);
    expect_close(gw, eager[0], 1e-12, "variable alone");
  }
  // The new value is read on the next call.
  w.assign(f64({1.0, 1.0}));
  expect_close(grads_of(traced)[0], grads_of(model)[0], 1e-12, "after assign");
}

TEST(FunctionGradient, GradOfAFunctionEqualsFunctionOfGrad) {
  auto loss = [](const Tensor& x) { return ag::reduce_sum(ag::tanh(x) * x + x * x * x); };
  auto traced = ag::function(loss);
  Tensor x = f64({0.2, -0.9, 1.4});
  Tensor eager = ag::grad(loss)(x);
  Tensor grad_of_function = ag::grad(traced)(x);
  Tensor function_of_grad = ag::function(ag::grad(traced))(x);
  expect_close(grad_of_function, eager, 1e-12, "grad(function(f))");
  expect_close(function_of_grad, eager, 1e-12, "function(grad(function(f)))");
}

TEST(FunctionGradient, SecondDerivativesThroughACall) {
  auto cube = ag::function([](const Tensor& x) { return ag::tanh(x) * x * x; });
  Tensor x = f64({0.4, -1.1});
  auto second = [&](const auto& f) {
    ag::GradientTape outer;
    outer.watch(x);
    Tensor d1;
    {
      ag::GradientTape inner;
      inner.watch(x);
      d1 = inner.gradient(ag::reduce_sum(f(x)), x);
    }
    return std::pair{d1, outer.gradient(ag::reduce_sum(d1), x)};
  };
  auto eager = second([](const Tensor& v) { return ag::tanh(v) * v * v; });
  auto graph = second(cube);
  expect_close(graph.first, eager.first, 1e-12, "first derivative");
  expect_close(graph.second, eager.second, 1e-12, "second derivative");
  // The outer tape starts after the call, so the forward's intermediates
  // are constants to it, as eagerly: the backward runs op by op so that the
  // outer tape sees its use of x.
  auto late_outer = [&](const auto& f) {
    ag::GradientTape inner;
    inner.watch(x);
    Tensor y = ag::reduce_sum(f(x));
    ag::GradientTape outer;
    outer.watch(x);
    Tensor d1 = inner.gradient(y, x);
    return outer.gradient(ag::reduce_sum(d1), x);
  };
  Tensor late_eager = late_outer([](const Tensor& v) { return ag::tanh(v) * v * v; });
  expect_close(late_outer(cube), late_eager, 1e-12, "outer tape after the call");
}

// The gradient of sum(f(xs)) under a tape against its central differences.
void expect_matches_finite_differences(const std::function<Tensor(const std::vector<Tensor>&)>& f,
                                       std::vector<Tensor> xs) {
  ag::GradientTape tape;
  for (const Tensor& x : xs) tape.watch(x);
  std::vector<Tensor> grads = tape.gradient(ag::reduce_sum(f(xs)), xs);
  const double h = 1e-6;
  auto value = [&](const std::vector<Tensor>& at) { return ag::reduce_sum(f(at)).item<double>(); };
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> base = xs[i].to_vector<double>(), fd(base.size());
    for (size_t k = 0; k < base.size(); ++k) {
      std::vector<Tensor> plus = xs, minus = xs;
      std::vector<double> p = base, m = base;
      p[k] += h;
      m[k] -= h;
      plus[i] = doubles(p, xs[i].shape());
      minus[i] = doubles(m, xs[i].shape());
      fd[k] = (value(plus) - value(minus)) / (2 * h);
    }
    expect_close(grads[i], doubles(fd, xs[i].shape()), 1e-6, "input " + std::to_string(i));
  }
}

TEST(FunctionGradient, MatchesFiniteDifferences) {
  auto traced_smooth = ag::function(smooth);
  expect_matches_finite_differences(
      [&](const std::vector<Tensor>& x) { return traced_smooth(x[0], x[1]); },
      {f64({0.3, -1.2, 2.0}), f64({0.7, 0.1, -0.4})});
  auto traced_layer = ag::function(layer);
  auto call_layer = [&](const std::vector<Tensor>& x) { return traced_layer(x[0], x[1]); };
  Tensor w = doubles({0.5, -0.3, 0.2, 0.8, -0.6, 0.1}, {3, 2});
  expect_matches_finite_differences(call_layer, {doubles({1, 2, 0.5, 0.3, -0.2, 1}, {2, 3}), w});
  expect_matches_finite_differences(call_layer, {doubles({-1, -2, 0.5, 0.3, -2, -1}, {2, 3}), w});
}

// A staged while with a data-dependent trip count: x grows by x * w + tanh(x)
// until its sum reaches 10.
Tensor grow(const Tensor& x, const Tensor& w) {
  return ag::while_loop([](const Tensor& v) { return ag::reduce_sum(v) < 10.0; },
                        [&](const Tensor& v) { return v * w + ag::tanh(v); }, x);
}

TEST(FunctionGradient, AStagedWhileInsideGivesTheEagerGradient) {
  auto traced = ag::function(grow);
  Tensor w = f64({1.1, 0.7});
  for (Tensor x : {f64({0.3, 0.4}), f64({2.0, 1.5}), f64({6.0, 5.0})}) {
    std::vector<Tensor> eager = gradients(grow, x, w);
    std::vector<Tensor> graph = gradients(traced, x, w);
    for (size_t i = 0; i < 2; ++i)
      expect_close(graph[i], eager[i], 1e-12, "input " + std::to_string(i));
  }
  expect_matches_finite_differences(
      [&](const std::vector<Tensor>& x) { return traced(x[0], x[1]); }, {f64({0.3, 0.4}), w});
  // One op on the tape: a traced forward (the loop with its stacks) and a
  // traced backward (the reverse loop), not the op-by-op replay.
  auto [forward, backward] = traced.get_concrete_function(f64({0.3, 0.4}), w).gradient_graphs();
  std::vector<std::string> fw = forward.ops(), bw = backward.ops();
  EXPECT_NE(std::find(fw.begin(), fw.end(), "While"), fw.end()) << forward.to_string();
  EXPECT_NE(std::find(bw.begin(), bw.end(), "While"), bw.end()) << backward.to_string();
}

// A function that prints and sums over a dataset in a staged loop is one op
// under a tape too: its gradient's forward holds the print and the pulls,
// which run once per call.
TEST(FunctionGradient, AFunctionWithEffectsIsOneOpUnderATape) {
  auto weighted = [](const Tensor& x) {
    Tensor total = ag::zeros({}, ag::float64);
    ag::for_stmt(
        ag::data::from_tensor_slices(f64({0.5, -1.0, 2.0})), ag::no_extra_test,
        [&](const Tensor& e) { total = total + ag::reduce_sum(ag::tanh(x * e)); },
        ag::state({"total"}, total));
    ag::print("total:", total);
    return total * total;
  };
  auto traced = ag::function(weighted);
  Tensor x = f64({0.3, -0.4});
  std::ostringstream printed;
  ag::set_print_stream(&printed);
  std::vector<Tensor> graph = gradients(traced, x);
  std::string graph_printed = printed.str();
  printed.str("");
  std::vector<Tensor> eager = gradients(weighted, x);
  ag::set_print_stream(nullptr);
  expect_close(graph[0], eager[0], 1e-12, "graph vs eager");
  EXPECT_EQ(graph_printed, printed.str());
  EXPECT_EQ(std::count(graph_printed.begin(), graph_printed.end(), '\n'), 1) << graph_printed;
  auto [forward, backward] = traced.get_concrete_function(x).gradient_graphs();
  std::vector<std::string> fw = forward.ops(), bw = backward.ops();
  EXPECT_NE(std::find(fw.begin(), fw.end(), "print"), fw.end()) << forward.to_string();
  EXPECT_EQ(std::find(bw.begin(), bw.end(), "print"), bw.end()) << backward.to_string();
}

TEST(FunctionGradient, AFunctionThatAssignsRunsOpByOpUnderATape) {
  ag::Variable calls(ag::constant(0.0, ag::float64), "calls", /*trainable=*/false);
  auto counted = [&](const Tensor& x) {
    calls.assign_add(ag::constant(1.0, ag::float64));
    return ag::exp(x) * 2.0;
  };
  auto traced = ag::function(counted);
  Tensor x = f64({0.1, 0.5});
  EXPECT_THROW_CONTAINS(traced.get_concrete_function(x).gradient_graphs(), ag::UnimplementedError,
                        "assigns a variable");
  std::vector<Tensor> g = gradients(traced, x);
  expect_close(g[0], ag::exp(x) * 2.0, 1e-12, "replayed gradient");
  EXPECT_EQ(calls.read().item<double>(), 1.0) << "the assignment ran once";
}

// A gradient the joint trace cannot build fails as eagerly, with eager
// code's error, when the tape's gradient needs it.
TEST(FunctionGradient, AnOpaqueHostFunctionInsideFailsAsEagerly) {
  auto f = ag::function([](const Tensor& x) {
    std::vector<Tensor> doubled = ag::host_function(
        [](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] * 2.0}; }, {x},
        {ag::TensorSpec({2}, ag::float64)}, "double_it");
    return doubled[0] + x;
  });
  Tensor x = f64({1, 2});
  EXPECT_THROW(f.get_concrete_function(x).gradient_graphs(), ag::UnimplementedError);
  ag::GradientTape tape;
  tape.watch(x);
  Tensor y = ag::reduce_sum(f(x));
  EXPECT_THROW_CONTAINS(tape.gradient(y, x), ag::UnimplementedError,
                        "the host function 'double_it'");
}

}  // namespace
