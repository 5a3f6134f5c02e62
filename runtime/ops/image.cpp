// Resizing (ag/image.h): each resized axis in turn, as a sum over taps of
// the input gathered along the axis at the taps' indices and weighed. The
// taps of an output index follow ONNX's reference: the source coordinate of
// the coordinate mode, its floor with the ratio to it in (0, 1] (an integer
// coordinate takes the index below with ratio 1), then 1 tap (nearest), 2
// (linear) or 4 (cubic) around it, indices outside the input clamped to its
// edge (or, with exclude_outside, weighing 0).
#include "ag/image.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string>

#include "ag/error.h"
#include "ag/ops.h"
#include "core/tensor_impl.h"

namespace ag::image {

namespace {

// The taps of every output index: index[o * n + k], weight[o * n + k].
struct Taps {
  int n = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
};

double source_coordinate(int64_t x, int64_t input, double scale, CoordinateMode mode) {
  const double output = scale * double(input);
  switch (mode) {
    case CoordinateMode::kAlignCorners:
      return output == 1 ? 0.0 : double(x) * double(input - 1) / (output - 1);
    case CoordinateMode::kAsymmetric:
      return double(x) / scale;
    case CoordinateMode::kPytorchHalfPixel:
      return output == 1 ? -0.5 : (double(x) + 0.5) / scale - 0.5;
    case CoordinateMode::kHalfPixelForNearest:
      return (double(x) + 0.5) / scale;
    case CoordinateMode::kHalfPixel:
      break;
  }
  return (double(x) + 0.5) / scale - 0.5;
}

// Whether a nearest sample at `ratio` past the lower index takes the upper.
bool takes_upper(double ratio, NearestRounding rounding) {
  switch (rounding) {
    case NearestRounding::kRoundPreferCeil:
      return ratio >= 0.5;
    case NearestRounding::kFloor:
      return ratio == 1;
    case NearestRounding::kCeil:
      return true;
    case NearestRounding::kRoundPreferFloor:
      break;
  }
  return ratio > 0.5;
}

std::array<double, 4> cubic_weights(double r, double a) {
  auto outer = [a](double d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < d < 2
  auto inner = [a](double d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };        // d <= 1
  return {outer(r + 1), inner(r), inner(1 - r), outer(2 - r)};
}

Taps taps_of(int64_t input, int64_t output, double scale, const ResizeOptions& o) {
  Taps t;
  t.n = o.interpolation == Interpolation::kCubic    ? 4
        : o.interpolation == Interpolation::kLinear ? 2
                                                    : 1;
  for (int64_t x = 0; x < output; ++x) {
    const double source = source_coordinate(x, input, scale, o.coordinates);
    auto lower = int64_t(std::floor(source));
    double ratio = source - double(lower);
    if (ratio == 0) {  // the index below, at ratio 1
      lower -= 1;
      ratio = 1;
    }
    std::vector<int64_t> index;
    std::vector<double> weight;
    if (t.n == 1) {
      index = {takes_upper(ratio, o.rounding) ? lower + 1 : lower};
      weight = {1};
    } else if (t.n == 2) {
      index = {lower, lower + 1};
      weight = {1 - ratio, ratio};
    } else {
      index = {lower - 1, lower, lower + 1, lower + 2};
      const std::array<double, 4> w = cubic_weights(ratio, o.cubic_coeff_a);
      weight.assign(w.begin(), w.end());
    }
    double total = 0;
    for (size_t k = 0; k < index.size(); ++k) {
      if (o.exclude_outside && (index[k] < 0 || index[k] >= input)) weight[k] = 0;
      total += weight[k];
      index[k] = std::clamp<int64_t>(index[k], 0, input - 1);
    }
    for (size_t k = 0; k < index.size(); ++k) {
      t.index.push_back(index[k]);
      t.weight.push_back(o.exclude_outside ? weight[k] / total : weight[k]);
    }
  }
  return t;
}

// The weights as a tensor of `dtype`, rounded once from double (a float32
// constant of the weights would round them before a float64 input uses them).
Tensor weights_of(const std::vector<double>& weights, const Shape& shape, DType dtype) {
  Tensor t = detail::make_eager(DType::float64, shape);
  std::copy(weights.begin(), weights.end(), static_cast<double*>(t.raw_mutable_data()));
  return dtype == DType::float64 ? t : cast(t, dtype);
}

// x resized along `axis` (its length known) to `size`.
Tensor resize_axis(const Tensor& x, int axis, int64_t size, double scale,
                   const ResizeOptions& options, CallSite site) {
  const int64_t input = x.shape()[axis];
  if (scale == 0) scale = double(size) / double(input);
  const Taps taps = taps_of(input, size, scale, options);
  std::vector<int64_t> weight_dims(size_t(x.rank()), 1);
  weight_dims[size_t(axis)] = size;
  Tensor y;
  for (int k = 0; k < taps.n; ++k) {
    std::vector<int64_t> index;
    std::vector<double> weight;
    for (int64_t o = 0; o < size; ++o) {
      index.push_back(taps.index[size_t(o * taps.n + k)]);
      weight.push_back(taps.weight[size_t(o * taps.n + k)]);
    }
    Tensor term = gather(x, constant(index, Shape{size}), axis, site);
    if (taps.n > 1) term = mul(term, weights_of(weight, Shape(weight_dims), x.dtype()), site);
    y = y.defined() ? add(y, term, site) : term;
  }
  return y;
}

}  // namespace

Tensor resize_axes(const Tensor& x, const std::vector<ResizeAxis>& axes,
                   const ResizeOptions& options, CallSite site) {
  if (!is_floating(x.dtype())) {
    throw InvalidArgumentError("resize: needs a floating tensor, not " +
                               std::string(dtype_name(x.dtype())));
  }
  Tensor y = x;
  for (const ResizeAxis& a : axes) {
    const int rank = x.rank();
    if (a.axis < -rank || a.axis >= rank) {
      throw InvalidArgumentError("resize: axis " + std::to_string(a.axis) +
                                 " is out of range for a tensor of shape " +
                                 x.shape().to_list_string());
    }
    const int axis = int(a.axis < 0 ? a.axis + rank : a.axis);
    if (x.shape()[axis] == kUnknownDim) {
      throw InvalidArgumentError("resize: the length of axis " + std::to_string(axis) +
                                 " must be known when traced");
    }
    if (a.size < 1 || x.shape()[axis] < 1) {
      throw InvalidArgumentError("resize: axis " + std::to_string(axis) + " of length " +
                                 std::to_string(x.shape()[axis]) + " cannot be resized to " +
                                 std::to_string(a.size));
    }
    if (a.size == x.shape()[axis] && (a.scale == 0 || a.scale == 1)) continue;
    y = resize_axis(y, axis, a.size, a.scale, options, site);
  }
  return y;
}

Tensor resize(const Tensor& images, std::vector<int64_t> size, std::string_view method,
              CallSite site) {
  if (size.size() != 2) {
    throw InvalidArgumentError("resize: size must be {height, width}, got " +
                               std::to_string(size.size()) + " values");
  }
  if (images.rank() != 3 && images.rank() != 4) {
    throw InvalidArgumentError(
        "resize: images must be [batch, height, width, channels] or "
        "[height, width, channels], got shape " +
        images.shape().to_list_string());
  }
  ResizeOptions options;
  if (method == "bilinear") {
    options.interpolation = Interpolation::kLinear;
  } else if (method == "bicubic") {
    options.interpolation = Interpolation::kCubic;
    options.cubic_coeff_a = -0.5;
  } else if (method == "nearest") {
    options.interpolation = Interpolation::kNearest;
    options.coordinates = CoordinateMode::kHalfPixelForNearest;
    options.rounding = NearestRounding::kFloor;
  } else {
    throw InvalidArgumentError("resize: unknown method '" + std::string(method) +
                               "'; use bilinear, nearest or bicubic");
  }
  const int64_t height_axis = images.rank() - 3;
  return resize_axes(images, {{height_axis, size[0]}, {height_axis + 1, size[1]}}, options, site);
}

}  // namespace ag::image

namespace ag::api {

namespace {

struct BlockLayout {
  bool channels_first;
  int64_t n, h, w, c;
};

BlockLayout block_layout(std::string_view op, const Tensor& x, int64_t block,
                         std::string_view data_format) {
  if (data_format != "NHWC" && data_format != "NCHW") {
    throw InvalidArgumentError(std::string(op) + ": data_format must be NHWC or NCHW, not '" +
                               std::string(data_format) + "'");
  }
  if (x.rank() != 4 || block < 2) {
    throw InvalidArgumentError(std::string(op) +
                               ": needs a 4-D input and a block size of at "
                               "least 2, got shape " +
                               x.shape().to_list_string() + " and block size " +
                               std::to_string(block));
  }
  const bool first = data_format == "NCHW";
  const Shape& s = x.shape();
  BlockLayout l{first, s[0], first ? s[2] : s[1], first ? s[3] : s[2], first ? s[1] : s[3]};
  if (l.h == kUnknownDim || l.w == kUnknownDim || l.c == kUnknownDim) {
    throw InvalidArgumentError(std::string(op) + ": the spatial dims and channels of " +
                               s.to_list_string() + " must be known when traced");
  }
  return l;
}

}  // namespace

// NHWC: [n, h, w, b, b, c'] -> [n, h, b, w, b, c']; NCHW: [n, b, b, c', h, w]
// -> [n, c', h, b, w, b].
Tensor depth_to_space(const Tensor& input, int64_t block_size, std::string_view data_format,
                      CallSite site) {
  const BlockLayout l = block_layout("depth_to_space", input, block_size, data_format);
  const int64_t b = block_size, depth = l.c / (b * b);
  if (l.c % (b * b) != 0) {
    throw InvalidArgumentError(
        "depth_to_space: " + std::to_string(l.c) +
        " channels are not a multiple of block_size^2 = " + std::to_string(b * b));
  }
  if (l.channels_first) {
    const Tensor blocks = reshape(input, {l.n, b, b, depth, l.h, l.w}, site);
    return reshape(transpose(blocks, {0, 3, 4, 1, 5, 2}, site), {l.n, depth, l.h * b, l.w * b},
                   site);
  }
  const Tensor blocks = reshape(input, {l.n, l.h, l.w, b, b, depth}, site);
  return reshape(transpose(blocks, {0, 1, 3, 2, 4, 5}, site), {l.n, l.h * b, l.w * b, depth}, site);
}

Tensor space_to_depth(const Tensor& input, int64_t block_size, std::string_view data_format,
                      CallSite site) {
  const BlockLayout l = block_layout("space_to_depth", input, block_size, data_format);
  const int64_t b = block_size;
  if (l.h % b != 0 || l.w % b != 0) {
    throw InvalidArgumentError("space_to_depth: height " + std::to_string(l.h) + " and width " +
                               std::to_string(l.w) + " must be multiples of the block size " +
                               std::to_string(b));
  }
  if (l.channels_first) {
    const Tensor blocks = reshape(input, {l.n, l.c, l.h / b, b, l.w / b, b}, site);
    return reshape(transpose(blocks, {0, 3, 5, 1, 2, 4}, site),
                   {l.n, l.c * b * b, l.h / b, l.w / b}, site);
  }
  const Tensor blocks = reshape(input, {l.n, l.h / b, b, l.w / b, b, l.c}, site);
  return reshape(transpose(blocks, {0, 1, 3, 2, 4, 5}, site), {l.n, l.h / b, l.w / b, l.c * b * b},
                 site);
}

}  // namespace ag::api
