// Importers of ONNX ops we have no op of our own for, each the exact
// composition of our ops that ONNX's definition spells out: activations
// (HardSwish, Celu, Shrink), normalisations (MeanVarianceNormalization, LRN),
// creation (EyeLike, the windows of signal processing), Compress,
// GridSample and Det.
// Sizes, window lengths and Compress's condition decide the output's shape,
// so they must be known when the model is traced (NodeContext::constant_ints:
// a graph input specialises the model on its value).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "ag/ops.h"
#include "import_ops.h"
#include "ops/composed.h"
#include "tensor_proto.h"

namespace ag::onnx_io {

namespace {

// A float attribute as a scalar of x's dtype.
Tensor attr_as(NodeContext& ctx, std::string_view name, float fallback, const Tensor& x) {
  return cast(Tensor(ctx.attr_float(name, fallback)), x.dtype());
}

// The dtype of attribute `name` (an ONNX element type), else `fallback`.
DType dtype_attr(NodeContext& ctx, std::string_view name, DType fallback) {
  if (!ctx.has_attr(name)) return fallback;
  return dtype_from_onnx(int32_t(ctx.attr_int(name)),
                         ctx.where() + ": attribute '" + std::string(name) + "'");
}

}  // namespace

// x * max(0, min(1, x / 6 + 1 / 2)).
std::vector<Tensor> import_hard_swish(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {x * hard_sigmoid(x, 1.0 / 6.0, 0.5)};
}

// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
std::vector<Tensor> import_celu(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor alpha = attr_as(ctx, "alpha", 1.0f, x);
  return {maximum(x, 0) + minimum(alpha * expm1(x / alpha), 0)};
}

// x + bias below -lambd, x - bias above lambd, 0 between.
std::vector<Tensor> import_shrink(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const float lambd = ctx.attr_float("lambd", 0.5f);
  const Tensor bias = attr_as(ctx, "bias", 0.0f, x);
  const Tensor zero = cast(Tensor(0), x.dtype());
  // The bounds compare in float, as ONNX's attributes are, for integer x too.
  const Tensor xf = cast(x, is_floating(x.dtype()) ? x.dtype() : float32);
  const Tensor lo = cast(Tensor(-lambd), xf.dtype()), hi = cast(Tensor(lambd), xf.dtype());
  return {where(less(xf, lo), x + bias, where(greater(xf, hi), x - bias, zero))};
}

// (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes` (default 0, 2, 3),
// as ONNX's function body computes it.
std::vector<Tensor> import_mean_variance_normalization(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> axes =
      ctx.has_attr("axes") ? ctx.attr_ints("axes") : std::vector<int64_t>{0, 2, 3};
  for (int64_t& a : axes) a = ctx.normalize_axis(a, x.rank(), "axis");
  const Tensor mean = reduce_mean(x, axes, true);
  const Tensor variance = reduce_mean(x * x, axes, true) - mean * mean;
  return {(x - mean) / (sqrt(variance) + cast(Tensor(1e-9), x.dtype()))};
}

// x / (bias + alpha / size * s)^beta, s the sum of x^2 over the `size`
// channels around each one (floor((size-1)/2) before, ceil after): the
// composition tf.nn.local_response_normalization shares, along axis 1.
std::vector<Tensor> import_lrn(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t size = ctx.attr_int("size");
  if (size < 1) ctx.invalid("attribute 'size' must be 1 or more, got " + std::to_string(size));
  if (x.rank() < 3) ctx.invalid("the input must have rank 3 or more (N, C, D1, ...)");
  ctx.static_shape(0, "LRN");
  const double alpha = ctx.attr_float("alpha", 1e-4f);
  return {ops::local_response_norm(x, 1, (size - 1) / 2, size / 2, ctx.attr_float("bias", 1.0f),
                                   alpha / double(size), ctx.attr_float("beta", 0.75f), {})};
}

// Ones on diagonal k of a matrix of the input's static shape, of attribute
// dtype's type (else the input's).
std::vector<Tensor> import_eye_like(NodeContext& ctx) {
  const Shape& shape = ctx.static_shape(0, "EyeLike");
  if (shape.rank() != 2)
    ctx.invalid("the input must be 2-D, got rank " + std::to_string(shape.rank()));
  const int64_t k = ctx.attr_int("k", 0);
  std::vector<double> values(size_t(shape.num_elements()), 0.0);
  for (int64_t i = 0; i < shape[0]; ++i)
    if (i + k >= 0 && i + k < shape[1]) values[size_t(i * shape[1] + i + k)] = 1.0;
  return {cast(constant(values, shape), dtype_attr(ctx, "dtype", ctx.input(0).dtype()))};
}

namespace {

// A window of the length input 0 gives: sum_j a[j] * cos(2 pi j n / N) for n
// in [0, length), N the length when periodic, else length - 1.
std::vector<Tensor> cosine_window(NodeContext& ctx, const std::vector<double>& a) {
  const std::vector<int64_t> given = ctx.constant_ints(0, "size");
  if (given.size() != 1) ctx.invalid("size must hold one value");
  const int64_t length = given[0];
  if (length < 0) ctx.invalid("size must not be negative, got " + std::to_string(length));
  const bool periodic = ctx.attr_int("periodic", 1) != 0;
  const double n_total = double(periodic ? length : length - 1);
  std::vector<double> values(static_cast<size_t>(length));
  for (int64_t n = 0; n < length; ++n) {
    double w = 0;
    for (size_t j = 0; j < a.size(); ++j)
      w += a[j] * std::cos(2 * std::numbers::pi * double(j) * double(n) / n_total);
    values[size_t(n)] = length == 1 ? 1.0 : w;
  }
  return {cast(constant(values, Shape{length}), dtype_attr(ctx, "output_datatype", float32))};
}

}  // namespace

std::vector<Tensor> import_hann_window(NodeContext& ctx) {
  return cosine_window(ctx, {0.5, -0.5});
}

// ONNX's coefficients, 25/46 and 21/46 (TensorFlow's are 0.54 and 0.46).
std::vector<Tensor> import_hamming_window(NodeContext& ctx) {
  return cosine_window(ctx, {25.0 / 46.0, -21.0 / 46.0});
}

std::vector<Tensor> import_blackman_window(NodeContext& ctx) {
  return cosine_window(ctx, {0.42, -0.5, 0.08});
}

// The slices of the input along `axis` (of the input flattened without
// one) where the condition is true, gathered; a condition shorter than the
// axis leaves the rest out.
std::vector<Tensor> import_compress(NodeContext& ctx) {
  Tensor x = ctx.input(0);
  const std::vector<double> condition = ctx.constant_doubles(1, "condition");
  int64_t axis = 0;
  if (ctx.has_attr("axis"))
    axis = ctx.normalize_axis(ctx.attr_int("axis"), x.rank(), "axis");
  else
    x = reshape(x, {-1});
  const int64_t dim = x.shape()[int(axis)];
  if (dim != kUnknownDim && int64_t(condition.size()) > dim) {
    ctx.invalid("condition has " + std::to_string(condition.size()) +
                " values for an axis of length " + std::to_string(dim));
  }
  std::vector<int64_t> picked;
  for (size_t i = 0; i < condition.size(); ++i)
    if (condition[i] != 0) picked.push_back(int64_t(i));
  return {gather(x, constant(picked, Shape{int64_t(picked.size())}), axis)};
}

namespace {

// GridSample's sampling of x [N, C, H, W] at grid [N, Ho, Wo, 2] (x then y,
// from -1 to 1), as PyTorch's grid_sample defines it (ONNX follows it).
struct GridSampler {
  Tensor values;  // x as [N, H * W, C], for gather_nd with one batch dim
  int64_t height, width;
  bool align_corners;
  std::string padding;

