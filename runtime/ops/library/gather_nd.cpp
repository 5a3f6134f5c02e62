// gather_nd (tf.gather_nd) and its transposes tensor_scatter_nd_update and
// tensor_scatter_nd_add (tf.tensor_scatter_nd_update, _add; scatter_nd adds
// into zeros). The last dim of `indices` (int32 or int64) holds k
// coordinates into the dims of the indexed tensor after its first
// batch_dims, which indices shares; each index tuple selects the slice of
// the dims after those k. Gathered or scattered slices therefore have shape
// indices.shape[:-1] + tensor.shape[batch_dims + k:]. An index out of range
// is an InvalidArgumentError naming it, before anything is written.
// Attrs: axis = batch_dims (the scatters have them only as gather_nd's
// gradient).
#include <cstring>
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

// The shape checks of gather_nd and the scatters: `indexed` (params or
// tensor) indexed by `indices` past `batch_dims`. Returns the shape of the
// slices: indices' dims but the last, then indexed's after the coordinates.
Shape nd_slices_shape(std::string_view op, const ValueType& indexed, const ValueType& indices,
                      int64_t batch_dims) {
  const Shape& s = indexed.shape;
  const Shape& ix = indices.shape;
  const char* what = op == "gather_nd" ? "params" : "tensor";
  select::require_known_rank(op, s, what);
  select::require_known_rank(op, ix, "indices");
  if (!is_integer(indices.dtype))
    select::fail(op,
                 "indices must be int32 or int64, got " + std::string(dtype_name(indices.dtype)));
  if (ix.rank() < 1) select::fail(op, "indices must have rank 1 or more, got a scalar");
  const int64_t depth = ix[ix.rank() - 1];
  if (depth == kUnknownDim)
    select::fail(op, "the last dim of indices (shape " + ix.to_list_string() +
                         ") must be known while tracing: it is the number of coordinates");
  if (batch_dims < 0 || batch_dims >= ix.rank()) {
    select::fail(op, "batch_dims = " + std::to_string(batch_dims) +
                         " must be in [0, rank of indices = " + std::to_string(ix.rank()) + ")");
  }
  if (batch_dims + depth > s.rank()) {
    select::fail(op, "indices of shape " + ix.to_list_string() + " hold " + std::to_string(depth) +
                         " coordinates, more than the " + std::to_string(s.rank() - batch_dims) +
                         " dims of " + what + " (shape " + s.to_list_string() +
                         ") after batch_dims = " + std::to_string(batch_dims));
  }
  Shape out;
  for (int d = 0; d + 1 < ix.rank(); ++d) {
    const bool batch = d < batch_dims;
    if (batch && ix[d] != kUnknownDim && s[d] != kUnknownDim && ix[d] != s[d]) {
      select::fail(op, "batch dim " + std::to_string(d) + " of indices (shape " +
                           ix.to_list_string() + ") is not that of " + what + " (shape " +
                           s.to_list_string() + ")");
    }
    out.push_back(batch && ix[d] == kUnknownDim ? s[d] : ix[d]);
  }
  for (int d = int(batch_dims + depth); d < s.rank(); ++d) out.push_back(s[d]);
  return out;
}

// Where each index tuple's slice starts in the indexed tensor, in elements,
// with the tuples checked first: [batch, tuple] flattened.
struct NdLayout {
  int64_t tuples = 0;  // index tuples in all
  int64_t slice = 1;   // elements per slice
  std::vector<int64_t> offsets;
};

