// Common subexpression elimination (passes/common_subexpression_elimination.cpp) on small
// hand-built bodies, checked LLVM-style by the IR listing (Body::to_string()) before and after the
// pass.
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

TEST(CommonSubexpressionElimination, MergesIdenticalAddsAndTheirUsers) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {3});
  ValueRef y = b.placeholder("y", float32, {3});
  ValueRef first = b.op(OpId::Neg, {b.op(OpId::Add, {x, y})});
  ValueRef second = b.op(OpId::Neg, {b.op(OpId::Add, {x, y})});
  b.output(b.op(OpId::Mul, {first, second}));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> y\n"
            "['x', 'y'] -> add\n"
            "['add'] -> neg\n"
            "['x', 'y'] -> add_1\n"
            "['add_1'] -> neg_1\n"
            "['neg', 'neg_1'] -> mul\n"
            "['mul'] -> Identity\n");

  eliminate_common_subexpressions(b.body);

  // neg_1 now reads add, so it merges with neg in the same sweep.
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> y\n"
            "['x', 'y'] -> add\n"
            "['add'] -> neg\n"
            "['x', 'y'] -> add_1\n"
            "['add'] -> neg_1\n"
            "['neg', 'neg'] -> mul\n"
            "['mul'] -> Identity\n");
  eliminate_dead_code(b.body);
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> y\n"
            "['x', 'y'] -> add\n"
            "['add'] -> neg\n"
            "['neg', 'neg'] -> mul\n"
            "['mul'] -> Identity\n");
}

TEST(CommonSubexpressionElimination, KeepsStatefulOpsApart) {
  BodyBuilder b;
  ValueRef first = b.op(OpId::RandomUniform, {}, shape_attrs({2}));
  ValueRef second = b.op(OpId::RandomUniform, {}, shape_attrs({2}));
  b.output(b.op(OpId::Add, {first, second}));
  const std::string before = b.body.to_string();

  eliminate_common_subexpressions(b.body);

  EXPECT_EQ(b.body.to_string(), before);
  EXPECT_NE(before.find("['random_uniform', 'random_uniform_1'] -> add"), std::string::npos);
}

TEST(CommonSubexpressionElimination, KeepsOpsWithDifferentAttrsOrInputOrderApart) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {2});
  ValueRef y = b.placeholder("y", int32, {2});
  b.output(b.op(OpId::Cast, {x}, cast_to(float32)));
  b.output(b.op(OpId::Cast, {x}, cast_to(float64)));
  b.output(b.op(OpId::Sub, {x, y}));
  b.output(b.op(OpId::Sub, {y, x}));
  const std::string before = b.body.to_string();

  eliminate_common_subexpressions(b.body);

  EXPECT_EQ(b.body.to_string(), before);
}

TEST(CommonSubexpressionElimination, MergesConstantsWithEqualBytesOnly) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2});
  ValueRef one = b.constant(constant({1.0, 2.0}));
  ValueRef one_again = b.constant(constant({1.0, 2.0}));
  ValueRef zero = b.constant(constant(0.0));
  ValueRef negative_zero = b.constant(constant(-0.0));
  ValueRef as_float64 = b.constant(constant({1.0, 2.0}, float64));
  b.output(b.op(OpId::Mul, {b.op(OpId::Add, {x, one}), b.op(OpId::Add, {x, one_again})}));
  b.output(b.op(OpId::Sub, {zero, negative_zero}));
  b.output(as_float64);
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "[] -> Const_2\n"
            "[] -> Const_3\n"
            "[] -> Const_4\n"
            "['x', 'Const'] -> add\n"
            "['x', 'Const_1'] -> add_1\n"
            "['add', 'add_1'] -> mul\n"
            "['mul'] -> Identity\n"
            "['Const_2', 'Const_3'] -> sub\n"
            "['sub'] -> Identity_1\n"
            "['Const_4'] -> Identity_2\n");

  eliminate_common_subexpressions(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "[] -> Const_2\n"
            "[] -> Const_3\n"
            "[] -> Const_4\n"
            "['x', 'Const'] -> add\n"
            "['add', 'add'] -> mul\n"
            "['mul'] -> Identity\n"
            "['Const_2', 'Const_3'] -> sub\n"
            "['sub'] -> Identity_1\n"
            "['Const_4'] -> Identity_2\n");
}

// Each output keeps its own Identity node even when two compute the same.
TEST(CommonSubexpressionElimination, KeepsOutputNodes) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {});
  b.output(x);
  b.output(x);
  const std::string before = b.body.to_string();

  eliminate_common_subexpressions(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x'] -> Identity\n"
            "['x'] -> Identity_1\n");
  EXPECT_EQ(b.body.to_string(), before);
  EXPECT_EQ(output_names(b.body), (std::vector<std::string>{"Identity", "Identity_1"}));
}

}  // namespace
}  // namespace ag::passes
