// Gradients through staged while loops (runtime/control/while_gradient.cpp):
// each loop is written once with ag::while_stmt / for_stmt / if_stmt as agc
// emits them; run eagerly it is a C++ loop under the tape, traced
// (ag::function) it is a While node whose gradient is a backward While. Both
// gradients must agree with each other and with central finite differences
// in float64. Also: loops without a tape carry no stacks, a body's side
// effects run once per iteration, and a body that cannot be differentiated
// is a clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "error_test_util.h"
#include "graph/graph.h"

namespace {

using ag::Tensor;
using ag_test::doubles;
using Tensors = std::vector<Tensor>;
// A loss of the float64 inputs and an int64 scalar (a trip count or limit).
using Loss = std::function<Tensor(const Tensors&, const Tensor&)>;

// Deterministic values in [-scale, scale].
Tensor wavy(const ag::Shape& shape, double scale, double phase) {
  std::vector<double> v(size_t(shape.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(1.7 * double(i) + phase);
  return doubles(v, shape);
}

Tensor steps(int64_t n) {
  return Tensor(n);
}

// d loss / d inputs by central differences, per element.
Tensors finite_differences(const Loss& loss, const Tensors& xs, const Tensor& n) {
  const double h = 1e-6;
  Tensors grads;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<double> base = xs[i].to_vector<double>(), g(base.size());
    for (size_t k = 0; k < base.size(); ++k) {
      Tensors plus = xs, minus = xs;
      std::vector<double> p = base, m = base;
      p[k] += h;
      m[k] -= h;
      plus[i] = doubles(p, xs[i].shape());
      minus[i] = doubles(m, xs[i].shape());
      g[k] = (loss(plus, n).item<double>() - loss(minus, n).item<double>()) / (2 * h);
    }
    grads.push_back(doubles(g, xs[i].shape()));
  }
  return grads;
}

void expect_close(const Tensor& actual, const Tensor& expected, double tol,
                  const std::string& what) {
  ASSERT_TRUE(actual.defined()) << what;
  std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  ASSERT_EQ(a.size(), e.size()) << what;
  for (size_t k = 0; k < a.size(); ++k)
    EXPECT_NEAR(a[k], e[k], tol * (1 + std::abs(e[k]))) << what << ", element " << k;
}

int count_whiles(const ag::graph::Body& body) {
  int n = 0;
  for (const auto& node : body.nodes) {
    if (node.kind == ag::graph::NodeKind::While) ++n;
    for (const auto& sub : node.subgraphs) n += count_whiles(*sub);
  }
  return n;
}

// The gradients of `loss` at xs: eagerly, traced, and by central
// differences; returns the traced function's graph for further checks.
ag::Graph check_gradients(const Loss& loss, const Tensors& xs, const Tensor& n, double tol = 1e-6) {
  auto grads = [loss](const Tensors& xs, const Tensor& n) {
    ag::GradientTape tape;
    for (const Tensor& x : xs) tape.watch(x);
    Tensor y = loss(xs, n);
    return tape.gradient(y, xs, ag::UnconnectedGradients::Zero);
  };
  auto traced = ag::function(grads);
  Tensors eager = grads(xs, n), graph = traced(xs, n), fd = finite_differences(loss, xs, n);
  for (size_t i = 0; i < xs.size(); ++i) {
    std::string which = "input " + std::to_string(i);
    expect_close(graph[i], eager[i], 1e-10, which + ": graph vs eager");
    expect_close(eager[i], fd[i], tol, which + ": eager vs finite differences");
  }
  ag::Graph g = traced.get_concrete_function(xs, n).graph();
  EXPECT_GE(count_whiles(g.body()), 2) << "a forward and a backward While\n" << g.to_string();
  return g;
}

// A tanh loop with a weight: while sum(x) > 1: x = tanh(x * a).
Tensor tanh_loop(const Tensors& p, const Tensor&) {
  Tensor x = p[0];
  const Tensor& a = p[1];
  ag::while_stmt([&] { return ag::reduce_sum(x) > 1.0; }, [&] { x = ag::tanh(x * a); },
                 ag::state({"x"}, x));
  return ag::reduce_sum(x * x);
}

TEST(WhileGradient, TanhLoop) {
  check_gradients(tanh_loop, {doubles({1.5, 2.0, 0.7}, {3}), doubles({0.95}, {1})}, steps(0));
  // Starting below the threshold: no iteration, the identity.
  check_gradients(tanh_loop, {doubles({0.1, 0.2, 0.3}, {3}), doubles({0.95}, {1})}, steps(0));
}

// The TensorFlow guide's dynamic_rnn with a real cell, h = tanh(x_t W + h U + b), over a
// data-dependent number of steps; the states are written to a TensorArray
// and stacked.
constexpr int64_t kBatch = 2, kTime = 5, kIn = 3, kHidden = 4;

Tensor rnn_loss(const Tensors& p, const Tensor& n) {
  const Tensor &x = p[0], &w = p[1], &u = p[2], &b = p[3];
  Tensor h = ag::zeros({kBatch, kHidden}, ag::float64);
  ag::TensorArray states(ag::float64, kTime);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor t) {
        h = ag::tanh(ag::matmul(ag::gather(x, t, 1), w) + ag::matmul(h, u) + b);
        states.write(t, h);
      },
      ag::state({"h", "states"}, h, states));
  Tensor stacked = states.stack();
  return ag::reduce_sum(stacked * stacked) + ag::reduce_sum(h);
}

