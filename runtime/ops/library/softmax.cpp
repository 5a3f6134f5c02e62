// softmax and log_softmax along one axis (tf.nn.softmax, tf.nn.log_softmax):
// exp(x - max) / sum(exp(x - max)) and x - max - log(sum(exp(x - max))),
// the maximum taken out first so that no exp overflows; and the ops of their
// gradients, softmax_grad(y, dy) = (dy - sum(dy * y)) * y and
// log_softmax_grad(y, dy) = dy - exp(y) * sum(dy), from the forward's output
// y. float32 softmax and its gradient run on oneDNN's primitives
// (ops/norm_kernels.h; made once per plan step where the shape is static);
// log_softmax, float64, empty tensors and tensors with a NaN on the loops
// here: oneDNN's float32 logsoftmax is up to 10 ulps off (3.6e-6 at -3.06),
// where the loops stay within the 4 ulps ONNX Runtime agrees to.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/gemm.h"
#include "ops/kernels.h"
#include "ops/norm_kernels.h"

namespace ag::ops {
namespace {

// The axis in [0, rank), or an InvalidArgumentError.
int64_t softmax_axis(std::string_view op, int64_t axis, const Shape& shape) {
  const int rank = shape.rank();
  if (rank < 1 || axis < -rank || axis >= rank) {
    throw InvalidArgumentError(std::string(op) + ": axis " + std::to_string(axis) +
                               " is out of range for a tensor of shape " + shape.to_list_string());
  }
  return axis < 0 ? axis + rank : axis;
}

// Each row along the axis: [outer, length, inner] with the axis in the middle.
struct Rows {
  int64_t outer = 1, length = 1, inner = 1;
};

Rows rows_of(const Shape& shape, int64_t axis) {
  Rows r;
  for (int i = 0; i < shape.rank(); ++i) {
    if (i < axis) r.outer *= shape[i];
    if (i == axis) r.length = shape[i];
    if (i > axis) r.inner *= shape[i];
  }
  return r;
}

template <class T>
void softmax_rows(const Rows& r, const T* x, T* y, bool log) {
  for (int64_t o = 0; o < r.outer; ++o) {
    for (int64_t i = 0; i < r.inner; ++i) {
      const T* in = x + o * r.length * r.inner + i;
      T* out = y + o * r.length * r.inner + i;
      T max = -std::numeric_limits<T>::infinity();
      for (int64_t k = 0; k < r.length; ++k) max = std::max(max, in[k * r.inner]);
      if (std::isinf(max)) max = 0;  // all -inf (or an inf): exp's NaN says so
      T sum = 0;
      for (int64_t k = 0; k < r.length; ++k) sum += std::exp(in[k * r.inner] - max);
      const T log_sum = std::log(sum);
      for (int64_t k = 0; k < r.length; ++k) {
        const T shifted = in[k * r.inner] - max;
        out[k * r.inner] = log ? shifted - log_sum : std::exp(shifted) / sum;
      }
    }
  }
}

// dx from the forward's y and dy, row by row: (dy - sum(dy * y)) * y, or
// for log_softmax dy - exp(y) * sum(dy).
template <class T>
void softmax_grad_rows(const Rows& r, const T* y, const T* dy, T* dx, bool log) {
  for (int64_t o = 0; o < r.outer; ++o) {
    for (int64_t i = 0; i < r.inner; ++i) {
      const int64_t base = o * r.length * r.inner + i;
      T sum = 0;
      for (int64_t k = 0; k < r.length; ++k) {
        const int64_t at = base + k * r.inner;
        sum += log ? dy[at] : dy[at] * y[at];
      }
      for (int64_t k = 0; k < r.length; ++k) {
        const int64_t at = base + k * r.inner;
        dx[at] = log ? dy[at] - std::exp(y[at]) * sum : (dy[at] - sum) * y[at];
      }
    }
  }
}

// Whether an op of this dtype and rows runs on oneDNN: softmax (not
// log_softmax) of float32 in a build with oneDNN, and no empty rows.
bool softmax_on_onednn(DType dtype, const Rows& r, bool log) {
  return !log && dtype == DType::float32 && built_with_onednn() && r.outer * r.length * r.inner > 0;
}

// oneDNN's vector exp clamps its argument, which turns a NaN into a number;
// a tensor with a NaN takes the loops, whose rows with a NaN are all NaN.
bool softmax_has_nan(const KernelContext& ctx) {
  const int64_t n = ctx.inputs[0].shape->num_elements();
  for (const KernelInput& input : ctx.inputs) {
    const float* x = static_cast<const float*>(input.data);
    bool nan = false;
    for (int64_t i = 0; i < n; ++i) nan |= x[i] != x[i];
    if (nan) return true;
  }
  return false;
}

norm_onednn::Problem softmax_problem(norm_onednn::Kind kind, const Rows& r) {
  return {kind, r.outer, r.length, r.inner};
}

Rows softmax_rows_of(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  return rows_of(shape, softmax_axis(ctx.op_name, ctx.attrs->axis, shape));
}

void run_softmax(const KernelContext& ctx, bool log) {
  const Rows r = softmax_rows_of(ctx);
  if (softmax_on_onednn(ctx.out_dtype, r, log) && !softmax_has_nan(ctx)) {
    const auto kind = norm_onednn::Kind::softmax;
    norm_onednn::Buffers b;
    b.x = ctx.input_data<float>(0);
    b.out = static_cast<float*>(ctx.out);
    norm_onednn::run(static_cast<const norm_onednn::Compiled*>(ctx.prepared),
                     softmax_problem(kind, r), b);
  } else if (ctx.out_dtype == DType::float32) {
    softmax_rows(r, ctx.input_data<float>(0), static_cast<float*>(ctx.out), log);
  } else {
    softmax_rows(r, ctx.input_data<double>(0), static_cast<double*>(ctx.out), log);
  }
}

void run_softmax_grad(const KernelContext& ctx, bool log) {
  const Rows r = softmax_rows_of(ctx);
  if (softmax_on_onednn(ctx.out_dtype, r, log) && !softmax_has_nan(ctx)) {
    const auto kind = norm_onednn::Kind::softmax_grad;
    norm_onednn::Buffers b;
    b.x = ctx.input_data<float>(0);
    b.dy = ctx.input_data<float>(1);
    b.out = static_cast<float*>(ctx.out);
    norm_onednn::run(static_cast<const norm_onednn::Compiled*>(ctx.prepared),
                     softmax_problem(kind, r), b);
  } else if (ctx.out_dtype == DType::float32) {
    softmax_grad_rows(r, ctx.input_data<float>(0), ctx.input_data<float>(1),
                      static_cast<float*>(ctx.out), log);
  } else {
    softmax_grad_rows(r, ctx.input_data<double>(0), ctx.input_data<double>(1),
                      static_cast<double*>(ctx.out), log);
  }
}

PreparedKernel prepare_softmax_kind(const PrepareContext& ctx, norm_onednn::Kind kind) {
  const Shape& shape = ctx.inputs[0].shape;
  const Rows r = rows_of(shape, softmax_axis(ctx.op_name, ctx.attrs.axis, shape));
  if (!softmax_on_onednn(ctx.inputs[0].dtype, r, false)) return nullptr;
  return norm_onednn::prepare(softmax_problem(kind, r));
}

Attrs axis_attrs(int64_t axis) {
  Attrs a;
  a.axis = axis;
  return a;
}

}  // namespace

ValueType infer_softmax(const InferContext& ctx) {
  for (const ValueType& x : ctx.inputs) {
    if (x.dtype != DType::float32 && x.dtype != DType::float64) {
      throw InvalidArgumentError(std::string(ctx.op_name) + ": unsupported dtype " +
                                 std::string(dtype_name(x.dtype)) + " (float32 or float64)");
    }
    if (x.shape.has_unknown_rank())
      throw InvalidArgumentError(std::string(ctx.op_name) + ": needs an input of known rank");
  }
  const ValueType& x = ctx.inputs[0];
  softmax_axis(ctx.op_name, ctx.attrs.axis, x.shape);
  return x;
}

// The gradient ops: y and dy of one dtype and shape.
ValueType infer_softmax_grad(const InferContext& ctx) {
  const ValueType x = infer_softmax(ctx);
  const ValueType& dy = ctx.inputs[1];
  if (dy.dtype != x.dtype || !dy.shape.is_compatible_with(x.shape)) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": the gradient " +
                               std::string(dtype_name(dy.dtype)) + dy.shape.to_list_string() +
                               " does not match the output " + std::string(dtype_name(x.dtype)) +
                               x.shape.to_list_string());
  }
  return x;
}

