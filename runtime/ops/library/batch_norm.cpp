// Batch normalisation (tf.nn.batch_normalization, tf.nn.fused_batch_norm,
// tf.nn.moments): the op batch_norm(x, mean, variance, offset, scale)
// normalises each channel of x (the axis attrs.axis) by the given
// statistics, y = (x - mean) * scale / sqrt(variance + epsilon) + offset,
// each parameter of [channels]. In training, fused_batch_norm(x, scale,
// offset) normalises by x's own statistics over every axis but the
// channel's, and fused_batch_norm_grad(dy, x, scale) is its gradient by x
// through them; the statistics fused_batch_norm returns are moments(x).
// float32 runs on oneDNN's batch_normalization primitives (forward
// inference and training, backward; ops/norm_kernels.h, made once per plan
// step where the shape is static), float64 on the loops here.
#include <cmath>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/gradients.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/gemm.h"
#include "ops/kernels.h"
#include "ops/norm_kernels.h"

namespace ag::ops {
namespace {

// x as [outer, channels, inner] around the channel axis.
norm_onednn::Problem batch_norm_problem(const Shape& x, int64_t axis, double epsilon) {
  norm_onednn::Problem p{norm_onednn::Kind::batch_norm};
  for (int i = 0; i < x.rank(); ++i) {
    if (i < axis) p.outer *= x[i];
    if (i == axis) p.length = x[i];
    if (i > axis) p.inner *= x[i];
  }
  p.epsilon = float(epsilon);
  return p;
}

bool batch_norm_on_onednn(DType dtype, const norm_onednn::Problem& p) {
  return dtype == DType::float32 && built_with_onednn() && p.outer * p.length * p.inner > 0;
}

template <class T>
void batch_norm_loops(const norm_onednn::Problem& p, double epsilon, const KernelContext& ctx) {
  const T *x = ctx.input_data<T>(0), *mean = ctx.input_data<T>(1), *variance = ctx.input_data<T>(2),
          *offset = ctx.input_data<T>(3), *scale = ctx.input_data<T>(4);
  T* y = static_cast<T*>(ctx.out);
  for (int64_t c = 0; c < p.length; ++c) {
    const T factor = scale[c] / std::sqrt(variance[c] + T(epsilon));
    for (int64_t o = 0; o < p.outer; ++o) {
      const int64_t base = (o * p.length + c) * p.inner;
      for (int64_t i = 0; i < p.inner; ++i)
        y[base + i] = (x[base + i] - mean[c]) * factor + offset[c];
    }
  }
}

// The channel axis in [0, rank), or an InvalidArgumentError.
int64_t batch_norm_axis(std::string_view op, int64_t axis, const Shape& x) {
  if (x.has_unknown_rank() || x.rank() < 1 || axis < -x.rank() || axis >= x.rank()) {
    throw InvalidArgumentError(std::string(op) + ": channel axis " + std::to_string(axis) +
                               " is out of range for an input of shape " + x.to_list_string());
  }
  return axis < 0 ? axis + x.rank() : axis;
}

// A per-channel [channels] value as x's rank, to broadcast against x.
Tensor batch_norm_per_channel(const Tensor& v, int64_t axis, int rank, CallSite site) {
  std::vector<int64_t> shape(size_t(rank - axis), 1);
  shape[0] = -1;
  return api::reshape(v, shape, site);
}

std::vector<int64_t> batch_norm_other_axes(int64_t axis, int rank) {
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis) axes.push_back(i);
  return axes;
}

// Each channel's mean and biased variance, accumulated in double.
template <class T>
void batch_norm_channel_stats(const norm_onednn::Problem& p, const T* x, T* mean, T* variance) {
  const double count = double(p.outer * p.inner);
  for (int64_t c = 0; c < p.length; ++c) {
    double sum = 0, squares = 0;
    for (int64_t o = 0; o < p.outer; ++o)
      for (int64_t i = 0; i < p.inner; ++i) sum += x[(o * p.length + c) * p.inner + i];
    const double m = sum / count;
    for (int64_t o = 0; o < p.outer; ++o)
      for (int64_t i = 0; i < p.inner; ++i) {
        const double d = x[(o * p.length + c) * p.inner + i] - m;
        squares += d * d;
      }
    mean[c] = T(m);
    variance[c] = T(squares / count);
  }
}

// Calls f(c, at) for each element `at` of channel c.
template <class F>
void batch_norm_for_channel(const norm_onednn::Problem& p, int64_t c, F f) {
  for (int64_t o = 0; o < p.outer; ++o) {
    const int64_t base = (o * p.length + c) * p.inner;
    for (int64_t i = 0; i < p.inner; ++i) f(base + i);
  }
}

// y = (x - mean) * scale / sqrt(variance + epsilon) + offset by x's statistics.
template <class T>
void fused_batch_norm_loops(const norm_onednn::Problem& p, double epsilon,
                            const KernelContext& ctx) {
  const T *x = ctx.input_data<T>(0), *scale = ctx.input_data<T>(1), *offset = ctx.input_data<T>(2);
  T* y = static_cast<T*>(ctx.out);
  std::vector<T> mean(size_t(p.length)), variance(size_t(p.length));
  batch_norm_channel_stats(p, x, mean.data(), variance.data());
  for (int64_t c = 0; c < p.length; ++c) {
    const T factor = scale[c] / std::sqrt(variance[size_t(c)] + T(epsilon)), m = mean[size_t(c)];
    batch_norm_for_channel(p, c, [&](int64_t at) { y[at] = (x[at] - m) * factor + offset[c]; });
  }
}

// dx = scale * r * (dy - mean(dy) - xhat * mean(dy * xhat)) per channel.
template <class T>
void fused_batch_norm_grad_loops(const norm_onednn::Problem& p, double epsilon,
                                 const KernelContext& ctx) {
  const T *dy = ctx.input_data<T>(0), *x = ctx.input_data<T>(1), *scale = ctx.input_data<T>(2);
  T* dx = static_cast<T*>(ctx.out);
  std::vector<T> mean(size_t(p.length)), variance(size_t(p.length));
  batch_norm_channel_stats(p, x, mean.data(), variance.data());
  const T count = T(p.outer * p.inner);
  for (int64_t c = 0; c < p.length; ++c) {
    const T r = 1 / std::sqrt(variance[size_t(c)] + T(epsilon)), m = mean[size_t(c)];
    T dy_sum = 0, dy_xhat_sum = 0;
    batch_norm_for_channel(p, c, [&](int64_t at) {
      dy_sum += dy[at];
      dy_xhat_sum += dy[at] * (x[at] - m) * r;
    });
    const T dy_mean = dy_sum / count, dy_xhat_mean = dy_xhat_sum / count;
    batch_norm_for_channel(p, c, [&](int64_t at) {
      dx[at] = scale[c] * r * (dy[at] - dy_mean - (x[at] - m) * r * dy_xhat_mean);
    });
  }
}

// dx of fused_batch_norm written with the public ops, for its second gradient.
Tensor fused_batch_norm_dx_composed(const Tensor& dy, const Tensor& x, const Tensor& scale,
                                    int64_t axis, double epsilon, CallSite site) {
  const int rank = x.shape().rank();
  const std::vector<int64_t> others = batch_norm_other_axes(axis, rank);
  auto mean_of = [&](const Tensor& v) { return api::reduce_mean(v, others, true, site); };
  const Tensor centered = api::sub(x, mean_of(x), site);
  const Tensor r = api::rsqrt(
      api::add(mean_of(api::square(centered, site)), fill({}, epsilon, x.dtype()), site), site);
  const Tensor xhat = api::mul(centered, r, site);
  const Tensor projected = api::sub(api::sub(dy, mean_of(dy), site),
                                    api::mul(xhat, mean_of(api::mul(dy, xhat, site)), site), site);
  return api::mul(api::mul(batch_norm_per_channel(scale, axis, rank, site), r, site), projected,
                  site);
}

}  // namespace

