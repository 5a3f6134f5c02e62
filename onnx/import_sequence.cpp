// Importers of ONNX's sequence ops. A sequence is held as our TensorArray
// holds its elements: one tensor [n, element...] of the rows stacked, so every
// element must have one shape (a sequence of tensors of different shapes is
// an UnimplementedError). What ag::onnx::save writes of a TensorArray
// (SplitToSequence, SequenceErase + SequenceInsert, SequenceAt,
// SequenceLength, ConcatFromSequence with new_axis=1) loads back as the
// gathers, concats and transposes of the stacked tensor, and its writes
// (SequenceErase and SequenceInsert at one position) as tensor_array_write.
//
// Positions count from the end when negative, as in ONNX. SequenceEmpty has
// no element shape: it is an empty [0] tensor that the first SequenceInsert
// gives the element's shape.
#include <algorithm>
#include <numeric>

#include "ag/ops.h"
#include "ag/tensor_array.h"
#include "import_ops.h"
#include "tensor_proto.h"

namespace ag::onnx_io {

namespace {

// The number of elements, an int64 scalar (a constant when it is known while tracing).
Tensor length(const Tensor& seq) {
  return gather(shape(seq, DType::int64), Tensor(int64_t{0}));
}

// A position in [-n, n] (or [-n, n) to read) as a non-negative int64 scalar.
Tensor position(NodeContext& ctx, size_t k, const Tensor& seq) {
  const Tensor& p = ctx.input(k);
  if (p.rank() != 0) ctx.invalid("the position must be a scalar, got " + p.spec().to_string());
  Tensor p64 = cast(p, DType::int64);
  return where(less(p64, int64_t{0}), p64 + length(seq), p64);
}

// `seq` as a stack of tensors like `element`: an empty sequence of
// SequenceEmpty takes the element's shape.
Tensor rows_for(NodeContext& ctx, const Tensor& seq, const Tensor& element) {
  if (element.shape().has_unknown_rank() || seq.shape().has_unknown_rank())
    ctx.unsupported("sequences of tensors of unknown rank");
  if (seq.rank() == 1 && seq.shape()[0] == 0 && element.rank() != 0) {
    std::vector<int64_t> begin(size_t(element.rank()) + 1, 0), size(begin.size(), -1);
    size[0] = 0;
    return slice(expand_dims(element, 0), begin, size);
  }
  bool same = seq.rank() == element.rank() + 1 && seq.dtype() == element.dtype();
  for (int d = 0; same && d < element.rank(); ++d) {
    const int64_t a = seq.shape()[d + 1], b = element.shape()[d];
    same = a == kUnknownDim || b == kUnknownDim || a == b;
  }
  if (!same) {
    ctx.unsupported("a sequence of elements of different shapes or dtypes (" +
                    element.spec().to_string() + " into a sequence of stacked " +
                    seq.spec().to_string() +
                    "); ag::onnx::load holds a sequence as one stacked tensor");
  }
  return seq;
}

}  // namespace

std::vector<Tensor> import_sequence_empty(NodeContext& ctx) {
  const DType dtype =
      dtype_from_onnx(int32_t(ctx.attr_int("dtype", ::onnx::TensorProto::FLOAT)), ctx.where());
  return {zeros(Shape{0}, dtype)};
}

std::vector<Tensor> import_sequence_construct(NodeContext& ctx) {
  std::vector<Tensor> rows;
  for (const Tensor& x : ctx.inputs()) rows.push_back(expand_dims(x, 0));
  for (const Tensor& x : ctx.inputs()) rows_for(ctx, rows[0], x);
  return {concat(rows, 0)};
}

std::vector<Tensor> import_sequence_insert(NodeContext& ctx) {
  const Tensor& element = ctx.input(1);
  // SequenceErase at p, then SequenceInsert at p: how ag::onnx::save writes
  // a TensorArray. One tensor_array_write of the erased sequence, in place
  // as the original's, instead of two gathers (the erase's is left unused).
  const ::onnx::NodeProto* erase = ctx.producer(0);
  if (ctx.has_input(2) && erase && erase->op_type() == "SequenceErase" &&
      erase->input_size() == 2 && erase->input(1) == ctx.node().input(2)) {
    const Tensor* rows = ctx.scope().find(erase->input(0));
    if (rows && rows->dtype() == element.dtype() && rows->rank() == element.rank() + 1) {
      TensorArray array(rows->dtype());
      array.unstack(*rows);
      array.write(position(ctx, 2, *rows), element);
      return {array.stack()};
    }
  }
  const Tensor seq = rows_for(ctx, ctx.input(0), element);
  const Tensor appended = concat({seq, expand_dims(element, 0)}, 0);
  if (!ctx.has_input(2)) return {appended};
  // Row r of the result: seq[r] before p, the element at p, seq[r - 1] after.
  const Tensor p = position(ctx, 2, seq);
  const Tensor n = length(seq);
  const Tensor r = range(Tensor(int64_t{0}), n + int64_t{1}, Tensor(int64_t{1}));
  const Tensor rows = where(less(r, p), r, where(equal(r, p), n, r - int64_t{1}));
  return {gather(appended, rows, 0)};
}

std::vector<Tensor> import_sequence_erase(NodeContext& ctx) {
  const Tensor& seq = ctx.input(0);
  const Tensor n = length(seq);
  const Tensor p = ctx.has_input(1) ? position(ctx, 1, seq) : n - int64_t{1};
  // Row r of the result: seq[r] before p, seq[r + 1] from p on.
  const Tensor r = range(Tensor(int64_t{0}), n - int64_t{1}, Tensor(int64_t{1}));
  return {gather(seq, r + cast(greater_equal(r, p), DType::int64), 0)};
}

std::vector<Tensor> import_sequence_at(NodeContext& ctx) {
  const Tensor& seq = ctx.input(0);
  return {gather(seq, position(ctx, 1, seq), 0)};
}

std::vector<Tensor> import_sequence_length(NodeContext& ctx) {
  return {length(ctx.input(0))};
}

// The slices of one axis as elements: without `split`, each index of the
// axis (kept as a dim of 1 with keepdims); with it, parts of one length.
std::vector<Tensor> import_split_to_sequence(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.shape().has_unknown_rank()) ctx.unsupported("an input of unknown rank");
  const int64_t rank = x.rank();
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), rank, "axis");
  // The axis first: perm = [axis, 0, .., axis - 1, axis + 1, ..].
  std::vector<int64_t> perm{axis};
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  if (!ctx.has_input(1)) {
    Tensor rows = axis == 0 ? x : transpose(x, perm);
    return {ctx.attr_int("keepdims", 1) ? expand_dims(rows, axis + 1) : rows};
  }
  const Shape& shape = x.shape();
  std::vector<int64_t> parts = ctx.constant_ints(1, "split");
  if (ctx.input(1).rank() == 0) {
    // Parts of one length, the last one shorter: the axis's length decides how many.
    const int64_t dim = ctx.static_shape(0, "SplitToSequence with a scalar 'split'")[int(axis)];
    const int64_t part = parts.at(0);
    if (part <= 0) ctx.invalid("split must be positive, got " + std::to_string(part));
    parts.assign(size_t((dim + part - 1) / part), part);
    if (!parts.empty()) parts.back() = dim - part * int64_t(parts.size() - 1);
  }
  const int64_t dim = std::accumulate(parts.begin(), parts.end(), int64_t{0});
  if (shape[int(axis)] != kUnknownDim && shape[int(axis)] != dim)
    ctx.invalid("the parts do not add up to the axis length " + std::to_string(shape[int(axis)]));
  for (int64_t part : parts) {
    if (part != parts[0]) {
      ctx.unsupported(
          "parts of different lengths make elements of different shapes; "
          "ag::onnx::load holds a sequence as one stacked tensor");
    }
  }
  // [.., k, part, ..], then the k parts first; one other dim may be unknown (-1).
  std::vector<int64_t> split_shape(shape.begin(), shape.end());
  split_shape[size_t(axis)] = parts.empty() ? 0 : parts[0];
  split_shape.insert(split_shape.begin() + axis, int64_t(parts.size()));
  if (std::count(split_shape.begin(), split_shape.end(), kUnknownDim) > 1)
    ctx.unsupported("an input of shape " + shape.to_string() +
                    ": splitting it needs all but one dim known when the model is loaded");
  std::vector<int64_t> k_first{axis};
  for (int64_t d = 0; d <= rank; ++d)
    if (d != axis) k_first.push_back(d);
  return {transpose(reshape(x, split_shape), k_first)};
}

