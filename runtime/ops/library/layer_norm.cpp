// Layer normalisation (Keras's LayerNormalization, ONNX's
// LayerNormalization): the op layer_norm(x, scale, offset) normalises x over
// its axes from attrs.axis on, y = (x - mean) / sqrt(variance + epsilon) *
// scale + offset, mean and (biased) variance over those axes, scale and
// offset of their shape; layer_norm_grad(x, scale, dy) is its gradient by
// x. float32 runs on oneDNN's layer_normalization primitives (forward, and
// backward from the rows' statistics; ops/norm_kernels.h, made once per
// plan step where the shape is static), float64 on the loops here.
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

// The first normalised axis in [0, rank), or an InvalidArgumentError.
int64_t layer_norm_axis(std::string_view op, int64_t axis, const Shape& x) {
  if (x.has_unknown_rank() || x.rank() < 1 || axis < -x.rank() || axis >= x.rank()) {
    throw InvalidArgumentError(std::string(op) + ": begin_axis " + std::to_string(axis) +
                               " is out of range for an input of shape " + x.to_list_string());
  }
  return axis < 0 ? axis + x.rank() : axis;
}

// x as rows of the normalised axes' elements.
norm_onednn::Problem layer_norm_problem(const Shape& x, int64_t axis, double epsilon) {
  norm_onednn::Problem p{norm_onednn::Kind::layer_norm};
  for (int i = 0; i < x.rank(); ++i) (i < axis ? p.outer : p.length) *= x[i];
  p.epsilon = float(epsilon);
  return p;
}

bool layer_norm_on_onednn(DType dtype, const norm_onednn::Problem& p) {
  return dtype == DType::float32 && built_with_onednn() && p.outer * p.length > 0;
}

// Each row's mean and biased variance, into mean[row] and variance[row].
template <class T>
void layer_norm_row_stats(const T* in, int64_t length, T& mean, T& variance) {
  T sum = 0;
  for (int64_t k = 0; k < length; ++k) sum += in[k];
  mean = sum / T(length);
  T squares = 0;
  for (int64_t k = 0; k < length; ++k) squares += (in[k] - mean) * (in[k] - mean);
  variance = squares / T(length);
}

template <class T>
void layer_norm_loops(const norm_onednn::Problem& p, double epsilon, const KernelContext& ctx) {
  const T *x = ctx.input_data<T>(0), *scale = ctx.input_data<T>(1), *offset = ctx.input_data<T>(2);
  T* y = static_cast<T*>(ctx.out);
  for (int64_t row = 0; row < p.outer; ++row) {
    const T* in = x + row * p.length;
    T* out = y + row * p.length;
    T mean, variance;
    layer_norm_row_stats(in, p.length, mean, variance);
    const T r = 1 / std::sqrt(variance + T(epsilon));
    for (int64_t k = 0; k < p.length; ++k) out[k] = (in[k] - mean) * r * scale[k] + offset[k];
  }
}

// dx = r * (gs - mean(gs) - xhat * mean(gs * xhat)) per row, gs = dy * scale.
template <class T>
void layer_norm_grad_loops(const norm_onednn::Problem& p, double epsilon,
                           const KernelContext& ctx) {
  const T *x = ctx.input_data<T>(0), *scale = ctx.input_data<T>(1), *dy = ctx.input_data<T>(2);
  T* dx = static_cast<T*>(ctx.out);
  for (int64_t row = 0; row < p.outer; ++row) {
    const int64_t base = row * p.length;
    T mean, variance;
    layer_norm_row_stats(x + base, p.length, mean, variance);
    const T r = 1 / std::sqrt(variance + T(epsilon));
    T gs_sum = 0, gs_xhat_sum = 0;
    for (int64_t k = 0; k < p.length; ++k) {
      const T gs = dy[base + k] * scale[k];
      gs_sum += gs;
      gs_xhat_sum += gs * (x[base + k] - mean) * r;
    }
    const T gs_mean = gs_sum / T(p.length), gs_xhat_mean = gs_xhat_sum / T(p.length);
    for (int64_t k = 0; k < p.length; ++k) {
      const T xhat = (x[base + k] - mean) * r;
      dx[base + k] = r * (dy[base + k] * scale[k] - gs_mean - xhat * gs_xhat_mean);
    }
  }
}

