// Channels-first convolutions and pools run channels last, and so do the
// elementwise ops between them (passes/channels_last_convolutions.cpp): the
// IR before and after the pass, what it leaves alone, and traced functions of
// the forms ONNX models have (a channels-last graph saved, a PyTorch
// export's chain of channels-first convolutions), against eager values.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ag/ag.h>

#include "body_builder.h"
#include "graph/graph.h"
#include "ops/conv_geometry.h"
#include "passes/passes.h"
#include "staged_test_util.h"

namespace ag::passes {
namespace {

using namespace ag_test;

Attrs conv2d_attrs(const std::string& format) {
  return ops::conv_attrs("conv2d", 2, {1}, "VALID", format, {1}).encode();
}

TEST(ChannelsLastConvolutions, AConvolutionBetweenTransposesRunsChannelsLast) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {1, 5, 6, 3});
  ValueRef w = b.placeholder("w", float32, {3, 3, 3, 4});
  ValueRef nchw = b.op(OpId::Transpose, {x}, perm_attrs({0, 3, 1, 2}));
  ValueRef conv = b.op(OpId::Conv, {nchw, w}, conv2d_attrs("NCHW"));
  b.output(b.op(OpId::Transpose, {conv}, perm_attrs({0, 2, 3, 1})));
  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> w\n"
            "['x'] -> transpose\n"
            "['transpose', 'w'] -> conv\n"
            "['conv'] -> transpose_1\n"
            "['transpose_1'] -> Identity\n");

  run_convolutions_channels_last(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> w\n"
            "['x', 'w'] -> conv\n"
            "['conv'] -> transpose_1\n"
            "['transpose_1'] -> Identity\n");
  const Node& c = b.body.nodes[2];
  EXPECT_FALSE(ops::ConvAttrs::decode(c.attrs).channels_first);
  EXPECT_EQ(c.outputs[0].shape, Shape({1, 3, 4, 4}));
  EXPECT_TRUE(b.body.nodes[3].is_op(OpId::Identity));
}

// A value also read channels first: its reader, elementwise, runs channels
// last too, and one transpose gives its result back.
TEST(ChannelsLastConvolutions, AnElementwiseReaderRunsChannelsLast) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {1, 5, 5, 3});
  ValueRef w = b.placeholder("w", float32, {3, 3, 3, 3});
  ValueRef nchw = b.op(OpId::Transpose, {x}, perm_attrs({0, 3, 1, 2}));
  ValueRef conv = b.op(OpId::Conv, {nchw, w}, conv2d_attrs("NCHW"));
  b.output(b.op(OpId::Transpose, {conv}, perm_attrs({0, 2, 3, 1})));
  b.output(b.op(OpId::Add, {conv, conv}));

  run_convolutions_channels_last(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> w\n"
            "['x', 'w'] -> conv\n"
            "['conv'] -> transpose_1\n"
            "['transpose_1'] -> Identity\n"
            "['conv', 'conv'] -> add\n"
            "['add'] -> transpose_3\n"
            "['transpose_3'] -> Identity_1\n");
  EXPECT_EQ(b.body.nodes[5].outputs[0].shape, Shape({1, 3, 3, 3}));
  EXPECT_EQ(graph::transpose_permutation(b.body.nodes[6]), (std::vector<int64_t>{0, 3, 1, 2}));
}

// An input transposed otherwise is transposed once more, channels last.
TEST(ChannelsLastConvolutions, AnInputWithoutATwinIsTransposed) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {1, 5, 5, 3});
  ValueRef w = b.placeholder("w", float32, {3, 3, 3, 3});
  ValueRef nchw = b.op(OpId::Transpose, {x}, perm_attrs({0, 3, 2, 1}));
  ValueRef conv = b.op(OpId::Conv, {nchw, w}, conv2d_attrs("NCHW"));
  b.output(b.op(OpId::Transpose, {conv}, perm_attrs({0, 2, 3, 1})));

  run_convolutions_channels_last(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> w\n"
            "['x'] -> transpose\n"
            "['transpose'] -> transpose_2\n"
            "['transpose_2', 'w'] -> conv\n"
            "['conv'] -> transpose_1\n"
            "['transpose_1'] -> Identity\n");
  EXPECT_EQ(graph::transpose_permutation(b.body.nodes[3]), (std::vector<int64_t>{0, 2, 3, 1}));
}

// A convolution that is itself the body's output keeps its layout.
TEST(ChannelsLastConvolutions, ABodyOutputKeepsItsLayout) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {1, 3, 5, 5});
  ValueRef w = b.placeholder("w", float32, {3, 3, 3, 3});
  ValueRef conv = b.op(OpId::Conv, {x, w}, conv2d_attrs("NCHW"));
  b.body.outputs.push_back(conv);
  const std::string before = b.body.to_string();

  run_convolutions_channels_last(b.body);

  EXPECT_EQ(b.body.to_string(), before);
  EXPECT_TRUE(ops::ConvAttrs::decode(b.body.nodes[size_t(conv.node)].attrs).channels_first);
}

