// The gradients of the reductions and the scan of ops.def: the output's
// gradient with the reduced axes put back, broadcast over the input.
#include <span>
#include <vector>

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

// x[begin : begin + size] along `axis`, the other axes whole.
Tensor take(const Tensor& x, int64_t axis, int64_t begin, int64_t size, CallSite site) {
  std::vector<int64_t> begins(size_t(x.rank()), 0), sizes(size_t(x.rank()), -1);
  begins[size_t(axis)] = begin;
  sizes[size_t(axis)] = size;
  return slice(x, begins, sizes, site);
}

// The inclusive running product along `axis` of length n (from the end when
// `reverse`), in log2(n) steps of doubling span (Hillis and Steele), with
// the public ops only, so that it traces, exports and differentiates again.
Tensor running_product(Tensor y, int64_t axis, int64_t n, bool reverse, CallSite site) {
  for (int64_t k = 1; k < n; k *= 2) {
    Tensor shifted = mul(take(y, axis, reverse ? 0 : k, n - k, site),
                         take(y, axis, reverse ? k : 0, n - k, site), site);
    Tensor kept = take(y, axis, reverse ? n - k : 0, k, site);
    y = reverse ? concat({shifted, kept}, axis, site) : concat({kept, shifted}, axis, site);
  }
  return y;
}

// Each element's product of the others along `axis` (length known while
// tracing): the running product before it times the one after it, as
// TensorFlow's exclusive cumprods, from the inclusive ones shifted by one.
Tensor others_along(const Tensor& x, int64_t axis, CallSite site) {
  const int64_t n = x.shape()[int(axis)];
  if (n <= 1) return ones_of(x, site);
  Tensor before = running_product(x, axis, n, /*reverse=*/false, site);
  Tensor after = running_product(x, axis, n, /*reverse=*/true, site);
  std::vector<Tensor> parts{take(after, axis, 1, 1, site)};
  if (n > 2)
    parts.push_back(
        mul(take(before, axis, 0, n - 2, site), take(after, axis, 2, n - 2, site), site));
  parts.push_back(take(before, axis, n - 2, 1, site));
  return concat(parts, axis, site);
}

// Each element's product of the others in its block over `axes` (sorted).
// Over one more axis a: the others along a, times the others of the
// products along a over the remaining axes, broadcast back along a.
Tensor others_in_block(const Tensor& x, std::span<const int64_t> axes, CallSite site) {
  if (axes.empty()) return ones_of(x, site);
  Tensor own = others_along(x, axes[0], site);
  if (axes.size() == 1) return own;
  Tensor rows = reduce_prod(x, {axes[0]}, /*keepdims=*/true, site);
  return mul(own, others_in_block(rows, axes.subspan(1), site), site);
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

// TensorFlow's rule: each element's gradient is the product of the others
// in its reduced block, which holds no division, so a single zero gets the
// product of the rest and two zeros give 0 everywhere (others_in_block).
// Where a reduced axis's length is unknown while tracing, the scans cannot be
// laid out: the product over the element, y / x, non-finite at a zero
// (docs/gradients.md, "Limits").
Grads grad_reduce_prod(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  std::vector<int64_t> axes = reduced_axes(x.rank(), c.attrs);
  bool lengths_known = true;
  for (int64_t a : axes) lengths_known = lengths_known && x.shape()[int(a)] != kUnknownDim;
  if (!lengths_known) {
    Tensor y = with_reduced_axes(c.output, x.rank(), c.attrs, c.site);
    return {mul(spread(c), div(y, x, c.site), c.site)};
  }
  return {mul(spread(c), others_in_block(x, axes, c.site), c.site)};
}

// The gradient of a running sum is the running sum the other way.
Grads grad_cumsum(const GradContext& c) {
  bool exclusive = c.attrs.ints.size() > 0 && c.attrs.ints[0];
  bool reverse = c.attrs.ints.size() > 1 && c.attrs.ints[1];
  return {cumsum(c.grad, c.attrs.axis, exclusive, !reverse, c.site)};
}

}  // namespace ag::ops
