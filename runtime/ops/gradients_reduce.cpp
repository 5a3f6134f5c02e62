// The gradients of the reductions and the scan of ops.def: the output's
// gradient with the reduced axes put back, broadcast over the input.
#include "ops/gradient_helpers.h"
#include "ops/kernels.h"

namespace ag::ops {

using namespace ag::api;
using Grads = std::vector<Tensor>;

namespace {
// The output's gradient in the input's shape.
Tensor spread(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  return mul(with_reduced_axes(c.grad, x.rank(), c.attrs, c.site), ones_of(x, c.site), c.site);
}
}  // namespace

Grads grad_reduce_sum(const GradContext& c) {
  return {spread(c)};
}

// The sum's gradient broadcast back over x; `like` only gave a shape.
Grads grad_reduce_sum_to(const GradContext& c) {
  return {mul(c.grad, ones_of(c.inputs[0], c.site), c.site), Tensor()};
}

Grads grad_reduce_mean(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Tensor& y = c.output;
  if (x.shape().is_fully_defined() && y.shape().is_fully_defined()) {
    if (y.num_elements() == 0) return {zeros_like(x, c.site)};
    return {div(spread(c), double(x.num_elements() / y.num_elements()), c.site)};
  }
  Tensor count = div(cast(size(x, DType::int64, c.site), x.dtype(), c.site),
                     cast(size(y, DType::int64, c.site), x.dtype(), c.site), c.site);
  return {div(spread(c), count, c.site)};
}

// The gradient goes to the elements equal to the extremum, shared equally
// between ties (TensorFlow's rule).
Grads grad_reduce_max_min(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  Tensor y = with_reduced_axes(c.output, x.rank(), c.attrs, c.site);
  Tensor g = with_reduced_axes(c.grad, x.rank(), c.attrs, c.site);
  Tensor hit = cast(equal(x, y, c.site), x.dtype(), c.site);
  Tensor ties = reduce_sum(hit, reduced_axes(x.rank(), c.attrs), /*keepdims=*/true, c.site);
  return {mul(div(hit, ties, c.site), g, c.site)};
}

// The product of the others is y / x: an input holding a zero gives a
// non-finite gradient there (docs/gradients.md, "Limits").
Grads grad_reduce_prod(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  Tensor y = with_reduced_axes(c.output, x.rank(), c.attrs, c.site);
  return {mul(spread(c), div(y, x, c.site), c.site)};
}

// The gradient of a running sum is the running sum the other way.
Grads grad_cumsum(const GradContext& c) {
  bool exclusive = c.attrs.ints.size() > 0 && c.attrs.ints[0];
  bool reverse = c.attrs.ints.size() > 1 && c.attrs.ints[1];
  return {cumsum(c.grad, c.attrs.axis, exclusive, !reverse, c.site)};
}

}  // namespace ag::ops
