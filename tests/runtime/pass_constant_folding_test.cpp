// Constant folding (passes/constant_folding.cpp): LLVM-style, a body before
// as text (graph/graph_text.h), the one pass, the body after; and, on bodies
// built with BodyBuilder, what text does not show (constants sharing their
// input's storage, constants too large to write).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ag/ops.h"
#include "ag/tensor.h"
#include "body_builder.h"
#include "graph/graph.h"
#include "graph/graph_text.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using namespace ag_test;

// `before` after the pass; `before` must be in printed form, so that what
// the test states is what the pass gets.
std::string after_pass(const std::string& before) {
  EXPECT_EQ(graph::to_text(graph::parse_text(before)), before) << "not in printed form";
  return run_passes_on_text("constant-folding", before);
}

// The folded nodes keep their names; their old inputs are left unused.
TEST(ConstantFolding, FoldsConstantChainsInOneSweep) {
  EXPECT_EQ(after_pass("x = Placeholder : int32[2]\n"
                       "Const = Const [1, 2] : int32[2]\n"
                       "Const_1 = Const [10, 20] : int32[2]\n"
                       "add = add(Const, Const_1) : int32[2]\n"
                       "Const_2 = Const [2] : int32[]\n"
                       "mul = mul(add, Const_2) : int32[2]\n"
                       "add_1 = add(x, mul) : int32[2]\n"
                       "Identity = Identity(add_1) : int32[2]\n"
                       "inputs (x)\n"
                       "outputs (Identity)\n"),
            "x = Placeholder : int32[2]\n"
            "Const = Const [1, 2] : int32[2]\n"
            "Const_1 = Const [10, 20] : int32[2]\n"
            "add = Const [11, 22] : int32[2]\n"
            "Const_2 = Const [2] : int32[]\n"
            "mul = Const [22, 44] : int32[2]\n"
            "add_1 = add(x, mul) : int32[2]\n"
            "Identity = Identity(add_1) : int32[2]\n"
            "inputs (x)\n"
            "outputs (Identity)\n");
}

// Integer floordiv by zero raises: that is the run-time error of a call that
// reaches the node, not an optimisation-time one.
TEST(ConstantFolding, LeavesOpThatThrowsUnfolded) {
  const std::string body =
      "Const = Const [7] : int32[]\n"
      "Const_1 = Const [0] : int32[]\n"
      "floordiv = floordiv(Const, Const_1) : int32[]\n"
      "Identity = Identity(floordiv) : int32[]\n"
      "inputs ()\n"
      "outputs (Identity)\n";
  EXPECT_EQ(after_pass(body), body);
}

TEST(ConstantFolding, LeavesStatefulAndNonConstantOps) {
  const std::string body =
      "x = Placeholder : float32[2]\n"
      "random_uniform = random_uniform {ints=[2]} : float32[2]\n"
      "add = add(x, random_uniform) : float32[2]\n"
      "Identity = Identity(add) : float32[2]\n"
      "Const = Const [3] : float32[]\n"
      "mul = mul(x, Const) : float32[2]\n"
      "Identity_1 = Identity(mul) : float32[2]\n"
      "inputs (x)\n"
      "outputs (Identity, Identity_1)\n";
  EXPECT_EQ(after_pass(body), body);
}

TEST(ConstantFolding, LeavesHugeResultsUnfolded) {
  BodyBuilder b;
  b.output(b.op(OpId::Add, {b.constant(ones({1025, 1024})), b.constant(constant(1.0))}));
  const std::string before = b.body.to_string();

  fold_constants(b.body);

  EXPECT_EQ(b.body.to_string(), before);
  EXPECT_EQ(b.body.nodes[2].kind, NodeKind::Op);
}

// A huge transpose of a constant that nothing else reads folds (one constant
// replaces the other); one whose constant is read elsewhere does not.
TEST(ConstantFolding, FoldsAHugeTransposeOfAConstantOnlyItReads) {
  const Tensor x = random_uniform({1025, 2, 512}, -1.0, 1.0, float32, 3);
  BodyBuilder b;
  b.output(b.op(OpId::Transpose, {b.constant(x)}, perm_attrs({1, 0, 2})));

  fold_constants(b.body);

  ASSERT_EQ(b.body.nodes[1].kind, NodeKind::Const) << b.body.to_string();
  EXPECT_EQ(b.body.nodes[1].value.shape(), Shape({2, 1025, 512}));
  EXPECT_EQ(b.body.nodes[1].value.to_vector<float>(), transpose(x, {1, 0, 2}).to_vector<float>());

  BodyBuilder shared;
  ValueRef c = shared.constant(x);
  shared.output(shared.op(OpId::Transpose, {c}, perm_attrs({1, 0, 2})));
  shared.output(c);
  const std::string before = shared.body.to_string();

  fold_constants(shared.body);

  EXPECT_EQ(shared.body.to_string(), before);
}