TEST(WhileGradient, DynamicRnn) {
  Tensors p = {wavy({kBatch, kTime, kIn}, 1.0, 0.1), wavy({kIn, kHidden}, 0.8, 0.2),
               wavy({kHidden, kHidden}, 0.5, 0.3), wavy({kHidden}, 0.3, 0.4)};
  for (int64_t n : {int64_t{4}, int64_t{1}, int64_t{0}}) check_gradients(rnn_loss, p, steps(n));
}

// A loop with `break`, lowered as agc does: a bool flag loop variable ends
// the loop and guards the rest of the body.
Tensor break_loss(const Tensors& p, const Tensor& n) {
  Tensor x = p[0];
  const Tensor& w = p[1];
  Tensor i(int64_t{0}), broke(false);
  ag::while_stmt([&] { return ag::logical_and(i < n, ag::logical_not(broke)); },
                 [&] {
                   x = x * w + 0.1;
                   ag::if_stmt(
                       ag::reduce_sum(x) > 3.0, [&] { broke = Tensor(true); }, [] {},
                       ag::state({"broke"}, broke));
                   ag::if_stmt(
                       ag::logical_not(broke), [&] { x = x + ag::tanh(x) * 0.25; }, [] {},
                       ag::state({"x"}, x));
                   i = i + int64_t{1};
                 },
                 ag::state({"x", "i", "broke"}, x, i, broke));
  return ag::reduce_sum(x * x);
}

TEST(WhileGradient, LoopWithBreak) {
  Tensors p = {doubles({0.5, 0.8}, {2}), doubles({1.3, 1.1}, {2})};
  check_gradients(break_loss, p, steps(10));  // breaks
  check_gradients(break_loss, p, steps(2));   // runs out first
}

// An if inside the loop, whose branches use a captured weight.
Tensor if_in_while_loss(const Tensors& p, const Tensor& n) {
  Tensor x = p[0];
  const Tensor& w = p[1];
  Tensor i(int64_t{0});
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   ag::if_stmt(
                       ag::reduce_sum(x) > 0.0, [&] { x = ag::sigmoid(x * w) - 0.4; },
                       [&] { x = x * x * w + 0.3; }, ag::state({"x"}, x));
                   i = i + int64_t{1};
                 },
                 ag::state({"x", "i"}, x, i));
  return ag::reduce_sum(x * x * x);
}

TEST(WhileGradient, IfInsideTheLoop) {
  ag::Graph g = check_gradients(
      if_in_while_loss, {doubles({0.7, -0.2, 0.4}, {3}), doubles({1.2, 0.9, -0.6}, {3})}, steps(6));
  std::vector<std::string> ops = g.ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "While"), 2);
}

// A TensorArray written in a loop, read back in it and stacked; and
// ag::where in the body.
Tensor array_loss(const Tensors& p, const Tensor& n) {
  Tensor x = p[0];
  ag::TensorArray rows(ag::float64, 4);
  rows.write(0, x);
  Tensor i(int64_t{1});
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   Tensor prev = rows.read(i - int64_t{1});
                   Tensor next = ag::where(prev > 0.0, prev * p[1], ag::exp(prev) - 1.0);
                   rows.write(i, next);
                   i = i + int64_t{1};
                 },
                 ag::state({"rows", "i"}, rows, i));
  Tensor stacked = rows.stack();
  return ag::reduce_sum(stacked * stacked * p[2]);
}

TEST(WhileGradient, TensorArrayWrittenReadAndStackedInALoop) {
  check_gradients(array_loss,
                  {doubles({0.5, -0.3}, {2}), doubles({1.5, -0.8}, {2}), wavy({4, 2}, 1.0, 0.5)},
                  steps(4));
}

// An array of more elements than constant folding folds zeros of: it starts
// from the zeros op, which the trace records as a node; with fewer
// iterations than rows, some rows stay those zeros.
Tensor large_array_loss(const Tensors& p, const Tensor& n) {
  const Tensor base = wavy({600}, 1.0, 0.2);
  ag::TensorArray rows(ag::float64, 4);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor i) { rows.write(i, ag::tanh(base * p[0] + ag::cast(i, ag::float64) * p[1])); },
      ag::state({"rows"}, rows));
  Tensor stacked = rows.stack();
  return ag::reduce_sum(stacked * stacked);
}