// oneDNN's backward reads the rows' statistics, which the forward did not
// keep, and writes dscale too, which grad_layer_norm computes where needed.
void layer_norm_grad_onednn(const norm_onednn::Problem& p, const KernelContext& ctx) {
  const float* x = ctx.input_data<float>(0);
  std::vector<float> mean(size_t(p.outer)), variance(size_t(p.outer)), diff_scale(size_t(p.length));
  for (int64_t row = 0; row < p.outer; ++row)
    layer_norm_row_stats(x + row * p.length, p.length, mean[size_t(row)], variance[size_t(row)]);
  norm_onednn::Buffers b;
  b.x = x;
  b.mean = mean.data();
  b.variance = variance.data();
  b.scale = ctx.input_data<float>(1);
  b.dy = ctx.input_data<float>(2);
  b.out = static_cast<float*>(ctx.out);
  b.diff_scale = diff_scale.data();
  norm_onednn::run(static_cast<const norm_onednn::Compiled*>(ctx.prepared), p, b);
}

// dx of layer_norm written with the public ops, for its second gradient.
Tensor layer_norm_dx_composed(const Tensor& x, const Tensor& scale, const Tensor& dy,
                              const std::vector<int64_t>& normalised, double epsilon,
                              CallSite site) {
  auto mean_of = [&](const Tensor& v) { return api::reduce_mean(v, normalised, true, site); };
  const Tensor centered = api::sub(x, mean_of(x), site);
  const Tensor variance = mean_of(api::square(centered, site));
  const Tensor r = api::rsqrt(api::add(variance, fill({}, epsilon, x.dtype()), site), site);
  const Tensor xhat = api::mul(centered, r, site);
  const Tensor gs = api::mul(dy, scale, site);
  const Tensor projected = api::sub(api::sub(gs, mean_of(gs), site),
                                    api::mul(xhat, mean_of(api::mul(gs, xhat, site)), site), site);
  return api::mul(r, projected, site);
}

// x's type, after checking that inputs 1 to count - 1 (named by `names`)
// have the normalised axes' shape.
ValueType layer_norm_require_parameters(const InferContext& ctx, const char* const* names,
                                        size_t count) {
  const ValueType& x = ctx.inputs[0];
  const int64_t axis = layer_norm_axis(ctx.op_name, ctx.attrs.axis, x.shape);
  const Shape normalised(std::vector<int64_t>(x.shape.begin() + axis, x.shape.end()));
  for (size_t i = 1; i < count; ++i) {
    if (!ctx.inputs[i].shape.is_compatible_with(normalised)) {
      throw InvalidArgumentError(std::string(ctx.op_name) + ": " + names[i] + " has shape " +
                                 ctx.inputs[i].shape.to_list_string() + ", but x " +
                                 x.shape.to_list_string() + " is normalised over its axes from " +
                                 std::to_string(axis) + " on, " + normalised.to_list_string());
    }
  }
  return x;
}

std::vector<int64_t> layer_norm_axes(int64_t from, int64_t to) {
  std::vector<int64_t> axes;
  for (int64_t i = from; i < to; ++i) axes.push_back(i);
  return axes;
}

}  // namespace

ValueType infer_layer_norm(const InferContext& ctx) {
  static const char* const kNames[] = {"x", "scale", "offset"};
  require_norm_dtypes(ctx, kNames);
  return layer_norm_require_parameters(ctx, kNames, 3);
}

PreparedKernel prepare_layer_norm(const PrepareContext& ctx) {
  const Shape& x = ctx.inputs[0].shape;
  const norm_onednn::Problem p =
      layer_norm_problem(x, layer_norm_axis(ctx.op_name, ctx.attrs.axis, x), ctx.attrs.lo);
  if (!layer_norm_on_onednn(ctx.inputs[0].dtype, p)) return nullptr;
  return norm_onednn::prepare(p);
}

void kernel_layer_norm(const KernelContext& ctx) {
  const Shape& x = *ctx.inputs[0].shape;
  const double epsilon = ctx.attrs->lo;
  const norm_onednn::Problem p =
      layer_norm_problem(x, layer_norm_axis(ctx.op_name, ctx.attrs->axis, x), epsilon);
  if (layer_norm_on_onednn(ctx.out_dtype, p)) {
    norm_onednn::Buffers b;
    b.x = ctx.input_data<float>(0);
    b.scale = ctx.input_data<float>(1);
    b.offset = ctx.input_data<float>(2);
    b.out = static_cast<float*>(ctx.out);
    norm_onednn::run(static_cast<const norm_onednn::Compiled*>(ctx.prepared), p, b);
  } else if (ctx.out_dtype == DType::float32) {
    layer_norm_loops<float>(p, epsilon, ctx);
  } else {
    layer_norm_loops<double>(p, epsilon, ctx);
  }
}