template <class I>
void nd_offsets(const KernelContext& ctx, const Shape& indexed, int64_t batch_dims, NdLayout& l) {
  const Shape& ix = *ctx.inputs[1].shape;
  const I* indices = static_cast<const I*>(ctx.inputs[1].data);
  const int depth = int(ix[ix.rank() - 1]);
  const int b = int(batch_dims);
  for (int d = 0; d < b; ++d) {
    if (ix[d] != indexed[d]) {
      select::fail(ctx.op_name, "batch dim " + std::to_string(d) + " of indices (shape " +
                                    ix.to_list_string() + ") is not that of shape " +
                                    indexed.to_list_string());
    }
  }
  const std::vector<int64_t> strides = select::strides_of(indexed);
  const int64_t per_batch = select::dims_product(ix, b, ix.rank() - 1);
  const int64_t batch_size = b == 0 ? 0 : strides[size_t(b - 1)];
  l.tuples = select::dims_product(ix, 0, ix.rank() - 1);
  l.slice = select::dims_product(indexed, b + depth, indexed.rank());
  l.offsets.resize(size_t(l.tuples));
  for (int64_t t = 0; t < l.tuples; ++t) {
    int64_t offset = per_batch == 0 ? 0 : (t / per_batch) * batch_size;
    for (int j = 0; j < depth; ++j) {
      const int64_t i = int64_t(indices[t * depth + j]);
      const int64_t n = indexed[b + j];
      if (i < 0 || i >= n) {
        Shape tuples_shape(ix.dims().first(size_t(ix.rank() - 1)));
        select::fail(ctx.op_name, "indices" + select::position_of(tuples_shape, t) + "[" +
                                      std::to_string(j) + "] = " + std::to_string(i) +
                                      " is not in [0, " + std::to_string(n) +
                                      "), the range of dim " + std::to_string(b + j) +
                                      " of shape " + indexed.to_list_string());
      }
      offset += i * strides[size_t(b + j)];
    }
    l.offsets[size_t(t)] = offset;
  }
}

NdLayout nd_layout(const KernelContext& ctx, const Shape& indexed) {
  NdLayout l;
  if (ctx.inputs[1].dtype == DType::int32) {
    nd_offsets<int32_t>(ctx, indexed, ctx.attrs->axis, l);
  } else {
    nd_offsets<int64_t>(ctx, indexed, ctx.attrs->axis, l);
  }
  return l;
}

// out = tensor, then each update slice written over (add: added to) its
// slice of out, in order.
template <bool kAdd>
void scatter_slices(const KernelContext& ctx) {
  const NdLayout l = nd_layout(ctx, *ctx.inputs[0].shape);
  const size_t bytes = size_t(ctx.out_shape->num_elements()) * dtype_size(ctx.out_dtype);
  if (bytes > 0) std::memcpy(ctx.out, ctx.inputs[0].data, bytes);
  visit_dtype(ctx.out_dtype, [&](auto v) {
    using T = decltype(v);
    const T* updates = static_cast<const T*>(ctx.inputs[2].data);
    T* out = static_cast<T*>(ctx.out);
    for (int64_t t = 0; t < l.tuples; ++t) {
      T* to = out + l.offsets[size_t(t)];
      const T* from = updates + t * l.slice;
      if constexpr (!kAdd) {
        std::memcpy(to, from, size_t(l.slice) * sizeof(T));
      } else if constexpr (scalar::AddOp::supports<T>) {
        for (int64_t j = 0; j < l.slice; ++j) to[j] = scalar::AddOp{}(to[j], from[j]);
      } else {
        throw InternalError(std::string(ctx.op_name) + ": kernel called with an unsupported dtype");
      }
    }
  });
}

ValueType infer_scatter_nd(const InferContext& ctx, bool add) {
  const ValueType& tensor = ctx.inputs[0];
  const ValueType& updates = ctx.inputs[2];
  if (add && tensor.dtype == DType::bool_)
    select::fail(ctx.op_name, "unsupported dtype bool: bools do not add");
  if (updates.dtype != tensor.dtype) {
    select::fail(ctx.op_name, "updates have dtype " + std::string(dtype_name(updates.dtype)) +
                                  ", tensor " + std::string(dtype_name(tensor.dtype)) +
                                  "; cast one to the other");
  }
  const Shape want = nd_slices_shape(ctx.op_name, tensor, ctx.inputs[1], ctx.attrs.axis);
  select::require_known_rank(ctx.op_name, updates.shape, "updates");
  if (!updates.shape.is_compatible_with(want)) {
    select::fail(ctx.op_name, "updates have shape " + updates.shape.to_list_string() +
                                  "; indices of shape " + ctx.inputs[1].shape.to_list_string() +
                                  " into a tensor of shape " + tensor.shape.to_list_string() +
                                  " take updates of shape " + want.to_list_string());
  }
  return tensor;
}

