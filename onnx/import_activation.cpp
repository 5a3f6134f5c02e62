// Importers of ONNX's neural-network activations, as compositions of our
// elementwise ops and reductions, with ONNX's default attribute values.
// Softmax and LogSoftmax before opset 13 flatten the input to 2-D at `axis`
// and normalise over the second dim; from opset 13 they normalise along `axis`.
// Dropout imports for inference: the identity, and an all-true mask.
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

std::vector<Tensor> import_dropout(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool training = ctx.opset() >= 12 ? ctx.has_input(2) && (ctx.input(2).is_symbolic() ||
                                                                 ctx.input(2).item<bool>())
                                          : ctx.opset() < 7 && ctx.attr_int("is_test", 0) == 0;
  if (training) ctx.unsupported("training mode (random dropout) is not supported");
  return {x, cast(ones_like(x), bool_)};
}

// Normalised over the axes from `axis` to the last: Y, Mean, InvStdDev.
std::vector<Tensor> import_layer_normalization(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), x.rank(), "axis");
  if (ctx.attr_int("stash_type", 1) != 1) ctx.unsupported("only stash_type=1 (float) is supported");
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < x.rank(); ++i) axes.push_back(i);
  Tensor mean = reduce_mean(x, axes, true);
  Tensor centered = x - mean;
  Tensor variance = reduce_mean(centered * centered, axes, true);
  Tensor inv_std = 1 / sqrt(variance + attr_like(ctx, "epsilon", 1e-5f, x));
  Tensor y = centered * inv_std * ctx.input(1);
  if (ctx.has_input(2)) y = y + ctx.input(2);
  return {y, mean, inv_std};
}

// Per-channel statistics of x [batch, channels, spatial...]: normalised,
// scaled and shifted. In inference (training_mode 0, the default) with the
// given mean and variance; in training with the batch's (over every axis but
// the channels), and the running statistics momentum * given + (1 -
// momentum) * the batch's as outputs 1 and 2.
std::vector<Tensor> import_batch_normalization(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.shape().has_unknown_rank() || x.rank() < 2)
    ctx.unsupported("an input of known rank 2 or more, got " + x.shape().to_list_string());
  if (ctx.attr_int("spatial", 1) != 1) ctx.unsupported("spatial=0 (statistics per position)");
  // [channels, 1, ...]: a per-channel value against x's dims from 1 on.
  auto per_channel = [&](const Tensor& v) {
    std::vector<int64_t> shape(size_t(x.rank() - 1), 1);
    shape[0] = -1;
    return reshape(v, shape);
  };
  const Tensor epsilon = attr_like(ctx, "epsilon", 1e-5f, x);
  Tensor mean = per_channel(ctx.input(3)), variance = per_channel(ctx.input(4));
  std::vector<Tensor> outputs(1);
  if (ctx.attr_int("training_mode", 0) != 0) {
    std::vector<int64_t> axes = {0};
    for (int i = 2; i < x.rank(); ++i) axes.push_back(i);
    const Tensor batch_mean = reduce_mean(x, axes, true);
    const Tensor centered = x - batch_mean;
    const Tensor batch_variance = reduce_mean(centered * centered, axes, true);
    const Tensor momentum = attr_like(ctx, "momentum", 0.9f, x);
    outputs.push_back(reshape(mean * momentum + squeeze(batch_mean, {0}) * (1 - momentum), {-1}));
    outputs.push_back(
        reshape(variance * momentum + squeeze(batch_variance, {0}) * (1 - momentum), {-1}));
    mean = squeeze(batch_mean, {0});
    variance = squeeze(batch_variance, {0});
  }
  const Tensor scale = per_channel(ctx.input(1)) / sqrt(variance + epsilon);
  outputs[0] = (x - mean) * scale + per_channel(ctx.input(2));
  return outputs;
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