void require_norm_dtypes(const InferContext& ctx, const char* const* names) {
  const DType x = ctx.inputs[0].dtype;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const DType d = ctx.inputs[i].dtype;
    if (d != DType::float32 && d != DType::float64) {
      throw InvalidArgumentError(std::string(ctx.op_name) + ": " + names[i] +
                                 " has unsupported dtype " + std::string(dtype_name(d)) +
                                 " (float32 or float64)");
    }
    if (d != x) {
      throw InvalidArgumentError(std::string(ctx.op_name) + ": " + names[i] + " is " +
                                 std::string(dtype_name(d)) + ", x " + std::string(dtype_name(x)) +
                                 "; give them one dtype");
    }
  }
}

// The type of x, input x_index, after checking that inputs first to
// ctx.inputs.size() - 1 (named by `names`) are [channels] of x's axis attrs.axis.
ValueType batch_norm_require_channels(const InferContext& ctx, const char* const* names,
                                      size_t x_index, size_t first) {
  const ValueType& x = ctx.inputs[x_index];
  const int64_t axis = batch_norm_axis(ctx.op_name, ctx.attrs.axis, x.shape);
  const Shape channels({x.shape[int(axis)]});
  for (size_t i = first; i < ctx.inputs.size(); ++i) {
    const Shape& s = ctx.inputs[i].shape;
    if (!s.is_compatible_with(channels)) {
      throw InvalidArgumentError(std::string(ctx.op_name) + ": " + names[i] + " has shape " +
                                 s.to_list_string() + ", but x " + x.shape.to_list_string() +
                                 " has " + std::to_string(channels[0]) + " channels (axis " +
                                 std::to_string(axis) + "); each parameter must be " +
                                 channels.to_list_string());
    }
  }
  return x;
}

