// TensorArrays kept in the layout they are read in
// (passes/transposed_arrays.cpp): the IR before and after the pass, which
// permutations and arrays it lays out anew and which it leaves, and for
// traced functions (dynamic_rnn among them) values, errors and gradients
// against eager execution with the transpose after the loop gone.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "body_builder.h"
#include "error_test_util.h"
#include "function_cache_util.h"
#include "graph/graph.h"
#include "ops/dispatch.h"
#include "passes/passes.h"
#include "staged_test_util.h"

namespace ag::passes {
namespace {

using namespace ag_test;

// The tensor_array_writes of `body` and its nested bodies, in order.
std::vector<const Node*> writes(const Body& body) {
  std::vector<const Node*> found;
  for (const Node& n : body.nodes) {
    if (n.is_op(OpId::TensorArrayWrite)) found.push_back(&n);
    for (const auto& sub : n.subgraphs) {
      for (const Node* w : writes(*sub)) found.push_back(w);
    }
  }
  return found;
}

// A While writing row i of a [3, 2, 4] array for i < 3, the array stacked
// and transposed with `perm`.
BodyBuilder loop_writing_rows(const std::vector<int64_t>& perm) {
  BodyBuilder cond;
  ValueRef ci = cond.placeholder("i", int64, {});
  cond.placeholder("rows", float32, {3, 2, 4});
  cond.placeholder("v", float32, {2, 4});
  cond.body.outputs.push_back(cond.op(OpId::Less, {ci, cond.constant(Tensor(int64_t{3}))}));

  BodyBuilder body;
  ValueRef i = body.placeholder("i", int64, {});
  ValueRef rows = body.placeholder("rows", float32, {3, 2, 4});
  ValueRef v = body.placeholder("v", float32, {2, 4});
  body.output(body.op(OpId::Add, {i, body.constant(Tensor(int64_t{1}))}));
  body.output(body.op(OpId::TensorArrayWrite, {rows, i, v}));

  BodyBuilder b;
  ValueRef value = b.placeholder("v", float32, {2, 4});
  ValueRef zeros_rows = b.constant(zeros({3, 2, 4}, float32));
  ValueRef start = b.constant(Tensor(int64_t{0}));
  ValueRef loop =
      b.control_flow(NodeKind::While, {start, zeros_rows, value}, {cond.finish(), body.finish()});
  b.output(b.op(OpId::Transpose, {{loop.node, 1}}, perm_attrs(perm)));
  return b;
}

TEST(TransposedArrays, AnArrayReadTransposedIsWrittenAlongTheMovedAxis) {
  BodyBuilder b = loop_writing_rows({1, 0, 2});
  EXPECT_EQ(b.body.to_string(),
            "[] -> v\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "['Const_1', 'Const', 'v'] -> While\n"
            "['While:1'] -> transpose\n"
            "['transpose'] -> Identity\n");

  lay_out_arrays_transposed(b.body);
  eliminate_dead_code(b.body);

  // The zeros are transposed before the loop (folding makes them a
  // constant), the loop's result is read as it is.
  EXPECT_EQ(b.body.to_string(),
            "[] -> v\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "['Const'] -> transpose_1\n"
            "['Const_1', 'transpose_1', 'v'] -> While\n"
            "['While:1'] -> Identity\n");
  const Node& loop = b.body.nodes[4];
  EXPECT_EQ(loop.outputs[1].shape, Shape({2, 3, 4}));
  EXPECT_EQ(b.body.nodes[3].outputs[0].shape, Shape({2, 3, 4}));
  EXPECT_EQ(b.body.nodes[3].attrs.ints, (std::vector<int64_t>{1, 0, 2}));
  for (const auto& sub : loop.subgraphs)
    EXPECT_EQ(sub->type_of({sub->placeholders[1], 0}).shape, Shape({2, 3, 4}));
  std::vector<const Node*> written = writes(b.body);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0]->attrs.axis, 1);
  EXPECT_EQ(written[0]->outputs[0].shape, Shape({2, 3, 4}));
  EXPECT_EQ(loop.subgraphs[1]->type_of(loop.subgraphs[1]->outputs[1]).shape, Shape({2, 3, 4}));
}

// {0, 2, 1} leaves the rows' axis in front; {2, 1, 0} and {2, 0, 1} move it
// but reorder the other axes: all stay transposes of the loop's result.
TEST(TransposedArrays, OnlyTransposesThatMoveTheRowsAxisAloneAreTakenIn) {
  for (const std::vector<int64_t>& perm :
       std::vector<std::vector<int64_t>>{{0, 2, 1}, {2, 1, 0}, {2, 0, 1}}) {
    BodyBuilder b = loop_writing_rows(perm);
    const std::string before = b.body.to_string();
    lay_out_arrays_transposed(b.body);
    EXPECT_EQ(b.body.to_string(), before);
    EXPECT_EQ(writes(b.body)[0]->attrs.axis, 0);
  }
}

