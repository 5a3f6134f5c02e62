// reshape, broadcast_to and tile by a shape computed as a tensor
// (tf.reshape(x, tf.shape(y)), tf.broadcast_to, tf.tile, tf.fill): ops whose
// output shape is input 1's values (kShapeFromValues). Where those values are
// known (eagerly, and when the graph runs) the shape rules of reshape,
// broadcast_to and tile decide, on the values as their attrs; while tracing
// the output's dims are unknown where the values are. The kernels are
// theirs too. A shape tensor known while tracing (a constant) gives the op
// with attrs instead, whose output shape is static.
#include <algorithm>
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

// The ops' errors name the public functions (reshape, broadcast_to, tile),
// so that a shape known eagerly (the op with attrs) and one read when a
// graph runs give the same text.
constexpr std::string_view kReshape = "reshape", kBroadcastTo = "broadcast_to", kTile = "tile";

// Input 1 must be a 1-D int32 or int64 tensor of a length known while
// tracing: the output's rank (reshape, broadcast_to) or x's (tile).
int64_t shape_input_length(const InferContext& ctx, std::string_view op, std::string_view what) {
  const ValueType& t = ctx.inputs[1];
  if (t.dtype != DType::int32 && t.dtype != DType::int64) {
    select::fail(
        op, std::string(what) + " must be int32 or int64, got " + std::string(dtype_name(t.dtype)));
  }
  if (t.shape.rank() != 1 || t.shape[0] == kUnknownDim) {
    select::fail(op, std::string(what) +
                         " must be a 1-D tensor whose length is known while tracing, got shape " +
                         t.shape.to_list_string());
  }
  return t.shape[0];
}

// attrs.ints, when it has an entry per entry of the shape: the entries known
// while tracing (reshape_by, broadcast_by), kUnknownEntry for the others.
// The output's dims while tracing where they tell them.
std::vector<int64_t> known_entries(const InferContext& ctx, int64_t length) {
  if (int64_t(ctx.attrs.ints.size()) == length) return ctx.attrs.ints;
  return std::vector<int64_t>(static_cast<size_t>(length), kUnknownEntry);
}

// Input 1's values, or nothing while tracing a value computed in the graph.
// They must match the entries known while tracing.
std::optional<std::vector<int64_t>> shape_values(const InferContext& ctx, std::string_view op,
                                                 int64_t length) {
  if (ctx.values.size() < 2 || !ctx.values[1]) return std::nullopt;
  const std::vector<int64_t> known = known_entries(ctx, length);
  std::vector<int64_t> values(static_cast<size_t>(length));
  for (int64_t i = 0; i < length; ++i) {
    const int64_t v = ctx.inputs[1].dtype == DType::int32
                          ? static_cast<const int32_t*>(ctx.values[1])[i]
                          : static_cast<const int64_t*>(ctx.values[1])[i];
    if (known[size_t(i)] != kUnknownEntry && known[size_t(i)] != v) {
      select::fail(op, "shape[" + std::to_string(i) + "] is " + std::to_string(v) +
                           " when the graph runs, but was " + std::to_string(known[size_t(i)]) +
                           " while tracing");
    }
    values[size_t(i)] = v;
  }
  return values;
}

// The known entries as a shape: unknown dims where not known (or -1).
Shape known_shape_of(const std::vector<int64_t>& known) {
  Shape out;
  for (int64_t k : known) out.push_back(k >= 0 ? k : kUnknownDim);
  return out;
}

// The rule of the op `op` with attrs (`infer`) on x and the values as attrs.ints.
ValueType with_values_as_attrs(const InferContext& ctx, std::string_view op, InferFn infer,
                               std::vector<int64_t> values) {
  Attrs attrs = ctx.attrs;
  attrs.ints = std::move(values);
  return infer(InferContext{op, ctx.inputs.first(1), attrs, {}});
}

void require_no_negative(std::string_view op, const std::vector<int64_t>& values,
                         std::string_view what) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0) {
      select::fail(op, std::string(what) + "[" + std::to_string(i) +
                           "] = " + std::to_string(values[i]) + " is negative");
    }
  }
}

}  // namespace