// dx is layer_norm_grad(x, scale, g); with xhat = (x - mean) / sqrt(variance
// + epsilon) over the normalised axes, dscale = sum(g * xhat) and doffset =
// sum(g) over the leading axes.
std::vector<Tensor> grad_layer_norm(const GradContext& c) {
  const Tensor &x = c.inputs[0], &g = c.grad;
  const CallSite site = c.site;
  const int rank = x.shape().rank();
  const int64_t axis = layer_norm_axis(c.op_name, c.attrs.axis, x.shape());
  const std::vector<int64_t> leading = layer_norm_axes(0, axis);
  auto leading_sum = [&](const Tensor& v) {
    return leading.empty() ? v : api::reduce_sum(v, leading, false, site);
  };
  std::vector<Tensor> grads(3);
  if (c.needs(0)) grads[0] = apply(OpId::LayerNormGrad, {x, c.inputs[1], g}, c.attrs, site);
  if (c.needs(1)) {
    const api::MomentsResult stats = api::moments(x, layer_norm_axes(axis, rank), true, site);
    const Tensor r =
        api::rsqrt(api::add(stats.variance, fill({}, c.attrs.lo, x.dtype()), site), site);
    const Tensor xhat = api::mul(api::sub(x, stats.mean, site), r, site);
    grads[1] = leading_sum(api::mul(g, xhat, site));
  }
  if (c.needs(2)) grads[2] = leading_sum(g);
  return grads;
}

// ---- layer_norm_grad: dx from (x, scale, dy) --------------------------------------------

ValueType infer_layer_norm_grad(const InferContext& ctx) {
  static const char* const kNames[] = {"x", "scale", "dy"};
  require_norm_dtypes(ctx, kNames);
  const ValueType x = layer_norm_require_parameters(ctx, kNames, 2);
  if (!ctx.inputs[2].shape.is_compatible_with(x.shape)) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": the gradient " +
                               ctx.inputs[2].shape.to_list_string() + " does not match x " +
                               x.shape.to_list_string());
  }
  return x;
}

PreparedKernel prepare_layer_norm_grad(const PrepareContext& ctx) {
  const Shape& x = ctx.inputs[0].shape;
  norm_onednn::Problem p =
      layer_norm_problem(x, layer_norm_axis(ctx.op_name, ctx.attrs.axis, x), ctx.attrs.lo);
  if (!layer_norm_on_onednn(ctx.inputs[0].dtype, p)) return nullptr;
  p.kind = norm_onednn::Kind::layer_norm_grad;
  return norm_onednn::prepare(p);
}

void kernel_layer_norm_grad(const KernelContext& ctx) {
  const Shape& x = *ctx.inputs[0].shape;
  const double epsilon = ctx.attrs->lo;
  norm_onednn::Problem p =
      layer_norm_problem(x, layer_norm_axis(ctx.op_name, ctx.attrs->axis, x), epsilon);
  p.kind = norm_onednn::Kind::layer_norm_grad;
  if (layer_norm_on_onednn(ctx.out_dtype, p)) {
    layer_norm_grad_onednn(p, ctx);
  } else if (ctx.out_dtype == DType::float32) {
    layer_norm_grad_loops<float>(p, epsilon, ctx);
  } else {
    layer_norm_grad_loops<double>(p, epsilon, ctx);
  }
}

// The gradient of the composed dx, by a tape over it.
std::vector<Tensor> grad_layer_norm_grad(const GradContext& c) {
  const Tensor &x = c.inputs[0], &scale = c.inputs[1], &dy = c.inputs[2];
  const int64_t axis = layer_norm_axis(c.op_name, c.attrs.axis, x.shape());
  GradientTape tape;
  for (const Tensor& input : c.inputs) tape.watch(input);
  const Tensor dx = layer_norm_dx_composed(x, scale, dy, layer_norm_axes(axis, x.shape().rank()),
                                           c.attrs.lo, c.site);
  return tape.gradient(dx, std::vector<Tensor>{x, scale, dy}, UnconnectedGradients::Zero, c.grad);
}

}  // namespace ag::ops

namespace ag::api {

Tensor layer_normalization(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                           int64_t begin_axis, double epsilon, CallSite site) {
  const Shape& s = x.shape();
  const int64_t axis = ops::layer_norm_axis("layer_normalization", begin_axis, s);
  const Shape normalised(std::vector<int64_t>(s.begin() + axis, s.end()));
  auto or_filled = [&](const Tensor& given, double value, const char* name) {
    if (given.defined()) return given;
    if (!normalised.is_fully_defined()) {
      throw InvalidArgumentError(std::string("layer_normalization: ") + name +
                                 " must be given where the normalised dims " +
                                 normalised.to_list_string() + " are not known when traced");
    }
    return fill(normalised, value, x.dtype());
  };
  ops::Attrs a;
  a.axis = axis;
  a.lo = epsilon;
  return ops::apply(ops::OpId::LayerNorm,
                    {x, or_filled(gamma, 1.0, "gamma"), or_filled(beta, 0.0, "beta")}, a, site);
}

}  // namespace ag::api
