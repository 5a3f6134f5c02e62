// Importers of ONNX's neural-network activations and normalisations, onto
// our ops (softmax, batch_normalization, layer_normalization) or
// compositions of elementwise ops and reductions, with ONNX's default
// attribute values.
// Softmax and LogSoftmax before opset 13 flatten the input to 2-D at `axis`
// and normalise over the second dim; from opset 13 they normalise along `axis`.
// (Dropout is imported with the linear-algebra ops: onnx/import_linalg.cpp.)
#include <limits>

#include "ag/ops.h"
#include "import_ops.h"

namespace ag::onnx_io {

namespace {

// A float attribute as a scalar of x's dtype.
Tensor attr_like(NodeContext& ctx, std::string_view name, float fallback, const Tensor& x) {
  return cast(Tensor(ctx.attr_float(name, fallback)), x.dtype());
}

}  // namespace

std::vector<Tensor> along_axis(NodeContext& ctx,
                               const std::function<Tensor(const Tensor&, int64_t)>& f) {
  const Tensor& x = ctx.input(0);
  if (ctx.opset() >= 13)
    return {f(x, ctx.normalize_axis(ctx.attr_int("axis", -1), x.rank(), "axis"))};
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 1), x.rank(), "axis");
  const Shape& shape = ctx.static_shape(0, ctx.node().op_type() + " before opset 13");
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[int(i)];
  std::vector<int64_t> dims(shape.begin(), shape.end());
  return {reshape(f(reshape(x, {outer, -1}), 1), dims)};
}

std::vector<Tensor> import_softmax(NodeContext& ctx) {
  return along_axis(ctx, [](const Tensor& x, int64_t axis) { return softmax(x, axis); });
}

std::vector<Tensor> import_log_softmax(NodeContext& ctx) {
  return along_axis(ctx, [](const Tensor& x, int64_t axis) { return log_softmax(x, axis); });
}

std::vector<Tensor> import_clip(NodeContext& ctx) {
  Tensor y = ctx.input(0);
  if (ctx.opset() < 11) {
    const float inf = std::numeric_limits<float>::infinity();
    return {minimum(maximum(y, attr_like(ctx, "min", -inf, y)), attr_like(ctx, "max", inf, y))};
  }
  if (ctx.has_input(1)) y = maximum(y, ctx.input(1));
  if (ctx.has_input(2)) y = minimum(y, ctx.input(2));
  return {y};
}

// Normalised over the axes from `axis` to the last: Y (layer_normalization),
// Mean and InvStdDev (a graph drops them where unused).
std::vector<Tensor> import_layer_normalization(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), x.rank(), "axis");
  if (ctx.attr_int("stash_type", 1) != 1) ctx.unsupported("only stash_type=1 (float) is supported");
  const Shape& shape = x.shape();
  const std::vector<int64_t> normalised(shape.begin() + axis, shape.end());
  // Scale and B may broadcast to the normalised shape; the op takes that shape.
  auto full = [&](const Tensor& v) {
    if (v.shape() == Shape(normalised)) return v;
    if (!Shape(normalised).is_fully_defined())
      ctx.unsupported("Scale or B of shape " + v.shape().to_list_string() +
                      " against normalised dims not known when loaded");
    return broadcast_to(v, normalised);
  };
  const Tensor scale = full(ctx.input(1));
  const Tensor bias = ctx.has_input(2) ? full(ctx.input(2)) : zeros_like(scale);
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < x.rank(); ++i) axes.push_back(i);
  const MomentsResult stats = moments(x, axes, true);
  const Tensor inv_std = rsqrt(stats.variance + attr_like(ctx, "epsilon", 1e-5f, x));
  return {layer_normalization(x, scale, bias, axis, epsilon), stats.mean, inv_std};
}

