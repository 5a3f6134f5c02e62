// unique_first_indices: the int64 index of each distinct slice's first
// occurrence along an axis (or of each distinct element of the flattened
// input), in the order of those first occurrences or sorted by the slices'
// values (lexicographically, as NumPy's unique with an axis). How many there
// are depends on the values, so the length is unknown while tracing. unique
// (tf.unique) and ONNX's Unique gather the input there and find each
// element's slot by comparison.
// Attrs: axis; ints = [sorted (0 or 1), along an axis (0: flattened)].
#include <algorithm>
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

// The input viewed as [outer, n, inner] with the slices along n.
struct Lines {
  int64_t outer = 1, n = 0, inner = 1;
};

Lines lines_of(const Shape& shape, const Attrs& attrs) {
  if (attrs.ints[1] == 0) return {1, shape.num_elements(), 1};
  const int axis = int(attrs.axis < 0 ? attrs.axis + shape.rank() : attrs.axis);
  return {select::dims_product(shape, 0, axis), shape[axis],
          select::dims_product(shape, axis + 1, shape.rank())};
}

template <class T>
std::vector<int64_t> first_indices(const T* x, const Lines& l, bool sorted) {
  // Slices a and b compared element by element, in row-major order.
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < l.outer; ++o) {
      const T* pa = x + (o * l.n + a) * l.inner;
      const T* pb = x + (o * l.n + b) * l.inner;
      for (int64_t j = 0; j < l.inner; ++j) {
        if (pa[j] < pb[j]) return -1;
        if (pb[j] < pa[j]) return 1;
      }
    }
    return 0;
  };
  std::vector<int64_t> order(static_cast<size_t>(l.n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  std::vector<int64_t> firsts;
  for (size_t i = 0; i < order.size(); ++i)
    if (i == 0 || compare(order[i - 1], order[i]) != 0) firsts.push_back(order[i]);
  if (!sorted) std::sort(firsts.begin(), firsts.end());
  return firsts;
}

std::vector<int64_t> first_indices_of(DType dtype, const void* x, const Lines& l, bool sorted) {
  return visit_dtype(dtype, [&](auto v) {
    using T = decltype(v);
    return first_indices(static_cast<const T*>(x), l, sorted);
  });
}

}  // namespace

ValueType infer_unique_first_indices(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  select::require_known_rank(ctx.op_name, x.shape, "x");
  if (ctx.attrs.ints.size() != 2) select::fail(ctx.op_name, "needs sorted and whether an axis");
  if (ctx.attrs.ints[1] != 0) {
    if (x.shape.rank() == 0)
      select::fail(ctx.op_name, "x must have rank 1 or more to have an axis");
    select::normalize_axis(ctx.op_name, ctx.attrs.axis, x.shape);
  }
  if (ctx.values.empty() || !ctx.values[0] || !x.shape.is_fully_defined())
    return {DType::int64, Shape{kUnknownDim}};
  const auto firsts = first_indices_of(x.dtype, ctx.values[0], lines_of(x.shape, ctx.attrs),
                                       ctx.attrs.ints[0] != 0);
  return {DType::int64, Shape{int64_t(firsts.size())}};
}

void kernel_unique_first_indices(const KernelContext& ctx) {
  const auto firsts =
      first_indices_of(ctx.inputs[0].dtype, ctx.inputs[0].data,
                       lines_of(*ctx.inputs[0].shape, *ctx.attrs), ctx.attrs->ints[0] != 0);
  std::copy(firsts.begin(), firsts.end(), static_cast<int64_t*>(ctx.out));
}

}  // namespace ag::ops

namespace ag::api {

Tensor unique_first_indices(const Tensor& x, std::optional<int64_t> axis, bool sorted,
                            CallSite site) {
  ops::Attrs attrs;
  attrs.axis = axis.value_or(0);
  attrs.ints = {sorted ? 1 : 0, axis ? 1 : 0};
  return ops::apply(ops::OpId::UniqueFirstIndices, {x}, attrs, site);
}

UniqueResult unique(const Tensor& x, DType out_idx, CallSite site) {
  if (x.rank() != 1) {
    throw InvalidArgumentError("unique: x must be 1-D, got shape " + x.shape().to_list_string());
  }
  if (out_idx != DType::int32 && out_idx != DType::int64) {
    throw InvalidArgumentError("unique: out_idx must be int32 or int64, got " +
                               std::string(dtype_name(out_idx)));
  }
  const Tensor y = gather(x, unique_first_indices(x, 0, false, site), 0, site);
  // Each element's slot: the one value of y it equals.
  const Tensor same =
      cast(equal(expand_dims(x, 1, site), expand_dims(y, 0, site), site), DType::int32, site);
  return {y, cast(argmax(same, 1, site), out_idx, site)};
}

}  // namespace ag::api
