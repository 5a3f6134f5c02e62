// Algebraic simplification (passes/algebraic_simplification.cpp), LLVM-style:
// a body before as text (graph/graph_text.h), the one pass, the body after.
// The pass forwards uses only: the nodes it replaces stay, unused, for
// dead-code elimination.
#include <gtest/gtest.h>

#include <string>

#include "graph/graph_text.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

// `before` after the pass; `before` must be in printed form, so that what
// the test states is what the pass gets.
std::string after_pass(const std::string& before) {
  EXPECT_EQ(graph::to_text(graph::parse_text(before)), before) << "not in printed form";
  return run_passes_on_text("algebraic-simplification", before);
}

TEST(AlgebraicSimplification, RemovesMulByOneWhenShapeIsKept) {
  EXPECT_EQ(after_pass("x = Placeholder : float32[3]\n"
                       "Const = Const [1] : float32[]\n"
                       "mul = mul(x, Const) : float32[3]\n"
                       "Identity = Identity(mul) : float32[3]\n"
                       "Const_1 = Const [1, 1, 1] : float32[3]\n"
                       "mul_1 = mul(Const_1, x) : float32[3]\n"
                       "Identity_1 = Identity(mul_1) : float32[3]\n"
                       "inputs (x)\n"
                       "outputs (Identity, Identity_1)\n"),
            "x = Placeholder : float32[3]\n"
            "Const = Const [1] : float32[]\n"
            "mul = mul(x, Const) : float32[3]\n"
            "Identity = Identity(x) : float32[3]\n"
            "Const_1 = Const [1, 1, 1] : float32[3]\n"
            "mul_1 = mul(Const_1, x) : float32[3]\n"
            "Identity_1 = Identity(x) : float32[3]\n"
            "inputs (x)\n"
            "outputs (Identity, Identity_1)\n");
}

// scalar * ones([3]) has shape [3]: dropping the mul would change the shape.
TEST(AlgebraicSimplification, KeepsMulByOneThatBroadcasts) {
  const std::string body =
      "x = Placeholder : float32[]\n"
      "Const = Const [1, 1, 1] : float32[3]\n"
      "mul = mul(x, Const) : float32[3]\n"
      "Identity = Identity(mul) : float32[3]\n"
      "inputs (x)\n"
      "outputs (Identity)\n";
  EXPECT_EQ(after_pass(body), body);
}

// x * ones([3]) is [None, 3], as x: forwarded; x * ones([1, 1, 1]) adds a dim:
// kept. u * scalar one: forwarded; u * ones([1]) is kept, as u may be a scalar.
TEST(AlgebraicSimplification, RemovesMulByOneOnUnknownDimsOnlyWhenShapeIsKept) {
  EXPECT_EQ(after_pass("x = Placeholder : float32[?, 3]\n"
                       "u = Placeholder : float32[*]\n"
                       "Const = Const [1, 1, 1] : float32[3]\n"
                       "mul = mul(x, Const) : float32[?, 3]\n"
                       "Identity = Identity(mul) : float32[?, 3]\n"
                       "Const_1 = Const [1] : float32[1, 1, 1]\n"
                       "mul_1 = mul(x, Const_1) : float32[1, ?, 3]\n"
                       "Identity_1 = Identity(mul_1) : float32[1, ?, 3]\n"
                       "Const_2 = Const [1] : float32[]\n"
                       "mul_2 = mul(u, Const_2) : float32[*]\n"
                       "Identity_2 = Identity(mul_2) : float32[*]\n"
                       "Const_3 = Const [1] : float32[1]\n"
                       "mul_3 = mul(u, Const_3) : float32[*]\n"
                       "Identity_3 = Identity(mul_3) : float32[*]\n"
                       "inputs (x, u)\n"
                       "outputs (Identity, Identity_1, Identity_2, Identity_3)\n"),
            "x = Placeholder : float32[?, 3]\n"
            "u = Placeholder : float32[*]\n"
            "Const = Const [1, 1, 1] : float32[3]\n"
            "mul = mul(x, Const) : float32[?, 3]\n"
            "Identity = Identity(x) : float32[?, 3]\n"
            "Const_1 = Const [1] : float32[1, 1, 1]\n"
            "mul_1 = mul(x, Const_1) : float32[1, ?, 3]\n"
            "Identity_1 = Identity(mul_1) : float32[1, ?, 3]\n"
            "Const_2 = Const [1] : float32[]\n"
            "mul_2 = mul(u, Const_2) : float32[*]\n"
            "Identity_2 = Identity(u) : float32[*]\n"
            "Const_3 = Const [1] : float32[1]\n"
            "mul_3 = mul(u, Const_3) : float32[*]\n"
            "Identity_3 = Identity(mul_3) : float32[*]\n"
            "inputs (x, u)\n"
            "outputs (Identity, Identity_1, Identity_2, Identity_3)\n");
}

