// Algebraic simplification (passes/algebraic_simplification.cpp) on small hand-built bodies,
// checked LLVM-style by the IR listing (Body::to_string()) before and after the pass.
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

TEST(AlgebraicSimplification, RemovesMulByOneWhenShapeIsKept) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {3});
  b.output(b.op(OpId::Mul, {x, b.constant(ones({}))}));
  b.output(b.op(OpId::Mul, {b.constant(ones({3})), x}));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "['x', 'Const'] -> mul\n"
            "['mul'] -> Identity\n"
            "[] -> Const_1\n"
            "['Const_1', 'x'] -> mul_1\n"
            "['mul_1'] -> Identity_1\n");

  simplify_algebra(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x'] -> Identity\n"
            "['x'] -> Identity_1\n");
}

// scalar * ones([3]) has shape [3]: dropping the mul would change the shape.
TEST(AlgebraicSimplification, KeepsMulByOneThatBroadcasts) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {});
  b.output(b.op(OpId::Mul, {x, b.constant(ones({3}))}));
  const std::string before = b.body.to_string();

  simplify_algebra(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(), before);
}

TEST(AlgebraicSimplification, RemovesMulByOneOnUnknownDimsOnlyWhenShapeIsKept) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {kUnknownDim, 3});
  ValueRef u = b.placeholder("u", float32, Shape::unknown_rank());
  b.output(b.op(OpId::Mul, {x, b.constant(ones({3}))}));        // [None, 3]: removed
  b.output(b.op(OpId::Mul, {x, b.constant(ones({1, 1, 1}))}));  // [1, None, 3]: kept
  b.output(b.op(OpId::Mul, {u, b.constant(ones({}))}));         // a scalar: removed
  b.output(b.op(OpId::Mul, {u, b.constant(ones({1}))}));        // u may be a scalar: kept
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> u\n"
            "[] -> Const\n"
            "['x', 'Const'] -> mul\n"
            "['mul'] -> Identity\n"
            "[] -> Const_1\n"
            "['x', 'Const_1'] -> mul_1\n"
            "['mul_1'] -> Identity_1\n"
            "[] -> Const_2\n"
            "['u', 'Const_2'] -> mul_2\n"
            "['mul_2'] -> Identity_2\n"
            "[] -> Const_3\n"
            "['u', 'Const_3'] -> mul_3\n"
            "['mul_3'] -> Identity_3\n");

  simplify_algebra(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> u\n"
            "['x'] -> Identity\n"
            "[] -> Const_1\n"
            "['x', 'Const_1'] -> mul_1\n"
            "['mul_1'] -> Identity_1\n"
            "['u'] -> Identity_2\n"
            "[] -> Const_3\n"
            "['u', 'Const_3'] -> mul_3\n"
            "['mul_3'] -> Identity_3\n");
}

TEST(AlgebraicSimplification, RemovesAdditiveAndDivisiveIdentities) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2});
  ValueRef zero = b.constant(zeros({2}));
  ValueRef one = b.constant(constant(1.0));
  ValueRef plus_zero = b.op(OpId::Add, {x, zero});
  ValueRef zero_plus = b.op(OpId::Add, {zero, plus_zero});
  ValueRef minus_zero = b.op(OpId::Sub, {zero_plus, zero});
  b.output(b.op(OpId::Div, {minus_zero, one}));
  b.output(b.op(OpId::Sub, {zero, x}));  // 0 - x is -x, not x
  b.output(b.op(OpId::Div, {one, x}));   // 1 / x is not x
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "['x', 'Const'] -> add\n"
            "['Const', 'add'] -> add_1\n"
            "['add_1', 'Const'] -> sub\n"
            "['sub', 'Const_1'] -> truediv\n"
            "['truediv'] -> Identity\n"
            "['Const', 'x'] -> sub_1\n"
            "['sub_1'] -> Identity_1\n"
            "['Const_1', 'x'] -> truediv_1\n"
            "['truediv_1'] -> Identity_2\n");

  simplify_algebra(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "['x'] -> Identity\n"
            "['Const', 'x'] -> sub_1\n"
            "['sub_1'] -> Identity_1\n"
            "['Const_1', 'x'] -> truediv_1\n"
            "['truediv_1'] -> Identity_2\n");
}

TEST(AlgebraicSimplification, KeepsOpsWithNonIdentityConstants) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {3});
  b.output(b.op(OpId::Mul, {x, b.constant(constant({1.0, 2.0, 1.0}))}));
  b.output(b.op(OpId::Add, {x, b.constant(constant(1.0))}));
  const std::string before = b.body.to_string();

  simplify_algebra(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(), before);
}

TEST(AlgebraicSimplification, RemovesDoubleNegationAndDoubleLogicalNot) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {2});
  ValueRef flag = b.placeholder("flag", bool_, {});
  ValueRef neg = b.op(OpId::Neg, {x});
  b.output(b.op(OpId::Neg, {b.op(OpId::Neg, {neg})}));  // three negations: one is left
  b.output(b.op(OpId::LogicalNot, {b.op(OpId::LogicalNot, {flag})}));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> flag\n"
            "['x'] -> neg\n"
            "['neg'] -> neg_1\n"
            "['neg_1'] -> neg_2\n"
            "['neg_2'] -> Identity\n"
            "['flag'] -> logical_not\n"
            "['logical_not'] -> logical_not_1\n"
            "['logical_not_1'] -> Identity_1\n");

  simplify_algebra(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> flag\n"
            "['x'] -> neg_2\n"
            "['neg_2'] -> Identity\n"
            "['flag'] -> Identity_1\n");
}

TEST(AlgebraicSimplification, RemovesSameDtypeCastAndInnerIdentity) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {2});
  ValueRef same = b.op(OpId::Cast, {x}, cast_to(int32));
  ValueRef inner = b.op(OpId::Identity, {same});
  b.output(b.op(OpId::Cast, {inner}, cast_to(float32)));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x'] -> cast\n"
            "['cast'] -> Identity\n"
            "['Identity'] -> cast_1\n"
            "['cast_1'] -> Identity_1\n");

  simplify_algebra(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x'] -> cast_1\n"
            "['cast_1'] -> Identity_1\n");
  EXPECT_EQ(output_names(b.body), std::vector<std::string>{"Identity_1"});
}

}  // namespace
}  // namespace ag::passes
