// Gathers of one index from a transposed tensor read the tensor itself
// (passes/transposed_gathers.cpp): the IR before and after the pass, which
// permutations it rewrites and which it leaves, and for traced functions
// (dynamic_rnn's loop among them) values, errors and gradients against eager
// execution with the transpose gone from the optimised graph.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "body_builder.h"
#include "error_test_util.h"
#include "graph/graph.h"
#include "passes/passes.h"
#include "staged_test_util.h"

namespace ag::passes {
namespace {

using namespace ag_test;

Attrs axis_attrs(int64_t axis) {
  Attrs attrs;
  attrs.axis = axis;
  return attrs;
}

// The gathers of `body` and its nested bodies, in order.
std::vector<const Node*> gathers(const Body& body) {
  std::vector<const Node*> found;
  for (const Node& n : body.nodes) {
    if (n.kind == NodeKind::Op && n.op == OpId::Gather) found.push_back(&n);
    for (const auto& sub : n.subgraphs) {
      for (const Node* g : gathers(*sub)) found.push_back(g);
    }
  }
  return found;
}

TEST(TransposedGathers, AGatherOfATransposeReadsTheSourceOnThePermutedAxis) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2, 3, 4});
  ValueRef i = b.placeholder("i", int64, {});
  ValueRef t = b.op(OpId::Transpose, {x}, perm_attrs({1, 0, 2}));
  b.output(b.op(OpId::Gather, {t, i}));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> i\n"
            "['x'] -> transpose\n"
            "['transpose', 'i'] -> gather\n"
            "['gather'] -> Identity\n");

  gather_through_transposes(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> i\n"
            "['x', 'i'] -> gather\n"
            "['gather'] -> Identity\n");
  const Node& g = b.body.nodes[2];
  EXPECT_EQ(g.attrs.axis, 1);
  EXPECT_EQ(g.outputs[0].shape, Shape({2, 4}));
}

// transpose(x, {0, 2, 1}) at an index of axis 0 is x[i] transposed: its
// other axes (2, 1) are not in x's order, so the gather stays; on axis 1 it
// is x[:, :, i], and on axis -1 (axis 2, x's axis 1) x[:, i, :] (rest 0, 2).
// A vector of indices (a gather of several rows) is left alone.
TEST(TransposedGathers, OnlyGathersWhoseOtherAxesKeepTheirOrderAreRewritten) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2, 3, 4});
  ValueRef i = b.placeholder("i", int32, {});
  ValueRef rows = b.placeholder("rows", int64, {2});
  ValueRef t = b.op(OpId::Transpose, {x}, perm_attrs({0, 2, 1}));
  ValueRef swapped = b.op(OpId::Transpose, {x}, perm_attrs({1, 0, 2}));
  b.output(b.op(OpId::Gather, {t, i}));
  b.output(b.op(OpId::Gather, {t, i}, axis_attrs(1)));
  b.output(b.op(OpId::Gather, {t, i}, axis_attrs(-1)));
  b.output(b.op(OpId::Gather, {swapped, rows}));
  const std::string before = b.body.to_string();

  gather_through_transposes(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> i\n"
            "[] -> rows\n"
            "['x'] -> transpose\n"
            "['x'] -> transpose_1\n"
            "['transpose', 'i'] -> gather\n"
            "['gather'] -> Identity\n"
            "['x', 'i'] -> gather_1\n"
            "['gather_1'] -> Identity_1\n"
            "['x', 'i'] -> gather_2\n"
            "['gather_2'] -> Identity_2\n"
            "['transpose_1', 'rows'] -> gather_3\n"
            "['gather_3'] -> Identity_3\n")
      << "before:\n"
      << before;
  EXPECT_EQ(b.body.nodes[5].attrs.axis, 0);
  EXPECT_EQ(b.body.nodes[7].attrs.axis, 2);
  EXPECT_EQ(b.body.nodes[9].attrs.axis, 1);
}

TEST(TransposedGathers, DynamicRnnLoopReadsItsInputWithoutTheTranspose) {
  auto rnn = function(dynamic_rnn, {.name = "dynamic_rnn"});
  Tensor input = random_uniform({32, 100, 128}, -1.0, 1.0, float32, 7);
  Tensor init = random_uniform({32, 128}, -1.0, 1.0, float32, 8);
  EXPECT_EQ(rnn(input, init).values_string(), dynamic_rnn(input, init).values_string());
  auto body = optimized_body(rnn, input, init);
  // The input's transpose is gone: the loop captures the input and reads
  // input[:, i, :] (a strided view in the plan: plan_buffers_test.cpp). (The
  // output's goes too: pass_transposed_arrays_test.cpp.)
  EXPECT_EQ(count_ops(*body, OpId::Transpose), 0u) << body->to_string();
  std::vector<const Node*> reads = gathers(*body);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0]->attrs.axis, 1);
  EXPECT_EQ(reads[0]->outputs[0].shape, Shape({32, 128}));
}