// A running sum over the rows of x (its first axis), each sum times 2
// written to an array, stacked and transposed with `perm`.
std::function<Tensor(Tensor)> running_sums_transposed(std::vector<int64_t> perm) {
  return [perm](Tensor x) {
    const int64_t n = x.shape()[0];
    TensorArray rows(x.dtype(), n);
    Tensor sum = x[0] * 0;
    for_stmt(
        range(Tensor(n)), no_extra_test,
        [&](Tensor i) {
          sum = sum + x[i];
          rows.write(i, sum * 2);
        },
        ag::state({"sum", "rows"}, sum, rows));
    return transpose(rows.stack(), perm);
  };
}

struct PermCase {
  std::vector<int64_t> perm;
  Shape shape;  // x's: [rows, row...]
  DType dtype;
  size_t transposes_left;
};

TEST(TransposedArrays, ArraysReadTransposedGiveTheEagerValues) {
  const std::vector<PermCase> cases = {
      {{1, 0, 2}, {5, 3, 4}, float32, 0},        // dynamic_rnn's
      {{1, -3, 2}, {5, 3, 4}, float32, 0},       // the same, a negative axis
      {{1, 0}, {6, 20}, float32, 0},             // columns of a matrix
      {{1, 2, 0}, {5, 3, 4}, float32, 0},        // rows along the last axis
      {{1, 0, 2, 3}, {3, 2, 4, 5}, int32, 0},    // rank 4
      {{1, 2, 0, 3}, {3, 2, 4, 5}, float64, 0},  // rank 4, axis 2
      {{0, 2, 1}, {5, 3, 4}, float32, 1},        // the rows' axis stays in front
      {{2, 1, 0}, {5, 3, 4}, float32, 1},        // the other axes reordered
      {{2, 0, 1}, {5, 3, 4}, float32, 1},
  };
  for (const PermCase& c : cases) {
    SCOPED_TRACE("perm" + perm_string(c.perm));
    auto eager = running_sums_transposed(c.perm);
    auto staged = function(eager);
    Tensor x = random_uniform(c.shape, -40.0, 40.0, c.dtype, 11);
    for (Tensor input : {x, x * 3 - 1}) {
      EXPECT_EQ(staged(input).values_string(), eager(input).values_string());
    }
    auto body = optimized_body(staged, x);
    EXPECT_EQ(count_ops(*body, OpId::Transpose), c.transposes_left) << body->to_string();
    std::vector<const Node*> written = writes(*body);
    ASSERT_EQ(written.size(), 1u);
    EXPECT_EQ(written[0]->attrs.axis == 0, c.transposes_left == 1);
  }
}

// An array over 2^20 elements: its transposed zeros fold too (constant
// folding's size limit does not hold a transpose of a constant only it
// reads), so no transpose runs per call.
TEST(TransposedArrays, ALargeArrayFoldsItsTransposedZeros) {
  auto eager = running_sums_transposed({1, 0, 2});
  auto staged = function(eager);
  Tensor x = random_uniform({5, 1024, 208}, -4.0, 4.0, float32, 12);
  EXPECT_EQ(staged(x).to_vector<float>(), eager(x).to_vector<float>());
  auto body = optimized_body(staged, x);
  EXPECT_EQ(count_ops(*body, OpId::Transpose), 0u) << body->to_string();
}