  Tensor scalar(double v) const { return cast(Tensor(v), values.dtype()); }

  // A normalised coordinate in pixels along an axis of `size`.
  Tensor unnormalize(const Tensor& g, int64_t size) const {
    if (align_corners) return (g + scalar(1)) / scalar(2) * scalar(double(size - 1));
    return ((g + scalar(1)) * scalar(double(size)) - scalar(1)) / scalar(2);
  }

  // A coordinate reflected into [low / 2, high / 2] (the bounds doubled).
  Tensor reflect(const Tensor& c, int64_t twice_low, int64_t twice_high) const {
    if (twice_low == twice_high) return zeros_like(c);
    const double low = double(twice_low) / 2, span = double(twice_high - twice_low) / 2;
    const Tensor in = abs(c - scalar(low));
    const Tensor flips = floor(in / scalar(span));
    const Tensor extra = in - flips * scalar(span);
    const Tensor even = equal(mod(flips, scalar(2)), scalar(0));
    return where(even, extra + scalar(low), scalar(span) - extra + scalar(low));
  }

  // The border and reflection modes move a coordinate into the axis.
  Tensor pad_coordinate(const Tensor& c, int64_t size) const {
    if (padding == "zeros") return c;
    Tensor moved = c;
    if (padding == "reflection")
      moved = align_corners ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
    return minimum(maximum(moved, scalar(0)), scalar(double(size - 1)));
  }

