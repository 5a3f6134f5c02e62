// The optimisation pipeline (passes/pipeline.cpp) on small hand-built bodies, checked LLVM-style by
// the IR listing (Body::to_string()) before and after the pass.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ag/tensor.h"
#include "body_builder.h"
#include "graph/graph.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using namespace ag_test;

TEST(Optimize, ReachesAFixedPoint) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2});
  // (x * (3 - 2)) + (x + 0 * 5) + 0: folding makes the identities visible.
  ValueRef one = b.op(OpId::Sub, {b.constant(constant(3.0)), b.constant(constant(2.0))});
  ValueRef zero = b.op(OpId::Mul, {b.constant(constant(0.0)), b.constant(constant(5.0))});
  ValueRef left = b.op(OpId::Mul, {x, one});
  ValueRef right = b.op(OpId::Add, {x, zero});
  ValueRef sum = b.op(OpId::Add, {left, right});
  b.output(b.op(OpId::Add, {sum, b.constant(constant(0.0))}));
  b.output(b.op(OpId::Add, {left, right}));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "['Const', 'Const_1'] -> sub\n"
            "[] -> Const_2\n"
            "[] -> Const_3\n"
            "['Const_2', 'Const_3'] -> mul\n"
            "['x', 'sub'] -> mul_1\n"
            "['x', 'mul'] -> add\n"
            "['mul_1', 'add'] -> add_1\n"
            "[] -> Const_4\n"
            "['add_1', 'Const_4'] -> add_2\n"
            "['add_2'] -> Identity\n"
            "['mul_1', 'add'] -> add_3\n"
            "['add_3'] -> Identity_1\n");

  optimize(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x', 'x'] -> add_1\n"
            "['add_1'] -> Identity\n"
            "['add_1'] -> Identity_1\n");
}

std::shared_ptr<Body> messy_branch(bool with_effect) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {1});
  b.placeholder("unused", int32, {1});
  b.op(OpId::Gather, {x, b.constant(constant({1}))});
  ValueRef doubled = b.op(OpId::Add, {x, x});
  ValueRef again = b.op(OpId::Add, {x, x});
  if (with_effect) b.effect("print", {x});
  b.output(b.op(OpId::Mul, {b.op(OpId::Neg, {b.op(OpId::Neg, {doubled})}), again}));
  return b.finish();
}

// messy_branch(false) before the pipeline.
const std::string kMessyBranch =
    "[] -> x\n"
    "[] -> unused\n"
    "[] -> Const\n"
    "['x', 'Const'] -> gather\n"
    "['x', 'x'] -> add\n"
    "['x', 'x'] -> add_1\n"
    "['add'] -> neg\n"
    "['neg'] -> neg_1\n"
    "['neg_1', 'add_1'] -> mul\n"
    "['mul'] -> Identity\n";

// Cleaned, then add and mul fused (passes/fusion.cpp runs last).
const std::string kCleanBranch =
    "[] -> x\n"
    "[] -> unused\n"
    "['x'] -> fused {add, mul}\n"
    "['fused'] -> Identity\n";

TEST(Optimize, CleansNestedIfAndWhileBodiesKeepingTheirPlaceholders) {
  BodyBuilder b;
  ValueRef pred = b.placeholder("pred", bool_, {});
  ValueRef x = b.placeholder("x", int32, {1});
  ValueRef branch =
      b.control_flow(NodeKind::If, {pred, x, x}, {messy_branch(false), messy_branch(false)});
  BodyBuilder cond;
  ValueRef counter = cond.placeholder("x", int32, {1});
  cond.op(OpId::Add, {counter, counter});
  cond.output(cond.op(OpId::Less, {counter, cond.constant(constant({5}))}));
  cond.placeholder("unused", int32, {1});
  ValueRef loop = b.control_flow(NodeKind::While, {branch, x}, {cond.finish(), messy_branch(true)});
  b.output(loop);
  ASSERT_EQ(b.body.nodes[2].subgraphs[0]->to_string(), kMessyBranch);
  EXPECT_EQ(b.body.to_string(),
            "[] -> pred\n"
            "[] -> x\n"
            "['pred', 'x', 'x'] -> If\n"
            "['If', 'x'] -> While\n"
            "['While'] -> Identity\n");

  optimize(b.body);

  const Node& if_node = b.body.nodes[2];
  ASSERT_EQ(if_node.kind, NodeKind::If);
  EXPECT_EQ(if_node.subgraphs[0]->to_string(), kCleanBranch);
  EXPECT_EQ(if_node.subgraphs[1]->to_string(), kCleanBranch);
  EXPECT_EQ(if_node.subgraphs[0]->placeholders, (std::vector<int32_t>{0, 1}));
  const Node& while_node = b.body.nodes[3];
  ASSERT_EQ(while_node.kind, NodeKind::While);
  EXPECT_EQ(while_node.subgraphs[0]->to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "['x', 'Const'] -> less\n"
            "['less'] -> Identity\n"
            "[] -> unused\n");
  EXPECT_EQ(while_node.subgraphs[0]->placeholders, (std::vector<int32_t>{0, 4}));
  EXPECT_EQ(while_node.subgraphs[1]->to_string(),
            "[] -> x\n"
            "[] -> unused\n"
            "['x'] -> print\n"
            "['x'] -> fused {add, mul}\n"
            "['fused'] -> Identity\n");
}

// The function keeps its traced graph and optimises a copy: the copy shares
// the nested bodies, which must stay as traced.
TEST(Optimize, LeavesNestedBodiesOfTheOriginalAlone) {
  BodyBuilder b;
  ValueRef pred = b.placeholder("pred", bool_, {});
  ValueRef x = b.placeholder("x", int32, {1});
  b.output(b.control_flow(NodeKind::If, {pred, x, x}, {messy_branch(false), messy_branch(false)}));
  const Body& traced = b.body;
  const std::string traced_branch = traced.nodes[2].subgraphs[0]->to_string();
  Body optimized = traced;

  optimize(optimized);

  EXPECT_EQ(optimized.nodes[2].subgraphs[0]->to_string(), kCleanBranch);
  EXPECT_EQ(traced.nodes[2].subgraphs[0]->to_string(), traced_branch);
  EXPECT_NE(traced_branch, kCleanBranch);
}

// An If whose outputs are unused goes, unless a branch has a side effect.
TEST(Optimize, RemovesUnusedControlFlowWithoutSideEffects) {
  BodyBuilder b;
  ValueRef pred = b.placeholder("pred", bool_, {});
  ValueRef x = b.placeholder("x", int32, {1});
  b.control_flow(NodeKind::If, {pred, x, x}, {messy_branch(false), messy_branch(false)});
  b.control_flow(NodeKind::If, {pred, x, x}, {messy_branch(true), messy_branch(false)});
  b.output(x);
  EXPECT_EQ(b.body.to_string(),
            "[] -> pred\n"
            "[] -> x\n"
            "['pred', 'x', 'x'] -> If\n"
            "['pred', 'x', 'x'] -> If_1\n"
            "['x'] -> Identity\n");

  optimize(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> pred\n"
            "[] -> x\n"
            "['pred', 'x', 'x'] -> If_1\n"
            "['x'] -> Identity\n");
}

}  // namespace
}  // namespace ag::passes
