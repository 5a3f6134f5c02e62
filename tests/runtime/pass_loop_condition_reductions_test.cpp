// A While's condition reading its reductions of loop variables as loop
// variables (passes/loop_condition_reductions.cpp), which fusion computes
// with the body's new value (passes/fusion.cpp, a fused node's second
// output): the IR before and after, which reductions are carried, and the
// loops' results against eager execution, bit for bit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "body_builder.h"
#include "exec/plan.h"
#include "graph/graph.h"
#include "passes/passes.h"
#include "plan_test_util.h"

namespace ag {
namespace {

using ag_test::count_ops;
using graph::Body;
using graph::Node;
using graph::NodeKind;
using ops::OpId;

Tensor collatz_steps(Tensor x) {
  Tensor steps = constant(0);
  while_stmt([&] { return reduce_max(x) > 1; },
             [&] {
               Tensor next = where(x % 2 == 0, floordiv(x, 2), 3 * x + 1);
               x = where(x > 1, next, x);
               steps = steps + 1;
             },
             state({"x", "steps"}, x, steps));
  return steps;
}

template <class F, class... Specs>
Body traced_body(F fn, const Specs&... specs) {
  return ag::function(fn).get_concrete_function(specs...).graph().body();
}

const Node& only_while(const Body& body) {
  for (const Node& n : body.nodes) {
    if (n.kind == NodeKind::While) return n;
  }
  throw std::runtime_error("no While node");
}

TEST(LoopConditionReductions, TheConditionReadsACarriedReduction) {
  Body body = traced_body(collatz_steps, TensorSpec({100}, int32));
  ASSERT_EQ(body.to_string(),
            "[] -> args_0\n"
            "[] -> Const\n"
            "['args_0', 'Const'] -> While\n"
            "['While:1'] -> Identity\n");
  const std::string loop_before = only_while(body).subgraphs[1]->to_string();

  passes::carry_loop_condition_reductions(body);

  EXPECT_EQ(body.to_string(),
            "[] -> args_0\n"
            "[] -> Const\n"
            "['args_0'] -> reduce_max\n"
            "['args_0', 'Const', 'reduce_max'] -> While\n"
            "['While:1'] -> Identity\n");
  const Node& loop = only_while(body);
  EXPECT_EQ(loop.outputs.size(), 3u);
  EXPECT_EQ(loop.outputs[2].shape, Shape{});
  // reduce_max(x) became the placeholder of the new variable.
  EXPECT_EQ(loop.subgraphs[0]->to_string(),
            "[] -> x\n"
            "[] -> steps\n"
            "[] -> reduce_max\n"
            "[] -> Const\n"
            "['reduce_max', 'Const'] -> greater\n");
  EXPECT_EQ(loop.subgraphs[0]->placeholders.size(), 3u);
  // The body computes it from the new x, as its third output.
  EXPECT_EQ(loop.subgraphs[1]->to_string(), loop_before +
                                                "['where_1'] -> reduce_max\n"
                                                "['reduce_max'] -> reduce_max_1\n"
                                                "[] -> reduce_max_2\n");
  EXPECT_EQ(loop.subgraphs[1]->placeholders.size(), 3u);
  EXPECT_EQ(loop.subgraphs[1]->outputs.size(), 3u);
}

// After the whole pipeline: one fused node computes the new x and its
// maximum, the condition reduces nothing.
TEST(LoopConditionReductions, FusionComputesTheReductionWithTheValue) {
  auto body = std::make_shared<Body>(traced_body(collatz_steps, TensorSpec({3000}, int32)));
  auto traced = std::make_shared<Body>(*body);
  passes::optimize(*body);
  const Node& loop = only_while(*body);
  EXPECT_EQ(count_ops(*loop.subgraphs[0], OpId::ReduceMax), 0u);
  for (const Node& n : loop.subgraphs[1]->nodes) EXPECT_FALSE(n.is_op(OpId::ReduceMax)) << n.name;
  const Node* fused = nullptr;
  for (const Node& n : loop.subgraphs[1]->nodes) {
    if (n.kind == NodeKind::Fused) fused = &n;
  }
  ASSERT_NE(fused, nullptr) << loop.subgraphs[1]->to_string();
  EXPECT_EQ(fused->outputs.size(), 2u);
  EXPECT_EQ(fused->member_names(),
            "mul, add, floordiv, mod, equal, where, greater, where_1, reduce_max");
  auto plan = ag_test::plan_of(body);
  EXPECT_EQ(plan->num_inline_loops(), 1u);
  Tensor x = range(constant(1), constant(3001));
  EXPECT_EQ(ag_test::run(*plan, {x})[0].item<int32_t>(), 216);
  ag_test::expect_eager_values(*plan, *traced, {x});
}

// Carried: integer and bool reductions over all axes of a loop variable of
// more than ops::kMaxFlatElements elements. Not: floats (a fused sum adds
// in another order), short vectors (flat steps), one axis of two, a captured
// value, a reduction that is the condition's output itself.
TEST(LoopConditionReductions, OnlyExactReductionsOfLargeLoopVariablesAreCarried) {
  auto carried = [](auto fn, const TensorSpec& spec) {
    Body body = traced_body(fn, spec);
    const size_t before = only_while(body).outputs.size();
    passes::carry_loop_condition_reductions(body);
    return only_while(body).outputs.size() - before;
  };
  auto halve_while = [](auto reduce) {
    return [reduce](Tensor x) {
      while_stmt([&] { return reduce(x) > 0; }, [&] { x = floordiv(x, 2); }, state({"x"}, x));
      return x;
    };
  };
  auto max_of = [](Tensor t) { return reduce_max(t); };
  auto sum_of = [](Tensor t) { return reduce_sum(t); };
  auto row_max = [](Tensor t) { return reduce_max(reduce_max(t, {1})); };
  EXPECT_EQ(carried(halve_while(max_of), TensorSpec({100}, int32)), 1u);
  EXPECT_EQ(carried(halve_while(sum_of), TensorSpec({4, 5}, int64)), 1u);
  EXPECT_EQ(carried(halve_while(max_of), TensorSpec({100}, float32)), 0u);
  EXPECT_EQ(carried(halve_while(max_of), TensorSpec({16}, int32)), 0u);
  EXPECT_EQ(carried(halve_while(max_of), TensorSpec({17}, int32)), 1u);
  EXPECT_EQ(carried(halve_while(row_max), TensorSpec({10, 10}, int32)), 0u);
  // Two reductions of one variable: both carried.
  auto both = [](Tensor x) {
    while_stmt([&] { return logical_and(reduce_max(x) > 0, reduce_min(x) > -5); },
               [&] { x = floordiv(x, 2); }, state({"x"}, x));
    return x;
  };
  EXPECT_EQ(carried(both, TensorSpec({100}, int32)), 2u);
  auto captured = [](Tensor x) {
    Tensor y = x * 2, i = constant(0);
    while_stmt([&] { return logical_and(reduce_max(y) > i, i < 3); }, [&] { i = i + 1; },
               state({"i"}, i));
    return i;
  };
  EXPECT_EQ(carried(captured, TensorSpec({100}, int32)), 0u);
  auto any_flag = [](Tensor flags) {
    while_stmt([&] { return reduce_any(flags); }, [&] { flags = logical_not(flags); },
               state({"flags"}, flags));
    return flags;
  };
  EXPECT_EQ(carried(any_flag, TensorSpec({100}, bool_)), 0u);
}

// Random values over the whole range, with the extremes, zero and small
// negatives.
template <class T>
Tensor random_values(int64_t n, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<T> values = {
      0, 1, T(-1), 2, T(-2), std::numeric_limits<T>::max(), std::numeric_limits<T>::min()};
  while (int64_t(values.size()) < n) {
    const auto v = T(random());
    values.push_back(values.size() % 2 ? v : T(v % 1000));
  }
  return constant(values, Shape{n});
}

template <class F>
void expect_same_as_eager(const std::string& what, F f, const Tensor& x) {
  auto fn = ag::function(f, {.name = what});
  for (int call = 0; call < 2; ++call) {
    std::vector<Tensor> graph = fn(x), eager = f(x);
    ASSERT_EQ(graph.size(), eager.size()) << what;
    for (size_t k = 0; k < graph.size(); ++k) {
      ASSERT_EQ(graph[k].shape(), eager[k].shape()) << what;
      EXPECT_EQ(std::memcmp(graph[k].raw_data(), eager[k].raw_data(),
                            size_t(eager[k].num_elements()) * dtype_size(eager[k].dtype())),
                0)
          << what << " output " << k;
    }
  }
}

TEST(LoopConditionReductions, LoopsGiveTheEagerValues) {
  for (const Tensor& x : {random_values<int32_t>(5001, 91), random_values<int64_t>(3001, 92)}) {
    const std::string type(dtype_name(x.dtype()));
    // Positive values halve until none is left; negative ones stay.
    expect_same_as_eager(
        "halve_" + type,
        [](Tensor v) {
          Tensor steps = constant(0);
          while_stmt([&] { return reduce_max(v) > 0; },
                     [&] {
                       v = where(v > 0, floordiv(v, 2), v);
                       steps = steps + 1;
                     },
                     state({"v", "steps"}, v, steps));
          return std::vector<Tensor>{v, steps};
        },
        x);
    // Two carried reductions; the odd values move up by 3, the even ones
    // halve: stops when the maximum is small or the minimum is not negative.
    expect_same_as_eager(
        "max_and_min_" + type,
        [](Tensor v) {
          Tensor steps = constant(0);
          while_stmt([&] { return logical_and(reduce_max(v) > 7, reduce_min(v) < 0); },
                     [&] {
                       v = where(v % 2 == 0, floordiv(v, 2), v + 3);
                       steps = steps + 1;
                     },
                     state({"v", "steps"}, v, steps));
          return std::vector<Tensor>{v, steps};
        },
        x);
    // A wrapping sum, and a loop that maximum_iterations ends.
    expect_same_as_eager(
        "sum_" + type,
        [](Tensor v) {
          Tensor steps = constant(0);
          while_stmt([&] { return reduce_sum(v) != 0; },
                     [&] {
                       v = v * 3 - 1;
                       steps = steps + 1;
                     },
                     state({"v", "steps"}, v, steps), {.maximum_iterations = 20});
          return std::vector<Tensor>{v, steps};
        },
        x);
  }
}

// The benchmark's loop, against eager.
TEST(LoopConditionReductions, CollatzGivesTheEagerSteps) {
  Tensor x = range(constant(1), constant(20001));
  auto fn = ag::function(collatz_steps, {.name = "collatz_steps"});
  EXPECT_EQ(fn(x).item<int32_t>(), collatz_steps(x).item<int32_t>());
}

}  // namespace
}  // namespace ag
