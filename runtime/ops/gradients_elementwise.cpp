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

Grads grad_add(const GradContext& c) {
  return {unbroadcast(c, c.grad, 0), unbroadcast(c, c.grad, 1)};
}
Grads grad_sub(const GradContext& c) {
  return {unbroadcast(c, c.grad, 0), unbroadcast(c, neg(c.grad, c.site), 1)};
}
Grads grad_mul(const GradContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  return {unbroadcast(c, mul(c.grad, b, c.site), 0), unbroadcast(c, mul(c.grad, a, c.site), 1)};
}
// d(a/b)/db = -a/b^2 = -(a/b)/b: reuses the forward's quotient.
Grads grad_div(const GradContext& c) {
  const Tensor& b = c.inputs[1];
  return {unbroadcast(c, div(c.grad, b, c.site), 0),
          unbroadcast(c, neg(mul(c.grad, div(c.output, b, c.site), c.site), c.site), 1)};
}
// mod(a, b) = a - floordiv(a, b) * b.
Grads grad_mod(const GradContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  return {unbroadcast(c, c.grad, 0),
          unbroadcast(c, neg(mul(c.grad, floordiv(a, b, c.site), c.site), c.site), 1)};
}
// d/db a^b = a^b log(a), taken as 0 where a <= 0 (TensorFlow's choice).
Grads grad_pow(const GradContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  Tensor ga = mul(mul(c.grad, b, c.site), pow(a, sub(b, 1, c.site), c.site), c.site);
  Tensor positive = greater(a, 0, c.site);
  Tensor log_a = where(positive, log(where(positive, a, 1, c.site), c.site), 0, c.site);
  Tensor gb = mul(mul(c.grad, c.output, c.site), log_a, c.site);
  return {unbroadcast(c, ga, 0), unbroadcast(c, gb, 1)};
}
// A tie sends the whole gradient to the first operand, as TensorFlow.
Grads grad_maximum(const GradContext& c) {
  Tensor first = greater_equal(c.inputs[0], c.inputs[1], c.site);
  return {unbroadcast(c, where(first, c.grad, 0, c.site), 0),
          unbroadcast(c, where(first, 0, c.grad, c.site), 1)};
}
Grads grad_minimum(const GradContext& c) {
  Tensor first = less_equal(c.inputs[0], c.inputs[1], c.site);
  return {unbroadcast(c, where(first, c.grad, 0, c.site), 0),
          unbroadcast(c, where(first, 0, c.grad, c.site), 1)};
}
Grads grad_where(const GradContext& c) {
  const Tensor& cond = c.inputs[0];
  return {Tensor(), unbroadcast(c, where(cond, c.grad, 0, c.site), 1),
          unbroadcast(c, where(cond, 0, c.grad, c.site), 2)};
}
// clip_by_value(t, lo, hi) = maximum(minimum(t, hi), lo): the rules of
// minimum and maximum composed, ties included.
Grads grad_clip_by_value(const GradContext& c) {
  const Tensor &t = c.inputs[0], &lo = c.inputs[1], &hi = c.inputs[2];
  Tensor below_hi = less_equal(t, hi, c.site);
  Tensor above_lo = greater_equal(minimum(t, hi, c.site), lo, c.site);
  Tensor gt = where(logical_and(below_hi, above_lo, c.site), c.grad, 0, c.site);
  Tensor ghi =
      where(logical_and(logical_not(below_hi, c.site), above_lo, c.site), c.grad, 0, c.site);
  Tensor glo = where(above_lo, 0, c.grad, c.site);
  return {gt, unbroadcast(c, glo, 1), unbroadcast(c, ghi, 2)};
}

}  // namespace ag::ops
