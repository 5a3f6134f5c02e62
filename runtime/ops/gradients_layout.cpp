// The gradients of matmul, the data-movement ops of ops.def (gather's is an
// unsorted_segment_sum, and the reverse) and the TensorArray write.
#include <algorithm>
#include <numeric>
#include <optional>

#include "ops/dispatch.h"
#include "ops/gradient_helpers.h"
#include "ops/kernels.h"

namespace ag::ops {

using namespace ag::api;
using Grads = std::vector<Tensor>;

namespace {

int64_t normalized(int64_t axis, int rank) {
  return axis < 0 ? axis + rank : axis;
}

// A shape with at most one dim unknown while tracing as reshape's attrs
// (that dim -1); none for more.
std::optional<std::vector<int64_t>> reshape_target(const Shape& shape) {
  std::vector<int64_t> dims(shape.begin(), shape.end());
  if (std::count(dims.begin(), dims.end(), kUnknownDim) > 1) return std::nullopt;
  return dims;  // kUnknownDim is -1, reshape's inferred dim
}

}  // namespace

namespace {

// Whether b is one matrix for every batch entry of a batched a: then
// dB = A^T dC is one product over a's rows stacked, not one per entry summed.
bool matmul_b_is_shared(const GradContext& c, bool trans_a) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1];
  return !trans_a && b.rank() == 2 && a.rank() > 2 && a.shape()[a.rank() - 1] != kUnknownDim &&
         c.grad.shape()[c.grad.rank() - 1] != kUnknownDim;
}

Tensor matmul_grad_of_shared_b(const GradContext& c, bool trans_b) {
  const Tensor& a = c.inputs[0];
  const Tensor rows = reshape(a, {-1, a.shape()[a.rank() - 1]}, c.site);
  const Tensor grad_rows = reshape(c.grad, {-1, c.grad.shape()[c.grad.rank() - 1]}, c.site);
  return trans_b ? matmul(grad_rows, rows, true, false, c.site)
                 : matmul(rows, grad_rows, true, false, c.site);
}

}  // namespace

// C = op(A) op(B), op a transpose where attrs say so. For C = A B: dA = dC B^T,
// dB = A^T dC; the other three follow by transposing both sides. Each is
// summed over the batch dims its operand was broadcast along.
Grads grad_matmul(const GradContext& c) {
  const Tensor &a = c.inputs[0], &b = c.inputs[1], &g = c.grad;
  const bool ta = !c.attrs.ints.empty() && c.attrs.ints[0] != 0;
  const bool tb = !c.attrs.ints.empty() && c.attrs.ints[1] != 0;
  Grads grads(2);
  if (c.needs(0)) {
    const Tensor ga = ta ? matmul(b, g, tb, true, c.site) : matmul(g, b, false, !tb, c.site);
    grads[0] = unbroadcast(c, ga, 0);
  }
  if (c.needs(1)) {
    if (matmul_b_is_shared(c, ta)) {
      grads[1] = matmul_grad_of_shared_b(c, tb);
    } else {
      const Tensor gb = tb ? matmul(g, a, true, ta, c.site) : matmul(a, g, !ta, false, c.site);
      grads[1] = unbroadcast(c, gb, 1);
    }
  }
  return grads;
}

Grads grad_transpose(const GradContext& c) {
  const std::vector<int64_t>& perm = c.attrs.ints;
  if (perm.empty()) return {transpose(c.grad, {}, c.site)};
  // Entries count from the end when negative, as transpose's shape rule reads them.
  const auto rank = int64_t(perm.size());
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    inverse[size_t(perm[i] < 0 ? perm[i] + rank : perm[i])] = int64_t(i);
  }
  return {transpose(c.grad, inverse, c.site)};
}

// A reshape back to x's shape; read when the graph runs where more than one
// of its dims is unknown while tracing.
Grads grad_reshape(const GradContext& c) {
  const Tensor& x = c.inputs[0];
  if (auto dims = reshape_target(x.shape())) return {reshape(c.grad, std::move(*dims), c.site)};
  return {reshape(c.grad, shape(x, DType::int64, c.site), c.site)};
}

// Summed over the dims x was repeated along.
Grads grad_broadcast_to(const GradContext& c) {
  return {unbroadcast(c, c.grad, 0)};
}

Grads grad_expand_dims(const GradContext& c) {
  return {squeeze(c.grad, {normalized(c.attrs.axis, c.output.rank())}, c.site)};
}

// Puts back the size-1 axes squeeze removed, in ascending order.
Grads grad_squeeze(const GradContext& c) {
  const Shape& in = c.inputs[0].shape();
  std::vector<int64_t> removed;
  if (c.attrs.ints.empty()) {
    for (int d = 0; d < in.rank(); ++d)
      if (in[d] == 1) removed.push_back(d);
  } else {
    Attrs axes;
    axes.ints = c.attrs.ints;
    removed = reduced_axes(in.rank(), axes);
  }
  Tensor g = c.grad;
  for (int64_t axis : removed) g = expand_dims(g, axis, c.site);
  return {g};
}

Grads grad_concat(const GradContext& c) {
  int rank = c.output.rank();
  int64_t axis = normalized(c.attrs.axis, rank);
  Grads grads;
  int64_t offset = 0;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Tensor& x = c.inputs[i];
    int64_t length = x.shape()[int(axis)];
    if (length == kUnknownDim) {
      throw_gradient_error(c, "needs each input's size along the axis known while tracing, got " +
                                  x.shape().to_string());
    }
    std::vector<int64_t> begin(size_t(rank), 0), size(size_t(rank), -1);
    begin[size_t(axis)] = offset;
    size[size_t(axis)] = length;
    grads.push_back(c.needs(i) ? slice(c.grad, begin, size, c.site) : Tensor());
    offset += length;
  }
  return grads;
}