// Arrays the rewrite leaves alone: the stack read whole besides its
// transpose, an array read in the loop, a dynamic-size array, two
// transposes of the stack with different permutations.
TEST(TransposedArrays, ArraysReadOtherwiseKeepTheirLayout) {
  auto also_summed = [](Tensor x) {
    TensorArray rows(float32, 4);
    for_stmt(
        range(Tensor(int64_t{4})), no_extra_test,
        [&](Tensor i) { rows.write(i, x * cast(i, float32)); }, ag::state({"rows"}, rows));
    return transpose(rows.stack(), {1, 0, 2}) + reduce_sum(rows.stack());
  };
  auto read_in_loop = [](Tensor x) {
    TensorArray rows(float32, 4);
    rows.write(0, x);
    for_stmt(
        range(Tensor(int64_t{1}), Tensor(int64_t{4})), no_extra_test,
        [&](Tensor i) { rows.write(i, rows.read(i - 1) * 2); }, ag::state({"rows"}, rows));
    return transpose(rows.stack(), {1, 0, 2});
  };
  auto dynamic_size = [](Tensor x) {
    TensorArray rows(float32, 0, /*dynamic_size=*/true);
    for_stmt(
        range(Tensor(int64_t{4})), no_extra_test,
        [&](Tensor i) { rows.write(i, x * cast(i, float32)); }, ag::state({"rows"}, rows));
    return transpose(rows.stack(), {1, 0, 2});
  };
  auto two_transposes = [](Tensor x) {
    TensorArray rows(float32, 4);
    for_stmt(
        range(Tensor(int64_t{4})), no_extra_test,
        [&](Tensor i) { rows.write(i, x * cast(i, float32)); }, ag::state({"rows"}, rows));
    return transpose(rows.stack(), {1, 0, 2}) + reduce_sum(transpose(rows.stack(), {2, 0, 1}));
  };
  Tensor x = random_uniform({3, 5}, -2.0, 2.0, float32, 4);
  for (auto eager : std::vector<std::function<Tensor(Tensor)>>{also_summed, read_in_loop,
                                                               dynamic_size, two_transposes}) {
    auto staged = function(eager);
    EXPECT_EQ(staged(x).values_string(), eager(x).values_string());
    auto body = optimized_body(staged, x);
    EXPECT_GE(count_ops(*body, OpId::Transpose), 1u) << body->to_string();
    for (const Node* w : writes(*body)) EXPECT_EQ(w->attrs.axis, 0) << body->to_string();
  }
}

TEST(TransposedArrays, DynamicRnnWritesItsStatesInTheOrderItReturnsThem) {
  auto rnn = function(dynamic_rnn, {.name = "dynamic_rnn"});
  for (Shape shape : {Shape{32, 100, 128}, Shape{2, 3, 4}, Shape{3, 7, 5}}) {
    SCOPED_TRACE(shape.to_string());
    Tensor input = random_uniform(shape, -1.0, 1.0, float32, 7);
    Tensor init = random_uniform({shape[0], shape[2]}, -1.0, 1.0, float32, 8);
    EXPECT_EQ(rnn(input, init).values_string(), dynamic_rnn(input, init).values_string());
    auto body = optimized_body(rnn, input, init);
    // Both transposes gone when the input's rows are not small
    // (passes/transposed_gathers.cpp keeps a transpose for slices of at
    // most 16 elements); the states are written along axis 1.
    EXPECT_EQ(count_ops(*body, OpId::Transpose), shape[0] * shape[2] > 16 ? 0u : 1u)
        << body->to_string();
    std::vector<const Node*> written = writes(*body);
    ASSERT_EQ(written.size(), 1u);
    EXPECT_EQ(written[0]->attrs.axis, 1);
  }
}

// A loop shorter than its array leaves rows of zeros, also along the moved
// axis: the plan keeps copying the zeros in (it compares the loop's length
// with the array's size along the write's axis, 10, not with dim 0, 3).
TEST(TransposedArrays, AShorterLoopLeavesItsZerosAlongTheMovedAxis) {
  auto first_five = [](Tensor x) {
    TensorArray rows(float32, 10);
    for_stmt(
        range(Tensor(int64_t{5})), no_extra_test,
        [&](Tensor i) { rows.write(i, x * cast(i + 1, float32)); }, ag::state({"rows"}, rows));
    return transpose(rows.stack(), {1, 0, 2});
  };
  auto staged = function(first_five);
  Tensor x = random_uniform({3, 4}, 1.0, 2.0, float32, 9);
  for (Tensor input : {x, x * -3}) {
    EXPECT_EQ(staged(input).values_string(), first_five(input).values_string());
  }
  EXPECT_EQ(count_ops(*optimized_body(staged, x), OpId::Transpose), 0u);
  EXPECT_EQ(plan_for(staged, x).num_uncopied_loop_variables(), 0u);
}

// A write past the array's end fails with the message it gives eagerly.
TEST(TransposedArrays, AnIndexOutOfRangeFailsAsItDoesEagerly) {
  auto shifted = [](Tensor x, Tensor shift) {
    TensorArray rows(float32, 3);
    for_stmt(
        range(Tensor(int64_t{3})), no_extra_test, [&](Tensor i) { rows.write(i + shift, x); },
        ag::state({"rows"}, rows));
    return transpose(rows.stack(), {1, 0, 2});
  };
  auto staged = function(shifted);
  Tensor x = zeros({2, 4}, float32);
  const std::string message = "TensorArray.write: index 3 is out of range for size 3";
  EXPECT_CONTAINS(error_of([&] { shifted(x, constant(int64_t{1})); }), message);
  EXPECT_CONTAINS(error_of([&] { staged(x, constant(int64_t{1})); }), message);
  EXPECT_EQ(staged(x, constant(int64_t{0})).values_string(),
            shifted(x, constant(int64_t{0})).values_string());
  EXPECT_EQ(count_ops(*optimized_body(staged, x, constant(int64_t{0})), OpId::Transpose), 0u);
}

