// Constant folding (passes/constant_folding.cpp) on small hand-built bodies, checked LLVM-style by
// the IR listing (Body::to_string()) before and after the pass.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ag/ops.h"
#include "ag/tensor.h"
#include "body_builder.h"
#include "graph/graph.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using namespace ag_test;

TEST(ConstantFolding, FoldsConstantChainsInOneSweep) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", int32, {2});
  ValueRef sum = b.op(OpId::Add, {b.constant(constant({1, 2})), b.constant(constant({10, 20}))});
  ValueRef product = b.op(OpId::Mul, {sum, b.constant(constant(2))});
  b.output(b.op(OpId::Add, {x, product}));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> Const\n"
            "[] -> Const_1\n"
            "['Const', 'Const_1'] -> add\n"
            "[] -> Const_2\n"
            "['add', 'Const_2'] -> mul\n"
            "['x', 'mul'] -> add_1\n"
            "['add_1'] -> Identity\n");

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
  ValueRef random = b.op(OpId::RandomUniform, {}, shape_attrs({2}));
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

// shape, size and rank read only their input's type: they fold when its shape
// is static, whatever computes the input (and the outputs' Identity nodes
// with them), and stay for run time otherwise.
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
  BodyBuilder b;
  ValueRef large = b.op(OpId::Zeros, {}, zeros_attrs({2, 1000, 3}, float64));
  b.output(b.op(OpId::Transpose, {large}, perm_attrs({1, 0, 2})));
  b.output(b.op(OpId::Reshape, {large}, shape_attrs({6000})));
  ValueRef small = b.op(OpId::Zeros, {}, zeros_attrs({2, 3, 4}, bool_));
  b.output(b.op(OpId::Transpose, {small}, perm_attrs({2, 0, 1})));

  fold_constants(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> transpose\n"
            "['transpose'] -> Identity\n"
            "[] -> reshape\n"
            "['reshape'] -> Identity_1\n"
            "[] -> Identity_2\n");
  const Node& transposed = b.body.nodes[0];
  ASSERT_TRUE(transposed.is_op(OpId::Zeros));
  EXPECT_EQ(transposed.attrs.ints, (std::vector<int64_t>{1000, 2, 3}));
  EXPECT_EQ(transposed.attrs.dtype, float64);
  EXPECT_EQ(transposed.outputs[0].shape, Shape({1000, 2, 3}));
  ASSERT_TRUE(b.body.nodes[2].is_op(OpId::Zeros));
  EXPECT_EQ(b.body.nodes[2].attrs.ints, (std::vector<int64_t>{6000}));
  const Node& small_transposed = b.body.nodes[4];  // the small transpose's output, folded
  ASSERT_EQ(small_transposed.kind, NodeKind::Const);
  EXPECT_EQ(small_transposed.value.spec().to_string(), "TensorSpec(shape=(4, 2, 3), dtype=bool)");
  EXPECT_EQ(small_transposed.value.to_vector<bool>(), std::vector<bool>(24, false));
}

TEST(ConstantFolding, FoldsShapeOpsOfStaticShapes) {
  BodyBuilder b;
  Attrs int32_out;
  int32_out.dtype = int32;
  ValueRef x = b.placeholder("x", float32, {2, 3});
  ValueRef y = b.placeholder("y", float32, {kUnknownDim, 3});
  ValueRef tanh = b.op(OpId::Tanh, {x});
  b.output(b.op(OpId::Shape, {tanh}, int32_out));
  b.output(b.op(OpId::Size, {x}, int32_out));
  b.output(b.op(OpId::Rank, {x}));
  b.output(b.op(OpId::Shape, {y}, int32_out));
  b.output(b.op(OpId::Size, {y}, int32_out));

  fold_constants(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> y\n"
            "['x'] -> tanh\n"
            "[] -> shape\n"
            "[] -> Identity\n"
            "[] -> size\n"
            "[] -> Identity_1\n"
            "[] -> rank\n"
            "[] -> Identity_2\n"
            "['y'] -> shape_1\n"
            "['shape_1'] -> Identity_3\n"
            "['y'] -> size_1\n"
            "['size_1'] -> Identity_4\n");
  EXPECT_EQ(b.body.nodes[3].value.to_vector<int32_t>(), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(b.body.nodes[5].value.to_vector<int32_t>(), (std::vector<int32_t>{6}));
  EXPECT_EQ(b.body.nodes[7].value.to_vector<int32_t>(), (std::vector<int32_t>{2}));
  EXPECT_EQ(b.body.nodes[7].outputs[0].shape, Shape{});

  // The tanh that only fed a folded shape is now dead.
  eliminate_dead_code(b.body);
  EXPECT_EQ(b.body.to_string().find("tanh"), std::string::npos);
}

}  // namespace
}  // namespace ag::passes