TEST(WhileGradient, ALargeArrayStartsFromTheZerosOp) {
  for (int64_t n : {4, 2}) {
    const ag::Graph g =
        check_gradients(large_array_loss, {doubles({0.7}, {1}), doubles({0.3}, {1})}, steps(n));
    const std::vector<std::string> ops = g.ops();
    EXPECT_NE(std::find(ops.begin(), ops.end(), "zeros"), ops.end()) << g.to_string();
  }
}

// A dynamic-size TensorArray (its size unknown while tracing) grown in the
// loop and read back in it, as the fuzzer writes it: ta.read(ta.size() - 1)
// and ta.write(ta.size(), ...). A read's gradient is a write into the
// array's gradient, so only the array's row count is stacked per iteration.
Tensor dynamic_array_loss(const Tensors& p, const Tensor& n) {
  ag::TensorArray ta(ag::float64, 0, /*dynamic_size=*/true);
  ta = ta.write(0, p[0]);
  Tensor i(int64_t{0});
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   Tensor last = ta.read(ta.size() - 1);
                   ta = ta.write(ta.size(), ag::tanh(last * p[1]) + p[0] * 0.5);
                   i = i + int64_t{1};
                 },
                 ag::state({"ta", "i"}, ta, i));
  Tensor stacked = ta.stack();
  return ag::reduce_sum(stacked * stacked) + ag::cast(ta.size(), ag::float64) * 7.0;
}

TEST(WhileGradient, DynamicSizeTensorArrayReadInALoop) {
  Tensors p = {doubles({0.5, -0.3}, {2}), doubles({1.5, -0.8}, {2})};
  for (int64_t n : {int64_t{3}, int64_t{1}, int64_t{0}}) {
    ag::Graph g = check_gradients(dynamic_array_loss, p, steps(n));
    // The stacks hold scalars (the row count) and rows (a read's row, tanh's
    // output), never the array: [iterations, rows, 2] would be rank 3.
    const ag::graph::Node* loop = nullptr;
    for (const auto& node : g.body().nodes)
      if (node.kind == ag::graph::NodeKind::While && !loop) loop = &node;
    ASSERT_NE(loop, nullptr);
    for (size_t k = 3; k < loop->outputs.size(); ++k)
      EXPECT_LE(loop->outputs[k].shape.rank(), 2) << loop->outputs[k].shape.to_string();
  }
}

// An if in the loop that grows a dynamic-size array in one branch and reads
// it in the other (the fuzzer's shape): the if's gradient runs its branches
// again from its inputs, so the loop saves the array, whose row count
// changes between iterations; it is saved flat.
Tensor array_in_an_if_loss(const Tensors& p, const Tensor& n) {
  ag::TensorArray ta(ag::float64, 0, /*dynamic_size=*/true);
  ta = ta.write(0, p[0]);
  Tensor y = p[0];
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor) {
        ag::if_stmt(
            ag::reduce_sum(y) > 0.0,
            [&] {
              ta = ta.write(ta.size(), ag::tanh(ta.read(ta.size() - 1) * p[1]));
              y = y - 0.4;
            },
            [&] { y = y * ag::maximum(ta.read(ta.size() - 1), p[1]) + 0.3; },
            ag::state({"ta", "y"}, ta, y));
      },
      ag::state({"ta", "y"}, ta, y));
  Tensor stacked = ta.stack();
  return ag::reduce_sum(stacked * stacked) + ag::reduce_sum(y * y);
}

TEST(WhileGradient, DynamicSizeTensorArrayGrownInAnIfInALoop) {
  Tensors p = {doubles({0.5, 0.35}, {2}), doubles({1.5, -0.8}, {2})};
  for (int64_t n : {int64_t{5}, int64_t{1}}) check_gradients(array_in_an_if_loss, p, steps(n));
}

// A value computed from a dynamic-size array the loop grows (sigmoid of all its
// rows, whose output sigmoid's gradient reads) has as many rows as the array:
// another count in each iteration, so it is saved flat too (varying_rows.h),
// not as one row of a stack.
Tensor computed_from_a_grown_array_loss(const Tensors& p, const Tensor& n) {
  ag::TensorArray ta(ag::float64, 0, /*dynamic_size=*/true);
  ta = ta.write(0, p[0]);
  Tensor acc = ag::zeros({2}, ag::float64);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor) {
        ta = ta.write(ta.size(), ag::tanh(ta.read(ta.size() - 1) * p[1]));
        acc = acc + ag::reduce_sum(ag::sigmoid(ta.stack() * p[1]), {0});
      },
      ag::state({"ta", "acc"}, ta, acc));
  return ag::reduce_sum(acc * acc);
}