struct PermCase {
  std::vector<int64_t> perm;
  Shape shape;
  size_t transposes_left;
};

const std::vector<PermCase> kPermCases = {
    {{1, 0}, {3, 5}, 0},              // columns of a matrix
    {{1, 0, 2}, {4, 6, 3}, 0},        // dynamic_rnn's
    {{-2, 0, -1}, {4, 6, 3}, 0},      // the same with negative axes
    {{2, 0, 1}, {2, 3, 4}, 0},        // x[:, :, i]
    {{2, 0, 1, 3}, {2, 3, 4, 2}, 0},  // rank 4
    {{0}, {5}, 0},                    // a vector: an element
    {{0, 2, 1}, {2, 3, 4}, 1},        // rows transposed: not in x's order
    {{2, 1, 0}, {2, 3, 4}, 1},
};

// Row i of transpose(x, perm) for an index argument i, outside a loop.
TEST(TransposedGathers, RowsOfTransposesGiveTheEagerValues) {
  for (const PermCase& c : kPermCases) {
    SCOPED_TRACE("perm" + perm_string(c.perm));
    auto eager = [perm = c.perm](Tensor x, Tensor i) { return transpose(x, perm)[i]; };
    auto staged = function(eager);
    Tensor x = random_uniform(c.shape, -4.0, 4.0, float32, 11);
    Tensor t = transpose(x, c.perm);
    for (int64_t i = 0; i < t.shape()[0]; ++i) {
      Tensor index = constant(i);
      EXPECT_EQ(eager(x, index).values_string(), t[i].values_string());
      EXPECT_EQ(staged(x, index).values_string(), t[i].values_string());
    }
    auto body = optimized_body(staged, x, constant(int64_t{0}));
    EXPECT_EQ(count_ops(*body, OpId::Transpose), c.transposes_left) << body->to_string();
  }
}

// A staged loop whose body transposes its captured input and reads row i
// (the transpose inside the loop, recomputed on every iteration until the
// rewrite), times 2.
std::function<Tensor(Tensor)> rows_in_loop(std::vector<int64_t> perm) {
  return [perm](Tensor x) {
    const int64_t n = x.shape()[perm[0] < 0 ? perm[0] + x.rank() : perm[0]];
    TensorArray rows(x.dtype(), n);
    for_stmt(
        range(Tensor(n)), no_extra_test,
        [&](Tensor i) { rows.write(i, transpose(x, perm)[i] * 2); }, ag::state({"rows"}, rows));
    return rows.stack();
  };
}

// For each case, make(perm) gives transpose(x, perm) * 2 eagerly and staged,
// on two inputs, and its optimised graph keeps the case's transposes.
void expect_rows_times_two(std::function<Tensor(Tensor)> (*make)(std::vector<int64_t>),
                           const std::vector<PermCase>& cases) {
  for (const PermCase& c : cases) {
    SCOPED_TRACE("perm" + perm_string(c.perm));
    auto eager = make(c.perm);
    auto staged = function(eager);
    Tensor x = random_uniform(c.shape, -4.0, 4.0, float32, 11);
    for (Tensor input : {x, x * 3.0f}) {
      Tensor want = transpose(input, c.perm) * 2;
      EXPECT_EQ(eager(input).values_string(), want.values_string());
      EXPECT_EQ(staged(input).values_string(), want.values_string());
    }
    auto body = optimized_body(staged, x);
    EXPECT_EQ(count_ops(*body, OpId::Transpose), c.transposes_left) << body->to_string();
  }
}

TEST(TransposedGathers, LoopsOverRowsOfTransposesGiveTheEagerValues) {
  expect_rows_times_two(rows_in_loop, kPermCases);
}