// The gradients of sum(f(a, b)^2) with respect to a and b.
std::vector<Tensor> squared_sum_gradients(const std::function<Tensor(Tensor, Tensor)>& f,
                                          const Tensor& a, const Tensor& b) {
  GradientTape tape;
  tape.watch(a);
  tape.watch(b);
  Tensor out = f(a, b);
  return tape.gradient(reduce_sum(out * out), std::vector<Tensor>{a, b});
}

// The gradient through a loop whose array the forward plan writes
// transposed (an RNN cell with a weight) against the eager tape's, and
// tensor_array_write's own gradient along axis 1 against central
// differences.
TEST(TransposedArrays, GradientsMatchEagerAndFiniteDifferences) {
  auto cell_loop = [](Tensor x, Tensor w) {
    TensorArray states(float64, 4);
    Tensor state = zeros({3, 2}, float64);
    for_stmt(
        range(Tensor(int64_t{4})), no_extra_test,
        [&](Tensor i) {
          state = tanh(x * w + state * 0.5);
          states.write(i, state * cast(i + 1, float64));
        },
        ag::state({"state", "states"}, state, states));
    return transpose(states.stack(), {1, 0, 2}) * 3.0;
  };
  auto staged = function(cell_loop);
  Tensor x = random_uniform({3, 2}, -1.0, 1.0, float64, 21);
  Tensor w = random_uniform({2}, 0.5, 1.5, float64, 22);
  EXPECT_EQ(count_ops(*optimized_body(staged, x, w), OpId::Transpose), 0u);
  std::vector<Tensor> eager = squared_sum_gradients(cell_loop, x, w);
  std::vector<Tensor> graph = squared_sum_gradients(staged, x, w);
  for (size_t k = 0; k < 2; ++k) {
    ASSERT_EQ(graph[k].shape(), eager[k].shape());
    std::vector<double> g = graph[k].to_vector<double>(), e = eager[k].to_vector<double>();
    for (size_t j = 0; j < g.size(); ++j) EXPECT_NEAR(g[j], e[j], 1e-12) << k << " at " << j;
  }

  // dynamic_rnn, whose forward plan keeps its state in the array's rows
  // (plan_views_test.cpp), the same through the graph as eagerly.
  auto rnn = function(dynamic_rnn, {.name = "dynamic_rnn"});
  Tensor input = random_uniform({3, 6, 5}, -1.0, 1.0, float32, 25);
  Tensor init = random_uniform({3, 5}, -1.0, 1.0, float32, 26);
  std::vector<Tensor> rnn_eager = squared_sum_gradients(dynamic_rnn, input, init);
  std::vector<Tensor> rnn_graph = squared_sum_gradients(rnn, input, init);
  for (size_t k = 0; k < 2; ++k)
    EXPECT_EQ(rnn_graph[k].values_string(), rnn_eager[k].values_string()) << k;

  // write(a, 1, v) along axis 1 of a [2, 3, 2] array; loss sum(out * out).
  Attrs along;
  along.axis = 1;
  Tensor a = random_uniform({2, 3, 2}, -1.0, 1.0, float64, 23);
  Tensor v = random_uniform({2, 2}, -1.0, 1.0, float64, 24);
  Tensor index = constant(int64_t{1});
  auto loss = [&](Tensor array, Tensor value) {
    Tensor out = ops::apply(OpId::TensorArrayWrite, {array, index, value}, along, {});
    return reduce_sum(out * out);
  };
  GradientTape tape;
  tape.watch(a);
  tape.watch(v);
  std::vector<Tensor> grads = tape.gradient(loss(a, v), std::vector<Tensor>{a, v});
  const double h = 1e-6;
  std::vector<Tensor> at = {a, v};
  for (size_t input = 0; input < 2; ++input) {
    std::vector<double> base = at[input].to_vector<double>();
    std::vector<double> got = grads[input].to_vector<double>();
    for (size_t k = 0; k < base.size(); ++k) {
      std::vector<double> plus = base, minus = base;
      plus[k] += h;
      minus[k] -= h;
      std::vector<Tensor> p = at, m = at;
      p[input] = doubles(plus, at[input].shape());
      m[input] = doubles(minus, at[input].shape());
      const double fd =
          (loss(p[0], p[1]).item<double>() - loss(m[0], m[1]).item<double>()) / (2 * h);
      EXPECT_NEAR(got[k], fd, 1e-6) << "input " << input << " at " << k;
    }
  }
}

}  // namespace
}  // namespace ag::passes
