// Staged for loops over ag::range (passes/range_loops.cpp, and the plan's
// shape-only steps in exec/plan_compile.cpp): after optimisation the loop
// body computes start + k * delta instead of gathering from the range, the
// range only gives the loop its length (computed from its shape rule, no
// elements), and results stay bit for bit those of eager execution.
#include <gtest/gtest.h>

#include <memory>
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
using graph::ValueRef;
using ops::OpId;

// The traced body of `fn` for `specs`, optimised.
template <class F, class... Specs>
std::shared_ptr<Body> optimized_body(F fn, const Specs&... specs) {
  auto traced = ag::function(fn);
  auto body = std::make_shared<Body>(traced.get_concrete_function(specs...).graph().body());
  passes::optimize(*body);
  return body;
}

const Node& only_while(const Body& body) {
  const Node* found = nullptr;
  for (const Node& n : body.nodes) {
    if (n.kind == NodeKind::While) {
      EXPECT_EQ(found, nullptr) << "more than one While";
      found = &n;
    }
  }
  if (!found) throw std::runtime_error("no While node");
  return *found;
}

// Sum and count of the multiples of 3 in range(1, n + 1): a loop body that
// uses its element twice, inside a branch too.
Tensor sum_multiples_of_three(const Tensor& n) {
  Tensor sum = constant(0), count = constant(0);
  for_stmt(
      range(1, n + 1), no_extra_test,
      [&](Tensor i) {
        if_stmt(
            i % 3 == 0,
            [&] {
              sum = sum + i;
              count = count + 1;
            },
            [] {}, state({"sum", "count"}, sum, count));
      },
      state({"sum", "count"}, sum, count));
  return stack({sum, count});
}

TEST(RangeLoops, TheLoopComputesElementsAndTheRangeOnlyGivesItsLength) {
  auto body = optimized_body(sum_multiples_of_three, TensorSpec({}, int32));
  const Node& loop = only_while(*body);
  EXPECT_EQ(count_ops(*loop.subgraphs[1], OpId::Gather), 0u) << loop.subgraphs[1]->to_string();
  // range(1, n + 1)'s start and delta are constants of the body: 1 + k * 1
  // simplifies to one add, and the While has no delta input.
  EXPECT_EQ(count_ops(*loop.subgraphs[1], OpId::Mul), 0u) << loop.subgraphs[1]->to_string();
  EXPECT_EQ(loop.inputs.size(), loop.subgraphs[1]->placeholders.size());
  for (ValueRef in : loop.inputs) EXPECT_FALSE(body->nodes[size_t(in.node)].is_op(OpId::Range));
  // The range is read only by dim (the loop's length).
  ASSERT_EQ(count_ops(*body, OpId::Range), 1u);
  EXPECT_EQ(count_ops(*body, OpId::Dim), 1u);
  auto plan = ag_test::plan_of(body);
  EXPECT_EQ(plan->num_shape_only_steps(), 1u);
  for (int n : {0, 1, 3, 10, 100}) {
    std::vector<Tensor> out = ag_test::run(*plan, {constant(n)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].values_string(), sum_multiples_of_three(constant(n)).values_string())
        << "n = " << n;
  }
  // An empty range (limit below start) runs no iteration; its length comes
  // from range's shape rule.
  EXPECT_EQ(ag_test::run(*plan, {constant(-5)})[0].values_string(), "[0 0]");
}

// A start that is an argument reaches the body as the While's input, and
// delta as a new last input: the body computes start + k * delta.
TEST(RangeLoops, ComputedStartsAreCapturedWithTheirDelta) {
  auto f = [](const Tensor& start, const Tensor& limit) {
    Tensor acc = constant(0);
    for_stmt(
        range(start, limit, constant(3)), no_extra_test, [&](Tensor i) { acc = acc * 2 - i; },
        state({"acc"}, acc));
    return acc;
  };
  auto body = optimized_body(f, TensorSpec({}, int32), TensorSpec({}, int32));
  const Node& loop = only_while(*body);
  EXPECT_EQ(count_ops(*loop.subgraphs[1], OpId::Gather), 0u);
  // k * delta and acc * 2.
  EXPECT_EQ(count_ops(*loop.subgraphs[1], OpId::Mul), 2u) << loop.subgraphs[1]->to_string();
  const ValueRef delta = loop.inputs.back();
  ASSERT_EQ(body->nodes[size_t(delta.node)].kind, NodeKind::Const);
  EXPECT_EQ(body->nodes[size_t(delta.node)].value.item<int32_t>(), 3);
  auto fn = ag::function(f);
  for (auto [start, limit] : {std::pair{-7, 20}, {5, 5}, {4, -3}, {0, 1}}) {
    EXPECT_EQ(fn(constant(start), constant(limit)).item<int32_t>(),
              f(constant(start), constant(limit)).item<int32_t>())
        << start << " to " << limit;
  }
}

