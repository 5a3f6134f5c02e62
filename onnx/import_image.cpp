// Resize and Upsample (ag::image::resize_axes, with ONNX's coordinate modes,
// nearest rounding and cubic coefficient), DepthToSpace and SpaceToDepth
// (channels first, as ONNX lays them out).
#include <algorithm>
#include <cmath>
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

namespace {

// Resize with tf_crop_and_resize, linear: each axis interpolated on its own
// between the two inputs around the source coordinate of the crop (roi:
// starts then ends, as fractions of length - 1); a coordinate outside the
// input on any axis gives extrapolation_value.
Tensor crop_and_resize_linear(NodeContext& ctx) {
  const Shape& shape = ctx.static_shape(0, "Resize with tf_crop_and_resize");
  const int rank = shape.rank();
  const std::vector<double> roi = ctx.constant_doubles(1, "roi");
  if (roi.size() != size_t(2 * rank)) ctx.invalid("roi needs a start and an end per axis");
  std::vector<int64_t> sizes;
  if (ctx.has_input(3)) sizes = ctx.constant_ints(3, "sizes");
  if (sizes.empty() && ctx.has_input(2)) {
    for (int a = 0; a < rank; ++a)
      sizes.push_back(
          int64_t(std::floor(double(shape[a]) * ctx.constant_doubles(2, "scales").at(size_t(a)))));
  }
  if (sizes.size() != size_t(rank)) ctx.invalid("sizes or scales need one value per axis");
  Tensor y = ctx.input(0);
  Tensor outside = zeros(Shape{}, bool_);
  for (int a = 0; a < rank; ++a) {
    const double start = roi[size_t(a)], end = roi[size_t(a + rank)], last = double(shape[a] - 1);
    const int64_t out = sizes[size_t(a)];
    const auto count = static_cast<size_t>(out);
    std::vector<int64_t> low(count), high(count);
    std::vector<double> weight(count);
    std::vector<int32_t> out_of_range(count);
    for (int64_t i = 0; i < out; ++i) {
      const double c = out > 1 ? start * last + double(i) * (end - start) * last / double(out - 1)
                               : 0.5 * (start + end) * last;
      out_of_range[size_t(i)] = c < 0 || c > last;
      const double clamped = std::clamp(c, 0.0, last);
      low[size_t(i)] = int64_t(std::floor(clamped));
      high[size_t(i)] = std::min<int64_t>(low[size_t(i)] + 1, shape[a] - 1);
      weight[size_t(i)] = clamped - double(low[size_t(i)]);
    }
    std::vector<int64_t> along(size_t(rank), 1);
    along[size_t(a)] = out;
    const Shape line{out};
    const Tensor w = reshape(cast(constant(weight, line), y.dtype()), along);
    y = gather(y, constant(low, line), a) * (cast(Tensor(1), y.dtype()) - w) +
        gather(y, constant(high, line), a) * w;
    outside = logical_or(outside, reshape(cast(constant(out_of_range, line), bool_), along));
  }
  const float fill_value = ctx.attr_float("extrapolation_value", 0.0f);
  return where(outside, cast(Tensor(fill_value), y.dtype()), y);
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
    if (ctx.attr_string("coordinate_transformation_mode", "") == "tf_crop_and_resize" &&
        options.interpolation == image::Interpolation::kLinear)
      return {crop_and_resize_linear(ctx)};
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