// With new_axis, the elements stacked along `axis`; without, concatenated
// along it.
std::vector<Tensor> import_concat_from_sequence(NodeContext& ctx) {
  const Tensor& seq = ctx.input(0);
  if (seq.shape().has_unknown_rank() || seq.rank() < 1)
    ctx.unsupported("a sequence of unknown rank");
  const int64_t rank = seq.rank() - 1;  // of an element
  const bool new_axis = ctx.attr_int("new_axis", 0) != 0;
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis"), new_axis ? rank + 1 : rank, "axis");
  if (new_axis && axis == 0) return {identity(seq)};
  // The elements' axis 0 moved to just before `axis` of an element.
  std::vector<int64_t> perm;
  for (int64_t d = 1; d <= axis; ++d) perm.push_back(d);
  perm.push_back(0);
  for (int64_t d = axis + 1; d <= rank; ++d) perm.push_back(d);
  const Tensor moved = transpose(seq, perm);
  if (new_axis) return {moved};
  // Merge the sequence's axis with the element's `axis`.
  std::vector<int64_t> merged;
  for (int64_t d = 1; d <= rank; ++d) {
    const int64_t size = seq.shape()[int(d)];
    if (size == kUnknownDim)
      ctx.unsupported("elements of shape " + seq.shape().to_string() + " without the first dim; " +
                      "concatenating them needs their dims known when the model is loaded");
    merged.push_back(d == axis + 1 ? -1 : size);
  }
  return {reshape(moved, merged)};
}

}  // namespace ag::onnx_io