ValueType infer_batch_norm(const InferContext& ctx) {
  static const char* const kNames[] = {"x", "mean", "variance", "offset", "scale"};
  require_norm_dtypes(ctx, kNames);
  return batch_norm_require_channels(ctx, kNames, 0, 1);
}

PreparedKernel prepare_batch_norm(const PrepareContext& ctx) {
  const Shape& x = ctx.inputs[0].shape;
  const norm_onednn::Problem p =
      batch_norm_problem(x, batch_norm_axis(ctx.op_name, ctx.attrs.axis, x), ctx.attrs.lo);
  if (!batch_norm_on_onednn(ctx.inputs[0].dtype, p)) return nullptr;
  return norm_onednn::prepare(p);
}

void kernel_batch_norm(const KernelContext& ctx) {
  const Shape& x = *ctx.inputs[0].shape;
  const double epsilon = ctx.attrs->lo;
  const norm_onednn::Problem p =
      batch_norm_problem(x, batch_norm_axis(ctx.op_name, ctx.attrs->axis, x), epsilon);
  if (batch_norm_on_onednn(ctx.out_dtype, p)) {
    norm_onednn::Buffers b;
    b.x = ctx.input_data<float>(0);
    b.mean = ctx.input_data<float>(1);
    b.variance = ctx.input_data<float>(2);
    b.offset = ctx.input_data<float>(3);
    b.scale = ctx.input_data<float>(4);
    b.out = static_cast<float*>(ctx.out);
    norm_onednn::run(static_cast<const norm_onednn::Compiled*>(ctx.prepared), p, b);
  } else if (ctx.out_dtype == DType::float32) {
    batch_norm_loops<float>(p, epsilon, ctx);
  } else {
    batch_norm_loops<double>(p, epsilon, ctx);
  }
}

// With r = 1 / sqrt(variance + epsilon) and xc = x - mean, per channel:
// dx = g * scale * r, dmean = -sum(g) * scale * r, dvariance =
// -sum(g * xc) * scale * r^3 / 2, doffset = sum(g), dscale = sum(g * xc) * r.
std::vector<Tensor> grad_batch_norm(const GradContext& c) {
  const Tensor &x = c.inputs[0], &mean = c.inputs[1], &variance = c.inputs[2], &scale = c.inputs[4],
               &g = c.grad;
  const CallSite site = c.site;
  const int rank = x.shape().rank();
  const int64_t axis = batch_norm_axis(c.op_name, c.attrs.axis, x.shape());
  const std::vector<int64_t> others = batch_norm_other_axes(axis, rank);
  auto channel = [&](const Tensor& v) { return batch_norm_per_channel(v, axis, rank, site); };
  auto sum = [&](const Tensor& v) { return api::reduce_sum(v, others, false, site); };
  const Tensor epsilon = fill({}, c.attrs.lo, x.dtype());
  const Tensor r = api::rsqrt(api::add(variance, epsilon, site), site);
  const Tensor scale_r = api::mul(scale, r, site);
  std::vector<Tensor> grads(5);
  if (c.needs(0)) grads[0] = api::mul(g, channel(scale_r), site);
  const Tensor g_sum = others.empty() ? g : sum(g);
  if (c.needs(1)) grads[1] = api::neg(api::mul(g_sum, scale_r, site), site);
  if (c.needs(3)) grads[3] = g_sum;
  if (c.needs(2) || c.needs(4)) {
    const Tensor gxc = api::mul(g, api::sub(x, channel(mean), site), site);
    const Tensor gxc_sum = others.empty() ? gxc : sum(gxc);
    if (c.needs(4)) grads[4] = api::mul(gxc_sum, r, site);
    if (c.needs(2)) {
      const Tensor r3 = api::mul(api::square(r, site), scale_r, site);
      grads[2] = api::mul(gxc_sum, api::mul(r3, fill({}, -0.5, x.dtype()), site), site);
    }
  }
  return grads;
}