TEST(WhileGradient, ValueComputedFromADynamicSizeArrayGrownInALoop) {
  Tensors p = {doubles({0.5, -0.3}, {2}), doubles({1.5, -0.8}, {2})};
  for (int64_t n : {int64_t{4}, int64_t{1}, int64_t{0}})
    check_gradients(computed_from_a_grown_array_loss, p, steps(n));
}

// A dynamic-size array filled by one loop and read, row by row, by a second:
// the second loop captures the array, whose gradient sums the reads' writes.
Tensor filled_then_read_loss(const Tensors& p, const Tensor& n) {
  ag::TensorArray ta(ag::float64, 0, /*dynamic_size=*/true);
  Tensor x = p[0];
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor t) {
        x = ag::sigmoid(x * p[1]);
        ta.write(t, x);
      },
      ag::state({"x", "ta"}, x, ta));
  Tensor acc = ag::zeros({2}, ag::float64);
  ag::for_stmt(
      ag::range(n), ag::no_extra_test,
      [&](Tensor t) { acc = acc * 0.5 + ta.read(n - int64_t{1} - t) * p[1]; },
      ag::state({"acc"}, acc));
  return ag::reduce_sum(acc * acc);
}

TEST(WhileGradient, DynamicSizeTensorArrayFilledThenReadByAnotherLoop) {
  Tensors p = {doubles({0.5, -0.3}, {2}), doubles({1.5, -0.8}, {2})};
  for (int64_t n : {int64_t{4}, int64_t{1}}) check_gradients(filled_then_read_loss, p, steps(n));
}

// A loop's integer results (its counter) carry no gradient, eagerly and in
// the graph: scaling by the count is a constant factor.
Tensor counted_loss(const Tensors& p, const Tensor&) {
  Tensor x = p[0], i(int64_t{0});
  ag::while_stmt([&] { return ag::reduce_sum(x) < 5.0; },
                 [&] {
                   x = x * 1.5 + 0.1;
                   i = i + int64_t{1};
                 },
                 ag::state({"x", "i"}, x, i));
  return ag::reduce_sum(x * ag::cast(i, ag::float64));
}

TEST(WhileGradient, IntegerResultsCarryNoGradient) {
  check_gradients(counted_loss, {doubles({0.5, 0.3}, {2})}, steps(0));
}

// maximum_iterations stops the loop before its condition does.
Tensor capped_loss(const Tensors& p, const Tensor&) {
  ag::WhileOptions options;
  options.maximum_iterations = 3;
  Tensor y = ag::while_loop([](const Tensor& v) { return ag::reduce_sum(v) < 100.0; },
                            [&](const Tensor& v) { return v * p[1] + ag::tanh(v); }, p[0], options);
  return ag::reduce_sum(y * y);
}

TEST(WhileGradient, MaximumIterations) {
  check_gradients(capped_loss, {doubles({0.3, 0.4}, {2}), doubles({1.1, 0.7}, {2})}, steps(0));
}

// A while inside a while: the inner loop's gradient runs inside the outer's
// backward body.
Tensor nested_loss(const Tensors& p, const Tensor& n) {
  Tensor x = p[0];
  Tensor i(int64_t{0});
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   Tensor j(int64_t{0});
                   ag::while_stmt([&] { return j < int64_t{2}; },
                                  [&] {
                                    x = ag::tanh(x * p[1]) + 0.2;
                                    j = j + int64_t{1};
                                  },
                                  ag::state({"x", "j"}, x, j));
                   i = i + int64_t{1};
                 },
                 ag::state({"x", "i"}, x, i));
  return ag::reduce_sum(x * x);
}

TEST(WhileGradient, WhileInsideAWhile) {
  check_gradients(nested_loss, {doubles({0.3, -0.4}, {2}), doubles({1.1, 0.7}, {2})}, steps(3));
}

// The inner loop runs i times in outer iteration i (0, 1, 2, ...): its
// stacks differ in length between outer iterations, so the outer loop saves
// them flat, all inner iterations in one stack, with each one's length.
Tensor ragged_nested_loss(const Tensors& p, const Tensor& n) {
  Tensor x = p[0];
  Tensor i(int64_t{0});
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   Tensor j(int64_t{0});
                   ag::while_stmt([&] { return j < i; },
                                  [&] {
                                    x = ag::tanh(x * p[1]) + 0.2;
                                    j = j + int64_t{1};
                                  },
                                  ag::state({"x", "j"}, x, j));
                   x = x * p[1];
                   i = i + int64_t{1};
                 },
                 ag::state({"x", "i"}, x, i));
  return ag::reduce_sum(x * x);
}

TEST(WhileGradient, InnerWhileWithATripCountThatVaries) {
  Tensors p = {doubles({0.3, -0.4}, {2}), doubles({1.1, 0.7}, {2})};
  for (int64_t n : {int64_t{4}, int64_t{1}, int64_t{0}})
    check_gradients(ragged_nested_loss, p, steps(n));
}

