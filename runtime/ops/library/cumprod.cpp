// cumprod (tf.math.cumprod): running products along an axis, as cumsum's
// running sums: `exclusive` leaves each element out of its own product (the
// first is 1), `reverse` runs from the end. Integers wrap. Attrs and shape
// rule as cumsum's: axis; ints = [exclusive, reverse].
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"
#include "ops/scalar_ops.h"
#include "ops/select_helpers.h"

namespace ag::ops {
namespace {

// x viewed as [outer, n, inner]: each row along the axis is the previous
// output row times an input row (the same one, or with `exclusive` the one
// before), in the order `reverse` gives.
template <class T>
void cumprod_rows(const KernelContext& ctx, int axis, bool exclusive, bool reverse) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t outer = select::dims_product(shape, 0, axis);
  const int64_t n = shape[axis];
  const int64_t inner = select::dims_product(shape, axis + 1, shape.rank());
  const T* x = static_cast<const T*>(ctx.inputs[0].data);
  T* out = static_cast<T*>(ctx.out);
  const scalar::MulOp mul;
  // Row k of the scan in visiting order, as an offset into x and out.
  auto row = [&](int64_t o, int64_t k) { return (o * n + (reverse ? n - 1 - k : k)) * inner; };
  for (int64_t o = 0; o < outer && n > 0; ++o) {
    T* first = out + row(o, 0);
    const T* first_in = x + row(o, 0);
    for (int64_t j = 0; j < inner; ++j) first[j] = exclusive ? T(1) : first_in[j];
    for (int64_t k = 1; k < n; ++k) {
      const T* prev = out + row(o, k - 1);
      const T* in = x + row(o, exclusive ? k - 1 : k);
      T* cur = out + row(o, k);
      for (int64_t j = 0; j < inner; ++j) cur[j] = mul(prev[j], in[j]);
    }
  }
}

Attrs cumprod_attrs(int64_t axis, bool exclusive, bool reverse) {
  Attrs attrs;
  attrs.axis = axis;
  attrs.ints = {exclusive ? 1 : 0, reverse ? 1 : 0};
  return attrs;
}

}  // namespace

void kernel_cumprod(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int axis = select::normalize_axis(ctx.op_name, ctx.attrs->axis, shape);
  const bool exclusive = ctx.attrs->ints[0] != 0;
  const bool reverse = ctx.attrs->ints[1] != 0;
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (!scalar::MulOp::supports<T>) {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    } else {
      cumprod_rows<T>(ctx, axis, exclusive, reverse);
    }
  });
}

// TensorFlow's rule: each x_j appears in the products y_i at i >= j (i > j
// when exclusive; the other way when reversed) as a factor, so dx_j sums
// dy_i * y_i / x_j over them: a cumsum of dy * y the other way round,
// divided by x. Where x is 0 the division gives inf or NaN, as in
// TensorFlow.
std::vector<Tensor> grad_cumprod(const GradContext& c) {
  const bool exclusive = c.attrs.ints[0] != 0;
  const bool reverse = c.attrs.ints[1] != 0;
  const Tensor weighted = api::mul(c.grad, c.output, c.site);
  const Tensor sums = api::cumsum(weighted, c.attrs.axis, exclusive, !reverse, c.site);
  return {api::div(sums, c.inputs[0], c.site)};
}

}  // namespace ag::ops

namespace ag::api {

Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse, CallSite site) {
  return ops::apply(ops::OpId::Cumprod, {x}, ops::cumprod_attrs(axis, exclusive, reverse), site);
}

}  // namespace ag::api