// ---- fused_batch_norm: batch_norm by x's own statistics ---------------------------------

ValueType infer_fused_batch_norm(const InferContext& ctx) {
  static const char* const kNames[] = {"x", "scale", "offset"};
  require_norm_dtypes(ctx, kNames);
  return batch_norm_require_channels(ctx, kNames, 0, 1);
}

PreparedKernel prepare_fused_batch_norm(const PrepareContext& ctx) {
  const Shape& x = ctx.inputs[0].shape;
  norm_onednn::Problem p =
      batch_norm_problem(x, batch_norm_axis(ctx.op_name, ctx.attrs.axis, x), ctx.attrs.lo);
  p.kind = norm_onednn::Kind::batch_norm_training;
  if (!batch_norm_on_onednn(ctx.inputs[0].dtype, p)) return nullptr;
  return norm_onednn::prepare(p);
}

void kernel_fused_batch_norm(const KernelContext& ctx) {
  const Shape& x = *ctx.inputs[0].shape;
  const double epsilon = ctx.attrs->lo;
  norm_onednn::Problem p =
      batch_norm_problem(x, batch_norm_axis(ctx.op_name, ctx.attrs->axis, x), epsilon);
  p.kind = norm_onednn::Kind::batch_norm_training;
  if (batch_norm_on_onednn(ctx.out_dtype, p)) {
    std::vector<float> mean(size_t(p.length)), variance(size_t(p.length));
    norm_onednn::Buffers b;
    b.x = ctx.input_data<float>(0);
    b.scale = ctx.input_data<float>(1);
    b.offset = ctx.input_data<float>(2);
    b.out = static_cast<float*>(ctx.out);
    b.mean_out = mean.data();
    b.variance_out = variance.data();
    norm_onednn::run(static_cast<const norm_onednn::Compiled*>(ctx.prepared), p, b);
  } else if (ctx.out_dtype == DType::float32) {
    fused_batch_norm_loops<float>(p, epsilon, ctx);
  } else {
    fused_batch_norm_loops<double>(p, epsilon, ctx);
  }
}

// dx is fused_batch_norm_grad(g, x, scale); with xhat = (x - mean) /
// sqrt(variance + epsilon) per channel, dscale = sum(g * xhat), doffset = sum(g).
std::vector<Tensor> grad_fused_batch_norm(const GradContext& c) {
  const Tensor &x = c.inputs[0], &g = c.grad;
  const CallSite site = c.site;
  const int rank = x.shape().rank();
  const int64_t axis = batch_norm_axis(c.op_name, c.attrs.axis, x.shape());
  const std::vector<int64_t> others = batch_norm_other_axes(axis, rank);
  std::vector<Tensor> grads(3);
  if (c.needs(0)) grads[0] = apply(OpId::FusedBatchNormGrad, {g, x, c.inputs[1]}, c.attrs, site);
  if (c.needs(1)) {
    const api::MomentsResult stats = api::moments(x, others, true, site);
    const Tensor r =
        api::rsqrt(api::add(stats.variance, fill({}, c.attrs.lo, x.dtype()), site), site);
    const Tensor xhat = api::mul(api::sub(x, stats.mean, site), r, site);
    grads[1] = api::reduce_sum(api::mul(g, xhat, site), others, false, site);
  }
  if (c.needs(2)) grads[2] = api::reduce_sum(g, others, false, site);
  return grads;
}

// ---- fused_batch_norm_grad: dx from (dy, x, scale) -------------------------------------