// The same, three loops deep: the middle loop's flat stacks are saved flat
// again by the outer one.
Tensor ragged_three_deep_loss(const Tensors& p, const Tensor& n) {
  Tensor x = p[0];
  Tensor i(int64_t{0});
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   Tensor j(int64_t{0});
                   ag::while_stmt([&] { return j <= i; },
                                  [&] {
                                    Tensor k(int64_t{0});
                                    ag::while_stmt([&] { return k < j; },
                                                   [&] {
                                                     x = ag::sigmoid(x * p[1]) + 0.1;
                                                     k = k + int64_t{1};
                                                   },
                                                   ag::state({"x", "k"}, x, k));
                                    x = x + p[1] * 0.5;
                                    j = j + int64_t{1};
                                  },
                                  ag::state({"x", "j"}, x, j));
                   i = i + int64_t{1};
                 },
                 ag::state({"x", "i"}, x, i));
  return ag::reduce_sum(x * x);
}

TEST(WhileGradient, ThreeNestedWhilesWithVaryingTripCounts) {
  check_gradients(ragged_three_deep_loss, {doubles({0.3, -0.4}, {2}), doubles({0.9, 0.6}, {2})},
                  steps(3));
}

// Higher-order gradients: d/dx sum(d loss/dx), by a tape around the tape.
Tensors second_derivative(const Loss& loss, const Tensors& p, const Tensor& n) {
  ag::GradientTape outer;
  outer.watch(p[0]);
  Tensor first;
  {
    ag::GradientTape inner;
    inner.watch(p[0]);
    first = ag::reduce_sum(inner.gradient(loss(p, n), p[0]));
  }
  return {outer.gradient(first, p[0])};
}

Loss first_derivative_of(const Loss& loss) {
  return [loss](const Tensors& p, const Tensor& n) {
    ag::GradientTape tape;
    tape.watch(p[0]);
    return ag::reduce_sum(tape.gradient(loss(p, n), p[0]));
  };
}

Tensor if_loss(const Tensors& p, const Tensor&) {
  Tensor y = ag::cond(
      ag::reduce_sum(p[0]) > 0.0, [&] { return ag::tanh(p[0] * p[1]) * p[0]; },
      [&] { return p[0] * p[0] * p[0]; });
  return ag::reduce_sum(y);
}

Tensor fixed_loop_loss(const Tensors& p, const Tensor& n) {
  Tensor x = p[0], i(int64_t{0});
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   x = ag::tanh(x * p[1]) + 0.2;
                   i = i + int64_t{1};
                 },
                 ag::state({"x", "i"}, x, i));
  return ag::reduce_sum(x * x);
}

// Through a staged if, the gradient of the gradient is the finite
// differences' of the gradient, eagerly and in a graph.
TEST(WhileGradient, SecondDerivativeThroughAStagedIf) {
  Tensors p = {doubles({0.3, 0.4}, {2}), doubles({1.1, 0.7}, {2})};
  for (Tensors q : {p, Tensors{doubles({-0.3, -0.4}, {2}), p[1]}}) {
    Tensor fd = finite_differences(first_derivative_of(if_loss), q, steps(0))[0];
    Tensor eager = second_derivative(if_loss, q, steps(0))[0];
    auto traced = ag::function(
        [](const Tensors& q, const Tensor& n) { return second_derivative(if_loss, q, n); });
    expect_close(eager, fd, 1e-6, "eager vs finite differences");
    expect_close(traced(q, steps(0))[0], eager, 1e-10, "graph vs eager");
  }
}

// Through a staged while, eagerly (a C++ loop under both tapes) it is right;
// in a graph it is a clear error, not a wrong number: the backward loop's
// gradient would flow into the forward loop's stacks.
TEST(WhileGradient, SecondDerivativeThroughAStagedWhileIsAnErrorInAGraph) {
  Tensors p = {doubles({0.3, -0.4}, {2}), doubles({1.1, 0.7}, {2})};
  Tensor fd = finite_differences(first_derivative_of(fixed_loop_loss), p, steps(3))[0];
  expect_close(second_derivative(fixed_loop_loss, p, steps(3))[0], fd, 1e-6, "eager");
  auto traced = ag::function(
      [](const Tensors& q, const Tensor& n) { return second_derivative(fixed_loop_loss, q, n); });
  EXPECT_THROW_CONTAINS(traced(p, steps(3)), ag::UnimplementedError,
                        "a higher-order gradient (a tape around the tape that differentiated it) "
                        "through the staged while 'While' in function");
  // One tape inside the function and one around its call: the same.
  auto first = ag::function(first_derivative_of(fixed_loop_loss));
  ag::GradientTape outer;
  outer.watch(p[0]);
  Tensor g = first(p, steps(3));
  expect_close(outer.gradient(g, p[0]), fd, 1e-6, "tape around the function");
}

