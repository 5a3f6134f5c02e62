// Resize and Upsample (ag::image::resize_axes, with ONNX's coordinate modes,
// nearest rounding and cubic coefficient), DepthToSpace and SpaceToDepth
// (channels first, as ONNX lays them out).
#include <string>
#include <vector>

#include "ag/image.h"
#include "ag/ops.h"
#include "import_ops.h"

namespace ag::onnx_io {

namespace {

using image::CoordinateMode;
using image::Interpolation;
using image::NearestRounding;

Interpolation interpolation_of(NodeContext& ctx) {
  const std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "nearest") return Interpolation::kNearest;
  if (mode == "linear" || mode == "bilinear") return Interpolation::kLinear;
  if (mode == "cubic") return Interpolation::kCubic;
  ctx.invalid("mode '" + mode + "' is not nearest, linear or cubic");
}

CoordinateMode coordinates_of(NodeContext& ctx) {
  const std::string mode = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
  if (mode == "half_pixel") return CoordinateMode::kHalfPixel;
  if (mode == "pytorch_half_pixel") return CoordinateMode::kPytorchHalfPixel;
  if (mode == "align_corners") return CoordinateMode::kAlignCorners;
  if (mode == "asymmetric") return CoordinateMode::kAsymmetric;
  if (mode == "tf_half_pixel_for_nn") return CoordinateMode::kHalfPixelForNearest;
  ctx.unsupported("coordinate_transformation_mode '" + mode + "'");
}

NearestRounding rounding_of(NodeContext& ctx) {
  const std::string mode = ctx.attr_string("nearest_mode", "round_prefer_floor");
  if (mode == "round_prefer_floor") return NearestRounding::kRoundPreferFloor;
  if (mode == "round_prefer_ceil") return NearestRounding::kRoundPreferCeil;
  if (mode == "floor") return NearestRounding::kFloor;
  if (mode == "ceil") return NearestRounding::kCeil;
  ctx.invalid("nearest_mode '" + mode +
              "' is not round_prefer_floor, round_prefer_ceil, floor "
              "or ceil");
}

// x resized by `scales` (output length floor(length * scale)) or to `sizes`.
Tensor resized(NodeContext& ctx, const Tensor& x, const std::vector<double>& scales,
               const std::vector<int64_t>& sizes, const image::ResizeOptions& options) {
  const int rank = x.rank();
  const size_t given = sizes.empty() ? scales.size() : sizes.size();
  if (given != size_t(rank)) {
    ctx.invalid("needs a scale or size per dimension of the input (" + std::to_string(rank) +
                "), got " + std::to_string(given));
  }
  std::vector<image::ResizeAxis> axes;
  for (int d = 0; d < rank; ++d) {
    const int64_t length = x.shape()[d];
    if (length == kUnknownDim) ctx.unsupported("resizing an axis of unknown length");
    if (sizes.empty()) {
      if (scales[size_t(d)] <= 0) ctx.invalid("scales must be positive");
      axes.push_back({d, int64_t(double(length) * scales[size_t(d)]), scales[size_t(d)]});
    } else {
      axes.push_back({d, sizes[size_t(d)]});
    }
  }
  return image::resize_axes(x, axes, options);
}

}  // namespace

// Opset 10: scales only, asymmetric coordinates, nearest rounds down (as
// Upsample). Opset 11 on: roi, scales or sizes, and the modes' attributes.
std::vector<Tensor> import_resize(NodeContext& ctx) {
  image::ResizeOptions options;
  options.interpolation = interpolation_of(ctx);
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (ctx.opset() < 11) {
    options.coordinates = CoordinateMode::kAsymmetric;
    options.rounding = NearestRounding::kFloor;
    scales = ctx.constant_doubles(1, "scales");
  } else {
    options.rounding = rounding_of(ctx);
    options.coordinates = coordinates_of(ctx);
    options.cubic_coeff_a = ctx.attr_float("cubic_coeff_a", -0.75f);
    options.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
    if (ctx.has_input(3)) sizes = ctx.constant_ints(3, "sizes");
    if (sizes.empty() && ctx.has_input(2)) scales = ctx.constant_doubles(2, "scales");
  }
  return {resized(ctx, ctx.input(0), scales, sizes, options)};
}

// Upsample (opsets 7 to 9): scales as an attribute (7) or an input (9).
std::vector<Tensor> import_upsample(NodeContext& ctx) {
  image::ResizeOptions options;
  options.interpolation = interpolation_of(ctx);
  options.coordinates = CoordinateMode::kAsymmetric;
  options.rounding = NearestRounding::kFloor;
  std::vector<double> scales;
  if (ctx.has_input(1)) {
    scales = ctx.constant_doubles(1, "scales");
  } else {
    for (float s : ctx.attr_floats("scales")) scales.push_back(s);
  }
  return {resized(ctx, ctx.input(0), scales, {}, options)};
}

// DCR (the default): TensorFlow's order; CRD: each channel's block together.
std::vector<Tensor> import_depth_to_space(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t b = ctx.attr_int("blocksize");
  const std::string mode = ctx.attr_string("mode", "DCR");
  if (mode == "DCR") return {depth_to_space(x, b, "NCHW")};
  if (mode != "CRD") ctx.invalid("mode '" + mode + "' is not DCR or CRD");
  const Shape& s = ctx.static_shape(0, "DepthToSpace");
  if (s.rank() != 4 || s[1] % (b * b) != 0)
    ctx.invalid("needs a 4-D input whose channels are a multiple of blocksize^2");
  const Tensor blocks = reshape(x, {s[0], s[1] / (b * b), b, b, s[2], s[3]});
  return {
      reshape(transpose(blocks, {0, 1, 4, 2, 5, 3}), {s[0], s[1] / (b * b), s[2] * b, s[3] * b})};
}

std::vector<Tensor> import_space_to_depth(NodeContext& ctx) {
  return {space_to_depth(ctx.input(0), ctx.attr_int("blocksize"), "NCHW")};
}

}  // namespace ag::onnx_io
