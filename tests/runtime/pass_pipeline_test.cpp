// The optimisation pipeline (passes/pipeline.cpp) on small hand-built bodies, checked by the IR
// listing (Body::to_string()) before and after; the pass registry (passes/passes.def); and
// AG_PRINT_AFTER (passes/print_after.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "ag/tensor.h"
#include "body_builder.h"
#include "graph/graph.h"
#include "graph/graph_text.h"
#include "passes/passes.h"
#include "passes/print_after.h"
#include "staged_test_util.h"

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

TEST(PassRegistry, NamesEachPassAfterItsFileInPipelineOrder) {
  std::vector<std::string> names;
  for (const PassInfo& pass : registered_passes()) {
    names.emplace_back(pass.name);
    EXPECT_FALSE(pass.summary.empty()) << pass.name;
    EXPECT_EQ(find_pass(pass.name), &pass);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"range-loops", "loop-condition-reductions",
                                             "algebraic-simplification", "transposed-arrays",
                                             "constant-folding", "counter-signs",
                                             "common-subexpression-elimination",
                                             "transposed-gathers", "channels-last-convolutions",
                                             "conv-epilogues", "dead-code-elimination", "fusion"}));
  EXPECT_EQ(find_pass("no-such-pass"), nullptr);
  EXPECT_EQ(find_pass("transposed-arrays")->targets, PassTargets::kExecutorOnly);
}

TEST(PassRegistry, RunsPassesOnTextInTheOrderGiven) {
  const std::string body =
      "x = Placeholder : int32[]\n"
      "Const = Const [2] : int32[]\n"
      "Const_1 = Const [3] : int32[]\n"
      "mul = mul(Const, Const_1) : int32[]\n"
      "add = add(x, mul) : int32[]\n"
      "Identity = Identity(add) : int32[]\n"
      "inputs (x)\n"
      "outputs (Identity)\n";
  EXPECT_EQ(run_passes_on_text("constant-folding,dead-code-elimination", body),
            "x = Placeholder : int32[]\n"
            "mul = Const [6] : int32[]\n"
            "add = add(x, mul) : int32[]\n"
            "Identity = Identity(add) : int32[]\n"
            "inputs (x)\n"
            "outputs (Identity)\n");
  EXPECT_EQ(run_passes_on_text("dead-code-elimination,constant-folding", body),
            "x = Placeholder : int32[]\n"
            "Const = Const [2] : int32[]\n"
            "Const_1 = Const [3] : int32[]\n"
            "mul = Const [6] : int32[]\n"
            "add = add(x, mul) : int32[]\n"
            "Identity = Identity(add) : int32[]\n"
            "inputs (x)\n"
            "outputs (Identity)\n");
  try {
    run_passes_on_text("constant-folding,cse", body);
    FAIL() << "ran an unknown pass";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(e.message(),
              "run_passes_on_text: no pass is named 'cse'; the passes of "
              "runtime/passes/passes.def are " +
                  registered_pass_names());
  }
}

// Sets AG_PRINT_AFTER's value for one test (nullopt: read the environment
// again), printing into `out`; back to the environment's value after it.
class PrintAfterForTest {
 public:
  explicit PrintAfterForTest(std::optional<std::string> value) {
    set_print_after_for_testing(std::move(value), &out);
  }
  ~PrintAfterForTest() { set_print_after_for_testing(std::nullopt, nullptr); }
  std::ostringstream out;
};

// x + 2 * 3, which one round of folding and DCE optimises.
const std::string kFoldable =
    "x = Placeholder : int32[]\n"
    "Const = Const [2] : int32[]\n"
    "Const_1 = Const [3] : int32[]\n"
    "mul = mul(Const, Const_1) : int32[]\n"
    "add = add(x, mul) : int32[]\n"
    "Identity = Identity(add) : int32[]\n"
    "inputs (x)\n"
    "outputs (Identity)\n";

// The header lines of what AG_PRINT_AFTER printed.
std::vector<std::string> headers(const std::string& printed) {
  std::vector<std::string> lines;
  std::istringstream in(printed);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("*** ")) lines.push_back(line);
  }
  return lines;
}