// A trainable Variable read in the loop body (as a layer's weights are),
// directly or in an if there: the tape watches it, and its gradient sums over
// the iterations.
TEST(WhileGradient, VariableReadInTheBody) {
  // x = step(x, w) n times; loss sum(x * x).
  using Step = std::function<Tensor(const Tensor&, const std::function<Tensor()>&)>;
  auto loop = [](Tensor x, const Tensor& n, const Step& step, const std::function<Tensor()>& w) {
    Tensor i(int64_t{0});
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     x = step(x, w);
                     i = i + int64_t{1};
                   },
                   ag::state({"x", "i"}, x, i));
    return ag::reduce_sum(x * x);
  };
  Step direct = [](const Tensor& x, const std::function<Tensor()>& w) {
    return ag::tanh(x * w()) + 0.2;
  };
  Step in_an_if = [](const Tensor& x, const std::function<Tensor()>& w) {
    Tensor y = x;
    ag::if_stmt(
        ag::reduce_sum(x) > 0.0, [&] { y = ag::tanh(x * w()) - 0.3; }, [&] { y = x * w() + 0.4; },
        ag::state({"y"}, y));
    return y;
  };
  ag::Variable w(doubles({1.1, 0.7}, {2}), "w");
  Tensor x = doubles({0.3, -0.4}, {2}), n = steps(3);
  for (const Step& step : {direct, in_an_if}) {
    auto with_variable = [&](const Tensor& x, const Tensor& n) {
      ag::GradientTape tape;
      Tensor loss = loop(x, n, step, [&] { return w.read(); });
      return tape.gradient(loss, std::vector<ag::Variable>{w})[0];
    };
    auto as_tensor = [&](const Tensors& p, const Tensor& n) {
      return loop(p[0], n, step, [&] { return p[1]; });
    };
    Tensor expected = finite_differences(as_tensor, {x, w.read()}, n)[1];
    expect_close(with_variable(x, n), expected, 1e-6, "eager");
    expect_close(ag::function(with_variable)(x, n), expected, 1e-6, "graph");
  }
}

// The same for a staged if outside any loop.
TEST(WhileGradient, VariableReadInAStagedIf) {
  ag::Variable w(doubles({1.1, 0.7}, {2}), "w");
  auto with_variable = [&](const Tensor& x) {
    ag::GradientTape tape;
    Tensor y = ag::cond(
        ag::reduce_sum(x) > 0.0, [&] { return x * w.read() * w.read(); }, [&] { return x; });
    return tape.gradient(ag::reduce_sum(y), std::vector<ag::Variable>{w})[0];
  };
  Tensor x = doubles({0.3, 0.4}, {2});
  // d/dw sum(x w^2) = 2 x w.
  std::vector<double> expected = {2 * 0.3 * 1.1, 2 * 0.4 * 0.7};
  expect_close(with_variable(x), doubles(expected, {2}), 1e-12, "eager");
  expect_close(ag::function(with_variable)(x), doubles(expected, {2}), 1e-12, "graph");
}

const ag::graph::Node* first_while(const ag::graph::Body& body) {
  for (const auto& node : body.nodes)
    if (node.kind == ag::graph::NodeKind::While) return &node;
  return nullptr;
}

TEST(WhileGradient, OnlyALoopATapeDifferentiatesCarriesStacks) {
  auto plain =
      ag::function([](const Tensor& x, const Tensor& a) { return tanh_loop({x, a}, steps(0)); });
  auto differentiated = ag::function([](const Tensor& x, const Tensor& a) {
    ag::GradientTape tape;
    tape.watch(a);
    return tape.gradient(tanh_loop({x, a}, steps(0)), a);
  });
  auto untracked = ag::function([](const Tensor& x, const Tensor& a) {
    ag::GradientTape tape;
    tape.watch(a);
    Tensor y = tanh_loop({x, x}, steps(0));  // does not use a
    return tape.gradient(ag::reduce_sum(a * a), a) + y;
  });
  Tensor x = doubles({1.5, 2.0, 0.7}, {3}), a = doubles({0.95}, {1});
  auto loop_of = [&](auto& f) {
    const ag::graph::Node* node = first_while(f.get_concrete_function(x, a).graph().body());
    EXPECT_NE(node, nullptr);
    return node;
  };
  // x is the one loop variable; with a tape, the iteration count and the
  // stacks join it.
  EXPECT_EQ(loop_of(plain)->outputs.size(), 1u);
  EXPECT_EQ(loop_of(untracked)->outputs.size(), 1u);
  const ag::graph::Node* stacked = loop_of(differentiated);
  EXPECT_GT(stacked->outputs.size(), 2u);
  std::vector<std::string> body_ops = ag::Graph(stacked->subgraphs[1], "body").ops();
  EXPECT_NE(std::find(body_ops.begin(), body_ops.end(), "tensor_array_write"), body_ops.end());
}

