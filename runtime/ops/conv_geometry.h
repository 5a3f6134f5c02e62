// The geometry of a convolution: the one place that decides its output size,
// its SAME padding, its groups and the layout of its tensors, for the conv op,
// its two gradient ops (conv_backprop_input, conv_backprop_filter), their
// kernels and the ONNX exporter.
//
// Tensors are TensorFlow's: the input [batch, spatial..., channels] (or
// [batch, channels, spatial...] with a channels-first data_format), the
// filter [kernel..., in_channels / groups, out_channels]. groups is the
// input's channels over the filter's in-channel dim, as tf.nn.convolution.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ag/ops.h"
#include "ag/shape.h"
#include "ops/op_registry.h"

namespace ag::ops {

// A convolution's attrs, as its ops store them (Attrs::ints, Attrs::axis).
struct ConvAttrs {
  int rank = 2;       // spatial dims: 1, 2 or 3
  bool same = false;  // TensorFlow's SAME padding, resolved from the input's dims
  bool channels_first = false;
  std::vector<int64_t> strides, dilations, pad_before, pad_after;  // one per spatial dim
  // Dims that the op's inputs do not say: the conv input's spatial dims
  // (conv_backprop_input, avg_pool_grad), the filter's kernel dims
  // (conv_backprop_filter), the window (the pools). Empty for conv.
  std::vector<int64_t> given_dims;
  // The groups where the inputs do not say them (the gradient ops); 0: the
  // input's channels over the filter's in-channel dim.
  int64_t groups = 0;

  Attrs encode() const;
  static ConvAttrs decode(const Attrs& attrs);
};

// What fused_conv adds to its convolution's result, in this order, before
// writing it: a bias (one value per output channel), a residual of the
// result's shape, then an activation. The graph optimiser makes fused_conv
// from conv -> add -> add -> activation chains (passes/conv_epilogues.cpp),
// and each term is computed as the unfused op computes it.
struct ConvEpilogue {
  // relu(v); or clip, minimum(maximum(v, lo), hi): ONNX's Clip as imported.
  enum class Activation : int64_t { none, relu, clip };
  bool bias = false;
  bool residual = false;
  Activation activation = Activation::none;
  double lo = 0.0, hi = 0.0;  // clip's bounds

  // fused_conv's inputs: the image and the filter, then the bias and the
  // residual where the epilogue has them.
  static constexpr size_t kBiasInput = 2;
  size_t residual_input() const { return bias ? 3 : 2; }
  size_t num_inputs() const { return residual_input() + (residual ? 1 : 0); }

  bool operator==(const ConvEpilogue&) const = default;
};

// fused_conv's attrs: the convolution's, with its epilogue in front of its
// ints and the clip bounds in Attrs::lo and Attrs::hi.
struct FusedConvAttrs {
  ConvAttrs conv;
  ConvEpilogue epilogue;

  Attrs encode() const;
  static FusedConvAttrs decode(const Attrs& attrs);
};

// A convolution with every dim known, or kUnknownDim where a traced shape does
// not say.
struct ConvGeometry {
  int rank = 2;
  bool channels_first = false;
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  std::vector<int64_t> in, kernel, out;  // spatial dims
  std::vector<int64_t> strides, dilations, pad_before, pad_after;

  // Where element (batch item b, channel c, spatial position p) of the input
  // or output sits: b * batch + c * channel + p * position.
  struct Strides {
    int64_t batch, channel, position;
  };
  Strides input_strides() const;
  Strides output_strides() const;

  Shape input_shape() const;
  Shape filter_shape() const;
  Shape output_shape() const;
  // Elements per spatial position and per channel of the input, filter and
  // output (their strides in the layout).
  int64_t in_positions() const;
  int64_t out_positions() const;
  int64_t kernel_positions() const;
  // Whether every spatial dim of the input is known (while tracing).
  bool input_spatial_dims_known() const;
};

// The geometry of a convolution of `input` by `filter` with `attrs`, or an
// InvalidArgumentError prefixed with `op`: ranks, channels that the filter
// does not divide, a kernel larger than the padded input.
ConvGeometry conv_geometry(std::string_view op, const ConvAttrs& attrs, const Shape& input,
                           const Shape& filter);

// Whether `term` is a bias of g's result `out`: one value per output channel,
// laid along the channel axis (aligned right, as broadcasting aligns it),
// every other dim 1.
bool is_channel_bias(const Shape& term, const ConvGeometry& g, const Shape& out);

// A pool's geometry: a depthwise convolution of `input` by a window of
// attrs.given_dims (groups = channels, one filter each).
ConvGeometry pool_geometry(std::string_view op, const ConvAttrs& attrs, const Shape& input);
// The same, of the pool whose input has attrs.given_dims as its spatial dims
// and whose output gradient is `out_backprop` (avg_pool_grad).
ConvGeometry avg_pool_grad_geometry(std::string_view op, const ConvAttrs& attrs,
                                    const Shape& out_backprop);

// The input position (in row-major order of g.in) that window position k of
// output position p reads, or -1 in the padding, for the output positions
// [first, first + count): element (p - first) * g.kernel_positions() + k.
std::vector<int64_t> window_sources(const ConvGeometry& g, int64_t first, int64_t count);

// conv_backprop_input's geometry: the convolution whose output gradient is
// `out_backprop`, by `filter`, of an input of attrs.given_dims.
ConvGeometry conv_backprop_input_geometry(std::string_view op, const ConvAttrs& attrs,
                                          const Shape& filter, const Shape& out_backprop);
// conv_backprop_filter's geometry: the convolution of `input` whose output
// gradient is `out_backprop`, by a filter of attrs.given_dims.
ConvGeometry conv_backprop_filter_geometry(std::string_view op, const ConvAttrs& attrs,
                                           const Shape& input, const Shape& out_backprop);

// The attrs of conv_backprop_input or avg_pool_grad, which take `arity`
// inputs, or one more when their result's spatial dims (the last attrs.rank
// given dims) were unknown while tracing: the tensor whose gradient they
// compute, whose spatial dims they then take when they run.
ConvAttrs gradient_op_attrs(const InferContext& ctx, size_t arity);
ConvAttrs gradient_op_attrs(const KernelContext& ctx, size_t arity);
// Such an op's inputs: `operands`, then `input` (the tensor of geometry g
// whose gradient it computes) when g's input spatial dims are unknown.
std::vector<Tensor> gradient_op_inputs(std::vector<Tensor> operands, const ConvGeometry& g,
                                       const Tensor& input);

// The attrs of a convolution of spatial rank `rank` from TensorFlow's
// arguments: strides and dilations of 1 (all), rank or rank + 2 entries (the
// batch and channel ones 1); padding "SAME", "VALID" or explicit (before,
// after) pairs, one per spatial dim; data_format "N...C" or "NC..." of the
// rank ("NHWC", "NCHW", "NWC", "NDHWC", ...).
ConvAttrs conv_attrs(std::string_view op, int rank, const std::vector<int64_t>& strides,
                     const Padding& padding, std::string_view data_format,
                     const std::vector<int64_t>& dilations);

// A pool's attrs: conv_attrs, and the window `ksize` (given as strides are)
// in given_dims.
ConvAttrs pool_attrs(std::string_view op, int rank, const std::vector<int64_t>& ksize,
                     const std::vector<int64_t>& strides, const Padding& padding,
                     std::string_view data_format, const std::vector<int64_t>& dilations = {1});

}  // namespace ag::ops
