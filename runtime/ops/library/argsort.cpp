// argsort (tf.argsort): the int32 indices that sort a tensor along one axis,
// ascending or descending, equal values in the order of their indices (so
// every sort is stable), NaN above every number. Its first k indices are
// top_k's (tf.math.top_k) and the op computes only those. sort and top_k's
// values are the input gathered at these indices (gather_nd), which carries
// their gradient; the indices have none.
// Attrs: axis; ints = [descending (0 or 1), k (-1: the whole axis)].
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"
#include "ops/select_helpers.h"

namespace ag::ops {
namespace {

// a before b in ascending order, NaN last.
template <class T>
bool sorts_before(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// The first `k` indices of each line along the axis, viewed as [outer, n,
// inner]; ties go to the lower index, which makes the order total, so that
// a partial sort of the first k is the full sort's first k.
template <class T>
void argsort_lines(const KernelContext& ctx, int axis, bool descending, int64_t k) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int64_t outer = select::dims_product(shape, 0, axis);
  const int64_t n = shape[axis];
  const int64_t inner = select::dims_product(shape, axis + 1, shape.rank());
  const T* x = static_cast<const T*>(ctx.inputs[0].data);
  auto* out = static_cast<int32_t*>(ctx.out);
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* line = x + o * n * inner + i;
      auto before = [&](int32_t a, int32_t b) {
        const T va = line[a * inner], vb = line[b * inner];
        if (descending ? sorts_before(vb, va) : sorts_before(va, vb)) return true;
        if (descending ? sorts_before(va, vb) : sorts_before(vb, va)) return false;
        return a < b;
      };
      std::iota(order.begin(), order.end(), 0);
      if (k < n) {
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      } else {
        std::sort(order.begin(), order.end(), before);
      }
      int32_t* to = out + o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) to[j * inner] = order[size_t(j)];
    }
  }
}

bool parse_descending(std::string_view op, std::string_view direction) {
  if (direction == "ASCENDING") return false;
  if (direction == "DESCENDING") return true;
  select::fail(
      op, "direction is '" + std::string(direction) + "'; it must be 'ASCENDING' or 'DESCENDING'");
}

Attrs argsort_attrs(int64_t axis, bool descending, int64_t k) {
  Attrs attrs;
  attrs.axis = axis;
  attrs.ints = {descending ? 1 : 0, k};
  return attrs;
}

// x's values at `indices` along x's last axis: x [..., n], indices [..., k]
// -> [..., k], by a gather_nd of one coordinate with every other dim a
// batch dim.
Tensor take_along_last_axis(const Tensor& x, const Tensor& indices, CallSite site) {
  return api::gather_nd(x, api::expand_dims(indices, -1, site), x.rank() - 1, site);
}

// The permutation swapping `axis` with the last one (its own inverse).
std::vector<int64_t> swap_with_last(int axis, int rank) {
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[size_t(axis)], perm.back());
  return perm;
}

}  // namespace

ValueType infer_argsort(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  select::require_known_rank(ctx.op_name, x.shape, "values");
  if (x.dtype == DType::bool_)
    select::fail(ctx.op_name, "unsupported dtype bool: bools do not sort");
  if (x.shape.rank() == 0)
    select::fail(ctx.op_name, "values must have rank 1 or more, got a scalar");
  if (ctx.attrs.ints.size() != 2) select::fail(ctx.op_name, "needs the direction and k");
  const int axis = select::normalize_axis(ctx.op_name, ctx.attrs.axis, x.shape);
  const int64_t n = x.shape[axis];
  const int64_t k = ctx.attrs.ints[1];
  if (k < -1) select::fail(ctx.op_name, "k = " + std::to_string(k) + " must be >= 0");
  if (k > n && n != kUnknownDim) {
    select::fail(ctx.op_name, "k = " + std::to_string(k) + " is larger than the length " +
                                  std::to_string(n) + " of axis " + std::to_string(axis) +
                                  " (shape " + x.shape.to_list_string() + ")");
  }
  if (n > std::numeric_limits<int32_t>::max())  // (an unknown length is -1)
    select::fail(ctx.op_name, "an axis of " + std::to_string(n) + " elements has no int32 indices");
  Shape out = x.shape;
  if (k >= 0) out.set_dim(axis, k);
  return {DType::int32, out};
}

void kernel_argsort(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  const int axis = select::normalize_axis(ctx.op_name, ctx.attrs->axis, shape);
  const int64_t k = (*ctx.out_shape)[axis];
  if (ctx.attrs->ints[1] > shape[axis]) {
    select::fail(ctx.op_name, "k = " + std::to_string(ctx.attrs->ints[1]) +
                                  " is larger than the length " + std::to_string(shape[axis]) +
                                  " of axis " + std::to_string(axis) + " (shape " +
                                  shape.to_list_string() + ")");
  }
  if (ctx.out_shape->num_elements() == 0) return;
  const bool descending = ctx.attrs->ints[0] != 0;
  visit_dtype(ctx.inputs[0].dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (std::is_same_v<T, bool>) {
      throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
    } else {
      argsort_lines<T>(ctx, axis, descending, k);
    }
  });
}

}  // namespace ag::ops

namespace ag::api {

// Every sort here is stable, so `stable` changes nothing.
Tensor argsort(const Tensor& values, int64_t axis, std::string_view direction, bool /*stable*/,
               CallSite site) {
  return ops::apply(ops::OpId::Argsort, {values},
                    ops::argsort_attrs(axis, ops::parse_descending("argsort", direction), -1),
                    site);
}

Tensor sort(const Tensor& values, int64_t axis, std::string_view direction, CallSite site) {
  const bool descending = ops::parse_descending("sort", direction);
  if (values.shape().has_unknown_rank())
    throw InvalidArgumentError("sort: values must have a rank known while tracing");
  if (values.rank() == 0) throw InvalidArgumentError("sort: values must have rank 1 or more");
  const int rank = values.rank();
  const int a = ops::select::normalize_axis("sort", axis, values.shape());
  if (a == rank - 1) {
    const Tensor order =
        ops::apply(ops::OpId::Argsort, {values}, ops::argsort_attrs(-1, descending, -1), site);
    return ops::take_along_last_axis(values, order, site);
  }
  const std::vector<int64_t> perm = ops::swap_with_last(a, rank);
  return transpose(sort(transpose(values, perm, site), -1, direction, site), perm, site);
}

// The values always come sorted, which sorted = false allows too.
TopKResult top_k(const Tensor& input, int64_t k, bool /*sorted*/, CallSite site) {
  if (k < 0) throw InvalidArgumentError("top_k: k = " + std::to_string(k) + " must be >= 0");
  const Tensor indices =
      ops::apply(ops::OpId::Argsort, {input}, ops::argsort_attrs(-1, true, k), site);
  return {ops::take_along_last_axis(input, indices, site), indices};
}

}  // namespace ag::api