PreparedKernel prepare_softmax(const PrepareContext& ctx) {
  return prepare_softmax_kind(ctx, norm_onednn::Kind::softmax);
}
PreparedKernel prepare_softmax_grad(const PrepareContext& ctx) {
  return prepare_softmax_kind(ctx, norm_onednn::Kind::softmax_grad);
}

void kernel_softmax(const KernelContext& ctx) {
  run_softmax(ctx, false);
}

void kernel_log_softmax(const KernelContext& ctx) {
  run_softmax(ctx, true);
}

void kernel_softmax_grad(const KernelContext& ctx) {
  run_softmax_grad(ctx, false);
}

void kernel_log_softmax_grad(const KernelContext& ctx) {
  run_softmax_grad(ctx, true);
}

std::vector<Tensor> grad_softmax(const GradContext& c) {
  return {apply(OpId::SoftmaxGrad, {c.output, c.grad}, c.attrs, c.site)};
}

std::vector<Tensor> grad_log_softmax(const GradContext& c) {
  return {apply(OpId::LogSoftmaxGrad, {c.output, c.grad}, c.attrs, c.site)};
}

// dx = (dy - s) * y with s = sum(dy * y): by dy, h -> (h - sum(h * y)) * y,
// softmax_grad itself; by y, h * (dy - s) - sum(h * y) * dy.
std::vector<Tensor> grad_softmax_grad(const GradContext& c) {
  const Tensor &y = c.inputs[0], &dy = c.inputs[1], &h = c.grad;
  const std::vector<int64_t> axis = {softmax_axis(c.op_name, c.attrs.axis, y.shape())};
  const Tensor hy = api::reduce_sum(api::mul(h, y, c.site), axis, true, c.site);
  Tensor by_y;
  if (c.needs(0)) {
    const Tensor s = api::reduce_sum(api::mul(dy, y, c.site), axis, true, c.site);
    by_y = api::sub(api::mul(h, api::sub(dy, s, c.site), c.site), api::mul(hy, dy, c.site), c.site);
  }
  return {by_y, c.needs(1) ? apply(OpId::SoftmaxGrad, {y, h}, c.attrs, c.site) : Tensor()};
}