// One entry may be -1 (inferred), as reshape's.
ValueType infer_dynamic_reshape(const InferContext& ctx) {
  const int64_t length = shape_input_length(ctx, kReshape, "shape");
  const std::optional<std::vector<int64_t>> values = shape_values(ctx, kReshape, length);
  if (values) return with_values_as_attrs(ctx, kReshape, infer_reshape, *values);
  return {ctx.inputs[0].dtype, known_shape_of(known_entries(ctx, length))};
}

// While tracing, a known entry of the shape is the output's dim there, and
// so is a dim of x other than 1 (any other target dim is an error when the
// graph runs).
ValueType infer_dynamic_broadcast_to(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  select::require_known_rank(kBroadcastTo, x.shape, "input");
  const int64_t length = shape_input_length(ctx, kBroadcastTo, "shape");
  const bool both_ways = ctx.attrs.axis != 0;
  const std::optional<std::vector<int64_t>> values = shape_values(ctx, kBroadcastTo, length);
  if (values) {
    require_no_negative(kBroadcastTo, *values, "shape");
    if (!both_ways) return with_values_as_attrs(ctx, kBroadcastTo, infer_broadcast_to, *values);
    const Shape target = broadcast_shapes(x.shape, Shape(std::span<const int64_t>(*values)));
    if (!target.is_fully_defined()) return {x.dtype, target};  // x's dims unknown while tracing
    return with_values_as_attrs(ctx, kBroadcastTo, infer_broadcast_to,
                                {target.begin(), target.end()});
  }
  if (!both_ways && x.shape.rank() > length) {
    select::fail(kBroadcastTo, "cannot broadcast a tensor of shape " + x.shape.to_list_string() +
                                   " to a shape of " + std::to_string(length) + " dims");
  }
  const Shape known = known_shape_of(known_entries(ctx, length));
  if (both_ways) return {x.dtype, broadcast_shapes(x.shape, known)};
  Shape out;
  for (int d = 0; d < int(length); ++d) {
    const int k = d - (int(length) - x.shape.rank());
    const int64_t dim = k >= 0 ? x.shape[k] : kUnknownDim;
    out.push_back(known[d] != kUnknownDim ? known[d] : dim == 1 ? kUnknownDim : dim);
  }
  return {x.dtype, out};
}

// While tracing, a dim of 0 stays 0, and one of a multiple known while
// tracing (tile_by) is known; the others are unknown.
ValueType infer_dynamic_tile(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  select::require_known_rank(kTile, x.shape, "input");
  const int64_t length = shape_input_length(ctx, kTile, "multiples");
  const std::optional<std::vector<int64_t>> values = shape_values(ctx, kTile, length);
  if (values) return with_values_as_attrs(ctx, kTile, infer_tile, *values);
  if (length != x.shape.rank()) {
    select::fail(kTile, "multiples has " + std::to_string(length) +
                            " entries for an input of shape " + x.shape.to_list_string() +
                            "; give one per dim");
  }
  const std::vector<int64_t> known = known_entries(ctx, length);
  Shape out;
  for (int d = 0; d < x.shape.rank(); ++d) {
    const int64_t m = known[size_t(d)], dim = x.shape[d];
    if (m == 0 || dim == 0)
      out.push_back(0);
    else
      out.push_back(m == kUnknownEntry || dim == kUnknownDim ? kUnknownDim : dim * m);
  }
  return {x.dtype, out};
}

// A reshape back to x's shape: static where x's is, else read when the
// graph runs. The shape gets no gradient.
std::vector<Tensor> grad_dynamic_reshape(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  if (x.shape().is_fully_defined())
    return {api::reshape(c.grad, {x.shape().begin(), x.shape().end()}, c.site), Tensor()};
  return {api::reshape(c.grad, api::shape(x, DType::int64, c.site), c.site), Tensor()};
}

