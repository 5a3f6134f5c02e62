// What a user sees of the optimised graph and its plan: ConcreteFunction's
// optimized_graph() (fused nodes listed with their members, in text and DOT)
// and plan_stats() (the counts plan_buffers_test.cpp reads from the plan).
#include <gtest/gtest.h>

#include <ag/ag.h>

#include "staged_test_util.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;

Tensor mean_squared_error(Tensor a, Tensor b) {
  return ag::reduce_mean(ag::pow(a - b, 2));
}

TEST(OptimizedGraph, ShowsTheFusedNodeWithItsMembers) {
  auto mse = ag::function(mean_squared_error, {.name = "mse", .arg_names = {"a", "b"}});
  auto concrete =
      mse.get_concrete_function(TensorSpec({1000}, ag::float32), TensorSpec({1000}, ag::float32));
  EXPECT_EQ(concrete.graph().to_string(),
            "[] -> a\n"
            "[] -> b\n"
            "['a', 'b'] -> sub\n"
            "['sub', 'sub'] -> mul\n"  // pow(d, 2) traces as d * d
            "['mul'] -> reduce_mean\n"
            "['reduce_mean'] -> Identity\n");
  ag::Graph optimized = concrete.optimized_graph();
  EXPECT_EQ(optimized.to_string(),
            "[] -> a\n"
            "[] -> b\n"
            "['a', 'b'] -> fused {sub, mul, reduce_mean}\n"
            "['fused'] -> Identity\n");
  EXPECT_NE(optimized.to_dot().find("[label=\"fused\\nFused\\nsub, mul, reduce_mean\", shape=box]"),
            std::string::npos)
      << optimized.to_dot();
  EXPECT_EQ(concrete.plan_stats(), (ag::PlanStats{.steps = 1, .fused_steps = 1}));
  EXPECT_EQ(concrete.plan_stats().to_string(),
            "1 step (1 fused, 0 scalar, 0 flat), 0 buffers, 0 in place, 0 views, 0 loops "
            "(0 inline, 0 batch-major)");
}

TEST(PlanStats, CountLoopsInPlaceStepsAndViews) {
  auto rnn = ag::function(ag_test::dynamic_rnn, {.name = "dynamic_rnn"});
  Tensor input = ag::random_uniform({4, 10, 8}, -1.0, 1.0, ag::float32, 3);
  Tensor state = ag::zeros({4, 8}, ag::float32);
  auto concrete = rnn.get_concrete_function(input, state);
  ag::PlanStats stats = concrete.plan_stats();
  // plan_buffers_test.cpp says why each count is what it is.
  EXPECT_EQ(stats.buffers, 2u);
  EXPECT_EQ(stats.in_place_steps, 2u);
  EXPECT_EQ(stats.views, 1u);
  EXPECT_EQ(stats.loops, 1u);
  EXPECT_EQ(stats.inline_loops, 1u);
  EXPECT_EQ(stats.interchanged_loops, 1u);
  EXPECT_EQ(stats.fused_steps, 0u);
  EXPECT_GT(stats.scalar_steps, 0u);  // the loop's counter and condition
  EXPECT_EQ(stats.to_string().substr(stats.to_string().find("buffers")),
            "buffers, 2 in place, 1 view, 1 loop (1 inline, 1 batch-major)");
}

// collatz's loop: the DOT picture shows the While's condition and body as
// clusters bound to the While's inputs, the fused step inside the body.
TEST(OptimizedGraph, DotShowsLoopBodiesWithTheirFusedNodes) {
  auto collatz = ag::function(ag_workloads::collatz_steps, {.name = "collatz"});
  auto concrete = collatz.get_concrete_function(TensorSpec({100}, ag::int32));
  const std::string dot = concrete.optimized_graph().to_dot();
  const size_t body = dot.find("subgraph \"cluster_n");
  ASSERT_NE(body, std::string::npos) << dot;
  EXPECT_NE(dot.find("_body_n\" {\n    label=\"", body), std::string::npos) << dot;
  EXPECT_NE(dot.find("_cond_n\" {\n    label=\""), std::string::npos) << dot;
  const size_t fused = dot.find("\\nFused\\n", body);
  ASSERT_NE(fused, std::string::npos) << dot;
  EXPECT_NE(dot.substr(fused).find("where"), std::string::npos) << dot;
  // The While's first input binds its body's first placeholder.
  EXPECT_NE(dot.find("_body_n0 [style=dashed];"), std::string::npos) << dot;
}

TEST(OptimizedGraph, IsTheTraceWhenNothingOptimises) {
  auto twice = ag::function([](Tensor a) { return a + a; }, {.name = "twice", .arg_names = {"a"}});
  auto concrete = twice.get_concrete_function(TensorSpec({3}, ag::int32));
  EXPECT_EQ(concrete.optimized_graph().to_string(), concrete.graph().to_string());
  EXPECT_EQ(concrete.plan_stats().to_string(),
            "1 step (0 fused, 0 scalar, 1 flat), 0 buffers, 0 in place, 0 views, 0 loops "
            "(0 inline, 0 batch-major)");
}

}  // namespace
