// The optimisation passes on small hand-built bodies, checked LLVM-style by
// the IR listing (Body::to_string()) before and after each pass.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ag/tensor.h"
#include "graph/graph.h"
#include "ops/op_registry.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;
using ops::Attrs;
using ops::OpId;
using ops::ValueType;

// Builds a Body node by node; names are made unique the way the tracer does.
class BodyBuilder {
 public:
  ValueRef placeholder(const std::string& name, DType dtype, Shape shape) {
    Node node;
    node.kind = NodeKind::Placeholder;
    node.outputs = {{dtype, shape}};
    ValueRef v = add(std::move(node), name);
    body.placeholders.push_back(v.node);
    return v;
  }

  ValueRef constant(const Tensor& value) {
    Node node;
    node.kind = NodeKind::Const;
    node.value = value;
    node.outputs = {{value.dtype(), value.shape()}};
    return add(std::move(node), "Const");
  }

  // The output type comes from the op's own infer function.
  ValueRef op(OpId op, std::vector<ValueRef> inputs, const Attrs& attrs = {}) {
    const ops::OpDef& def = ops::op_def(op);
    std::vector<ValueType> input_types;
    for (ValueRef in : inputs) input_types.push_back(body.type_of(in));
    ops::InferContext ctx{def.name, input_types, attrs, {}};
    Node node;
    node.kind = NodeKind::Op;
    node.op = op;
    node.inputs = std::move(inputs);
    node.attrs = attrs;
    node.outputs = {def.infer(ctx)};
    return add(std::move(node), std::string(def.name));
  }

  // A side effect such as print: stateful, no outputs. Never run here.
  void effect(const std::string& name, std::vector<ValueRef> inputs) {
    Node node;
    node.kind = NodeKind::Effect;
    node.inputs = std::move(inputs);
    add(std::move(node), name);
  }

  // An If or While node owning `subgraphs`; its outputs are those of the last.
  ValueRef control_flow(NodeKind kind, std::vector<ValueRef> inputs,
                        std::vector<std::shared_ptr<Body>> subgraphs) {
    Node node;
    node.kind = kind;
    node.inputs = std::move(inputs);
    for (ValueRef out : subgraphs.back()->outputs)
      node.outputs.push_back(subgraphs.back()->type_of(out));
    node.subgraphs = std::move(subgraphs);
    return add(std::move(node), kind == NodeKind::If ? "If" : "While");
  }

  // A function output, behind an "Identity" node as the tracer makes it.
  void output(ValueRef v) { body.outputs.push_back(op(OpId::Identity, {v})); }

  std::shared_ptr<Body> finish() { return std::make_shared<Body>(std::move(body)); }

  Body body;

 private:
  ValueRef add(Node node, const std::string& base) {
    node.name = body.unique_name(base);
    return {body.add(std::move(node)), 0};
  }
};

Attrs cast_to(DType dtype) {
  Attrs attrs;
  attrs.dtype = dtype;
  return attrs;
}

Attrs random_shape(std::vector<int64_t> dims) {
  Attrs attrs;
  attrs.ints = std::move(dims);
  return attrs;
}

std::vector<std::string> output_names(const Body& body) {
  std::vector<std::string> names;
  for (ValueRef out : body.outputs) names.push_back(body.nodes[size_t(out.node)].name);
  return names;
}

// ---- Dead-code elimination ---------------------------------------------------

// The seed guide's non-strictness example: gather(x, [1]) on a length-1 x
// would raise, but nothing uses it, so it goes. Unused stateful nodes stay.
TEST(DeadCodeElimination, RemovesUnusedGatherKeepsStatefulNodes) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {1});
  ValueRef index = b.constant(constant({1}));
  b.op(OpId::Gather, {x, index});
  b.op(OpId::RandomUniform, {}, random_shape({2}));
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

// ---- Constant folding --------------------------------------------------------