// For the RNN with only the weights watched, the forward stacks h (for
// dU = h^T dz, which matmul reads transposed), the new h (tanh's gradient
// uses its output) and the step (the TensorArray row), not the weights or
// the array: x_t (for dW = x_t^T dz) is gathered from x again by the step.
TEST(WhileGradient, RnnStacksOnlyWhatItsBackwardNeeds) {
  auto gradient = ag::function([](const Tensors& p, const Tensor& n) {
    ag::GradientTape tape;
    tape.watch(p[1]);
    tape.watch(p[2]);
    tape.watch(p[3]);
    return tape.gradient(rnn_loss(p, n), Tensors{p[1], p[2], p[3]});
  });
  Tensors p = {wavy({kBatch, kTime, kIn}, 1.0, 0.1), wavy({kIn, kHidden}, 0.8, 0.2),
               wavy({kHidden, kHidden}, 0.5, 0.3), wavy({kHidden}, 0.3, 0.4)};
  const ag::graph::Node* loop =
      first_while(gradient.get_concrete_function(p, steps(3)).graph().body());
  ASSERT_NE(loop, nullptr);
  // Loop variables h, the array, the for index; then the count; then the stacks.
  std::vector<std::string> stacks;
  for (size_t k = 4; k < loop->outputs.size(); ++k)
    stacks.push_back(std::string(ag::dtype_name(loop->outputs[k].dtype)) +
                     loop->outputs[k].shape.to_string());
  std::sort(stacks.begin(), stacks.end());
  EXPECT_EQ(stacks, (std::vector<std::string>{"float64(None, 2, 4)", "float64(None, 2, 4)",
                                              "int64(None,)"}));
}

// The loop's body with its side effects is the forward of the
// differentiated loop: each effect runs once per iteration, as eagerly, and
// the backward reads the values it needs from the stacks.
auto gradient_of_loop(std::function<Tensor(const Tensor&)> step) {
  return ag::function([step](const Tensor& x) {
    ag::GradientTape tape;
    tape.watch(x);
    Tensor y = ag::while_loop([](const Tensor& v) { return ag::reduce_sum(v) < 10.0; }, step, x);
    return tape.gradient(ag::reduce_sum(y), x);
  });
}

TEST(WhileGradient, BodyWithAPrintPrintsOncePerIteration) {
  auto step = [](const Tensor& v) {
    ag::print("v:", v);
    return v * 2.0;
  };
  std::ostringstream printed;
  ag::set_print_stream(&printed);
  Tensor graph = gradient_of_loop(step)(doubles({1, 2}, {2}));
  std::string graph_lines = printed.str();
  printed.str("");
  ag::GradientTape tape;
  Tensor x = doubles({1, 2}, {2});
  tape.watch(x);
  Tensor eager =
      tape.gradient(ag::reduce_sum(ag::while_loop(
                        [](const Tensor& v) { return ag::reduce_sum(v) < 10.0; }, step, x)),
                    x);
  ag::set_print_stream(nullptr);
  EXPECT_EQ(graph_lines, "v: [1. 2.]\nv: [2. 4.]\n");
  EXPECT_EQ(graph_lines, printed.str());
  expect_close(graph, eager, 0, "graph vs eager");
  expect_close(graph, doubles({4, 4}, {2}), 0, "two doublings");
}

TEST(WhileGradient, BodyWithARandomOpIsDifferentiable) {
  // Noise below 0.1 leaves the iteration count (two) and the slope alone.
  Tensor g = gradient_of_loop([](const Tensor& v) {
    return v * 2.0 + ag::random_uniform({2}, 0.0, 0.1, ag::float64, 3);
  })(doubles({1, 2}, {2}));
  expect_close(g, doubles({4, 4}, {2}), 0, "two doublings");
}

// Summed over a dataset's elements in a staged loop (each iteration pulls
// an element through the iterator's effect): the gradient with respect to
// the weights is eager code's and the finite differences'.
Tensor dataset_loss(const Tensors& p, const Tensor&) {
  auto rows = ag::data::from_tensor_slices(
      doubles({0.5, -1.0, 1.5, 0.25, -0.75, 2.0, 1.0, -0.5, 0.125}, {3, 3}));
  Tensor total = ag::zeros({}, ag::float64);
  ag::for_stmt(
      rows, ag::no_extra_test,
      [&](const Tensor& row) { total = total + ag::reduce_sum(ag::tanh(row * p[0] + p[1])); },
      ag::state({"total"}, total));
  return total * total;
}

TEST(WhileGradient, DatasetLoop) {
  ag::Graph g = check_gradients(dataset_loss, {doubles({0.3, -0.2, 0.7}, {3}), doubles({0.1}, {1})},
                                steps(0));
  EXPECT_NE(g.to_string().find("IteratorGetNext"), std::string::npos) << g.to_string();
}

