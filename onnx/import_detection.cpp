// Importers of ONNX's NonMaxSuppression (our non_max_suppression,
// tf.image.non_max_suppression, per batch entry and class, its picks as
// (batch, class, box) rows) and RoiAlign (bilinear samples of the input
// gathered at positions computed from the boxes, with the rules of ONNX's
// reference: samples more than a pixel out weigh 0, the others clamped).
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "ag/ops.h"
#include "import_ops.h"

namespace ag::onnx_io {

namespace {

// Input `k`'s one value, or `fallback` when the input is absent.
double scalar_input(NodeContext& ctx, size_t k, std::string_view what, double fallback) {
  if (!ctx.has_input(k)) return fallback;
  const std::vector<double> v = ctx.constant_doubles(k, what);
  if (v.size() != 1) ctx.invalid(std::string(what) + " must hold one value");
  return v[0];
}

// Boxes [n, 4] of center_point_box 1, [x_center, y_center, width, height],
// as corners [y1, x1, y2, x2].
Tensor corners(const Tensor& boxes) {
  auto column = [&](int64_t k) { return gather(boxes, Tensor(k), 1); };
  const Tensor half = cast(Tensor(0.5), boxes.dtype());
  const Tensor x = column(0), y = column(1), w = column(2) * half, h = column(3) * half;
  return stack({y - h, x - w, y + h, x + w}, 1);
}

}  // namespace

std::vector<Tensor> import_non_max_suppression(NodeContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  const Shape& boxes_shape = ctx.static_shape(0, "NonMaxSuppression");
  const Shape& scores_shape = ctx.static_shape(1, "NonMaxSuppression");
  if (boxes_shape.rank() != 3 || boxes_shape[2] != 4 || scores_shape.rank() != 3 ||
      scores_shape[0] != boxes_shape[0] || scores_shape[2] != boxes_shape[1]) {
    ctx.invalid("boxes must be [batches, boxes, 4] and scores [batches, classes, boxes], got " +
                boxes_shape.to_list_string() + " and " + scores_shape.to_list_string());
  }
  const auto max_output = int64_t(scalar_input(ctx, 2, "max_output_boxes_per_class", 0));
  const double iou_threshold = scalar_input(ctx, 3, "iou_threshold", 0);
  const double score_threshold =
      scalar_input(ctx, 4, "score_threshold", -std::numeric_limits<double>::infinity());
  const bool centers = ctx.attr_int("center_point_box", 0) != 0;
  std::vector<Tensor> rows;
  for (int64_t b = 0; b < boxes_shape[0]; ++b) {
    Tensor batch_boxes = gather(boxes, Tensor(b));
    if (centers) batch_boxes = corners(batch_boxes);
    for (int64_t c = 0; c < scores_shape[1]; ++c) {
      const Tensor picked = cast(
          non_max_suppression(batch_boxes, gather(gather(scores, Tensor(b)), Tensor(c)),
                              std::max<int64_t>(max_output, 0), iou_threshold, score_threshold),
          int64);
      const Tensor zero = zeros_like(picked);
      rows.push_back(stack({zero + b, zero + c, picked}, 1));
    }
  }
  return {concat(rows, 0)};
}

namespace {

// The sample positions along one axis of length `size` for boxes from
// `start` to `start + extent` ([R] each): `bins` bins of `grid` samples, [R,
// bins * grid]; the lower and upper pixels ([R, P] int64), the weight of the
// upper one, and whether the sample counts.
struct AxisSamples {
  Tensor low, high, frac, valid;
};

AxisSamples axis_samples(const Tensor& start, const Tensor& extent, int64_t bins, int64_t grid,
                         int64_t size) {
  std::vector<double> offsets;
  for (int64_t b = 0; b < bins; ++b)
    for (int64_t g = 0; g < grid; ++g)
      offsets.push_back(double(b) + (double(g) + 0.5) / double(grid));
  const DType dtype = start.dtype();
  auto scalar = [&](double v) { return cast(Tensor(v), dtype); };
  const Tensor steps = cast(constant(offsets, Shape{bins * grid}), dtype);
  Tensor at = expand_dims(start, 1) + expand_dims(extent / scalar(double(bins)), 1) * steps;
  const Tensor valid =
      logical_and(greater_equal(at, scalar(-1)), less_equal(at, scalar(double(size))));
  at = maximum(at, scalar(0));
  Tensor low = floor(at);
  const Tensor at_end = greater_equal(low, scalar(double(size - 1)));
  low = where(at_end, scalar(double(size - 1)), low);
  at = where(at_end, low, at);
  const Tensor high = where(at_end, low, low + scalar(1));
  return {cast(low, int64), cast(high, int64), at - low, valid};
}

}  // namespace

// RoiAlign of x [N, C, H, W] over rois [R, 4] ([x1, y1, x2, y2]) of images
// batch_indices [R]: [R, C, output_height, output_width], each bin the mean
// (mode avg) or the largest weighted corner (mode max) of its samples. A
// fixed sampling_ratio is needed (0 picks the count from each box's size).
std::vector<Tensor> import_roi_align(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = ctx.static_shape(0, "RoiAlign");
  const Shape& rois_shape = ctx.static_shape(1, "RoiAlign");
  if (shape.rank() != 4 || rois_shape.rank() != 2 || rois_shape[1] != 4)
    ctx.invalid("the input must be [N, C, H, W] and rois [num_rois, 4]");
  const int64_t grid = ctx.attr_int("sampling_ratio", 0);
  if (grid <= 0) ctx.unsupported("sampling_ratio 0 (a sample count from each box's size)");
  const int64_t out_h = ctx.attr_int("output_height", 1), out_w = ctx.attr_int("output_width", 1);
  const std::string mode = ctx.attr_string("mode", "avg");
  if (mode != "avg" && mode != "max") ctx.invalid("mode '" + mode + "' (avg and max are ONNX's)");
  const bool half_pixel =
      ctx.attr_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
  const Tensor rois = cast(ctx.input(1), x.dtype());
  auto scalar = [&](double v) { return cast(Tensor(v), x.dtype()); };
  const Tensor scale = scalar(ctx.attr_float("spatial_scale", 1.0f));
  auto coordinate = [&](int64_t k) {
    return gather(rois, Tensor(k), 1) * scale - scalar(half_pixel ? 0.5 : 0.0);
  };
  const Tensor x0 = coordinate(0), y0 = coordinate(1), x1 = coordinate(2), y1 = coordinate(3);
  Tensor width = x1 - x0, height = y1 - y0;
  if (!half_pixel) {
    width = maximum(width, scalar(1));
    height = maximum(height, scalar(1));
  }
  const AxisSamples ys = axis_samples(y0, height, out_h, grid, shape[2]);
  const AxisSamples xs = axis_samples(x0, width, out_w, grid, shape[3]);
  const int64_t rois_n = rois_shape[0], p = out_h * grid, q = out_w * grid;
  const Tensor images = transpose(x, {0, 2, 3, 1});  // [N, H, W, C]
  const Tensor batch =
      zeros(Shape{rois_n, p, q}, int64) + reshape(cast(ctx.input(2), int64), {rois_n, 1, 1});
  auto corner = [&](const Tensor& yi, const Tensor& xi) {
    const Tensor where_at = stack({batch, zeros(Shape{rois_n, p, q}, int64) + expand_dims(yi, 2),
                                   zeros(Shape{rois_n, p, q}, int64) + expand_dims(xi, 1)},
                                  -1);
    return gather_nd(images, where_at);  // [R, P, Q, C]
  };
  const Tensor one = scalar(1);
  const Tensor ly = expand_dims(ys.frac, 2), lx = expand_dims(xs.frac, 1);
  const Tensor valid = expand_dims(
      cast(logical_and(expand_dims(ys.valid, 2), expand_dims(xs.valid, 1)), x.dtype()), -1);
  const std::vector<Tensor> weighted = {
      corner(ys.low, xs.low) * expand_dims((one - ly) * (one - lx), -1),
      corner(ys.low, xs.high) * expand_dims((one - ly) * lx, -1),
      corner(ys.high, xs.low) * expand_dims(ly * (one - lx), -1),
      corner(ys.high, xs.high) * expand_dims(ly * lx, -1)};
  const int64_t channels = shape[1];
  Tensor bins;
  if (mode == "avg") {
    const Tensor sum = (weighted[0] + weighted[1] + weighted[2] + weighted[3]) * valid;
    bins = reduce_sum(reshape(sum, {rois_n, out_h, grid, out_w, grid, channels}), {2, 4}) /
           scalar(double(grid * grid));
  } else {
    const Tensor largest =
        maximum(maximum(weighted[0], weighted[1]), maximum(weighted[2], weighted[3])) * valid;
    bins = reduce_max(reshape(largest, {rois_n, out_h, grid, out_w, grid, channels}), {2, 4});
  }
  return {transpose(bins, {0, 3, 1, 2})};
}

}  // namespace ag::onnx_io
