// softmax and log_softmax along one axis (tf.nn.softmax, tf.nn.log_softmax):
// exp(x - max) / sum(exp(x - max)) and x - max - log(sum(exp(x - max))),
// the maximum taken out first so that no exp overflows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"

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

void run_softmax(const KernelContext& ctx, bool log) {
  const Shape& shape = *ctx.inputs[0].shape;
  const Rows r = rows_of(shape, softmax_axis(ctx.op_name, ctx.attrs->axis, shape));
  if (ctx.out_dtype == DType::float32) {
    softmax_rows(r, static_cast<const float*>(ctx.inputs[0].data), static_cast<float*>(ctx.out),
                 log);
  } else {
    softmax_rows(r, static_cast<const double*>(ctx.inputs[0].data), static_cast<double*>(ctx.out),
                 log);
  }
}

Attrs axis_attrs(int64_t axis) {
  Attrs a;
  a.axis = axis;
  return a;
}

}  // namespace

ValueType infer_softmax(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  if (x.dtype != DType::float32 && x.dtype != DType::float64) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": unsupported dtype " +
                               std::string(dtype_name(x.dtype)) + " (float32 or float64)");
  }
  if (x.shape.has_unknown_rank())
    throw InvalidArgumentError(std::string(ctx.op_name) + ": needs an input of known rank");
  softmax_axis(ctx.op_name, ctx.attrs.axis, x.shape);
  return x;
}

void kernel_softmax(const KernelContext& ctx) {
  run_softmax(ctx, false);
}

void kernel_log_softmax(const KernelContext& ctx) {
  run_softmax(ctx, true);
}

// (g - sum(g * y)) * y along the axis.
std::vector<Tensor> grad_softmax(const GradContext& c) {
  const Tensor& y = c.output;
  const int64_t axis = softmax_axis(c.op_name, c.attrs.axis, y.shape());
  const Tensor dot = api::reduce_sum(api::mul(c.grad, y, c.site), {axis}, true, c.site);
  return {api::mul(api::sub(c.grad, dot, c.site), y, c.site)};
}

// g - softmax(x) * sum(g) along the axis; softmax(x) = exp(y).
std::vector<Tensor> grad_log_softmax(const GradContext& c) {
  const Tensor& y = c.output;
  const int64_t axis = softmax_axis(c.op_name, c.attrs.axis, y.shape());
  const Tensor total = api::reduce_sum(c.grad, {axis}, true, c.site);
  return {api::sub(c.grad, api::mul(api::exp(y, c.site), total, c.site), c.site)};
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
