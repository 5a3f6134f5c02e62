// Exported while loops load back as the while the trace had. ag::onnx::save
// writes a while as a Loop whose condition is computed before it and again
// at the end of its body (onnx/exporter.cpp, emit_while); the importer
// recognises that and makes the condition the while's test instead of a loop
// variable (onnx/import_control.cpp), so the loaded model's optimised graph
// and plan are the traced function's, and its values are the traced
// function's bit for bit. So do not_equal, integer floordiv, stack and a
// for loop's length (dim), which the exporter writes in several ONNX ops
// (onnx/import_elementwise.cpp, import_layout.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../runtime/staged_test_util.h"
#include "ag/ag.h"
#include "ag/onnx.h"
#include "graph/graph.h"

namespace {

using ag::Tensor;
using ag::graph::Body;
using ag::graph::Node;
using ag::graph::NodeKind;

// A body without its names: one line per node, its op and the nodes it
// reads; the subgraphs of If, While and Fused nodes follow it, indented.
void write_structure(const Body& body, const std::string& indent, std::ostringstream& out) {
  for (const Node& n : body.nodes) {
    out << indent << n.op_name() << " (";
    for (auto in : n.inputs) out << " " << in.node << ":" << in.output;
    out << " ) -> " << n.outputs.size() << "\n";
    for (const auto& sub : n.subgraphs) write_structure(*sub, indent + "  ", out);
  }
  out << indent << "outputs";
  for (auto v : body.outputs) out << " " << v.node << ":" << v.output;
  out << "\n";
}

std::string structure(const Body& body) {
  std::ostringstream out;
  write_structure(body, "", out);
  return out.str();
}

// How many values the While nodes of `body` carry, outermost first.
std::vector<size_t> loop_state_sizes(const Body& body) {
  std::vector<size_t> sizes;
  for (const Node& n : body.nodes)
    if (n.kind == NodeKind::While) sizes.push_back(n.outputs.size());
  return sizes;
}

// Exports the trace of `fn` (a function of one tensor) for `inputs[0]`, loads
// it, and expects the traced function's loop state, optimised graph and
// plan, and its values on every one of `inputs`, bit for bit.
template <class F>
void expect_loads_as_traced(const F& fn, const std::vector<Tensor>& inputs) {
  const auto concrete = fn.get_concrete_function(inputs[0]);
  const ag::Graph traced = concrete.graph();
  const ag::onnx::Model loaded = ag::onnx::load_from_bytes(ag::onnx::save_to_bytes(traced));
  EXPECT_EQ(loop_state_sizes(loaded.graph().body()), loop_state_sizes(traced.body()));
  const ag::Graph traced_optimized = concrete.optimized_graph();
  const ag::Graph loaded_optimized = loaded.optimized_graph();
  EXPECT_EQ(structure(loaded_optimized.body()), structure(traced_optimized.body()))
      << "loaded:\n"
      << loaded_optimized.to_string() << "traced:\n"
      << traced_optimized.to_string();
  EXPECT_EQ(loaded.plan_stats().to_string(), concrete.plan_stats().to_string());
  for (const Tensor& x : inputs) {
    const Tensor want = fn(x), got = loaded({x})[0];
    EXPECT_EQ(got.spec().to_string(), want.spec().to_string());
    EXPECT_EQ(got.to_vector<double>(), want.to_vector<double>()) << "for " << x;
  }
}

TEST(OnnxLoopImport, TheTanhLoopLoadsAsTheTracedWhile) {
  // onnx_bench's tanh_loop: 18 iterations on the first input, none on zeros.
  auto f = ag::function([](Tensor x) {
    ag::while_stmt([&] { return ag::reduce_sum(x) > 1; }, [&] { x = ag::tanh(x); },
                   ag::state({"x"}, x));
    return x;
  });
  expect_loads_as_traced(f, {ag::random_uniform({5}, 0.0, 1.0, ag::float32, 7),
                             ag::zeros({5}, ag::float32), ag::fill({5}, 30.0)});
}

// As expect_loads_as_traced, but the parent's constants may come in another
// order (an imported loop makes its counter's zero first): the optimised
// graphs' ops without the constants, and the plans' counters.
template <class F>
void expect_loads_with_the_traced_plan(const F& fn, const std::vector<Tensor>& inputs) {
  const auto concrete = fn.get_concrete_function(inputs[0]);
  const ag::onnx::Model loaded =
      ag::onnx::load_from_bytes(ag::onnx::save_to_bytes(concrete.graph()));
  const ag::Graph traced_optimized = concrete.optimized_graph();
  const ag::Graph loaded_optimized = loaded.optimized_graph();
  auto ops_of = [](const Body& body) {
    std::vector<std::string> ops;
    for (const Node& n : body.nodes) {
      if (n.kind != NodeKind::Const) ops.push_back(n.op_name());
    }
    return ops;
  };
  const std::vector<std::string> loaded_ops = ops_of(loaded_optimized.body());
  EXPECT_EQ(loaded_ops, ops_of(traced_optimized.body())) << loaded_optimized.to_string();
  EXPECT_EQ(std::count(loaded_ops.begin(), loaded_ops.end(), "dim"), 1);
  EXPECT_EQ(loaded.plan_stats().to_string(), concrete.plan_stats().to_string());
  for (const Tensor& x : inputs) {
    const Tensor want = fn(x);
    EXPECT_EQ(loaded({x})[0].to_vector<double>(), want.to_vector<double>()) << "for " << x;
  }
}

TEST(OnnxLoopImport, AForLoopsLengthLoadsAsOneOp) {
  // The exporter writes the loop's length, dim(range, 0), as
  // Squeeze(Shape(range, start = 0, end = 1)).
  auto f = ag::function([](Tensor n) {
    Tensor odd = ag::constant(0), sum = ag::constant(0);
    ag::for_stmt(
        ag::range(ag::constant(1), n + 1), ag::no_extra_test,
        [&](Tensor i) {
          ag::if_stmt(
              i % 2 == 1, [&] { odd = odd + 1; }, [&] { sum = sum + i; },
              ag::state({"odd", "sum"}, odd, sum));
        },
        ag::state({"odd", "sum"}, odd, sum));
    return ag::stack({odd, sum});
  });
  expect_loads_with_the_traced_plan(
      f, {ag::constant(15), ag::constant(0), ag::constant(-3), ag::constant(1)});
}

TEST(OnnxLoopImport, FizzbuzzLoadsWithTheTracedPlan) {
  expect_loads_with_the_traced_plan(ag::function(ag_test::fizzbuzz_count),
                                    {ag::constant(100), ag::constant(15), ag::constant(0)});
}

TEST(OnnxLoopImport, AConditionOnACountAndACapturedBound) {
  // The condition reads a loop variable and the function's argument (a value
  // of the graph around the Loop); the body reads the argument too.
  auto f = ag::function([](Tensor n) {
    Tensor i = Tensor(int64_t{0}), s = Tensor(int64_t{1});
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     s = s * 3 + n;
                     i = i + 1;
                   },
                   ag::state({"i", "s"}, i, s));
    return s - i;
  });
  expect_loads_as_traced(f, {ag::Tensor(int64_t{4}), ag::Tensor(int64_t{0}),
                             ag::Tensor(int64_t{-2}), ag::Tensor(int64_t{30})});
}

