// A convolution's bias, residual and activation become one fused_conv
// (passes/conv_epilogues.cpp): the IR before and after the pass, the chains
// it leaves alone, and traced blocks of the forms ResNet and MobileNet have,
// with the eager values bit for bit, NaN and infinities included.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "body_builder.h"
#include "graph/graph.h"
#include "ops/conv_geometry.h"
#include "ops/conv_kernels.h"
#include "passes/passes.h"
#include "staged_test_util.h"

namespace ag::passes {
namespace {

using namespace ag_test;
using Activation = ops::ConvEpilogue::Activation;

Attrs conv2d_attrs() {
  return ops::conv_attrs("conv2d", 2, {1}, "SAME", "NHWC", {1}).encode();
}

// Whether the kernel of this machine and build fuses a 2-D convolution of
// `input` by `filter` with `epilogue` (the pass asks the same).
bool fuses(const Shape& input, const Shape& filter, const ops::ConvEpilogue& epilogue) {
  const ops::ConvAttrs attrs = ops::ConvAttrs::decode(conv2d_attrs());
  return ops::fused_conv_keeps_values(float32, ops::conv_geometry("conv2d", attrs, input, filter),
                                      epilogue);
}

TEST(ConvEpilogues, BiasResidualAndReluBecomeOneFusedConv) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {1, 6, 6, 16});
  ValueRef w = b.placeholder("w", float32, {3, 3, 16, 16});
  ValueRef r = b.placeholder("r", float32, {1, 6, 6, 16});
  ValueRef conv = b.op(OpId::Conv, {x, w}, conv2d_attrs());
  ValueRef bias = b.op(OpId::Add, {conv, b.constant(random_normal({16}, 0, 1, float32, 1))});
  ValueRef sum = b.op(OpId::Add, {r, bias});
  b.output(b.op(OpId::Relu, {sum}));
  const std::string before =
      "[] -> x\n"
      "[] -> w\n"
      "[] -> r\n"
      "['x', 'w'] -> conv\n"
      "[] -> Const\n"
      "['conv', 'Const'] -> add\n"
      "['r', 'add'] -> add_1\n"
      "['add_1'] -> relu\n"
      "['relu'] -> Identity\n";
  EXPECT_EQ(b.body.to_string(), before);

  fuse_conv_epilogues(b.body);
  eliminate_dead_code(b.body);

  if (!fuses({1, 6, 6, 16}, {3, 3, 16, 16}, {true, true, Activation::relu})) {
    EXPECT_EQ(b.body.to_string(), before) << "a kernel that would round otherwise fuses nothing";
    return;
  }
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> w\n"
            "[] -> r\n"
            "[] -> Const\n"
            "['x', 'w', 'Const', 'r'] -> relu\n"
            "['relu'] -> Identity\n");
  const Node& fused = b.body.nodes[4];
  ASSERT_TRUE(fused.is_op(OpId::FusedConv));
  EXPECT_EQ(ops::FusedConvAttrs::decode(fused.attrs).epilogue,
            (ops::ConvEpilogue{true, true, Activation::relu}));
  EXPECT_EQ(fused.outputs[0].shape, Shape({1, 6, 6, 16}));
}

// A conv read twice and a clip: what stays. A bias that is not a constant
// (a variable's value) is fused as a constant one is.
TEST(ConvEpilogues, LeavesAConvReadTwiceAndClip) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {1, 6, 6, 16});
  ValueRef w = b.placeholder("w", float32, {1, 1, 16, 16});
  ValueRef v = b.placeholder("v", float32, {16});
  ValueRef read_twice = b.op(OpId::Conv, {x, w}, conv2d_attrs());
  b.output(b.op(OpId::Relu, {read_twice}));
  b.output(read_twice);
  ValueRef by_variable = b.op(OpId::Conv, {x, w}, conv2d_attrs());
  b.output(b.op(OpId::Add, {by_variable, v}));
  ValueRef clipped = b.op(OpId::Conv, {x, w}, conv2d_attrs());
  ValueRef biased = b.op(OpId::Add, {clipped, b.constant(random_normal({16}, 0, 1, float32, 2))});
  b.output(b.op(OpId::ClipByValue, {biased, b.constant(Tensor(0.0f)), b.constant(Tensor(6.0f))}));

  fuse_conv_epilogues(b.body);
  eliminate_dead_code(b.body);

  const bool bias_fuses = fuses({1, 6, 6, 16}, {1, 1, 16, 16}, {true, false, Activation::none});
  EXPECT_EQ(count_ops(b.body, OpId::FusedConv), bias_fuses ? 2u : 0u) << b.body.to_string();
  EXPECT_EQ(count_ops(b.body, OpId::Conv), bias_fuses ? 1u : 3u) << b.body.to_string();
  EXPECT_EQ(count_ops(b.body, OpId::ClipByValue), 1u);
  if (bias_fuses) {
    EXPECT_TRUE(b.body.to_string().find("['x', 'w', 'v'] -> add\n") != std::string::npos)
        << b.body.to_string();
  }
}