// Summed over the dims x was repeated along (decided when the graph runs
// where they are unknown while tracing).
std::vector<Tensor> grad_dynamic_broadcast_to(const GradContext& c) {
  return {api::reduce_sum_to(c.grad, c.inputs[0], c.site), Tensor()};
}

// The gradient viewed as [m0, d0, m1, d1, ...] (multiples and x's dims
// interleaved, read when the graph runs) and summed over the m axes.
std::vector<Tensor> grad_dynamic_tile(const GradContext& c) {
  return {tile_gradient(c.grad, c.inputs[0], c.inputs[1], c.site), Tensor()};
}

Tensor tile_gradient(const Tensor& grad, const Tensor& x, const Tensor& multiples, CallSite site) {
  const int rank = x.rank();
  if (rank == 0) return grad;
  const Tensor split_dims = api::reshape(
      api::stack({api::cast(multiples, DType::int64, site), api::shape(x, DType::int64, site)}, 1,
                 site),
      {-1}, site);
  std::vector<int64_t> copies;
  for (int d = 0; d < rank; ++d) copies.push_back(2 * int64_t(d));
  Tensor summed = api::reduce_sum(api::reshape(grad, split_dims, site), copies, false, site);
  if (!x.shape().is_fully_defined()) return summed;
  return api::reshape(summed, {x.shape().begin(), x.shape().end()}, site);
}

Tensor tile_by(const Tensor& x, const Tensor& multiples, std::vector<int64_t> known,
               CallSite site) {
  Attrs attrs;
  attrs.ints = std::move(known);
  return apply(OpId::DynamicTile, {x, multiples}, attrs, site);
}

Tensor reshape_by(const Tensor& x, const Tensor& shape, std::vector<int64_t> known, CallSite site) {
  Attrs attrs;
  attrs.ints = std::move(known);
  return apply(OpId::DynamicReshape, {x, shape}, attrs, site);
}

Tensor broadcast_by(const Tensor& x, const Tensor& shape, std::vector<int64_t> known,
                    bool both_ways, CallSite site) {
  Attrs attrs;
  attrs.ints = std::move(known);
  attrs.axis = both_ways ? 1 : 0;
  return apply(OpId::DynamicBroadcastTo, {x, shape}, attrs, site);
}

}  // namespace ag::ops

namespace ag::detail {
namespace {

// The values of a shape tensor known while tracing, as attrs of the op
// with a static output shape; nothing for a tensor the op's rule rejects
// (its error then comes from the op with the tensor input).
std::optional<std::vector<int64_t>> known_shape(const Tensor& shape) {
  if (shape.is_symbolic() || shape.rank() != 1) return std::nullopt;
  if (shape.dtype() != DType::int32 && shape.dtype() != DType::int64) return std::nullopt;
  return shape.to_vector<int64_t>();
}

}  // namespace

Tensor reshape_to_tensor(const Tensor& x, const Tensor& shape, CallSite site) {
  if (auto dims = known_shape(shape)) return api::reshape(x, std::move(*dims), site);
  return ops::apply(ops::OpId::DynamicReshape, {x, shape}, {}, site);
}

Tensor broadcast_to_tensor(const Tensor& x, const Tensor& shape, CallSite site) {
  if (auto dims = known_shape(shape)) return api::broadcast_to(x, std::move(*dims), site);
  return ops::apply(ops::OpId::DynamicBroadcastTo, {x, shape}, {}, site);
}

Tensor tile_to_tensor(const Tensor& input, const Tensor& multiples, CallSite site) {
  if (auto m = known_shape(multiples)) return api::tile(input, std::move(*m), site);
  return ops::apply(ops::OpId::DynamicTile, {input, multiples}, {}, site);
}

Tensor fill_to_tensor(const Tensor& dims, const Tensor& value, CallSite site) {
  if (value.rank() != 0) {
    throw InvalidArgumentError("fill: value must be a scalar, got shape " +
                               value.shape().to_list_string());
  }
  return broadcast_to_tensor(value, dims, site);
}

}  // namespace ag::detail