TEST(RangeLoops, FloatRangesWithNegativeStepsAreBitIdentical) {
  auto f = [](const Tensor& limit) {
    Tensor acc = constant(0.0f);
    for_stmt(
        range(constant(2.5f), limit, constant(-0.3f)), no_extra_test,
        [&](Tensor x) { acc = acc * 0.5f + x; }, state({"acc"}, acc));
    return acc;
  };
  auto body = optimized_body(f, TensorSpec({}, float32));
  EXPECT_EQ(count_ops(*only_while(*body).subgraphs[1], OpId::Gather), 0u);
  auto fn = ag::function(f);
  for (float limit : {-4.0f, 0.0f, 2.4f, 3.0f}) {
    EXPECT_EQ(fn(constant(limit)).item<float>(), f(constant(limit)).item<float>())
        << "limit = " << limit;
  }
}

// A range of known values is a constant of the trace (tracing computes it
// eagerly): its loop takes start and delta as constants of its body. So
// does dynamic_rnn's range(time).
TEST(RangeLoops, ConstantRangesAreNotGatheredEither) {
  auto f = [](const Tensor& x) {
    Tensor acc = x;
    for_stmt(
        range(constant(7), constant(-8), constant(-3)), no_extra_test,
        [&](Tensor i) { acc = acc * 2 + i; }, state({"acc"}, acc));
    return acc;
  };
  auto body = optimized_body(f, TensorSpec({}, int32));
  EXPECT_EQ(count_ops(*body, OpId::Range), 0u) << body->to_string();
  EXPECT_EQ(count_ops(*body, OpId::Gather), 0u) << only_while(*body).subgraphs[1]->to_string();
  auto fn = ag::function(f);
  EXPECT_EQ(fn(constant(3)).item<int32_t>(), f(constant(3)).item<int32_t>());
}

// A constant that is not a progression is gathered from as before.
TEST(RangeLoops, OtherConstantsAreGatheredFrom) {
  auto f = [](const Tensor& x) {
    Tensor acc = x;
    for_stmt(
        constant({1, 2, 4, 8}), no_extra_test, [&](Tensor i) { acc = acc + i; },
        state({"acc"}, acc));
    return acc;
  };
  auto body = optimized_body(f, TensorSpec({}, int32));
  EXPECT_EQ(count_ops(*only_while(*body).subgraphs[1], OpId::Gather), 1u);
  EXPECT_EQ(ag::function(f)(constant(1)).item<int32_t>(), 16);
}

// A loop over a computed vector of known length: only a range or a
// constant is a progression.
TEST(RangeLoops, ComputedVectorsAreGatheredFrom) {
  auto f = [](const Tensor& xs) {
    Tensor acc = constant(0);
    for_stmt(xs * 2, no_extra_test, [&](Tensor x) { acc = acc * 3 + x; }, state({"acc"}, acc));
    return acc;
  };
  auto body = optimized_body(f, TensorSpec({4}, int32));
  EXPECT_EQ(count_ops(*only_while(*body).subgraphs[1], OpId::Gather), 1u);
  const Tensor xs = constant({0, 1, 2, 3});
  EXPECT_EQ(ag::function(f)(xs).item<int32_t>(), f(xs).item<int32_t>());
}

// The body reads the range as a whole too: it stays, and so do the gathers.
TEST(RangeLoops, RangesReadOtherwiseAreLeftAlone) {
  auto f = [](const Tensor& n) {
    Tensor r = range(n);
    Tensor acc = constant(0);
    for_stmt(
        r, no_extra_test, [&](Tensor i) { acc = acc + i * reduce_sum(r); }, state({"acc"}, acc));
    return acc;
  };
  auto body = optimized_body(f, TensorSpec({}, int32));
  EXPECT_EQ(count_ops(*only_while(*body).subgraphs[1], OpId::Gather), 1u);
  auto fn = ag::function(f);
  EXPECT_EQ(fn(constant(6)).item<int32_t>(), f(constant(6)).item<int32_t>());
}

}  // namespace
}  // namespace ag
