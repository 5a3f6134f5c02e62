// Dead-code elimination (passes/dead_code_elimination.cpp), LLVM-style: a
// body before as text (graph/graph_text.h), the one pass, the body after.
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
  return run_passes_on_text("dead-code-elimination", before);
}

// The TensorFlow guide's non-strictness example: gather(x, [1]) on a length-1 x
// would raise, but nothing uses it, so it goes. Unused stateful nodes stay.
TEST(DeadCodeElimination, RemovesUnusedGatherKeepsStatefulNodes) {
  EXPECT_EQ(after_pass("x = Placeholder : int32[1]\n"
                       "Const = Const [1] : int32[1]\n"
                       "gather = gather(x, Const) : int32[1]\n"
                       "random_uniform = random_uniform {ints=[2]} : float32[2]\n"
                       "print = Effect(x) : ()\n"
                       "neg = neg(x) : int32[1]\n"
                       "Identity = Identity(neg) : int32[1]\n"
                       "inputs (x)\n"
                       "outputs (Identity)\n"),
            "x = Placeholder : int32[1]\n"
            "random_uniform = random_uniform {ints=[2]} : float32[2]\n"
            "print = Effect(x) : ()\n"
            "neg = neg(x) : int32[1]\n"
            "Identity = Identity(neg) : int32[1]\n"
            "inputs (x)\n"
            "outputs (Identity)\n");
}

TEST(DeadCodeElimination, KeepsUnusedPlaceholdersAndWhatStatefulNodesRead) {
  EXPECT_EQ(after_pass("x = Placeholder : float32[3]\n"
                       "mul = mul(x, x) : float32[3]\n"
                       "y = Placeholder : float32[3]\n"
                       "add = add(x, x) : float32[3]\n"
                       "print = Effect(add) : ()\n"
                       "Identity = Identity(x) : float32[3]\n"
                       "inputs (x, y)\n"
                       "outputs (Identity)\n"),
            "x = Placeholder : float32[3]\n"
            "y = Placeholder : float32[3]\n"
            "add = add(x, x) : float32[3]\n"
            "print = Effect(add) : ()\n"
            "Identity = Identity(x) : float32[3]\n"
            "inputs (x, y)\n"
            "outputs (Identity)\n");
}

// An If with a side effect in a branch stays although nothing reads it; one
// without goes (its inputs are read by the kept nodes anyway).
TEST(DeadCodeElimination, KeepsControlFlowWithSideEffectsOnly) {
  const std::string branch_with_effect =
      "    x = Placeholder : int32[1]\n"
      "    print = Effect(x) : ()\n"
      "    inputs (x)\n"
      "    outputs (x)\n";
  const std::string pure_branch =
      "    x = Placeholder : int32[1]\n"
      "    neg = neg(x) : int32[1]\n"
      "    inputs (x)\n"
      "    outputs (neg)\n";
  const std::string kept_if = "If_1 = If(p, x) : int32[1] {\n  then {\n" + branch_with_effect +
                              "  }\n  else {\n" + pure_branch + "  }\n}\n";
  EXPECT_EQ(after_pass("p = Placeholder : bool[]\n"
                       "x = Placeholder : int32[1]\n"
                       "If = If(p, x) : int32[1] {\n  then {\n" +
                       pure_branch + "  }\n  else {\n" + pure_branch + "  }\n}\n" + kept_if +
                       "Identity = Identity(x) : int32[1]\n"
                       "inputs (p, x)\n"
                       "outputs (Identity)\n"),
            "p = Placeholder : bool[]\n"
            "x = Placeholder : int32[1]\n" +
                kept_if +
                "Identity = Identity(x) : int32[1]\n"
                "inputs (p, x)\n"
                "outputs (Identity)\n");
}

TEST(DeadCodeElimination, LeavesLiveBodyUnchanged) {
  const std::string live =
      "x = Placeholder : float32[]\n"
      "Const = Const [2] : float32[]\n"
      "add = add(x, Const) : float32[]\n"
      "Identity = Identity(add) : float32[]\n"
      "inputs (x)\n"
      "outputs (Identity)\n";
  EXPECT_EQ(after_pass(live), live);
}

}  // namespace
}  // namespace ag::passes