ValueType infer_fused_batch_norm_grad(const InferContext& ctx) {
  static const char* const kNames[] = {"dy", "x", "scale"};
  require_norm_dtypes(ctx, kNames);
  const ValueType& dy = ctx.inputs[0];
  const ValueType x = batch_norm_require_channels(ctx, kNames, 1, 2);
  if (!dy.shape.is_compatible_with(x.shape)) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": the gradient " +
                               dy.shape.to_list_string() + " does not match x " +
                               x.shape.to_list_string());
  }
  return x;
}

PreparedKernel prepare_fused_batch_norm_grad(const PrepareContext& ctx) {
  const Shape& x = ctx.inputs[1].shape;
  norm_onednn::Problem p =
      batch_norm_problem(x, batch_norm_axis(ctx.op_name, ctx.attrs.axis, x), ctx.attrs.lo);
  p.kind = norm_onednn::Kind::batch_norm_grad;
  if (!batch_norm_on_onednn(ctx.inputs[1].dtype, p)) return nullptr;
  return norm_onednn::prepare(p);
}

// oneDNN's backward reads the batch's statistics, which the forward did not
// keep, and writes dscale too, which grad_fused_batch_norm computes where needed.
void kernel_fused_batch_norm_grad(const KernelContext& ctx) {
  const Shape& x = *ctx.inputs[1].shape;
  const double epsilon = ctx.attrs->lo;
  norm_onednn::Problem p =
      batch_norm_problem(x, batch_norm_axis(ctx.op_name, ctx.attrs->axis, x), epsilon);
  p.kind = norm_onednn::Kind::batch_norm_grad;
  if (batch_norm_on_onednn(ctx.out_dtype, p)) {
    std::vector<float> mean(size_t(p.length)), variance(size_t(p.length)),
        diff_scale(size_t(p.length));
    batch_norm_channel_stats(p, ctx.input_data<float>(1), mean.data(), variance.data());
    norm_onednn::Buffers b;
    b.dy = ctx.input_data<float>(0);
    b.x = ctx.input_data<float>(1);
    b.scale = ctx.input_data<float>(2);
    b.mean = mean.data();
    b.variance = variance.data();
    b.out = static_cast<float*>(ctx.out);
    b.diff_scale = diff_scale.data();
    norm_onednn::run(static_cast<const norm_onednn::Compiled*>(ctx.prepared), p, b);
  } else if (ctx.out_dtype == DType::float32) {
    fused_batch_norm_grad_loops<float>(p, epsilon, ctx);
  } else {
    fused_batch_norm_grad_loops<double>(p, epsilon, ctx);
  }
}

// The gradient of the composed dx, by a tape over it.
std::vector<Tensor> grad_fused_batch_norm_grad(const GradContext& c) {
  const Tensor &dy = c.inputs[0], &x = c.inputs[1], &scale = c.inputs[2];
  const int64_t axis = batch_norm_axis(c.op_name, c.attrs.axis, x.shape());
  GradientTape tape;
  for (const Tensor& input : c.inputs) tape.watch(input);
  const Tensor dx = fused_batch_norm_dx_composed(dy, x, scale, axis, c.attrs.lo, c.site);
  return tape.gradient(dx, std::vector<Tensor>{dy, x, scale}, UnconnectedGradients::Zero, c.grad);
}

}  // namespace ag::ops