// A PyTorch export's chain: channels-first image, convolution, bias (a
// [1, C, 1, 1] constant), clip, convolution, max pool. The chain runs
// channels last between one transpose in and one out; the bias is reshaped
// to [1, 1, 1, C], which constant folding does once.
TEST(ChannelsLastConvolutions, AChannelsFirstChainRunsChannelsLastBetweenTwoTransposes) {
  BodyBuilder b;
  ValueRef x = b.placeholder("x", float32, {1, 3, 8, 8});
  ValueRef w1 = b.placeholder("w1", float32, {3, 3, 3, 4});
  ValueRef w2 = b.placeholder("w2", float32, {1, 1, 4, 4});
  ValueRef bias = b.constant(random_normal({1, 4, 1, 1}, 0.0, 1.0, float32, 3));
  ValueRef c1 = b.op(OpId::Conv, {x, w1}, conv2d_attrs("NCHW"));
  ValueRef biased = b.op(OpId::Add, {c1, bias});
  ValueRef zero = b.constant(Tensor(0.0f)), six = b.constant(Tensor(6.0f));
  ValueRef clipped = b.op(OpId::ClipByValue, {biased, zero, six});
  ValueRef c2 = b.op(OpId::Conv, {clipped, w2}, conv2d_attrs("NCHW"));
  Attrs pool = ops::pool_attrs("max_pool", 2, {2}, {2}, "VALID", "NCHW", {1}).encode();
  b.output(b.op(OpId::MaxPool, {c2}, pool));

  run_convolutions_channels_last(b.body);
  fold_constants(b.body);
  eliminate_dead_code(b.body);

  EXPECT_EQ(b.body.to_string(),
            "[] -> x\n"
            "[] -> w1\n"
            "[] -> w2\n"
            "['x'] -> transpose\n"
            "['transpose', 'w1'] -> conv\n"
            "[] -> reshape\n"
            "['conv', 'reshape'] -> add\n"
            "[] -> Const_1\n"
            "[] -> Const_2\n"
            "['add', 'Const_1', 'Const_2'] -> clip_by_value\n"
            "['clip_by_value', 'w2'] -> conv_1\n"
            "['conv_1'] -> max_pool\n"
            "['max_pool'] -> transpose_5\n"
            "['transpose_5'] -> Identity\n");
  EXPECT_EQ(b.body.nodes[5].outputs[0].shape, Shape({1, 1, 1, 4}));  // the folded bias
  EXPECT_EQ(b.body.nodes[11].outputs[0].shape, Shape({1, 3, 3, 4}));
}

// What ag::onnx::load makes of a saved conv2d: the traced form gives the
// eager values, in 1 to 3 spatial dims, with the transposes gone.
TEST(ChannelsLastConvolutions, TracedConvolutionsBetweenTransposesGiveTheEagerValues) {
  struct Case {
    std::vector<int64_t> image, filter, to_first, to_last;
  };
  for (const Case& c : {Case{{2, 9, 3}, {3, 3, 5}, {0, 2, 1}, {0, 2, 1}},
                        Case{{1, 7, 6, 4}, {3, 2, 4, 6}, {0, 3, 1, 2}, {0, 2, 3, 1}},
                        Case{{1, 4, 5, 6, 2}, {2, 2, 3, 2, 3}, {0, 4, 1, 2, 3}, {0, 2, 3, 4, 1}}}) {
    const Tensor x = random_normal(Shape(c.image), 0.0, 1.0, float32, 7);
    const Tensor w = random_normal(Shape(c.filter), 0.0, 1.0, float32, 8);
    const std::string first = c.image.size() == 3 ? "NCW" : c.image.size() == 4 ? "NCHW" : "NCDHW";
    auto through_channels_first = [&](const Tensor& x, const Tensor& w) {
      const Tensor y = convolution(transpose(x, c.to_first), w, {1}, "SAME", first);
      return transpose(y, c.to_last);
    };
    const Tensor eager = through_channels_first(x, w);
    auto staged = function(through_channels_first);
    const Tensor traced = staged(x, w);

    ASSERT_EQ(traced.shape(), eager.shape());
    const std::vector<float> want = eager.to_vector<float>(), got = traced.to_vector<float>();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
    auto body = optimized_body(staged, x, w);
    EXPECT_EQ(count_ops(*body, OpId::Transpose), 0u) << body->to_string();
  }
}

// The chain a PyTorch export has, traced: the eager values, with one
// transpose in (the image) and one out (before the spatial mean).
TEST(ChannelsLastConvolutions, TracedChannelsFirstChainGivesTheEagerValues) {
  const Tensor x = random_normal({2, 3, 9, 9}, 0.0, 1.0, float32, 11);
  const Tensor w1 = random_normal({3, 3, 3, 8}, 0.0, 0.5, float32, 12);
  const Tensor w2 = random_normal({1, 1, 8, 8}, 0.0, 0.5, float32, 13);
  const Tensor bias = random_normal({8}, 0.0, 1.0, float32, 14);
  auto chain = [](const Tensor& x, const Tensor& w1, const Tensor& w2, const Tensor& bias) {
    Tensor h = convolution(x, w1, {1}, "SAME", "NCHW") + reshape(bias, {1, 8, 1, 1});
    h = clip_by_value(h, 0.0f, 6.0f);
    h = h + convolution(h, w2, {1}, "SAME", "NCHW");
    h = max_pool(h, {2}, {2}, "VALID", "NCHW");
    return reduce_mean(h, {2, 3});
  };
  const Tensor eager = chain(x, w1, w2, bias);
  auto staged = function(chain);
  const Tensor traced = staged(x, w1, w2, bias);

  ASSERT_EQ(traced.shape(), eager.shape());
  const std::vector<float> want = eager.to_vector<float>(), got = traced.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4f) << i;
  auto body = optimized_body(staged, x, w1, w2, bias);
  EXPECT_EQ(count_ops(*body, OpId::Transpose), 2u) << body->to_string();
}

}  // namespace
}  // namespace ag::passes