TEST(OnnxLoopImport, AConditionThatIsALoopVariable) {
  // The exporter's condition is then the variable's initial value itself,
  // and the body's an Identity of its new value.
  auto f = ag::function([](Tensor x) {
    Tensor go = ag::reduce_max(x) < 5.0f;
    ag::while_stmt([&] { return go; },
                   [&] {
                     x = x * 1.5f + 0.25f;
                     go = ag::reduce_max(x) < 5.0f;
                   },
                   ag::state({"x", "go"}, x, go));
    return x;
  });
  expect_loads_as_traced(f, {ag::constant({0.5f, -1.0f, 2.0f}), ag::constant({6.0f, 1.0f, 0.0f})});
}

TEST(OnnxLoopImport, NotEqualLoadsAsOneOp) {
  // The exporter writes not_equal as Not(Equal).
  auto f = ag::function([](Tensor n) {
    Tensor steps = ag::constant(0);
    ag::while_stmt([&] { return n != 1; },
                   [&] {
                     n = n - 1;
                     steps = steps + 2;
                   },
                   ag::state({"n", "steps"}, n, steps));
    return steps;
  });
  expect_loads_as_traced(f, {ag::constant(5), ag::constant(1), ag::constant(30)});
}

TEST(OnnxLoopImport, TheCollatzLoopLoadsAsTraced) {
  // The TensorFlow guide's collatz: not_equal and an integer floordiv, which the
  // exporter writes in ONNX's ops (Not(Equal); Div, lowered where the
  // remainder's sign is not the divisor's), each load back as one op.
  auto f = ag::function([](Tensor a) {
    Tensor steps = ag::constant(0);
    ag::while_stmt([&] { return a != 1; },
                   [&] {
                     a = ag::where(a % 2 == 0, ag::floordiv(a, 2), 3 * a + 1);
                     steps = steps + 1;
                   },
                   ag::state({"a", "steps"}, a, steps));
    return steps;
  });
  expect_loads_as_traced(f, {ag::constant(27), ag::constant(1), ag::constant(6)});
}

