// The gradients of the elementwise ops of ops.def (TensorFlow's rules),
// written with the public ops so that eager mode and tracing share them.
// Binary and ternary ops undo their broadcasting with unbroadcast().
#include "ops/gradient_helpers.h"
#include "ops/kernels.h"

namespace ag::ops {

using namespace ag::api;
using Grads = std::vector<Tensor>;

Grads grad_neg(const GradContext& c) {
  return {neg(c.grad, c.site)};
}
Grads grad_abs(const GradContext& c) {
  return {mul(c.grad, sign(c.inputs[0], c.site), c.site)};
}
Grads grad_exp(const GradContext& c) {
  return {mul(c.grad, c.output, c.site)};
}
Grads grad_log(const GradContext& c) {
  return {div(c.grad, c.inputs[0], c.site)};
}
Grads grad_sqrt(const GradContext& c) {
  return {div(c.grad, mul(c.output, 2, c.site), c.site)};
}
// 1 - tanh(x)^2 from the forward's output: no second tanh.
Grads grad_tanh(const GradContext& c) {
  const Tensor& y = c.output;
  return {mul(c.grad, sub(1, mul(y, y, c.site), c.site), c.site)};
}
Grads grad_sigmoid(const GradContext& c) {
  const Tensor& y = c.output;
  return {mul(c.grad, mul(y, sub(1, y, c.site), c.site), c.site)};
}
Grads grad_relu(const GradContext& c) {
  return {where(greater(c.output, 0, c.site), c.grad, 0, c.site)};
}
Grads grad_sin(const GradContext& c) {
  return {mul(c.grad, cos(c.inputs[0], c.site), c.site)};
}
Grads grad_cos(const GradContext& c) {
  return {neg(mul(c.grad, sin(c.inputs[0], c.site), c.site), c.site)};
}
// 1 + tan(x)^2 from the output.
Grads grad_tan(const GradContext& c) {
  return {mul(c.grad, add(1, square(c.output, c.site), c.site), c.site)};
}
// 1 / sqrt(1 - x^2), negated for acos.
Grads grad_asin(const GradContext& c) {
  return {mul(c.grad, rsqrt(sub(1, square(c.inputs[0], c.site), c.site), c.site), c.site)};
}
Grads grad_acos(const GradContext& c) {
  return {neg(grad_asin(c)[0], c.site)};
}
Grads grad_atan(const GradContext& c) {
  return {div(c.grad, add(1, square(c.inputs[0], c.site), c.site), c.site)};
}
Grads grad_sinh(const GradContext& c) {
  return {mul(c.grad, cosh(c.inputs[0], c.site), c.site)};
}
Grads grad_cosh(const GradContext& c) {
  return {mul(c.grad, sinh(c.inputs[0], c.site), c.site)};
}
Grads grad_asinh(const GradContext& c) {
  return {mul(c.grad, rsqrt(add(square(c.inputs[0], c.site), 1, c.site), c.site), c.site)};
}
Grads grad_acosh(const GradContext& c) {
  return {mul(c.grad, rsqrt(sub(square(c.inputs[0], c.site), 1, c.site), c.site), c.site)};
}
Grads grad_atanh(const GradContext& c) {
  return {div(c.grad, sub(1, square(c.inputs[0], c.site), c.site), c.site)};
}
// 2 / sqrt(pi) * exp(-x^2).
Grads grad_erf(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor density = exp(neg(square(x, c.site), c.site), c.site);
  return {mul(c.grad, mul(density, 1.1283791670955126, c.site), c.site)};
}
Grads grad_log1p(const GradContext& c) {
  return {div(c.grad, add(c.inputs[0], 1, c.site), c.site)};
}
// exp(x) = expm1(x) + 1, from the output.
Grads grad_expm1(const GradContext& c) {
  return {mul(c.grad, add(c.output, 1, c.site), c.site)};
}
// -x^(-3/2) / 2 = -y^3 / 2, from the output.
Grads grad_rsqrt(const GradContext& c) {
  const Tensor& y = c.output;
  return {mul(c.grad, mul(mul(y, square(y, c.site), c.site), -0.5, c.site), c.site)};
}
Grads grad_reciprocal(const GradContext& c) {
  return {neg(mul(c.grad, square(c.output, c.site), c.site), c.site)};
}
Grads grad_softplus(const GradContext& c) {
  return {mul(c.grad, sigmoid(c.inputs[0], c.site), c.site)};
}
// 1 / (1 + |x|)^2.
Grads grad_softsign(const GradContext& c) {
  return {div(c.grad, square(add(abs(c.inputs[0], c.site), 1, c.site), c.site), c.site)};
}
// 1 for x > 0, else exp(x) = y + 1.
Grads grad_elu(const GradContext& c) {
  const Tensor& y = c.output;
  return {where(greater(c.inputs[0], 0, c.site), c.grad, mul(c.grad, add(y, 1, c.site), c.site),
                c.site)};
}
// scale for x > 0, else scale * alpha * exp(x) = y + scale * alpha.
Grads grad_selu(const GradContext& c) {
  constexpr double kScale = 1.0507009873554804934193349852946;
  constexpr double kScaleAlpha = kScale * 1.6732632423543772848170429916717;
  const Tensor& y = c.output;
  return {mul(c.grad,
              where(greater(c.inputs[0], 0, c.site), scalar_like(kScale, y.dtype()),
                    add(y, kScaleAlpha, c.site), c.site),
              c.site)};
}
// Phi(x) + x * phi(x): the normal distribution's function and density.
Grads grad_gelu(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor cdf =
      mul(add(erf(mul(x, 0.70710678118654752440, c.site), c.site), 1, c.site), 0.5, c.site);
  const Tensor pdf =
      mul(exp(mul(square(x, c.site), -0.5, c.site), c.site), 0.39894228040143267794, c.site);
  return {mul(c.grad, add(cdf, mul(x, pdf, c.site), c.site), c.site)};
}
// round, floor, ceil and sign are piecewise constant: zero, as TensorFlow.
Grads grad_zero(const GradContext& c) {
  return {zeros_like(c.inputs[0], c.site)};
}
// A bool input is a mask or a condition: it gets no gradient. An integer
// input gets one, which the tape rejects when it is connected to a source.
Grads grad_cast(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  if (x.dtype() == DType::bool_) return {Tensor()};
  return {cast(c.grad, x.dtype(), c.site)};
}
Grads grad_identity(const GradContext& c) {
  return {c.grad};
}

// The gradient of each input that needs one: `rule(i)` in the op's output
// shape, summed back to input i's shape.
template <class Rule>
Grads per_input(const GradContext& c, Rule rule) {
  Grads grads(c.inputs.size());
  for (size_t i = 0; i < grads.size(); ++i)
    if (c.needs(i)) grads[i] = unbroadcast(c, rule(i), i);
  return grads;
}

Grads grad_add(const GradContext& c) {
  return per_input(c, [&](size_t) { return c.grad; });
}
Grads grad_sub(const GradContext& c) {
  return per_input(c, [&](size_t i) { return i == 0 ? c.grad : neg(c.grad, c.site); });
}
Grads grad_mul(const GradContext& c) {
  return per_input(c, [&](size_t i) { return mul(c.grad, c.inputs[1 - i], c.site); });
}
// d(a/b)/db = -a/b^2 = -(a/b)/b: reuses the forward's quotient.
Grads grad_div(const GradContext& c) {
  const Tensor& b = c.inputs[1];
  return per_input(c, [&](size_t i) {
    return i == 0 ? div(c.grad, b, c.site)
                  : neg(mul(c.grad, div(c.output, b, c.site), c.site), c.site);
  });
}
// mod(a, b) = a - floordiv(a, b) * b.
Grads grad_mod(const GradContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  return per_input(c, [&](size_t i) {
    return i == 0 ? c.grad : neg(mul(c.grad, floordiv(a, b, c.site), c.site), c.site);
  });
}
// d/db a^b = a^b log(a), taken as 0 where a <= 0 (TensorFlow's choice).
Grads grad_pow(const GradContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  return per_input(c, [&](size_t i) {
    if (i == 0) return mul(mul(c.grad, b, c.site), pow(a, sub(b, 1, c.site), c.site), c.site);
    Tensor positive = greater(a, 0, c.site);
    Tensor log_a = where(positive, log(where(positive, a, 1, c.site), c.site), 0, c.site);
    return mul(mul(c.grad, c.output, c.site), log_a, c.site);
  });
}
// A tie sends the whole gradient to the first operand, as TensorFlow.
Grads grad_maximum(const GradContext& c) {
  Tensor first = greater_equal(c.inputs[0], c.inputs[1], c.site);
  return per_input(c, [&](size_t i) {
    return i == 0 ? where(first, c.grad, 0, c.site) : where(first, 0, c.grad, c.site);
  });
}
Grads grad_minimum(const GradContext& c) {
  Tensor first = less_equal(c.inputs[0], c.inputs[1], c.site);
  return per_input(c, [&](size_t i) {
    return i == 0 ? where(first, c.grad, 0, c.site) : where(first, 0, c.grad, c.site);
  });
}
// The condition is bool: it gets none.
Grads grad_where(const GradContext& c) {
  const Tensor& cond = c.inputs[0];
  Grads grads(3);
  if (c.needs(1)) grads[1] = unbroadcast(c, where(cond, c.grad, 0, c.site), 1);
  if (c.needs(2)) grads[2] = unbroadcast(c, where(cond, 0, c.grad, c.site), 2);
  return grads;
}
// clip_by_value(t, lo, hi) = maximum(minimum(t, hi), lo): the rules of
// minimum and maximum composed, ties included.
Grads grad_clip_by_value(const GradContext& c) {
  const Tensor &t = c.inputs[0], &lo = c.inputs[1], &hi = c.inputs[2];
  Tensor below_hi = less_equal(t, hi, c.site);
  Tensor above_lo = greater_equal(minimum(t, hi, c.site), lo, c.site);
  return per_input(c, [&](size_t i) {
    if (i == 0) return where(logical_and(below_hi, above_lo, c.site), c.grad, 0, c.site);
    if (i == 1) return where(above_lo, 0, c.grad, c.site);
    return where(logical_and(logical_not(below_hi, c.site), above_lo, c.site), c.grad, 0, c.site);
  });
}

}  // namespace ag::ops