// Gradient accumulation over a dataset: a trainable variable read in the
// loop's body (the read hoisted before the loop, where the tape sees it)
// gets the gradient eager code gives.
TEST(WhileGradient, DatasetLoopReadingAVariable) {
  ag::Variable w(doubles({0.3, -0.2, 0.7}, {3}), "w");
  auto accumulated = [&w] {
    ag::GradientTape tape;
    Tensor total = ag::zeros({}, ag::float64);
    ag::for_stmt(
        ag::data::from_tensor_slices(doubles({0.5, -1.0, 1.5, 0.25, -0.75, 2.0}, {2, 3})),
        ag::no_extra_test,
        [&](const Tensor& row) { total = total + ag::reduce_sum(ag::tanh(row * w.read())); },
        ag::state({"total"}, total));
    return tape.gradient(total * total, std::vector<ag::Variable>{w})[0];
  };
  Tensor graph = ag::function(accumulated)();
  expect_close(graph, accumulated(), 1e-12, "graph vs eager");
  EXPECT_GT(std::abs(graph.to_vector<double>()[0]), 0.1);
}

// A print in an if in the body: the if's gradient runs its branch again
// for the values, without the print, which the forward ran.
TEST(WhileGradient, BodyWithAPrintInAnIfPrintsOncePerIteration) {
  auto step = [](const Tensor& v) {
    Tensor next = v;
    ag::if_stmt(
        ag::reduce_sum(v) > 4.0,
        [&] {
          ag::print("big:", v);
          next = v * 3.0;
        },
        [&] { next = v * 2.0; }, ag::state({"next"}, next));
    return next;
  };
  std::ostringstream printed;
  ag::set_print_stream(&printed);
  Tensor graph = gradient_of_loop(step)(doubles({1, 2}, {2}));
  ag::set_print_stream(nullptr);
  // (1, 2) doubled, then (2, 4) tripled: one print, a slope of 6.
  EXPECT_EQ(printed.str(), "big: [2. 4.]\n");
  expect_close(graph, doubles({6, 6}, {2}), 0, "doubled, then tripled");
}

// What cannot be differentiated stays a clear error naming the loop and the
// node, never a zero gradient: a variable assignment (the tapes would not
// see the loop's reads of the variable), a host function's C++, and a random
// op in an if in the body, whose gradient would draw again when it runs its
// branch.
TEST(WhileGradient, BodyThatCannotBeDifferentiatedIsAClearError) {
  Tensor x = doubles({1, 2}, {2});
  ag::Variable w(ag::constant(2.0), "w");
  auto assigning = gradient_of_loop([&w](const Tensor& v) {
    Tensor next = v * w.read();
    w.assign_add(ag::constant(1.0));
    return next;
  });
  EXPECT_THROW_CONTAINS(assigning(x), ag::UnimplementedError,
                        "holds a variable assignment ('AssignAddVariableOp')");
  // The gradient by the variable itself, which eager code would sum over the
  // loop's reads: an error too, not a missing gradient.
  auto by_variable = ag::function([&w](const Tensor& x) {
    ag::GradientTape tape;
    Tensor y = ag::while_loop([](const Tensor& v) { return ag::reduce_sum(v) < 10.0; },
                              [&w](const Tensor& v) {
                                Tensor next = v * w.read();
                                w.assign_add(ag::constant(1.0));
                                return next;
                              },
                              x);
    return tape.gradient(ag::reduce_sum(y), std::vector<ag::Variable>{w})[0];
  });
  EXPECT_THROW_CONTAINS(by_variable(x), ag::UnimplementedError,
                        "holds a variable assignment ('AssignAddVariableOp')");
  auto host = gradient_of_loop([](const Tensor& v) {
    return ag::host_function([](const Tensors& in) { return Tensors{in[0] * 2.0}; }, {v},
                             {ag::TensorSpec({2}, ag::float64)}, "double_it")[0];
  });
  EXPECT_THROW_CONTAINS(host(x), ag::UnimplementedError, "the staged while 'While' in function");
  EXPECT_THROW_CONTAINS(host(x), ag::UnimplementedError,
                        "the host function 'double_it' has no gradient");
  auto random_in_if = gradient_of_loop([](const Tensor& v) {
    Tensor next = v;
    ag::if_stmt(
        ag::reduce_sum(v) > 2.0,
        [&] { next = v * 2.0 + ag::random_uniform({2}, 0.0, 0.1, ag::float64, 3); },
        [&] { next = v * 3.0; }, ag::state({"next"}, next));
    return next;
  });
  EXPECT_THROW_CONTAINS(random_in_if(x), ag::UnimplementedError,
                        "holds a stateful op ('random_uniform')");
}

}  // namespace
