// Channels-first convolutions between transposes from and back to channels
// last run channels last (passes/channels_last_convolutions.cpp): the IR
// before and after the pass, what it leaves alone, and a traced function of
// the form an ONNX model of a channels-last graph has, against eager values.
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

// The rewrite needs both transposes: a convolution whose result is also read
// channels first (here by an add), one whose input is transposed otherwise,
// and one that is itself the body's output keep their layout.
TEST(ChannelsLastConvolutions, OtherReadersAndPermutationsKeepTheLayout) {
  struct Case {
    const char* name;
    std::vector<int64_t> in_perm;
    bool add_reader;
    bool conv_is_output;
  };
  for (const Case& c : {Case{"read channels first", {0, 3, 1, 2}, true, false},
                        Case{"another input permutation", {0, 3, 2, 1}, false, false},
                        Case{"the body's output", {0, 3, 1, 2}, false, true}}) {
    SCOPED_TRACE(c.name);
    BodyBuilder b;
    ValueRef x = b.placeholder("x", float32, {1, 5, 5, 3});
    ValueRef w = b.placeholder("w", float32, {3, 3, 3, 3});
    ValueRef nchw = b.op(OpId::Transpose, {x}, perm_attrs(c.in_perm));
    ValueRef conv = b.op(OpId::Conv, {nchw, w}, conv2d_attrs("NCHW"));
    b.output(b.op(OpId::Transpose, {conv}, perm_attrs({0, 2, 3, 1})));
    if (c.add_reader) b.output(b.op(OpId::Add, {conv, conv}));
    if (c.conv_is_output) b.body.outputs.push_back(conv);
    const std::string before = b.body.to_string();

    run_convolutions_channels_last(b.body);

    EXPECT_EQ(b.body.to_string(), before);
    EXPECT_TRUE(ops::ConvAttrs::decode(b.body.nodes[size_t(conv.node)].attrs).channels_first);
  }
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

}  // namespace
}  // namespace ag::passes