Attrs batch_dims_attrs(int64_t batch_dims) {
  Attrs attrs;
  attrs.axis = batch_dims;
  return attrs;
}

}  // namespace

ValueType infer_gather_nd(const InferContext& ctx) {
  const ValueType& params = ctx.inputs[0];
  return {params.dtype, nd_slices_shape(ctx.op_name, params, ctx.inputs[1], ctx.attrs.axis)};
}

void kernel_gather_nd(const KernelContext& ctx) {
  const NdLayout l = nd_layout(ctx, *ctx.inputs[0].shape);
  const size_t slice_bytes = size_t(l.slice) * dtype_size(ctx.out_dtype);
  const auto* params = static_cast<const unsigned char*>(ctx.inputs[0].data);
  auto* out = static_cast<unsigned char*>(ctx.out);
  for (int64_t t = 0; t < l.tuples && slice_bytes > 0; ++t) {
    std::memcpy(out + size_t(t) * slice_bytes,
                params + size_t(l.offsets[size_t(t)]) * dtype_size(ctx.out_dtype), slice_bytes);
  }
}

// The gathered slices' gradients added into zeros of params' shape.
std::vector<Tensor> grad_gather_nd(const GradContext& c) {
  const Tensor zeros = api::zeros_like(c.inputs[0], c.site);
  return {ops::apply(OpId::TensorScatterNdAdd, {zeros, c.inputs[1], c.grad}, c.attrs, c.site),
          Tensor()};
}

ValueType infer_tensor_scatter_nd_update(const InferContext& ctx) {
  return infer_scatter_nd(ctx, false);
}

void kernel_tensor_scatter_nd_update(const KernelContext& ctx) {
  scatter_slices<false>(ctx);
}

// The tensor's gradient where no update overwrote it; the updates' at their
// slices.
std::vector<Tensor> grad_tensor_scatter_nd_update(const GradContext& c) {
  Tensor tensor_grad, updates_grad;
  if (c.needs(0)) {
    const Tensor zeros = api::zeros_like(c.inputs[2], c.site);
    tensor_grad =
        ops::apply(OpId::TensorScatterNdUpdate, {c.grad, c.inputs[1], zeros}, c.attrs, c.site);
  }
  if (c.needs(2)) updates_grad = ops::apply(OpId::GatherNd, {c.grad, c.inputs[1]}, c.attrs, c.site);
  return {tensor_grad, Tensor(), updates_grad};
}

ValueType infer_tensor_scatter_nd_add(const InferContext& ctx) {
  return infer_scatter_nd(ctx, true);
}

void kernel_tensor_scatter_nd_add(const KernelContext& ctx) {
  scatter_slices<true>(ctx);
}

std::vector<Tensor> grad_tensor_scatter_nd_add(const GradContext& c) {
  Tensor updates_grad;
  if (c.needs(2)) updates_grad = ops::apply(OpId::GatherNd, {c.grad, c.inputs[1]}, c.attrs, c.site);
  return {c.grad, Tensor(), updates_grad};
}

}  // namespace ag::ops

namespace ag::api {

Tensor gather_nd(const Tensor& params, const Tensor& indices, int64_t batch_dims, CallSite site) {
  return ops::apply(ops::OpId::GatherNd, {params, indices}, ops::batch_dims_attrs(batch_dims),
                    site);
}

Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                                CallSite site) {
  return ops::apply(ops::OpId::TensorScatterNdUpdate, {tensor, indices, updates}, {}, site);
}

Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             CallSite site) {
  return ops::apply(ops::OpId::TensorScatterNdAdd, {tensor, indices, updates}, {}, site);
}

Tensor scatter_nd(const Tensor& indices, const Tensor& updates, std::vector<int64_t> shape,
                  CallSite site) {
  for (int64_t d : shape) {
    if (d < 0) {
      throw InvalidArgumentError("scatter_nd: shape " +
                                 Shape(std::span<const int64_t>(shape)).to_list_string() +
                                 " has a negative dim");
    }
  }
  const Tensor zeros = ops::zeros_op(Shape(std::span<const int64_t>(shape)), updates.dtype(), site);
  return tensor_scatter_nd_add(zeros, indices, updates, site);
}

}  // namespace ag::api
