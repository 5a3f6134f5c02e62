// tile (tf.tile): the input repeated multiples[d] times along each dim d,
// whole copies side by side; its gradient sums the copies. repeat
// (tf.repeat), which repeats each element rather than the whole, is a
// gather at the repeated indices, as TensorFlow composes it.
// Attrs: ints = multiples, one per dim.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/dynamic_shape.h"
#include "ops/kernels.h"
#include "ops/select_helpers.h"

namespace ag::ops {
namespace {

// Copies `in` tiled into `out`, a row of the output's last dim at a time:
// each row is a source row (the output's leading index modulo the input's
// dims) written multiples[last] times.
template <class E>
void tile_rows(const E* in, const Shape& in_shape, E* out, const Shape& out_shape) {
  const int rank = out_shape.rank();
  if (rank == 0) {
    *out = *in;
    return;
  }
  const std::vector<int64_t> in_strides = select::strides_of(in_shape);
  const int64_t row = in_shape[rank - 1];
  const int64_t copies = row == 0 ? 0 : out_shape[rank - 1] / row;
  const int64_t rows = select::dims_product(out_shape, 0, rank - 1);
  std::vector<int64_t> at(size_t(rank), 0);  // the odometer over the output's leading dims
  for (int64_t r = 0; r < rows; ++r) {
    int64_t source = 0;
    for (int d = 0; d + 1 < rank; ++d)
      source += (at[size_t(d)] % in_shape[d]) * in_strides[size_t(d)];
    for (int64_t c = 0; c < copies; ++c, out += row)
      std::memcpy(out, in + source, size_t(row) * sizeof(E));
    for (int d = rank - 2; d >= 0; --d) {
      if (++at[size_t(d)] < out_shape[d]) break;
      at[size_t(d)] = 0;
    }
  }
}

Attrs tile_attrs(std::vector<int64_t> multiples) {
  Attrs attrs;
  attrs.ints = std::move(multiples);
  return attrs;
}

}  // namespace

ValueType infer_tile(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  select::require_known_rank(ctx.op_name, x.shape, "input");
  const std::vector<int64_t>& multiples = ctx.attrs.ints;
  if (int(multiples.size()) != x.shape.rank()) {
    select::fail(ctx.op_name, "multiples has " + std::to_string(multiples.size()) +
                                  " entries for an input of shape " + x.shape.to_list_string() +
                                  "; give one per dim");
  }
  Shape out;
  for (int d = 0; d < x.shape.rank(); ++d) {
    const int64_t m = multiples[size_t(d)];
    if (m < 0) {
      select::fail(ctx.op_name, "multiples[" + std::to_string(d) + "] = " + std::to_string(m) +
                                    " is negative; each must be >= 0");
    }
    out.push_back(m == 0 ? 0 : x.shape[d] == kUnknownDim ? kUnknownDim : x.shape[d] * m);
  }
  return {x.dtype, out};
}

void kernel_tile(const KernelContext& ctx) {
  if (ctx.out_shape->num_elements() == 0) return;
  select::visit_element_bits(ctx.out_dtype, [&](auto e) {
    using E = decltype(e);
    tile_rows(static_cast<const E*>(ctx.inputs[0].data), *ctx.inputs[0].shape,
              static_cast<E*>(ctx.out), *ctx.out_shape);
  });
}

// The gradient viewed as [m0, d0, m1, d1, ...] and summed over the m axes
// (those of a multiple above 1). With more than one of the input's dims
// unknown while tracing, the view's dims are read when the graph runs.
std::vector<Tensor> grad_tile(const GradContext& c) {
  const Shape& in = c.inputs[0].shape();
  const std::vector<int64_t>& multiples = c.attrs.ints;
  std::vector<int64_t> split_dims, summed_axes;
  int unknown = 0;
  for (int d = 0; d < in.rank(); ++d) {
    if (multiples[size_t(d)] != 1) {
      summed_axes.push_back(int64_t(split_dims.size()));
      split_dims.push_back(multiples[size_t(d)]);
    }
    unknown += in[d] == kUnknownDim;
    split_dims.push_back(in[d] == kUnknownDim ? -1 : in[d]);
  }
  if (summed_axes.empty()) return {c.grad};
  // More than one unknown dim: x's dims read when the graph runs.
  if (unknown > 1)
    return {tile_gradient(c.grad, c.inputs[0],
                          api::constant(multiples, Shape{int64_t(multiples.size())}), c.site)};
  const Tensor split = api::reshape(c.grad, split_dims, c.site);
  return {api::reduce_sum(split, summed_axes, false, c.site)};
}

}  // namespace ag::ops

namespace ag::api {

Tensor tile(const Tensor& input, std::vector<int64_t> multiples, CallSite site) {
  return ops::apply(ops::OpId::Tile, {input}, ops::tile_attrs(std::move(multiples)), site);
}

Tensor repeat(const Tensor& input, std::vector<int64_t> repeats, std::optional<int64_t> axis,
              CallSite site) {
  const Tensor x = axis ? input : reshape(input, {-1}, site);
  if (x.shape().has_unknown_rank())
    throw InvalidArgumentError("repeat: input must have a rank known while tracing");
  const int a = ops::select::normalize_axis("repeat", axis.value_or(0), x.shape());
  const int64_t n = x.shape()[a];
  if (n == kUnknownDim) {
    throw InvalidArgumentError("repeat: axis " + std::to_string(a) + " of the input (shape " +
                               x.shape().to_list_string() +
                               ") has a length unknown while tracing; repeat needs it to place "
                               "the copies");
  }
  if (repeats.size() == 1) repeats.assign(size_t(n), repeats[0]);
  if (int64_t(repeats.size()) != n) {
    throw InvalidArgumentError("repeat: repeats has " + std::to_string(repeats.size()) +
                               " entries for an axis of length " + std::to_string(n) +
                               "; give one, or one per element");
  }
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < n; ++i) {
    if (repeats[size_t(i)] < 0) {
      throw InvalidArgumentError("repeat: repeats[" + std::to_string(i) +
                                 "] = " + std::to_string(repeats[size_t(i)]) + " is negative");
    }
    indices.insert(indices.end(), size_t(repeats[size_t(i)]), i);
  }
  return gather(x, constant(indices, Shape{int64_t(indices.size())}), a, site);
}

Tensor repeat(const Tensor& input, int64_t repeats, std::optional<int64_t> axis, CallSite site) {
  return repeat(input, std::vector<int64_t>{repeats}, axis, site);
}

}  // namespace ag::api