TEST(ConstantFolding, FoldsConstantChainsInOneSweep) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {2});
  ValueRef sum = b.op(OpId::Add, {b.constant(constant({1, 2})), b.constant(constant({10, 20}))});
  ValueRef product = b.op(OpId::Mul, {sum, b.constant(constant(2))});
  b.output(b.op(OpId::Add, {x, product}));

  fold_constants(b.body);

  // The folded nodes keep their names; their old inputs are now unused.
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "[] -> add\n"
            "[] -> Const_2\n"
            "[] -> mul\n"
            "['x', 'mul'] -> add_1\n"
            "['add_1'] -> Identity\n");
  const Node& mul = b.body.nodes[5];
  ASSERT_EQ(mul.kind, NodeKind::Const);
  EXPECT_EQ(mul.value.to_vector<int32_t>(), (std::vector<int32_t>{22, 44}));
  EXPECT_EQ(mul.outputs[0].shape, Shape({2}));

  eliminate_dead_code(b.body);
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> mul\n"
            "['x', 'mul'] -> add_1\n"
            "['add_1'] -> Identity\n");
}

// Integer floordiv by zero raises: that is the run-time error of a call that
// reaches the node, not an optimisation-time one.
TEST(ConstantFolding, LeavesOpThatThrowsUnfolded) {
  BodyBuilder b;
  b.output(b.op(OpId::FloorDiv, {b.constant(constant(7)), b.constant(constant(0))}));
  const std::string before = b.body.to_string();

  fold_constants(b.body);

  EXPECT_EQ(b.body.to_string(), before);
  EXPECT_EQ(b.body.nodes[2].kind, NodeKind::Op);
}

TEST(ConstantFolding, LeavesStatefulAndNonConstantOps) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {2});
  ValueRef random = b.op(OpId::RandomUniform, {}, random_shape({2}));
  b.output(b.op(OpId::Add, {x, random}));
  b.output(b.op(OpId::Mul, {x, b.constant(constant(3.0))}));
  const std::string before = b.body.to_string();

  fold_constants(b.body);

  EXPECT_EQ(b.body.to_string(), before);
  for (const Node& node : b.body.nodes) {
    if (node.name != "x" && node.name != "Const") {
      EXPECT_EQ(node.kind, NodeKind::Op) << node.name;
    }
  }
}

TEST(ConstantFolding, LeavesHugeResultsUnfolded) {
  BodyBuilder b;
  b.output(b.op(OpId::Add, {b.constant(ones({1025, 1024})), b.constant(constant(1.0))}));

  fold_constants(b.body);

  EXPECT_EQ(b.body.nodes[2].kind, NodeKind::Op);
}

// ---- Common subexpression elimination ----------------------------------------

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
  ValueRef first = b.op(OpId::RandomUniform, {}, random_shape({2}));
  ValueRef second = b.op(OpId::RandomUniform, {}, random_shape({2}));
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

  eliminate_common_subexpressions(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x'] -> Identity\n"
            "['x'] -> Identity_1\n");
  EXPECT_EQ(output_names(b.body), (std::vector<std::string>{"Identity", "Identity_1"}));
}

// ---- Algebraic simplification ------------------------------------------------

TEST(AlgebraicSimplification, RemovesMulByOneWhenShapeIsKept) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {3});
  b.output(b.op(OpId::Mul, {x, b.constant(ones({}))}));
  b.output(b.op(OpId::Mul, {b.constant(ones({3})), x}));

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

  simplify_algebra(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "['x'] -> cast_1\n"
            "['cast_1'] -> Identity_1\n");
  EXPECT_EQ(output_names(b.body), std::vector<std::string>{"Identity_1"});
}

// ---- The pipeline ------------------------------------------------------------

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

const std::string kCleanBranch =
    "[] -> x\n"
    "[] -> unused\n"
    "['x', 'x'] -> add\n"
    "['add', 'add'] -> mul\n"
    "['mul'] -> Identity\n";

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
            "['x', 'x'] -> add\n"
            "['x'] -> print\n"
            "['add', 'add'] -> mul\n"
            "['mul'] -> Identity\n");
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

  optimize(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> pred\n"
            "[] -> x\n"
            "['pred', 'x', 'x'] -> If_1\n"
            "['x'] -> Identity\n");
}

}  // namespace
}  // namespace ag::passes