// Every row of transpose(x, perm), read in a staged loop that captures the
// transpose, times 2: the loop captures x instead where the rows keep x's
// order and are not small.
std::function<Tensor(Tensor)> rows_of_captured(std::vector<int64_t> perm) {
  return [perm](Tensor x) {
    Tensor t = transpose(x, perm);
    const int64_t n = t.shape()[0];
    TensorArray rows(x.dtype(), n);
    for_stmt(
        range(Tensor(n)), no_extra_test, [&](Tensor i) { rows.write(i, t[i] * 2); },
        ag::state({"rows"}, rows));
    return rows.stack();
  };
}

TEST(TransposedGathers, LoopsOverRowsOfCapturedTransposesGiveTheEagerValues) {
  // Slices of more than 16 elements, except where noted.
  const std::vector<PermCase> cases = {
      {{1, 0}, {20, 3}, 0},
      {{1, 0, 2}, {4, 6, 5}, 0},
      {{-2, 0, -1}, {4, 6, 5}, 0},
      {{2, 0, 1}, {3, 6, 4}, 0},
      {{2, 0, 1, 3}, {2, 3, 4, 3}, 0},
      {{0, 2, 1}, {3, 4, 6}, 1},
      {{2, 1, 0}, {3, 4, 6}, 1},
      {{1, 0, 2}, {2, 3, 4}, 1},  // slices of 8: rows of the transpose, views
      {{0}, {5}, 1},              // elements
  };
  expect_rows_times_two(rows_of_captured, cases);
}

// A loop that also reads its captured transpose whole keeps it (and reads
// its rows on axis 0).
TEST(TransposedGathers, ALoopThatReadsItsCapturedTransposeOtherwiseKeepsIt) {
  auto eager = [](Tensor x) {
    Tensor t = transpose(x, {1, 0, 2});
    Tensor sum = zeros({5, 4}, float32);
    for_stmt(
        range(Tensor(int64_t{3})), no_extra_test,
        [&](Tensor i) { sum = sum + t[i] + reduce_sum(t, {0}); }, ag::state({"sum"}, sum));
    return sum;
  };
  auto staged = function(eager);
  Tensor x = random_uniform({5, 3, 4}, -1.0, 1.0, float32, 5);
  EXPECT_EQ(staged(x).values_string(), eager(x).values_string());
  auto body = optimized_body(staged, x);
  EXPECT_EQ(count_ops(*body, OpId::Transpose), 1u) << body->to_string();
  std::vector<const Node*> reads = gathers(*body);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0]->attrs.axis, 0);
}

// A transpose also read whole stays; its gathers are still rewritten.
TEST(TransposedGathers, ATransposeReadOtherwiseStays) {
  auto eager = [](Tensor x, Tensor i) {
    Tensor t = transpose(x, {1, 0, 2});
    return t[i] + reduce_sum(t, {0});
  };
  auto staged = function(eager);
  Tensor x = random_uniform({2, 3, 4}, -1.0, 1.0, float32, 5);
  Tensor i = constant(int64_t{2});
  EXPECT_EQ(staged(x, i).values_string(), eager(x, i).values_string());
  auto body = optimized_body(staged, x, i);
  EXPECT_EQ(count_ops(*body, OpId::Transpose), 1u) << body->to_string();
  std::vector<const Node*> reads = gathers(*body);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0]->attrs.axis, 1);
}