// ResNet's basic block and MobileNet's inverted residual, channels first as
// PyTorch exports them, traced: the eager values bit for bit.
Tensor resnet_block(const Tensor& x, const Tensor& w1, const Tensor& w2, const Tensor& bias) {
  Tensor h = relu(convolution(x, w1, {1}, "SAME", "NCHW") + reshape(bias, {1, 16, 1, 1}));
  return relu(convolution(h, w2, {1}, "SAME", "NCHW") + reshape(bias, {1, 16, 1, 1}) + x);
}

// ReLU6 as ONNX's Clip is imported: minimum(maximum(v, 0), 6).
Tensor relu6(const Tensor& v) {
  return minimum(maximum(v, 0.0f), 6.0f);
}

Tensor mobilenet_block(const Tensor& x, const Tensor& w1, const Tensor& w2, const Tensor& bias) {
  Tensor h = relu6(convolution(x, w1, {1}, "SAME", "NCHW") + reshape(bias, {1, 32, 1, 1}));
  return convolution(h, w2, {1}, "SAME", "NCHW") + reshape(slice(bias, {0}, {16}), {1, 16, 1, 1}) +
         x;
}

TEST(ConvEpilogues, TracedResNetAndMobileNetBlocksGiveTheEagerBits) {
  const Tensor x = random_normal({1, 16, 12, 12}, 0.0, 1.0, float32, 3);
  const Tensor bias = random_normal({32}, 0.0, 1.0, float32, 4);
  const Tensor w3 = random_normal({3, 3, 16, 16}, 0.0, 0.3, float32, 5);
  const Tensor expand = random_normal({1, 1, 16, 32}, 0.0, 0.3, float32, 6);
  const Tensor project = random_normal({1, 1, 32, 16}, 0.0, 0.3, float32, 7);
  const Tensor b16 = slice(bias, {0}, {16});

  auto resnet = function(resnet_block);
  expect_same_bits(resnet_block(x, w3, w3, b16), resnet(x, w3, w3, b16), "resnet block");
  auto mobilenet = function(mobilenet_block);
  expect_same_bits(mobilenet_block(x, expand, project, bias), mobilenet(x, expand, project, bias),
                   "mobilenet block");

  // NaN, infinities and zeros of both signs reach the activations.
  std::vector<float> special = x.to_vector<float>();
  const float values[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.0f, 1e30f, -1e30f};
  for (size_t i = 0; i < special.size(); i += 97) special[i] = values[(i / 97) % 7];
  const Tensor odd = constant(special, x.shape());
  expect_same_bits(resnet_block(odd, w3, w3, b16), resnet(odd, w3, w3, b16), "resnet, NaN");
  expect_same_bits(mobilenet_block(odd, expand, project, bias),
                   mobilenet(odd, expand, project, bias), "mobilenet, NaN");

  // The weights and biases as constants, as a model loaded from ONNX has them.
  auto loaded = function([&](const Tensor& x) { return resnet_block(x, w3, w3, b16); });
  expect_same_bits(resnet_block(x, w3, w3, b16), loaded(x), "resnet block of constants");
  const auto body = optimized_body(loaded, x);
  const size_t want =
      (fuses({1, 12, 12, 16}, {3, 3, 16, 16}, {true, false, Activation::relu}) ? 1 : 0) +
      (fuses({1, 12, 12, 16}, {3, 3, 16, 16}, {true, true, Activation::relu}) ? 1 : 0);
  EXPECT_EQ(count_ops(*body, OpId::FusedConv), want) << body->to_string();

  auto loaded_mobilenet =
      function([&](const Tensor& x) { return mobilenet_block(x, expand, project, bias); });
  expect_same_bits(mobilenet_block(x, expand, project, bias), loaded_mobilenet(x),
                   "mobilenet block of constants");
  const auto mobile = optimized_body(loaded_mobilenet, x);
  const size_t fused_clip =
      fuses({1, 12, 12, 16}, {1, 1, 16, 32}, {true, false, Activation::clip, 0.0, 6.0}) ? 1 : 0;
  const size_t fused_residual =
      fuses({1, 12, 12, 32}, {1, 1, 32, 16}, {true, true, Activation::none}) ? 1 : 0;
  EXPECT_EQ(count_ops(*mobile, OpId::FusedConv), fused_clip + fused_residual)
      << mobile->to_string();
  EXPECT_EQ(count_ops(*mobile, OpId::Maximum), 1 - fused_clip) << mobile->to_string();
}