// dx = dy - exp(y) * sum(dy): by dy, h -> h - sum(h * exp(y)); by y,
// -h * exp(y) * sum(dy).
std::vector<Tensor> grad_log_softmax_grad(const GradContext& c) {
  const Tensor &y = c.inputs[0], &dy = c.inputs[1], &h = c.grad;
  const std::vector<int64_t> axis = {softmax_axis(c.op_name, c.attrs.axis, y.shape())};
  const Tensor p = api::exp(y, c.site);
  Tensor by_y, by_dy;
  if (c.needs(0)) {
    const Tensor total = api::reduce_sum(dy, axis, true, c.site);
    by_y = api::neg(api::mul(api::mul(h, p, c.site), total, c.site), c.site);
  }
  if (c.needs(1))
    by_dy = api::sub(h, api::reduce_sum(api::mul(h, p, c.site), axis, true, c.site), c.site);
  return {by_y, by_dy};
}

}  // namespace ag::ops

namespace ag::api {

Tensor softmax(const Tensor& logits, int64_t axis, CallSite site) {
  return ops::apply(ops::OpId::Softmax, {logits}, ops::axis_attrs(axis), site);
}

Tensor log_softmax(const Tensor& logits, int64_t axis, CallSite site) {
  return ops::apply(ops::OpId::LogSoftmax, {logits}, ops::axis_attrs(axis), site);
}

}  // namespace ag::api