// 0 - x is -x, not x, and 1 / x is not x.
TEST(AlgebraicSimplification, RemovesAdditiveAndDivisiveIdentities) {
  EXPECT_EQ(after_pass("x = Placeholder : float32[2]\n"
                       "Const = Const [0, 0] : float32[2]\n"
                       "Const_1 = Const [1] : float32[]\n"
                       "add = add(x, Const) : float32[2]\n"
                       "add_1 = add(Const, add) : float32[2]\n"
                       "sub = sub(add_1, Const) : float32[2]\n"
                       "truediv = truediv(sub, Const_1) : float32[2]\n"
                       "Identity = Identity(truediv) : float32[2]\n"
                       "sub_1 = sub(Const, x) : float32[2]\n"
                       "Identity_1 = Identity(sub_1) : float32[2]\n"
                       "truediv_1 = truediv(Const_1, x) : float32[2]\n"
                       "Identity_2 = Identity(truediv_1) : float32[2]\n"
                       "inputs (x)\n"
                       "outputs (Identity, Identity_1, Identity_2)\n"),
            "x = Placeholder : float32[2]\n"
            "Const = Const [0, 0] : float32[2]\n"
            "Const_1 = Const [1] : float32[]\n"
            "add = add(x, Const) : float32[2]\n"
            "add_1 = add(Const, x) : float32[2]\n"
            "sub = sub(x, Const) : float32[2]\n"
            "truediv = truediv(x, Const_1) : float32[2]\n"
            "Identity = Identity(x) : float32[2]\n"
            "sub_1 = sub(Const, x) : float32[2]\n"
            "Identity_1 = Identity(sub_1) : float32[2]\n"
            "truediv_1 = truediv(Const_1, x) : float32[2]\n"
            "Identity_2 = Identity(truediv_1) : float32[2]\n"
            "inputs (x)\n"
            "outputs (Identity, Identity_1, Identity_2)\n");
}

TEST(AlgebraicSimplification, KeepsOpsWithNonIdentityConstants) {
  const std::string body =
      "x = Placeholder : float32[3]\n"
      "Const = Const [1, 2, 1] : float32[3]\n"
      "mul = mul(x, Const) : float32[3]\n"
      "Identity = Identity(mul) : float32[3]\n"
      "Const_1 = Const [1] : float32[]\n"
      "add = add(x, Const_1) : float32[3]\n"
      "Identity_1 = Identity(add) : float32[3]\n"
      "inputs (x)\n"
      "outputs (Identity, Identity_1)\n";
  EXPECT_EQ(after_pass(body), body);
}

// Three negations: the third reads x, so one is left.
TEST(AlgebraicSimplification, RemovesDoubleNegationAndDoubleLogicalNot) {
  EXPECT_EQ(after_pass("x = Placeholder : int32[2]\n"
                       "flag = Placeholder : bool[]\n"
                       "neg = neg(x) : int32[2]\n"
                       "neg_1 = neg(neg) : int32[2]\n"
                       "neg_2 = neg(neg_1) : int32[2]\n"
                       "Identity = Identity(neg_2) : int32[2]\n"
                       "logical_not = logical_not(flag) : bool[]\n"
                       "logical_not_1 = logical_not(logical_not) : bool[]\n"
                       "Identity_1 = Identity(logical_not_1) : bool[]\n"
                       "inputs (x, flag)\n"
                       "outputs (Identity, Identity_1)\n"),
            "x = Placeholder : int32[2]\n"
            "flag = Placeholder : bool[]\n"
            "neg = neg(x) : int32[2]\n"
            "neg_1 = neg(neg) : int32[2]\n"
            "neg_2 = neg(x) : int32[2]\n"
            "Identity = Identity(neg_2) : int32[2]\n"
            "logical_not = logical_not(flag) : bool[]\n"
            "logical_not_1 = logical_not(logical_not) : bool[]\n"
            "Identity_1 = Identity(flag) : bool[]\n"
            "inputs (x, flag)\n"
            "outputs (Identity, Identity_1)\n");
}

// The output's own Identity stays: outputs keep their nodes.
TEST(AlgebraicSimplification, RemovesSameDtypeCastAndInnerIdentity) {
  EXPECT_EQ(after_pass("x = Placeholder : int32[2]\n"
                       "cast = cast(x) {dtype=int32} : int32[2]\n"
                       "Identity = Identity(cast) : int32[2]\n"
                       "cast_1 = cast(Identity) : float32[2]\n"
                       "Identity_1 = Identity(cast_1) : float32[2]\n"
                       "inputs (x)\n"
                       "outputs (Identity_1)\n"),
            "x = Placeholder : int32[2]\n"
            "cast = cast(x) {dtype=int32} : int32[2]\n"
            "Identity = Identity(x) : int32[2]\n"
            "cast_1 = cast(x) : float32[2]\n"
            "Identity_1 = Identity(cast_1) : float32[2]\n"
            "inputs (x)\n"
            "outputs (Identity_1)\n");
}

}  // namespace
}  // namespace ag::passes