// The second block's residual is the first's result, which dies at its
// fused_conv: the result takes over its buffer, and the kernel sums into
// the residual where it lies.
TEST(ConvEpilogues, AResidualThatDiesThereHoldsTheResult) {
  const Tensor x = random_normal({1, 16, 10, 10}, 0.0, 1.0, float32, 8);
  const Tensor w = random_normal({3, 3, 16, 16}, 0.0, 0.3, float32, 9);
  const Tensor bias = random_normal({16}, 0.0, 1.0, float32, 10);
  auto two_blocks = [&](const Tensor& x) {
    return resnet_block(resnet_block(x, w, w, bias), w, w, bias);
  };
  auto staged = function(two_blocks);
  expect_same_bits(two_blocks(x), staged(x), "two resnet blocks");
  expect_same_bits(two_blocks(x), staged(x), "two resnet blocks, cached");
  // Two buffers, the channels-last image's and a block's first result's:
  // each block's result takes over its residual's (three without).
  const PlanStats stats = staged.get_concrete_function(x).plan_stats();
  const bool fused = fuses({1, 10, 10, 16}, {3, 3, 16, 16}, {true, true, Activation::relu});
  EXPECT_EQ(stats.buffers, fused ? 2u : 3u) << stats.to_string();
}

// `n` blocks relu(conv(image(v)) + bias + v) in a staged loop over v.
template <class Image>
Tensor blocks_in_a_loop(const Tensor& x, const Tensor& n, const Tensor& w, const Tensor& bias,
                        Image image) {
  auto [i, v] =
      while_loop([&](const Tensor& i, const Tensor&) { return i < n; },
                 [&](const Tensor& i, const Tensor& v) {
                   return std::make_tuple(
                       i + 1, relu(convolution(image(v), w, {1}, "SAME", "NHWC") + bias + v));
                 },
                 std::make_tuple(Tensor(0), x));
  return v;
}

// A loop variable that is a fused convolution's residual and dies there: the
// body writes the block's result into the variable's own memory, as an
// elementwise step would.
TEST(ConvEpilogues, ALoopVariableResidualHoldsTheResult) {
  const Tensor x = random_normal({1, 10, 10, 16}, 0.0, 1.0, float32, 11);
  const Tensor w = random_normal({3, 3, 16, 16}, 0.0, 0.1, float32, 12);
  const Tensor bias = random_normal({16}, 0.0, 1.0, float32, 13);
  auto blocks = [&](const Tensor& x, const Tensor& n) {
    return blocks_in_a_loop(x, n, w, bias, [](const Tensor& v) { return abs(v); });
  };
  auto staged = function(blocks);
  expect_same_bits(blocks(x, constant(3)), staged(x, constant(3)), "three blocks in a loop");
  expect_same_bits(blocks(x, constant(0)), staged(x, constant(0)), "no block");
  const PlanStats stats = staged.get_concrete_function(x, constant(3)).plan_stats();
  const bool fused = fuses({1, 10, 10, 16}, {3, 3, 16, 16}, {true, true, Activation::relu});
  EXPECT_EQ(stats.in_place_steps, 2u) << stats.to_string();
  EXPECT_EQ(stats.buffers, fused ? 3u : 4u) << stats.to_string();
}

// A residual that is also the convolution's image is read while the result
// is written: the result gets memory of its own, in a loop and between
// blocks.
TEST(ConvEpilogues, AResidualThatIsAlsoTheImageIsNotWrittenOver) {
  const Tensor x = random_normal({1, 10, 10, 16}, 0.0, 1.0, float32, 14);
  const Tensor w = random_normal({3, 3, 16, 16}, 0.0, 0.1, float32, 15);
  const Tensor bias = random_normal({16}, 0.0, 1.0, float32, 16);
  auto block = [&](const Tensor& v) {
    return relu(convolution(v, w, {1}, "SAME", "NHWC") + bias + v);
  };
  auto three_blocks = [&](const Tensor& x) { return block(block(block(x))); };
  expect_same_bits(three_blocks(x), function(three_blocks)(x), "three blocks");
  auto blocks = [&](const Tensor& x, const Tensor& n) {
    return blocks_in_a_loop(x, n, w, bias, [](const Tensor& v) { return v; });
  };
  expect_same_bits(blocks(x, constant(3)), function(blocks)(x, constant(3)),
                   "three blocks in a loop");
}

// A plan made on one intra-op thread and run on two: its fused convolution
// takes the primitive made for two (cached per thread, as eager calls').
TEST(ConvEpilogues, APlanMadeOnOneThreadRunsOnTwo) {
  const Tensor x = random_normal({1, 16, 10, 10}, 0.0, 1.0, float32, 17);
  const Tensor w = random_normal({3, 3, 16, 16}, 0.0, 0.3, float32, 18);
  const Tensor bias = random_normal({16}, 0.0, 1.0, float32, 19);
  auto block = [&](const Tensor& x) { return resnet_block(x, w, w, bias); };
  set_intra_op_threads(1);
  auto staged = function(block);
  expect_same_bits(block(x), staged(x), "on one thread");
  set_intra_op_threads(2);
  for (int call = 0; call < 2; ++call) expect_same_bits(block(x), staged(x), "on two threads");
  set_intra_op_threads(1);
}

}  // namespace
}  // namespace ag::passes
