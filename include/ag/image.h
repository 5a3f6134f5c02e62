// Resizing images and other tensors by interpolation along some of their
// axes: tf.image.resize, and resize_axes, the general form ONNX's Resize
// needs. Each resized axis is an interpolation of its own (nearest, linear
// or cubic taps gathered and weighed), computed from ops, so the result has
// gradients and exports.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "ag/tensor.h"

namespace ag::image {

enum class Interpolation { kNearest, kLinear, kCubic };

// Where output index x samples the input (ONNX's coordinate_transformation_mode),
// with scale = output length / input length:
//   kHalfPixel          (x + 0.5) / scale - 0.5
//   kPytorchHalfPixel   as kHalfPixel, but 0 for an output of length 1
//   kAlignCorners       x * (input - 1) / (output - 1): the corners meet
//   kAsymmetric         x / scale
//   kHalfPixelForNearest (x + 0.5) / scale (TensorFlow's nearest neighbour)
enum class CoordinateMode {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kHalfPixelForNearest
};

// How a nearest sample between two indices picks one (ONNX's nearest_mode).
enum class NearestRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeOptions {
  Interpolation interpolation = Interpolation::kLinear;
  CoordinateMode coordinates = CoordinateMode::kHalfPixel;
  NearestRounding rounding = NearestRounding::kRoundPreferFloor;
  double cubic_coeff_a = -0.75;  // Keys's cubic; TensorFlow's bicubic is -0.5
  // Taps outside the input weigh 0 (the others renormalised) instead of
  // repeating the edge element.
  bool exclude_outside = false;
};

// One axis to resize to `size` elements; `scale` is the ratio the
// coordinates use (0: size / the input's length).
struct ResizeAxis {
  int64_t axis;
  int64_t size;
  double scale = 0;
};

// x with each of `axes` resized. Floating x; the axes' input lengths must be
// known when traced.
Tensor resize_axes(const Tensor& x, const std::vector<ResizeAxis>& axes,
                   const ResizeOptions& options, CallSite site = CallSite::current());

// tf.image.resize: images [batch, height, width, channels] (or one image
// without the batch) to size = {height, width}; method "bilinear",
// "nearest" or "bicubic", with half-pixel centres as TensorFlow 2 has them.
Tensor resize(const Tensor& images, std::vector<int64_t> size, std::string_view method = "bilinear",
              CallSite site = CallSite::current());

}  // namespace ag::image

namespace ag::api {

// tf.nn.depth_to_space: blocks of block_size x block_size pixels taken from
// the channels ([N, H, W, C] to [N, H * b, W * b, C / b^2]; "NCHW" with
// data_format). The channel index of pixel (i, j) of a block is
// (i * b + j) * C / b^2 + c (TensorFlow's order, ONNX's DCR).
Tensor depth_to_space(const Tensor& input, int64_t block_size,
                      std::string_view data_format = "NHWC", CallSite site = CallSite::current());
// tf.nn.space_to_depth: its inverse.
Tensor space_to_depth(const Tensor& input, int64_t block_size,
                      std::string_view data_format = "NHWC", CallSite site = CallSite::current());

}  // namespace ag::api
