// Activations with a parameter, which a functor of ops/scalar_ops.h cannot
// take: leaky_relu (tf.nn.leaky_relu), x where x > 0 and alpha * x elsewhere
// (alpha in attrs.lo); hard_sigmoid (Keras's, ONNX's HardSigmoid),
// max(0, min(1, alpha * x + beta)) (alpha in attrs.lo, beta in attrs.hi).
// A NaN stays NaN.
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"

namespace ag::ops {
namespace {

// f applied to each element of a float32 or float64 input.
template <class F>
void apply_activation(const KernelContext& ctx, F f) {
  const int64_t n = ctx.out_shape->num_elements();
  auto run = [&](auto* out, const auto* x) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(x[i]);
  };
  if (ctx.out_dtype == DType::float32) {
    run(static_cast<float*>(ctx.out), static_cast<const float*>(ctx.inputs[0].data));
  } else {
    run(static_cast<double*>(ctx.out), static_cast<const double*>(ctx.inputs[0].data));
  }
}

Attrs activation_attrs(double alpha, double beta) {
  Attrs attrs;
  attrs.lo = alpha;
  attrs.hi = beta;
  return attrs;
}

}  // namespace

ValueType infer_activation(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  if (x.dtype != DType::float32 && x.dtype != DType::float64) {
    throw InvalidArgumentError(std::string(ctx.op_name) + ": unsupported dtype " +
                               std::string(dtype_name(x.dtype)) + " (float32 or float64)");
  }
  return x;
}

void kernel_leaky_relu(const KernelContext& ctx) {
  const double alpha = ctx.attrs->lo;
  apply_activation(ctx, [alpha](auto x) {
    using T = decltype(x);
    return x > T(0) ? x : T(alpha) * x;
  });
}

void kernel_hard_sigmoid(const KernelContext& ctx) {
  const double alpha = ctx.attrs->lo, beta = ctx.attrs->hi;
  apply_activation(ctx, [alpha, beta](auto x) {
    using T = decltype(x);
    const T y = T(alpha) * x + T(beta);
    return y != y ? y : y < T(0) ? T(0) : y > T(1) ? T(1) : y;
  });
}

// g where x > 0, alpha * g elsewhere.
std::vector<Tensor> grad_leaky_relu(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  return {
      api::where(api::greater(x, 0, c.site), c.grad, api::mul(c.grad, c.attrs.lo, c.site), c.site)};
}

// alpha * g where the output is strictly between 0 and 1, 0 where clipped.
std::vector<Tensor> grad_hard_sigmoid(const GradContext& c) {
  const Tensor& y = c.output;
  const Tensor inside =
      api::logical_and(api::greater(y, 0, c.site), api::less(y, 1, c.site), c.site);
  return {
      api::mul(api::mul(c.grad, c.attrs.lo, c.site), api::cast(inside, y.dtype(), c.site), c.site)};
}

}  // namespace ag::ops

namespace ag::api {

Tensor leaky_relu(const Tensor& features, double alpha, CallSite site) {
  return ops::apply(ops::OpId::LeakyRelu, {features}, ops::activation_attrs(alpha, 0), site);
}

Tensor hard_sigmoid(const Tensor& x, double alpha, double beta, CallSite site) {
  return ops::apply(ops::OpId::HardSigmoid, {x}, ops::activation_attrs(alpha, beta), site);
}

}  // namespace ag::api