  // x at integer pixel coordinates (float tensors [N, Ho, Wo]) as [N, Ho,
  // Wo, C]; 0 outside the image.
  Tensor at(const Tensor& xs, const Tensor& ys) const {
    const Tensor inside = logical_and(
        logical_and(greater_equal(xs, scalar(0)), less_equal(xs, scalar(double(width - 1)))),
        logical_and(greater_equal(ys, scalar(0)), less_equal(ys, scalar(double(height - 1)))));
    const Tensor xi = cast(minimum(maximum(xs, scalar(0)), scalar(double(width - 1))), int64);
    const Tensor yi = cast(minimum(maximum(ys, scalar(0)), scalar(double(height - 1))), int64);
    const Tensor picked = gather_nd(values, expand_dims(yi * width + xi, -1), 1);
    return picked * expand_dims(cast(inside, values.dtype()), -1);
  }

  Tensor nearest(const Tensor& ix, const Tensor& iy) const {
    return at(round(pad_coordinate(ix, width)), round(pad_coordinate(iy, height)));
  }

  Tensor bilinear(const Tensor& ix, const Tensor& iy) const {
    const Tensor px = pad_coordinate(ix, width), py = pad_coordinate(iy, height);
    const Tensor x0 = floor(px), y0 = floor(py);
    const Tensor fx = expand_dims(px - x0, -1), fy = expand_dims(py - y0, -1);
    const Tensor one = scalar(1);
    return at(x0, y0) * (one - fx) * (one - fy) + at(x0 + one, y0) * fx * (one - fy) +
           at(x0, y0 + one) * (one - fx) * fy + at(x0 + one, y0 + one) * fx * fy;
  }

  // Keys's cubic convolution weights (A = -0.75) of the taps at -1, 0, 1, 2
  // from the floor, for a fraction t.
  std::vector<Tensor> cubic_weights(const Tensor& t) const {
    const Tensor a = scalar(-0.75), one = scalar(1), two = scalar(2);
    auto near = [&](const Tensor& d) { return ((a + two) * d - (a + scalar(3))) * d * d + one; };
    auto far = [&](const Tensor& d) {
      return ((a * d - scalar(5) * a) * d + scalar(8) * a) * d - scalar(4) * a;
    };
    return {far(t + one), near(t), near(one - t), far(two - t)};
  }