TEST(PrintAfter, PrintsTheBodyAfterEachRunOfTheNamedPass) {
  PrintAfterForTest print("constant-folding");
  graph::Body body = graph::parse_text(kFoldable);

  optimize(body);

  // Round 2 finds nothing left to do and ends the rounds.
  const std::string folded =
      "x = Placeholder : int32[]\n"
      "mul = Const [6] : int32[]\n"
      "add = add(x, mul) : int32[]\n"
      "Identity = Identity(add) : int32[]\n"
      "inputs (x)\n"
      "outputs (Identity)\n";
  EXPECT_EQ(print.out.str(),
            "*** IR Dump After constant-folding (round 1) on the top-level body ***\n"
            "x = Placeholder : int32[]\n"
            "Const = Const [2] : int32[]\n"
            "Const_1 = Const [3] : int32[]\n"
            "mul = Const [6] : int32[]\n"
            "add = add(x, mul) : int32[]\n"
            "Identity = Identity(add) : int32[]\n"
            "inputs (x)\n"
            "outputs (Identity)\n"
            "*** IR Dump After constant-folding (round 2) on the top-level body ***\n" +
                folded);
  EXPECT_EQ(graph::to_text(body), folded);
}

TEST(PrintAfter, AllPrintsAfterEveryPassThatRunsForTheTarget) {
  PrintAfterForTest print("all");
  graph::Body body = graph::parse_text(
      "x = Placeholder : int32[]\n"
      "Identity = Identity(x) : int32[]\n"
      "inputs (x)\n"
      "outputs (Identity)\n");

  optimize(body, Target::kExport);

  EXPECT_EQ(headers(print.out.str()),
            (std::vector<std::string>{
                "*** IR Dump After range-loops on the top-level body ***",
                "*** IR Dump After loop-condition-reductions on the top-level body ***",
                "*** IR Dump After algebraic-simplification (round 1) on the top-level body ***",
                "*** IR Dump After constant-folding (round 1) on the top-level body ***",
                "*** IR Dump After counter-signs (round 1) on the top-level body ***",
                "*** IR Dump After common-subexpression-elimination (round 1) on the top-level "
                "body ***",
                "*** IR Dump After transposed-gathers (round 1) on the top-level body ***",
                "*** IR Dump After dead-code-elimination (round 1) on the top-level body ***",
                "*** IR Dump After fusion on the top-level body ***",
            }));
}

// A traced function's bodies: nested bodies first, each named by its path.
TEST(PrintAfter, NamesTheFunctionAndTheNestedBody) {
  PrintAfterForTest print("fusion");
  auto tanh_loop = ag::function(ag_workloads::tanh_loop, {.name = "tanh_loop"});

  tanh_loop.get_concrete_function(TensorSpec({3}, float32));

  EXPECT_EQ(headers(print.out.str()),
            (std::vector<std::string>{
                "*** IR Dump After fusion on function 'tanh_loop', body 'While/cond' ***",
                "*** IR Dump After fusion on function 'tanh_loop', body 'While/body' ***",
                "*** IR Dump After fusion on function 'tanh_loop' ***",
            }));
}

TEST(PrintAfter, ReadsTheEnvironmentVariable) {
  const char* previous = std::getenv("AG_PRINT_AFTER");
  const std::optional<std::string> saved =
      previous ? std::optional<std::string>(previous) : std::nullopt;
  setenv("AG_PRINT_AFTER", "dead-code-elimination", 1);
  {
    PrintAfterForTest print(std::nullopt);
    graph::Body body = graph::parse_text(kFoldable);

    optimize(body);

    EXPECT_EQ(headers(print.out.str()),
              (std::vector<std::string>{
                  "*** IR Dump After dead-code-elimination (round 1) on the top-level body ***",
                  "*** IR Dump After dead-code-elimination (round 2) on the top-level body ***",
              }));
  }
  if (saved) {
    setenv("AG_PRINT_AFTER", saved->c_str(), 1);
  } else {
    unsetenv("AG_PRINT_AFTER");
  }
}

TEST(PrintAfter, AnUnknownPassIsAnErrorListingTheKnownOnes) {
  PrintAfterForTest print("constant-fold");
  graph::Body body = graph::parse_text(kFoldable);
  try {
    optimize(body);
    FAIL() << "optimised with an unknown AG_PRINT_AFTER";
  } catch (const InvalidArgumentError& e) {
    EXPECT_EQ(e.message(),
              "AG_PRINT_AFTER=constant-fold: no optimisation pass is named 'constant-fold'. The "
              "environment variable names the pass after which the optimiser prints each body to "
              "stderr (runtime/passes/passes.def registers the passes). Known passes: "
              "range-loops, loop-condition-reductions, algebraic-simplification, "
              "transposed-arrays, constant-folding, counter-signs, "
              "common-subexpression-elimination, transposed-gathers, "
              "channels-last-convolutions, conv-epilogues, dead-code-elimination, fusion; or "
              "'all' for every pass. Set it to one of them, or unset it.");
  }
  EXPECT_EQ(print.out.str(), "");
}

}  // namespace
}  // namespace ag::passes
