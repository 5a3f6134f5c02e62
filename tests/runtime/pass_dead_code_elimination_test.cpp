// Dead-code elimination (passes/dead_code_elimination.cpp) on small hand-built bodies, checked
// LLVM-style by the IR listing (Body::to_string()) before and after the pass.
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

// The TensorFlow guide's non-strictness example: gather(x, [1]) on a length-1 x
// would raise, but nothing uses it, so it goes. Unused stateful nodes stay.
TEST(DeadCodeElimination, RemovesUnusedGatherKeepsStatefulNodes) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {1});
  ValueRef index = b.constant(constant({1}));
  b.op(OpId::Gather, {x, index});
  b.op(OpId::RandomUniform, {}, shape_attrs({2}));
  b.effect("print", {x});
  b.output(b.op(OpId::Neg, {x}));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "['x', 'Const'] -> gather\n"
            "[] -> random_uniform\n"
            "['x'] -> print\n"
            "['x'] -> neg\n"
            "['neg'] -> Identity\n");

  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> random_uniform\n"
            "['x'] -> print\n"
            "['x'] -> neg\n"
            "['neg'] -> Identity\n");
  EXPECT_EQ(output_names(b.body), std::vector<std::string>{"Identity"});
}

TEST(DeadCodeElimination, KeepsUnusedPlaceholdersAndWhatStatefulNodesRead) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {3});
  b.op(OpId::Mul, {x, x});
  b.placeholder("y", float32, {3});
  b.effect("print", {b.op(OpId::Add, {x, x})});
  b.output(x);
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x', 'x'] -> mul\n"
            "[] -> y\n"
            "['x', 'x'] -> add\n"
            "['add'] -> print\n"
            "['x'] -> Identity\n");

  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> y\n"
            "['x', 'x'] -> add\n"
            "['add'] -> print\n"
            "['x'] -> Identity\n");
  EXPECT_EQ(b.body.placeholders, (std::vector<int32_t>{0, 1}));
}

TEST(DeadCodeElimination, LeavesLiveBodyUnchanged) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {});
  b.output(b.op(OpId::Add, {x, b.constant(constant(2.0))}));
  const std::string before = b.body.to_string();

  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(), before);
}

}  // namespace
}  // namespace ag::passes
