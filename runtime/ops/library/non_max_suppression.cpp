// non_max_suppression (tf.image.non_max_suppression): the int32 indices of
// boxes picked greedily by score, highest first (equal scores by index),
// skipping a box whose IoU with a picked one exceeds iou_threshold, among
// the boxes scoring above score_threshold, at most max_output_size of them.
// Boxes are [y1, x1, y2, x2], either corner first. How many are picked
// depends on the values, so the output's length is unknown while tracing.
// Attrs: ints = [max_output_size]; lo = iou_threshold, hi = score_threshold.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"

namespace ag::ops {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw InvalidArgumentError("non_max_suppression: " + what);
}

// Intersection over union of boxes a and b; 0 when either has no area.
template <class T>
double iou(const T* a, const T* b) {
  const double ay0 = std::min(a[0], a[2]), ay1 = std::max(a[0], a[2]);
  const double ax0 = std::min(a[1], a[3]), ax1 = std::max(a[1], a[3]);
  const double by0 = std::min(b[0], b[2]), by1 = std::max(b[0], b[2]);
  const double bx0 = std::min(b[1], b[3]), bx1 = std::max(b[1], b[3]);
  const double area_a = (ay1 - ay0) * (ax1 - ax0), area_b = (by1 - by0) * (bx1 - bx0);
  if (area_a <= 0 || area_b <= 0) return 0;
  const double h = std::max(0.0, std::min(ay1, by1) - std::max(ay0, by0));
  const double w = std::max(0.0, std::min(ax1, bx1) - std::max(ax0, bx0));
  const double inter = h * w;
  return inter / (area_a + area_b - inter);
}

template <class T>
std::vector<int32_t> select_boxes(const T* boxes, const T* scores, int64_t n, const Attrs& attrs) {
  const int64_t max_output = attrs.ints[0];
  const double iou_threshold = attrs.lo, score_threshold = attrs.hi;
  std::vector<int32_t> order;
  for (int64_t i = 0; i < n; ++i)
    if (double(scores[i]) > score_threshold) order.push_back(int32_t(i));
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return scores[a] > scores[b]; });
  std::vector<int32_t> picked;
  for (int32_t i : order) {
    if (int64_t(picked.size()) >= max_output) break;
    const bool overlaps = std::any_of(picked.begin(), picked.end(), [&](int32_t j) {
      return iou(boxes + 4 * i, boxes + 4 * j) > iou_threshold;
    });
    if (!overlaps) picked.push_back(i);
  }
  return picked;
}

std::vector<int32_t> select_any(DType dtype, const void* boxes, const void* scores, int64_t n,
                                const Attrs& attrs) {
  if (dtype == DType::float64)
    return select_boxes(static_cast<const double*>(boxes), static_cast<const double*>(scores), n,
                        attrs);
  return select_boxes(static_cast<const float*>(boxes), static_cast<const float*>(scores), n,
                      attrs);
}

}  // namespace

ValueType infer_non_max_suppression(const InferContext& ctx) {
  const ValueType &boxes = ctx.inputs[0], &scores = ctx.inputs[1];
  if (boxes.dtype != DType::float32 && boxes.dtype != DType::float64)
    fail("boxes must be float32 or float64, got " + std::string(dtype_name(boxes.dtype)));
  if (scores.dtype != boxes.dtype) {
    fail("scores must have the boxes' dtype " + std::string(dtype_name(boxes.dtype)) + ", got " +
         std::string(dtype_name(scores.dtype)));
  }
  const Shape &b = boxes.shape, &s = scores.shape;
  if (b.has_unknown_rank() || b.rank() != 2 || (b[1] != 4 && b[1] != kUnknownDim))
    fail("boxes must have shape [num_boxes, 4], got " + b.to_list_string());
  if (s.has_unknown_rank() || s.rank() != 1 ||
      (s[0] != b[0] && s[0] != kUnknownDim && b[0] != kUnknownDim)) {
    fail("scores must have shape [num_boxes] = [" + std::to_string(b[0]) + "], got " +
         s.to_list_string());
  }
  if (ctx.attrs.ints.size() != 1 || ctx.attrs.ints[0] < 0)
    fail("max_output_size must not be negative");
  if (ctx.values.size() < 2 || !ctx.values[0] || !ctx.values[1] || !b.is_fully_defined())
    return {DType::int32, Shape{kUnknownDim}};
  const auto picked = select_any(boxes.dtype, ctx.values[0], ctx.values[1], b[0], ctx.attrs);
  return {DType::int32, Shape{int64_t(picked.size())}};
}

void kernel_non_max_suppression(const KernelContext& ctx) {
  const auto picked = select_any(ctx.inputs[0].dtype, ctx.inputs[0].data, ctx.inputs[1].data,
                                 (*ctx.inputs[0].shape)[0], *ctx.attrs);
  std::copy(picked.begin(), picked.end(), static_cast<int32_t*>(ctx.out));
}

}  // namespace ag::ops

namespace ag::api {

Tensor non_max_suppression(const Tensor& boxes, const Tensor& scores, int64_t max_output_size,
                           double iou_threshold, double score_threshold, CallSite site) {
  ops::Attrs attrs;
  attrs.ints = {max_output_size};
  attrs.lo = iou_threshold;
  attrs.hi = score_threshold;
  return ops::apply(ops::OpId::NonMaxSuppression, {boxes, scores}, attrs, site);
}

}  // namespace ag::api