Grads grad_stack(const GradContext& c) {
  int64_t axis = normalized(c.attrs.axis, c.output.rank());
  Grads grads;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    grads.push_back(c.needs(i) ? gather(c.grad, Tensor(int64_t(i)), axis, c.site) : Tensor());
  return grads;
}

namespace {

// The length of `t`'s axis, as an int64 scalar: a constant when known while
// tracing, else read when the graph runs.
Tensor length_of(const Tensor& t, int axis, CallSite site) {
  if (t.shape()[axis] != kUnknownDim) return Tensor(int64_t{t.shape()[axis]});
  Attrs attrs;
  attrs.axis = axis;
  return ops::apply(OpId::Dim, {t}, attrs, site);
}

}  // namespace

// TensorFlow's rule: the gradient's slices summed into zeros of params'
// shape at their indices, by unsorted_segment_sum, with the gathered axis
// moved to the front and back. Memory is params' size, whatever the indices.
// The axis's length is read when the graph runs if tracing does not know it
// (a dynamic-size TensorArray's rows): a loop's gradient then saves that
// scalar per iteration, not the array.
Grads grad_gather(const GradContext& c) {
  const Tensor &params = c.inputs[0], &indices = c.inputs[1];
  const Shape& p = params.shape();
  const int axis = int(normalized(c.attrs.axis, p.rank()));
  const int r = indices.rank();
  // The gradient with the index dims first: indices' shape, then params' other dims.
  std::vector<int64_t> perm;
  for (int d = axis; d < axis + r; ++d) perm.push_back(d);
  for (int d = 0; d < axis; ++d) perm.push_back(d);
  for (int d = axis + r; d < c.grad.rank(); ++d) perm.push_back(d);
  Tensor g = axis == 0 ? c.grad : transpose(c.grad, perm, c.site);
  // [params' gathered axis, params' other dims]
  Tensor summed = unsorted_segment_sum(g, indices, length_of(params, axis, c.site), c.site);
  if (axis == 0) return {summed, Tensor()};
  std::vector<int64_t> back;
  for (int d = 1; d <= axis; ++d) back.push_back(d);
  back.push_back(0);
  for (int d = axis + 1; d < p.rank(); ++d) back.push_back(d);
  return {transpose(summed, back, c.site), Tensor()};
}

// Each row of data went to row segment_ids[i]: its gradient is read back from there.
Grads grad_unsorted_segment_sum(const GradContext& c) {
  return {gather(c.grad, c.inputs[1], 0, c.site), Tensor(), Tensor()};
}

// Zeros around the gradient, back to the input's shape: a pad by the rows
// before and after the slice on each axis. An axis whose length is unknown
// while tracing needs none after a slice to its end (size -1).
Grads grad_slice(const GradContext& c) {
  const Shape& in = c.inputs[0].shape();
  const int rank = in.rank();
  std::vector<std::pair<int64_t, int64_t>> paddings(static_cast<size_t>(rank));
  bool padded = false;
  for (int d = 0; d < rank; ++d) {
    const int64_t begin = c.attrs.ints[size_t(d)];
    const int64_t size = c.attrs.ints[size_t(rank + d)];
    if (size != -1 && in[d] == kUnknownDim) {
      throw_gradient_error(c,
                           "needs the input's shape known while tracing (or slices to the end "
                           "of its unknown dims), got " +
                               in.to_string());
    }
    const int64_t after = size == -1 ? 0 : in[d] - begin - size;
    paddings[size_t(d)] = {begin, after};
    padded = padded || begin > 0 || after > 0;
  }
  if (!padded) return {c.grad};
  return {pad(c.grad, paddings, "CONSTANT", 0, c.site)};
}

namespace {

// The length of `t`'s first axis, as an int64 scalar.
Tensor rows_of(const Tensor& t, CallSite site) {
  if (t.shape()[0] != kUnknownDim) return Tensor(int64_t{t.shape()[0]});
  Attrs attrs;
  attrs.axis = 0;
  return ops::apply(OpId::Dim, {t}, attrs, site);
}

}  // namespace

// The written row's gradient goes to the value; the array's rows keep the
// rest (the row written over gets none: a write of zeros there, in place in
// a loop, rather than a mask over every row), cut back to the rows it had
// before a write that grew it. Rows along another axis (attrs.axis) are
// read and cleared along it.
Grads grad_tensor_array_write(const GradContext& c) {
  const Tensor &buffer = c.inputs[0], &index = c.inputs[1];
  Tensor row = cast(index, DType::int64, c.site);
  Tensor row_grad = gather(c.grad, row, c.attrs.axis, c.site);
  Grads grads(3);
  if (c.needs(2)) grads[2] = row_grad;
  if (!c.needs(0)) return grads;
  Attrs along;
  along.axis = c.attrs.axis;
  Tensor g = ops::apply(OpId::TensorArrayWrite, {c.grad, row, zeros_like(row_grad, c.site)}, along,
                        c.site);
  int64_t before = buffer.shape()[0], after = c.output.shape()[0];
  if (before == kUnknownDim || before != after)
    g = gather(g, range(rows_of(buffer, c.site), c.site), 0, c.site);
  grads[0] = g;
  return grads;
}

}  // namespace ag::ops