// Per-channel statistics of x [batch, channels, spatial...]: normalised,
// scaled and shifted (batch_norm). In inference (training_mode 0, the
// default) by the given mean and variance; in training by the batch's (over
// every axis but the channels), and the running statistics momentum * given
// + (1 - momentum) * the batch's as outputs 1 and 2.
std::vector<Tensor> import_batch_normalization(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.shape().has_unknown_rank() || x.rank() < 2)
    ctx.unsupported("an input of known rank 2 or more, got " + x.shape().to_list_string());
  if (ctx.attr_int("spatial", 1) != 1) ctx.unsupported("spatial=0 (statistics per position)");
  const double epsilon = ctx.attr_float("epsilon", 1e-5f);
  const Tensor &scale = ctx.input(1), &bias = ctx.input(2), &mean = ctx.input(3),
               &variance = ctx.input(4);
  // batch_normalization takes [channels, 1, ...] parameters as per-channel ones of axis 1.
  auto per_channel = [&](const Tensor& v) {
    std::vector<int64_t> shape(size_t(x.rank() - 1), 1);
    shape[0] = -1;
    return reshape(v, shape);
  };
  if (ctx.attr_int("training_mode", 0) == 0) {
    return {batch_normalization(x, per_channel(mean), per_channel(variance), per_channel(bias),
                                per_channel(scale), epsilon)};
  }
  std::vector<int64_t> axes = {0};
  for (int64_t i = 2; i < x.rank(); ++i) axes.push_back(i);
  const MomentsResult batch = moments(x, axes);
  const Tensor y = batch_normalization(x, per_channel(batch.mean), per_channel(batch.variance),
                                       per_channel(bias), per_channel(scale), epsilon);
  const Tensor momentum = attr_like(ctx, "momentum", 0.9f, x);
  return {y, mean * momentum + batch.mean * (1 - momentum),
          variance * momentum + batch.variance * (1 - momentum)};
}

// Each channel of each item of x [batch, channels, spatial...] normalised
// over its spatial positions, then scaled and shifted per channel.
std::vector<Tensor> import_instance_normalization(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.shape().has_unknown_rank() || x.rank() < 3)
    ctx.unsupported("an input of known rank 3 or more, got " + x.shape().to_list_string());
  std::vector<int64_t> spatial, channel_shape(size_t(x.rank() - 1), 1);
  for (int64_t i = 2; i < x.rank(); ++i) spatial.push_back(i);
  channel_shape[0] = -1;
  const MomentsResult stats = moments(x, spatial, true);
  const Tensor r = rsqrt(stats.variance + attr_like(ctx, "epsilon", 1e-5f, x));
  return {(x - stats.mean) * r * reshape(ctx.input(1), channel_shape) +
          reshape(ctx.input(2), channel_shape)};
}

// Our elu where alpha is 1 (the default), else alpha * expm1(x) below 0.
std::vector<Tensor> import_elu(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (ctx.attr_float("alpha", 1.0f) == 1.0f) return {elu(x)};
  return {where(less(x, 0), attr_like(ctx, "alpha", 1.0f, x) * expm1(x), x)};
}

std::vector<Tensor> import_leaky_relu(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {leaky_relu(x, ctx.attr_float("alpha", 0.01f))};
}

std::vector<Tensor> import_prelu(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor slope = ctx.input(1);
  // Before opset 7, a 1-D slope holds one value per channel (dim 1).
  if (ctx.opset() < 7 && slope.rank() == 1 && x.rank() > 2 && slope.shape()[0] == x.shape()[1]) {
    for (int i = 2; i < x.rank(); ++i) slope = expand_dims(slope, -1);
  }
  return {where(less(x, 0), slope * x, x)};
}

// Our selu where alpha and gamma are ONNX's defaults (its constants).
std::vector<Tensor> import_selu(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!ctx.has_attr("alpha") && !ctx.has_attr("gamma")) return {selu(x)};
  Tensor alpha = attr_like(ctx, "alpha", 1.67326319217681884765625f, x);
  Tensor gamma = attr_like(ctx, "gamma", 1.05070102214813232421875f, x);
  return {gamma * where(less_equal(x, 0), alpha * expm1(x), x)};
}

std::vector<Tensor> import_hard_sigmoid(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {hard_sigmoid(x, ctx.attr_float("alpha", 0.2f), ctx.attr_float("beta", 0.5f))};
}

std::vector<Tensor> import_thresholded_relu(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {where(greater(x, attr_like(ctx, "alpha", 1.0f, x)), x, 0)};
}

}  // namespace ag::onnx_io