TEST(OnnxLoopImport, FloorDivisionLoadsAsOneOpWithItsValues) {
  auto f =
      ag::function([](Tensor a) { return ag::floordiv(a, ag::constant({3, -3, 7, -7, 1, -1})); });
  expect_loads_as_traced(
      f, {ag::constant({7, 7, -7, -7, 0, -5}), ag::constant({-8, 9, 14, -13, 5, 3})});
  auto int64 = ag::function([](Tensor a) { return ag::floordiv(a, ag::Tensor(int64_t{-4})); });
  expect_loads_as_traced(int64,
                         {ag::constant(std::vector<int64_t>{9, -9, 8, -8, 0, 3}, ag::Shape{6})});
}

TEST(OnnxLoopImport, StackLoadsAsOneOp) {
  // The exporter writes stack as an Unsqueeze of each input and a Concat.
  auto f = ag::function([](Tensor x) {
    return ag::concat({ag::stack({x, x * 2.0f, -x}, 1), ag::stack({x, x}, -1)}, 1);
  });
  expect_loads_as_traced(f, {ag::constant({{1.0f, 2.0f}, {3.0f, 4.0f}})});
  // Not a stack: one of the tensors is unsqueezed at another axis.
  auto g = ag::function(
      [](Tensor x) { return ag::concat({ag::expand_dims(x, 1), ag::expand_dims(x, 0)}, 1); });
  expect_loads_as_traced(g, {ag::constant({{1.0f, 2.0f}})});
}

TEST(OnnxLoopImport, MaximumIterationsIsNotAnIterationCount) {
  // The trip count the exporter writes for maximum_iterations is a constant:
  // the loaded while has the same maximum_iterations and no counter.
  auto f = ag::function([](Tensor x) {
    return ag::while_loop([](Tensor v) { return ag::reduce_sum(v) < 100.0f; },
                          [](Tensor v) { return v * 2.0f; }, x, {.maximum_iterations = 4});
  });
  // Four iterations (the maximum), two (the condition), none.
  expect_loads_as_traced(
      f, {ag::constant({1.0f, 2.0f}), ag::constant({20.0f, 30.0f}), ag::constant({200.0f, 0.0f})});
  const ag::onnx::Model loaded = ag::onnx::load_from_bytes(
      ag::onnx::save_to_bytes(f.get_concrete_function(ag::constant({1.0f, 2.0f})).graph()));
  for (const Node& n : loaded.graph().body().nodes)
    if (n.kind == NodeKind::While) {
      EXPECT_EQ(n.attrs.ints, (std::vector<int64_t>{4}));
    }
}

// dynamic_rnn exported and loaded: the SequenceInsert's position, which the
// importer normalises as where(i < 0, i + length, i), folds to the counter
// (passes/counter_signs.cpp), so the loaded plan is the traced one, its loop
// run batch-major (exec/plan_interchange.cpp); values bit for bit. The
// array's zeros: a constant (960 elements), or the zeros op, exported as a
// ConstantOfShape that loads as the zeros op again (3,200 elements).
TEST(OnnxLoopImport, DynamicRnnLoadsWithTheTracedPlan) {
  auto f = ag::function(ag_test::dynamic_rnn);
  for (int64_t time : {10, 100}) {
    SCOPED_TRACE("time steps: " + std::to_string(time));
    const Tensor x = ag::random_uniform({4, time, 8}, -1.0, 1.0, ag::float32, 1);
    const Tensor state = ag::random_uniform({4, 8}, -1.0, 1.0, ag::float32, 2);
    const auto concrete = f.get_concrete_function(x, state);
    const ag::onnx::Model loaded =
        ag::onnx::load_from_bytes(ag::onnx::save_to_bytes(concrete.graph()));
    EXPECT_EQ(loaded.plan_stats().to_string(), concrete.plan_stats().to_string());
    EXPECT_EQ(loaded.plan_stats().interchanged_loops, 1u);
    const std::vector<std::string> ops = loaded.graph().ops();
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "zeros"), time == 100 ? 1 : 0);
    for (const Tensor& input : {x, x * 3}) {
      const Tensor want = f(input, state), got = loaded({input, state})[0];
      ASSERT_EQ(got.shape(), want.shape());
      EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
    }
  }
}

}  // namespace