  // Each of the 16 taps moved by the padding mode on its own.
  Tensor bicubic(const Tensor& ix, const Tensor& iy) const {
    const Tensor x0 = floor(ix), y0 = floor(iy);
    const std::vector<Tensor> wx = cubic_weights(ix - x0), wy = cubic_weights(iy - y0);
    Tensor sum;
    for (int j = 0; j < 4; ++j) {
      const Tensor ys = pad_coordinate(y0 + scalar(j - 1), height);
      for (int i = 0; i < 4; ++i) {
        const Tensor tap = at(pad_coordinate(x0 + scalar(i - 1), width), ys) *
                           expand_dims(wx[size_t(i)] * wy[size_t(j)], -1);
        sum = sum.defined() ? sum + tap : tap;
      }
    }
    return sum;
  }
};

}  // namespace

std::vector<Tensor> import_grid_sample(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = ctx.static_shape(0, "GridSample");
  const Tensor& grid = ctx.input(1);
  if (shape.rank() != 4 || grid.rank() != 4 || grid.shape()[3] != 2)
    ctx.unsupported("only 2-D sampling: an input [N, C, H, W] and a grid [N, Ho, Wo, 2]");
  GridSampler s{reshape(transpose(x, {0, 2, 3, 1}), {shape[0], shape[2] * shape[3], shape[1]}),
                shape[2], shape[3], ctx.attr_int("align_corners", 0) != 0,
                ctx.attr_string("padding_mode", "zeros")};
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection")
    ctx.invalid("padding_mode '" + s.padding + "' (zeros, border and reflection are ONNX's)");
  const Tensor g = cast(grid, x.dtype());
  const Tensor ix = s.unnormalize(gather(g, Tensor(int64_t{0}), 3), shape[3]);
  const Tensor iy = s.unnormalize(gather(g, Tensor(int64_t{1}), 3), shape[2]);
  const std::string mode = ctx.attr_string("mode", "bilinear");
  Tensor y;
  if (mode == "bilinear" || mode == "linear")
    y = s.bilinear(ix, iy);
  else if (mode == "nearest")
    y = s.nearest(ix, iy);
  else if (mode == "bicubic" || mode == "cubic")
    y = s.bicubic(ix, iy);
  else
    ctx.invalid("mode '" + mode + "' (bilinear, nearest and bicubic are ONNX's)");
  return {transpose(y, {0, 3, 1, 2})};
}

// Det of x [..., n, n]: tf.linalg.det's elimination with partial pivoting.
std::vector<Tensor> import_det(NodeContext& ctx) {
  ctx.static_shape(0, "Det");
  return {linalg::det(ctx.input(0))};
}

namespace {

// How often each n-gram of length n (their tokens [count, n]) occurs in the
// rows of x [B, L] with `skip` tokens between its elements: [B, count].
Tensor ngram_counts(const Tensor& x, const std::vector<int64_t>& tokens, int64_t n, int64_t skip) {
  const int64_t length = x.shape()[1], count = int64_t(tokens.size()) / n;
  std::vector<int64_t> at;
  for (int64_t i = 0; i + (n - 1) * (skip + 1) < length; ++i)
    for (int64_t k = 0; k < n; ++k) at.push_back(i + k * (skip + 1));
  const int64_t positions = int64_t(at.size()) / n;
  if (positions == 0) return zeros(Shape{x.shape()[0], count}, float32);
  const Tensor windows = gather(x, constant(at, Shape{positions, n}), 1);  // [B, P, n]
  const Tensor grams = cast(constant(tokens, Shape{count, n}), x.dtype());
  const Tensor match = reduce_all(equal(expand_dims(windows, 2), grams), {3});  // [B, P, count]
  return reduce_sum(cast(match, float32), {1});
}

}  // namespace

// TfIdfVectorizer of integer tokens: for each n-gram of the pool with a
// length in [min_gram_length, max_gram_length], its occurrences in each row
// with 0 to max_skip_count tokens skipped between its elements (a 1-gram
// counted once), weighted by mode (TF: the count, IDF: the weight where it
// occurs, TFIDF: both) and summed into its column of ngram_indexes.
std::vector<Tensor> import_tf_idf_vectorizer(NodeContext& ctx) {
  if (!ctx.has_attr("pool_int64s")) ctx.unsupported("string tokens (pool_strings)");
  Tensor x = ctx.input(0);
  const Shape& shape = ctx.static_shape(0, "TfIdfVectorizer");
  if (shape.rank() != 1 && shape.rank() != 2) ctx.invalid("the input must be [C] or [N, C]");
  if (shape.rank() == 1) x = expand_dims(x, 0);
  const std::vector<int64_t> pool = ctx.attr_ints("pool_int64s");
  const std::vector<int64_t> starts = ctx.attr_ints("ngram_counts");
  const std::vector<int64_t> columns = ctx.attr_ints("ngram_indexes");
  const int64_t min_n = ctx.attr_int("min_gram_length"), max_n = ctx.attr_int("max_gram_length");
  const int64_t max_skip = ctx.attr_int("max_skip_count");
  const std::string mode = ctx.attr_string("mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") ctx.invalid("mode '" + mode + "'");
  std::vector<float> weights(columns.size(), 1.0f);
  if (ctx.has_attr("weights")) weights = ctx.attr_floats("weights");
  if (weights.size() != columns.size()) ctx.invalid("weights and ngram_indexes differ in length");
  // Each n-gram's count, in pool order: [B, grams].
  std::vector<Tensor> counts;
  int64_t grams = 0;
  for (size_t g = 0; g < starts.size(); ++g) {
    const auto n = int64_t(g + 1);
    const int64_t begin = starts[g],
                  end = g + 1 < starts.size() ? starts[g + 1] : int64_t(pool.size());
    if (begin < 0 || end < begin || end > int64_t(pool.size()) || (end - begin) % n != 0)
      ctx.invalid("ngram_counts does not split pool_int64s into n-grams");
    const std::vector<int64_t> tokens(pool.begin() + begin, pool.begin() + end);
    const int64_t count = int64_t(tokens.size()) / n;
    grams += count;
    if (count == 0) continue;
    Tensor c = zeros(Shape{shape.rank() == 1 ? 1 : shape[0], count}, float32);
    if (n >= min_n && n <= max_n)
      for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip)
        c = c + ngram_counts(x, tokens, n, skip);
    counts.push_back(c);
  }
  if (grams != int64_t(columns.size())) ctx.invalid("ngram_indexes needs one column per n-gram");
  const int64_t width = columns.empty() ? 0 : *std::max_element(columns.begin(), columns.end()) + 1;
  std::vector<float> to_column(size_t(grams * width), 0.0f);
  for (int64_t j = 0; j < grams; ++j)
    to_column[size_t(j * width + columns[size_t(j)])] = mode == "TF" ? 1.0f : weights[size_t(j)];
  Tensor all = concat(counts, 1);
  if (mode == "IDF") all = cast(greater(all, 0.0f), float32);
  Tensor y = matmul(all, constant(to_column, Shape{grams, width}));
  return {shape.rank() == 1 ? reshape(y, {width}) : y};
}

}  // namespace ag::onnx_io