// An index out of range fails with the message the transposed gather gives
// eagerly (the length it names is the transposed axis's), outside a loop
// and inside one.
TEST(TransposedGathers, AnIndexOutOfRangeFailsAsItDoesEagerly) {
  auto direct = [](Tensor x, Tensor i) { return transpose(x, {1, 0, 2})[i]; };
  auto shifted_rows = [](Tensor x, Tensor shift) {
    Tensor sum = zeros({5, 4}, float32);
    for_stmt(
        range(Tensor(int64_t{3})), no_extra_test,
        [&](Tensor i) { sum = sum + transpose(x, {1, 0, 2})[i + shift]; }, ag::state({"sum"}, sum));
    return sum;
  };
  Tensor x = zeros({5, 3, 4}, float32);
  auto captured_rows = [](Tensor x, Tensor shift) {
    Tensor t = transpose(x, {1, 0, 2});
    Tensor sum = zeros({5, 4}, float32);
    for_stmt(
        range(Tensor(int64_t{3})), no_extra_test, [&](Tensor i) { sum = sum + t[i + shift]; },
        ag::state({"sum"}, sum));
    return sum;
  };
  auto staged_direct = function(direct);
  auto staged_rows = function(shifted_rows);
  auto staged_captured = function(captured_rows);
  for (int64_t bad : {3, -1}) {
    const std::string message = "gather: indices = " + std::to_string(bad) + " is not in [0, 3)";
    Tensor index = constant(bad);
    EXPECT_CONTAINS(error_of([&] { direct(x, index); }), message);
    EXPECT_CONTAINS(error_of([&] { staged_direct(x, index); }), message);
  }
  const std::string message = "gather: indices = 3 is not in [0, 3)";
  EXPECT_CONTAINS(error_of([&] { shifted_rows(x, constant(int64_t{1})); }), message);
  EXPECT_CONTAINS(error_of([&] { staged_rows(x, constant(int64_t{1})); }), message);
  EXPECT_CONTAINS(error_of([&] { captured_rows(x, constant(int64_t{1})); }), message);
  EXPECT_CONTAINS(error_of([&] { staged_captured(x, constant(int64_t{1})); }), message);
  EXPECT_EQ(count_ops(*optimized_body(staged_captured, x, constant(int64_t{0})), OpId::Transpose),
            0u);
  EXPECT_EQ(staged_rows(x, constant(int64_t{0})).values_string(),
            shifted_rows(x, constant(int64_t{0})).values_string());
  EXPECT_EQ(count_ops(*optimized_body(staged_direct, x, constant(int64_t{0})), OpId::Transpose),
            0u);
  EXPECT_EQ(count_ops(*optimized_body(staged_rows, x, constant(int64_t{0})), OpId::Transpose), 0u);
}

void expect_close(const Tensor& got, const Tensor& want, double tolerance,
                  const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t k = 0; k < g.size(); ++k) EXPECT_NEAR(g[k], w[k], tolerance) << what << " at " << k;
}

// The gradient of sum(f(x, w)) against central differences, for loops over
// x[:, i, :] (an RNN cell with a weight, the transpose in the body or
// captured) and
// x[:, 1, :] as a gather on axis 2 of a transpose outside a loop: the
// rewritten gathers' gradients scatter into x on their axis.
TEST(TransposedGathers, GradientsMatchFiniteDifferences) {
  auto cell_loop = [](Tensor x, Tensor w) {
    Tensor state = zeros({6, 3}, float64);
    for_stmt(
        range(Tensor(int64_t{4})), no_extra_test,
        [&](Tensor i) { state = tanh(transpose(x, {1, 0, 2})[i] * w + state); },
        ag::state({"state"}, state));
    return state * state;
  };
  auto captured_cell_loop = [](Tensor x, Tensor w) {
    Tensor t = transpose(x, {1, 0, 2});
    Tensor state = zeros({6, 3}, float64);
    for_stmt(
        range(Tensor(int64_t{4})), no_extra_test, [&](Tensor i) { state = tanh(t[i] * w + state); },
        ag::state({"state"}, state));
    return state * state;
  };
  auto column = [](Tensor x, Tensor w) {
    return gather(transpose(x, {0, 2, 1}), constant(int64_t{1}), 2) * w;
  };
  Tensor x = random_uniform({6, 4, 3}, -1.0, 1.0, float64, 21);
  Tensor w = random_uniform({3}, 0.5, 1.5, float64, 22);
  for (auto eager :
       std::vector<std::function<Tensor(Tensor, Tensor)>>{cell_loop, captured_cell_loop, column}) {
    auto staged = function(eager);
    EXPECT_EQ(count_ops(*optimized_body(staged, x, w), OpId::Transpose), 0u);
    GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    std::vector<Tensor> grads = tape.gradient(reduce_sum(staged(x, w)), std::vector<Tensor>{x, w});
    const double h = 1e-6;
    std::vector<Tensor> at = {x, w};
    for (size_t input = 0; input < 2; ++input) {
      std::vector<double> base = at[input].to_vector<double>(), fd(base.size());
      for (size_t k = 0; k < base.size(); ++k) {
        std::vector<double> plus = base, minus = base;
        plus[k] += h;
        minus[k] -= h;
        std::vector<Tensor> p = at, m = at;
        p[input] = doubles(plus, at[input].shape());
        m[input] = doubles(minus, at[input].shape());
        fd[k] = (reduce_sum(eager(p[0], p[1])).item<double>() -
                 reduce_sum(eager(m[0], m[1])).item<double>()) /
                (2 * h);
      }
      expect_close(grads[input], doubles(fd, at[input].shape()), 1e-6,
                   "input " + std::to_string(input));
    }
  }
}

}  // namespace
}  // namespace ag::passes