// A transpose of a constant whose elements are all the same bits, and a
// reshape of any constant, fold into their input's bytes, shared (at any
// size: the constant is not copied); a transpose of other values computes.
TEST(ConstantFolding, FoldsLayoutOpsThatKeepTheBytesIntoTheirInputsStorage) {
  const Tensor zeros_3d = zeros({1025, 2, 512}, float32);  // over kMaxFoldedElements
  const Tensor values = constant({{1, 2, 3}, {4, 5, 6}});
  const Tensor minus_zero = constant({-0.0f, 0.0f});
  BodyBuilder b;
  ValueRef shared_zeros = b.constant(zeros_3d);
  b.output(b.op(OpId::Transpose, {shared_zeros}, perm_attrs({1, 0, 2})));
  b.output(shared_zeros);
  ValueRef shared_values = b.constant(values);
  b.output(b.op(OpId::Reshape, {shared_values}, shape_attrs({3, 2})));
  b.output(b.op(OpId::Transpose, {shared_values}, perm_attrs({1, 0})));
  b.output(b.op(OpId::Reshape, {b.constant(minus_zero)}, shape_attrs({2, 1})));

  fold_constants(b.body);

  auto folded = [&](size_t output) -> const Tensor& {  // what the output's Identity reads
    const Node& identity = b.body.nodes[size_t(b.body.outputs[output].node)];
    const Node& node = b.body.nodes[size_t(identity.inputs[0].node)];
    EXPECT_EQ(node.kind, NodeKind::Const) << node.name;
    return node.value;
  };
  EXPECT_EQ(folded(0).shape(), Shape({2, 1025, 512}));
  EXPECT_EQ(folded(0).raw_data(), zeros_3d.raw_data());
  EXPECT_EQ(folded(2).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(folded(2).shape(), Shape({3, 2}));
  EXPECT_EQ(folded(2).raw_data(), values.raw_data());
  EXPECT_EQ(folded(3).to_vector<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
  EXPECT_NE(folded(3).raw_data(), values.raw_data());
  EXPECT_EQ(folded(4).raw_data(), minus_zero.raw_data());
  // The shared bytes stay the constant's: writing a copy of one copies first.
  Tensor copy = folded(2);
  copy.mutable_data<int32_t>()[0] = 7;
  EXPECT_EQ(values.to_vector<int32_t>()[0], 1);
}

// A zeros op's attrs: its shape and dtype.
Attrs zeros_attrs(std::vector<int64_t> dims, DType dtype) {
  Attrs attrs = shape_attrs(std::move(dims));
  attrs.dtype = dtype;
  return attrs;
}

// Small zeros become a constant; large ones stay an op, which holds no
// memory in the graph (1,024 elements at most fold, as tf.zeros's 1,000).
TEST(ConstantFolding, FoldsOnlySmallZeros) {
  BodyBuilder b;
  b.output(b.op(OpId::Zeros, {}, zeros_attrs({32, 32}, int32)));
  b.output(b.op(OpId::Zeros, {}, zeros_attrs({1025}, float32)));

  fold_constants(b.body);

  ASSERT_EQ(b.body.nodes[0].kind, NodeKind::Const);
  EXPECT_EQ(b.body.nodes[0].value.to_vector<int32_t>(), std::vector<int32_t>(1024, 0));
  EXPECT_EQ(b.body.nodes[0].outputs[0].shape, Shape({32, 32}));
  EXPECT_TRUE(b.body.nodes[2].is_op(OpId::Zeros));
}

// A broadcast_to of a constant folds up to 1,024 elements, as zeros does:
// larger, the graph keeps the small input, not its repeated copy.
TEST(ConstantFolding, FoldsOnlySmallBroadcasts) {
  BodyBuilder b;
  ValueRef row = b.constant(ag::constant({1.0f, 2.0f}));
  b.output(b.op(OpId::BroadcastTo, {row}, shape_attrs({512, 2})));
  b.output(b.op(OpId::BroadcastTo, {row}, shape_attrs({513, 2})));

  fold_constants(b.body);

  ASSERT_EQ(b.body.nodes[1].kind, NodeKind::Const);
  EXPECT_EQ(b.body.nodes[1].value.shape(), Shape({512, 2}));
  EXPECT_EQ(b.body.nodes[1].value.to_vector<float>()[1023], 2.0f);
  EXPECT_TRUE(b.body.nodes[3].is_op(OpId::BroadcastTo)) << b.body.to_string();
}

// A layout op of zeros is zeros of its own shape (a TensorArray laid out
// transposed, passes/transposed_arrays.cpp), folded when small; the zeros it
// read are left for dead code elimination.
TEST(ConstantFolding, TurnsLayoutOpsOfZerosIntoZerosOfTheirShape) {
  const std::string falses =
      "[false, false, false, false, false, false, false, false, false, false, false, false, false, "
      "false, false, false, false, false, false, false, false, false, false, false]";
  EXPECT_EQ(after_pass("zeros = zeros {ints=[2, 1000, 3], dtype=float64} : float64[2, 1000, 3]\n"
                       "transpose = transpose(zeros) {ints=[1, 0, 2]} : float64[1000, 2, 3]\n"
                       "Identity = Identity(transpose) : float64[1000, 2, 3]\n"
                       "reshape = reshape(zeros) {ints=[6000]} : float64[6000]\n"
                       "Identity_1 = Identity(reshape) : float64[6000]\n"
                       "zeros_1 = zeros {ints=[2, 3, 4], dtype=bool} : bool[2, 3, 4]\n"
                       "transpose_1 = transpose(zeros_1) {ints=[2, 0, 1]} : bool[4, 2, 3]\n"
                       "Identity_2 = Identity(transpose_1) : bool[4, 2, 3]\n"
                       "inputs ()\n"
                       "outputs (Identity, Identity_1, Identity_2)\n"),
            "zeros = zeros {ints=[2, 1000, 3], dtype=float64} : float64[2, 1000, 3]\n"
            "transpose = zeros {ints=[1000, 2, 3], dtype=float64} : float64[1000, 2, 3]\n"
            "Identity = Identity(transpose) : float64[1000, 2, 3]\n"
            "reshape = zeros {ints=[6000], dtype=float64} : float64[6000]\n"
            "Identity_1 = Identity(reshape) : float64[6000]\n"
            "zeros_1 = Const " +
                falses +
                " : bool[2, 3, 4]\n"
                "transpose_1 = Const " +
                falses +
                " : bool[4, 2, 3]\n"
                "Identity_2 = Const " +
                falses +
                " : bool[4, 2, 3]\n"
                "inputs ()\n"
                "outputs (Identity, Identity_1, Identity_2)\n");
}

// shape, size and rank read only their input's type: they fold when its
// shape is static, whatever computes the input (and the outputs' Identity
// nodes with them), and stay for run time otherwise. The tanh that only fed
// a folded shape is left unused.
TEST(ConstantFolding, FoldsShapeOpsOfStaticShapes) {
  EXPECT_EQ(after_pass("x = Placeholder : float32[2, 3]\n"
                       "y = Placeholder : float32[?, 3]\n"
                       "tanh = tanh(x) : float32[2, 3]\n"
                       "shape = shape(tanh) {dtype=int32} : int32[2]\n"
                       "Identity = Identity(shape) : int32[2]\n"
                       "size = size(x) {dtype=int32} : int32[]\n"
                       "Identity_1 = Identity(size) : int32[]\n"
                       "rank = rank(x) : int32[]\n"
                       "Identity_2 = Identity(rank) : int32[]\n"
                       "shape_1 = shape(y) {dtype=int32} : int32[2]\n"
                       "Identity_3 = Identity(shape_1) : int32[2]\n"
                       "size_1 = size(y) {dtype=int32} : int32[]\n"
                       "Identity_4 = Identity(size_1) : int32[]\n"
                       "inputs (x, y)\n"
                       "outputs (Identity, Identity_1, Identity_2, Identity_3, Identity_4)\n"),
            "x = Placeholder : float32[2, 3]\n"
            "y = Placeholder : float32[?, 3]\n"
            "tanh = tanh(x) : float32[2, 3]\n"
            "shape = Const [2, 3] : int32[2]\n"
            "Identity = Const [2, 3] : int32[2]\n"
            "size = Const [6] : int32[]\n"
            "Identity_1 = Const [6] : int32[]\n"
            "rank = Const [2] : int32[]\n"
            "Identity_2 = Const [2] : int32[]\n"
            "shape_1 = shape(y) {dtype=int32} : int32[2]\n"
            "Identity_3 = Identity(shape_1) : int32[2]\n"
            "size_1 = size(y) {dtype=int32} : int32[]\n"
            "Identity_4 = Identity(size_1) : int32[]\n"
            "inputs (x, y)\n"
            "outputs (Identity, Identity_1, Identity_2, Identity_3, Identity_4)\n");
}

}  // namespace
}  // namespace ag::passes