namespace ag::api {
namespace {

Tensor batch_norm_op(const Tensor& x, const Tensor& mean, const Tensor& variance,
                     const Tensor& offset, const Tensor& scale, int64_t axis, double epsilon,
                     CallSite site) {
  ops::Attrs a;
  a.axis = axis;
  a.lo = epsilon;
  return ops::apply(ops::OpId::BatchNorm, {x, mean, variance, offset, scale}, a, site);
}

// Whether v is a per-channel value of x's axis `axis`: [channels] against
// the last axis, or x's rank with 1 in every dim but that axis.
bool batch_norm_fits_axis(const Tensor& v, const Shape& x, int64_t axis) {
  const Shape& s = v.shape();
  if (s.has_unknown_rank() || x[int(axis)] == kUnknownDim) return false;
  if (s.rank() == 1) return axis == x.rank() - 1 && s[0] == x[int(axis)];
  if (s.rank() != x.rank()) return false;
  for (int i = 0; i < s.rank(); ++i)
    if (s[i] != (i == axis ? x[int(axis)] : 1)) return false;
  return true;
}

// The channel axis that every given parameter is a per-channel value of,
// or -1 (they broadcast some other way).
int64_t batch_norm_channel_axis(const Tensor& x, std::initializer_list<const Tensor*> params) {
  const Shape& s = x.shape();
  if (s.has_unknown_rank() || s.rank() < 1) return -1;
  for (int64_t axis = s.rank() - 1; axis >= 0; --axis) {
    bool fits = true;
    for (const Tensor* p : params)
      fits = fits && (!p->defined() || batch_norm_fits_axis(*p, s, axis));
    if (fits) return axis;
  }
  return -1;
}

// The channel axis of a data format: "NC..." 1, "N...C" the last, whatever
// x's rank (from 2).
int64_t batch_norm_format_axis(std::string_view format, const Tensor& x) {
  const Shape& s = x.shape();
  if (s.has_unknown_rank() || s.rank() < 2) {
    throw InvalidArgumentError("fused_batch_norm: x must have known rank 2 or more, got " +
                               s.to_list_string());
  }
  if (format.size() >= 2 && format.starts_with("NC")) return 1;
  if (format.size() >= 2 && format.starts_with("N") && format.ends_with("C")) return s.rank() - 1;
  throw InvalidArgumentError("fused_batch_norm: data_format \"" + std::string(format) +
                             "\" has its channels neither second nor last (\"NHWC\", \"NCHW\", "
                             "\"NDHWC\", \"NCDHW\", ...)");
}

}  // namespace

Tensor batch_normalization(const Tensor& x, const Tensor& mean, const Tensor& variance,
                           const Tensor& offset, const Tensor& scale, double variance_epsilon,
                           CallSite site) {
  const int64_t axis = batch_norm_channel_axis(x, {&mean, &variance, &offset, &scale});
  if (axis < 0) {  // TensorFlow's broadcasting formula
    Tensor factor = rsqrt(add(variance, fill({}, variance_epsilon, x.dtype()), site), site);
    if (scale.defined()) factor = mul(factor, scale, site);
    Tensor shift = neg(mul(mean, factor, site), site);
    if (offset.defined()) shift = add(offset, shift, site);
    return add(mul(x, factor, site), shift, site);
  }
  auto flat = [&](const Tensor& v) { return reshape(v, {-1}, site); };
  const Tensor m = flat(mean);
  return batch_norm_op(x, m, flat(variance), offset.defined() ? flat(offset) : zeros_like(m, site),
                       scale.defined() ? flat(scale) : ones_like(m, site), axis, variance_epsilon,
                       site);
}

MomentsResult moments(const Tensor& x, std::vector<int64_t> axes, bool keepdims, CallSite site) {
  const Tensor mean = reduce_mean(x, axes, true, site);
  const Tensor variance = reduce_mean(square(sub(x, mean, site), site), axes, true, site);
  if (keepdims) return {mean, variance};
  return {squeeze(mean, axes, site), squeeze(variance, axes, site)};
}

FusedBatchNormResult fused_batch_norm(const Tensor& x, const Tensor& scale, const Tensor& offset,
                                      const Tensor& mean, const Tensor& variance, double epsilon,
                                      std::string_view data_format, bool is_training,
                                      CallSite site) {
  const int64_t axis = batch_norm_format_axis(data_format, x);
  if (!is_training) {
    if (!mean.defined() || !variance.defined()) {
      throw InvalidArgumentError(
          "fused_batch_norm: inference (is_training=false) needs the mean and the variance");
    }
    return {batch_norm_op(x, mean, variance, offset, scale, axis, epsilon, site), mean, variance};
  }
  const std::vector<int64_t> axes = ops::batch_norm_other_axes(axis, x.shape().rank());
  ops::Attrs a;
  a.axis = axis;
  a.lo = epsilon;
  const Tensor y = ops::apply(ops::OpId::FusedBatchNorm, {x, scale, offset}, a, site);
  const MomentsResult batch = moments(x, axes, false, site);
  // TensorFlow returns the variance with Bessel's correction, n / (n - 1).
  const Tensor n = div(cast(size(x, DType::int64, site), x.dtype(), site),
                       cast(size(batch.mean, DType::int64, site), x.dtype(), site), site);
  const Tensor one = fill({}, 1.0, x.dtype());
  const Tensor correction = div(n, maximum(sub(n, one, site), one, site), site);
  return {y, batch.mean, mul(batch.variance, correction, site)};
}

}  // namespace ag::api
