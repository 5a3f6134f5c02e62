// reverse (tf.reverse): the tensor with the order of its elements along each
// of `axis` reversed; its own gradient. Attrs: ints = the axes, as given
// (negative ones count from the end).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "ops/dispatch.h"
#include "ops/kernels.h"
#include "ops/select_helpers.h"

namespace ag::ops {
namespace {

// Which dims of `shape` the axes reverse; an error for an axis out of range
// or given twice (TensorFlow rejects both).
std::vector<bool> reverse_flags(std::string_view op, const std::vector<int64_t>& axes,
                                const Shape& shape) {
  std::vector<bool> flipped(size_t(shape.rank()), false);
  for (int64_t axis : axes) {
    const int d = select::normalize_axis(op, axis, shape);
    if (flipped[size_t(d)]) {
      select::fail(op, "axis " + std::to_string(axis) + " (dim " + std::to_string(d) +
                           ") is given twice; give each axis once");
    }
    flipped[size_t(d)] = true;
  }
  return flipped;
}

// A row of the output's last dim at a time: the source row's offset has each
// reversed leading index i as n - 1 - i; the row is copied, or read backwards
// when the last dim is reversed.
template <class E>
void reverse_rows(const E* in, E* out, const Shape& shape, const std::vector<bool>& flipped) {
  const int rank = shape.rank();
  if (rank == 0) {
    *out = *in;
    return;
  }
  const std::vector<int64_t> strides = select::strides_of(shape);
  const int64_t row = shape[rank - 1];
  const int64_t rows = select::dims_product(shape, 0, rank - 1);
  const bool flip_row = flipped[size_t(rank - 1)];
  std::vector<int64_t> at(size_t(rank), 0);  // the odometer over the leading dims
  for (int64_t r = 0; r < rows; ++r, out += row) {
    int64_t source = 0;
    for (int d = 0; d + 1 < rank; ++d) {
      const int64_t i = at[size_t(d)];
      source += (flipped[size_t(d)] ? shape[d] - 1 - i : i) * strides[size_t(d)];
    }
    if (flip_row) {
      std::reverse_copy(in + source, in + source + row, out);
    } else {
      std::memcpy(out, in + source, size_t(row) * sizeof(E));
    }
    for (int d = rank - 2; d >= 0; --d) {
      if (++at[size_t(d)] < shape[d]) break;
      at[size_t(d)] = 0;
    }
  }
}

Attrs reverse_attrs(std::vector<int64_t> axes) {
  Attrs attrs;
  attrs.ints = std::move(axes);
  return attrs;
}

}  // namespace

ValueType infer_reverse(const InferContext& ctx) {
  const ValueType& x = ctx.inputs[0];
  select::require_known_rank(ctx.op_name, x.shape, "tensor");
  reverse_flags(ctx.op_name, ctx.attrs.ints, x.shape);
  return x;
}

void kernel_reverse(const KernelContext& ctx) {
  const Shape& shape = *ctx.inputs[0].shape;
  if (shape.num_elements() == 0) return;
  const std::vector<bool> flipped = reverse_flags(ctx.op_name, ctx.attrs->ints, shape);
  select::visit_element_bits(ctx.out_dtype, [&](auto e) {
    using E = decltype(e);
    reverse_rows(static_cast<const E*>(ctx.inputs[0].data), static_cast<E*>(ctx.out), shape,
                 flipped);
  });
}

// Reversing is its own inverse.
std::vector<Tensor> grad_reverse(const GradContext& c) {
  return {ops::apply(OpId::Reverse, {c.grad}, c.attrs, c.site)};
}

}  // namespace ag::ops

namespace ag::api {

Tensor reverse(const Tensor& tensor, std::vector<int64_t> axis, CallSite site) {
  return ops::apply(ops::OpId::Reverse, {tensor}, ops::reverse_attrs(std::move(axis)), site);
}

}  // namespace ag::api
