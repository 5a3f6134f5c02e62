// Importers of ONNX's shape, layout, creation and linear-algebra ops.
// Axes given as inputs must be known when the model is loaded
// (NodeContext::constant_ints), as they are in exported models; Shape and
// Size of a tensor with static dims are constants. The shapes of Reshape,
// Expand, Tile and ConstantOfShape and Slice's bounds may be computed when
// the model runs (Shape -> Gather -> Concat of a dynamic batch): our ops by
// a shape tensor (ag/ops.h) read them then.
#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "ag/control_flow.h"
#include "ag/ops.h"
#include "ag/tensor_array.h"
#include "import_ops.h"
#include "ops/dispatch.h"
#include "ops/dynamic_shape.h"
#include "ops/kernels.h"
#include "tensor_proto.h"

namespace ag::onnx_io {

namespace {

Tensor int64_vector(const std::vector<int64_t>& values) {
  return constant(values, Shape{int64_t(values.size())});
}

// `x` broadcast to `shape` and `shape` to x's (ONNX's Expand broadcasts both
// ways). Where x's shape is unknown while tracing, so is the result's: where()
// with an all-true condition of `shape` broadcasts its operands and picks x
// everywhere, bit for bit.
Tensor expand(const Tensor& x, const Shape& shape) {
  if (!x.shape().is_fully_defined()) return where(ones(shape, bool_), x, x);
  const Shape both = ops::broadcast_shapes(x.shape(), shape);
  return broadcast_to(x, {both.begin(), both.end()});
}

Shape shape_of(const std::vector<int64_t>& dims) {
  return Shape(std::span<const int64_t>(dims));
}

// The axes of input `k` (from opset 13) or of attribute 'axes' (before).
std::vector<int64_t> axes_of(NodeContext& ctx, size_t k) {
  if (ctx.has_input(k)) return ctx.constant_ints(k, "axes");
  if (ctx.has_attr("axes")) return ctx.attr_ints("axes");
  return {};
}

// ONNX counts negative indices from the end of the axis (Gather, ScatterND).
// The axis's length is a constant when it is known while tracing.
Tensor from_end(const Tensor& indices, const Tensor& data, int64_t axis) {
  Tensor length = gather(shape(data, indices.dtype()), Tensor(axis));
  return where(less(indices, 0), indices + length, indices);
}

}  // namespace

namespace {

// The entries of input k, a shape computed when the model runs, that are
// known while tracing (ops::kUnknownEntry for the others): where a Concat
// builds it, those of its parts that are constants ([N] of a dynamic batch,
// then [2, 2]).
std::vector<int64_t> known_entries(NodeContext& ctx, size_t k) {
  const Tensor& shape = ctx.input(k);
  const int64_t length = shape.rank() == 1 ? shape.shape()[0] : 0;
  std::vector<int64_t> known;
  const ::onnx::NodeProto* concat = ctx.producer(k);
  if (concat && concat->op_type() == "Concat") {
    for (const std::string& name : concat->input()) {
      const Tensor* part = ctx.scope().find(name);
      if (!part || part->rank() != 1 || part->shape()[0] == kUnknownDim) break;
      if (part->is_symbolic())
        known.insert(known.end(), size_t(part->shape()[0]), ops::kUnknownEntry);
      else
        for (int64_t v : part->to_vector<int64_t>()) known.push_back(v);
    }
  }
  if (int64_t(known.size()) != length)
    known.assign(size_t(std::max<int64_t>(length, 0)), ops::kUnknownEntry);
  return known;
}

}  // namespace

std::vector<Tensor> import_constant(NodeContext& ctx) {
  if (ctx.has_attr("value")) return {tensor_from_proto(ctx.attr_tensor("value"), ctx.where())};
  if (ctx.has_attr("value_float"))
    return {constant(std::vector<float>{ctx.attr_float("value_float", 0)}, Shape{})};
  if (ctx.has_attr("value_floats")) {
    std::vector<float> v = ctx.attr_floats("value_floats");
    return {constant(v, Shape{int64_t(v.size())})};
  }
  if (ctx.has_attr("value_int"))
    return {constant(std::vector<int64_t>{ctx.attr_int("value_int")}, Shape{})};
  if (ctx.has_attr("value_ints")) return {int64_vector(ctx.attr_ints("value_ints"))};
  ctx.unsupported("only the value, value_float(s) and value_int(s) attributes are supported");
}

// The most elements a ConstantOfShape folds to a constant.
constexpr int64_t kFoldedElements = 64;

// Zeros (no value, or a value whose bits are all clear) load as the zeros
// op, as a trace makes them: a large array's zeros are not a constant of the
// loaded graph, and a plan that overwrites them never computes them.
std::vector<Tensor> import_constant_of_shape(NodeContext& ctx) {
  Tensor value = ctx.has_attr("value") ? tensor_from_proto(ctx.attr_tensor("value"),
                                                           ctx.where() + ": attribute 'value'")
                                       : zeros(Shape{1}, float32);
  if (value.num_elements() != 1) ctx.invalid("attribute 'value' must hold one element");
  // A shape computed when the model runs: the value broadcast to it then.
  if (ctx.computed_at_run_time(0)) {
    return {ops::broadcast_by(reshape(value, {}), cast(ctx.input(0), int64), known_entries(ctx, 0),
                              false, {})};
  }
  std::vector<int64_t> dims = ctx.constant_ints(0, "shape");
  if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d < 0; }))
    ctx.invalid("input 'shape' has a negative dim");
  const auto* bytes = static_cast<const unsigned char*>(value.raw_data());
  if (std::all_of(bytes, bytes + dtype_size(value.dtype()), [](unsigned char b) { return b == 0; }))
    return {ops::zeros_op(shape_of(dims), value.dtype())};
  // A few elements (a shape, as in Shape -> ConstantOfShape -> Concat ->
  // Reshape) are a constant, so what is computed from them is known while
  // the model is traced; broadcast_to is a node of the trace.
  if (shape_of(dims).num_elements() <= kFoldedElements)
    return {tile(reshape(value, std::vector<int64_t>(dims.size(), 1)), dims)};
  return {broadcast_to(reshape(value, {}), dims)};
}

std::vector<Tensor> import_expand(NodeContext& ctx) {
  if (ctx.computed_at_run_time(1)) {
    return {ops::broadcast_by(ctx.input(0), cast(ctx.input(1), int64), known_entries(ctx, 1), true,
                              {})};
  }
  return {expand(ctx.input(0), shape_of(ctx.constant_ints(1, "shape")))};
}

// Constants where the dims are static; otherwise our shape/size ops, which
// compute them when the graph runs.
std::vector<Tensor> import_shape(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  if (rank < 0) ctx.unsupported("the input's rank is unknown");
  auto clamp = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clamp(ctx.attr_int("start", 0));
  const int64_t end = clamp(ctx.attr_int("end", rank));
  // Static dims are a constant, so that what is computed from them (a
  // Reshape's shape, a Slice's bounds: Shape -> Gather -> Concat) is known
  // while the model is traced; unknown ones are read when it runs.
  const std::span<const int64_t> known = x.shape().dims();
  Tensor dims = x.shape().is_fully_defined()
                    ? constant(std::vector<int64_t>(known.begin(), known.end()), Shape{rank})
                    : shape(x, int64);
  if (start == 0 && end == rank) return {dims};
  return {slice(dims, {start}, {std::max<int64_t>(0, end - start)})};
}

std::vector<Tensor> import_size(NodeContext& ctx) {
  const Shape& s = ctx.input(0).shape();
  if (s.is_fully_defined()) return {Tensor(s.num_elements())};  // a constant, as Shape's
  return {size(ctx.input(0), int64)};
}

std::vector<Tensor> import_one_hot(NodeContext& ctx) {
  // depth may be of any numeric type.
  const Tensor& depth_tensor = ctx.input(1);
  if (depth_tensor.is_symbolic()) ctx.constant_ints(1, "depth");  // throws NeedsValue
  if (depth_tensor.num_elements() != 1) ctx.invalid("depth must have one element");
  const int64_t depth = int64_t(depth_tensor.to_vector<double>()[0]);
  const Tensor& values = ctx.input(2);
  if (values.is_symbolic()) ctx.constant_ints(2, "values");  // throws NeedsValue
  if (values.num_elements() != 2) ctx.invalid("values must be an [off_value, on_value] pair");
  // ONNX counts negative indices from the end; ours give a row of off values.
  Tensor indices = cast(ctx.input(0), int64);
  indices = where(less(indices, 0), indices + depth, indices);
  // The new axis counts in the output's rank: -1 is the last, -2 the one before.
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), indices.rank() + 1, "axis");
  auto scalar = [&](int64_t k) -> Scalar {
    if (is_floating(values.dtype())) return values.to_vector<double>()[size_t(k)];
    if (values.dtype() == bool_) return bool(values.to_vector<int64_t>()[size_t(k)]);
    return values.to_vector<int64_t>()[size_t(k)];
  };
  return {one_hot(indices, depth, scalar(1), scalar(0), axis, values.dtype())};
}

namespace {

// Reshape by a shape computed when the model runs; without allowzero, its
// 0s copy the input's dim at their position then.
Tensor reshape_at_run_time(NodeContext& ctx, bool allow_zero) {
  const Tensor& x = ctx.input(0);
  Tensor dims = cast(ctx.input(1), int64);
  if (dims.rank() != 1 || dims.shape()[0] == kUnknownDim)
    ctx.invalid("shape must be 1-D, of a length known when the model is loaded");
  const int64_t length = dims.shape()[0];
  std::vector<int64_t> known =
      ctx.computed_at_run_time(1) ? known_entries(ctx, 1) : ctx.constant_ints(1, "shape");
  if (allow_zero || length == 0) return ops::reshape_by(x, dims, known, {});
  // x's dims at each position of the shape (0 past x's rank, where a 0 is
  // then an error of the reshape).
  for (int64_t i = 0; i < length; ++i) {
    int64_t& k = known[size_t(i)];
    if (k == 0)
      k = i < x.rank() && x.shape()[int(i)] != kUnknownDim ? x.shape()[int(i)] : ops::kUnknownEntry;
  }
  Tensor copies = shape(x, int64);
  if (length > x.rank()) copies = concat({copies, zeros(Shape{length - x.rank()}, int64)}, 0);
  if (length < x.rank()) copies = slice(copies, {0}, {length});
  return ops::reshape_by(x, where(equal(dims, int64_t{0}), copies, dims), known, {});
}

}  // namespace

std::vector<Tensor> import_reshape(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool allow_zero = ctx.attr_int("allowzero", 0) != 0;
  if (ctx.computed_at_run_time(1)) return {reshape_at_run_time(ctx, allow_zero)};
  std::vector<int64_t> dims = ctx.constant_ints(1, "shape");
  bool has_inferred = std::count(dims.begin(), dims.end(), -1) > 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != 0 || allow_zero) continue;
    if (int(i) >= x.rank())
      ctx.invalid("shape[" + std::to_string(i) + "] = 0 copies a dim the input does not have");
    dims[i] = x.shape()[int(i)];
    if (dims[i] == kUnknownDim) {
      // Two dims unknown while tracing: the copies are read when the model runs.
      if (has_inferred) return {reshape_at_run_time(ctx, allow_zero)};
      dims[i] = -1;
      has_inferred = true;
    }
  }
  return {reshape(x, dims)};
}

std::vector<Tensor> import_flatten(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -rank || axis > rank)
    ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " +
                std::to_string(rank));
  if (axis < 0) axis += rank;
  auto product = [&](int64_t from, int64_t to) {
    int64_t n = 1;
    for (int64_t i = from; i < to; ++i) {
      if (x.shape()[int(i)] == kUnknownDim) return int64_t{-1};
      n *= x.shape()[int(i)];
    }
    return n;
  };
  int64_t outer = product(0, axis), inner = product(axis, rank);
  if (outer != -1 || inner != -1) return {reshape(x, {outer, inner})};
  // Both unknown while tracing: the products of x's dims when the model runs.
  const Tensor dims = shape(x, int64);
  return {reshape(x, concat({reduce_prod(slice(dims, {0}, {axis}), {0}, true),
                             reduce_prod(slice(dims, {axis}, {-1}), {0}, true)},
                            0))};
}

std::vector<Tensor> import_transpose(NodeContext& ctx) {
  return {transpose(ctx.input(0),
                    ctx.has_attr("perm") ? ctx.attr_ints("perm") : std::vector<int64_t>{})};
}

namespace {

// The tensor x of `node` when it is Shape(x, start = 0, end = 1): the
// length of x's first axis as a vector of one element; null otherwise.
const Tensor* first_dim_shape_of(const ::onnx::NodeProto* node, const Scope& scope) {
  if (!node || node->op_type() != "Shape") return nullptr;
  const Tensor* x = scope.find(node->input(0));
  if (!x || x->rank() < 1) return nullptr;
  int64_t start = 0, end = x->rank();
  for (const auto& attr : node->attribute()) {
    if (attr.name() == "start") start = attr.i() < 0 ? attr.i() + x->rank() : attr.i();
    if (attr.name() == "end") end = attr.i() < 0 ? attr.i() + x->rank() : attr.i();
  }
  return start == 0 && end == 1 ? x : nullptr;
}

}  // namespace

std::vector<Tensor> import_squeeze(NodeContext& ctx) {
  std::vector<int64_t> axes = axes_of(ctx, 1);
  for (int64_t& a : axes) a = ctx.normalize_axis(a, ctx.input(0).rank(), "axis");
  // How the exporter writes the length of a for loop (our dim(x, 0)): one
  // op again, as traced.
  if (const Tensor* x = first_dim_shape_of(ctx.producer(0), ctx.scope());
      x && axes == std::vector<int64_t>{0}) {
    return {detail::first_dim(*x)};
  }
  return {squeeze(ctx.input(0), axes)};
}

std::vector<Tensor> import_unsqueeze(NodeContext& ctx) {
  std::vector<int64_t> axes = axes_of(ctx, 1);
  const int64_t out_rank = ctx.input(0).rank() + int64_t(axes.size());
  for (int64_t& a : axes) a = ctx.normalize_axis(a, out_rank, "axis");
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    ctx.invalid("axes must not repeat");
  Tensor y = ctx.input(0);
  for (int64_t a : axes) y = expand_dims(y, a);
  return {y};
}

namespace {

// The tensor that `unsqueeze`, an Unsqueeze node, gave one axis at `axis` of
// its result; null for another node.
const Tensor* unsqueezed_at(const ::onnx::NodeProto* unsqueeze, const Scope& scope, int64_t axis) {
  if (!unsqueeze || unsqueeze->op_type() != "Unsqueeze") return nullptr;
  const Tensor* x = scope.find(unsqueeze->input(0));
  std::vector<int64_t> axes;
  if (unsqueeze->input_size() > 1) {
    const Tensor* given = scope.find(unsqueeze->input(1));
    if (!given || given->is_symbolic()) return nullptr;
    axes = given->to_vector<int64_t>();
  }
  for (const auto& attr : unsqueeze->attribute())
    if (attr.name() == "axes") axes.assign(attr.ints().begin(), attr.ints().end());
  if (!x || axes.size() != 1) return nullptr;
  return axes[0] == axis || axes[0] + x->rank() + 1 == axis ? x : nullptr;
}

}  // namespace

std::vector<Tensor> import_concat(NodeContext& ctx) {
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis"), ctx.input(0).rank(), "axis");
  // Inputs that are all unsqueezed at the axis: a stack, how the exporter
  // writes one, and one op again.
  std::vector<Tensor> stacked;
  for (size_t k = 0; k < ctx.num_inputs(); ++k) {
    const Tensor* x = unsqueezed_at(ctx.producer(k), ctx.scope(), axis);
    if (!x) break;
    stacked.push_back(*x);
  }
  if (stacked.size() == ctx.num_inputs()) return {stack(stacked, axis)};
  return {concat(ctx.inputs(), axis)};
}

std::vector<Tensor> import_gather(NodeContext& ctx) {
  const Tensor& data = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), data.rank(), "axis");
  return {gather(data, from_end(ctx.input(1), data, axis), axis)};
}

namespace {

// ONNX counts negative coordinates of GatherND and ScatterND from the end of
// their dims (first_dim on); the dims are read at run time where unknown.
// Indices our ops would reject anyway pass through, for their error.
Tensor coordinates_from_end(const Tensor& indices, const Tensor& data, int64_t first_dim) {
  Tensor index = cast(indices, int64);
  if (index.rank() < 1 || data.rank() < 0) return index;
  const int64_t depth = index.shape().dim(-1);
  if (depth == kUnknownDim || first_dim < 0 || first_dim + depth > data.rank()) return index;
  const Tensor dims = slice(shape(data, int64), {first_dim}, {depth});
  return where(less(index, 0), index + dims, index);
}

}  // namespace

std::vector<Tensor> import_gather_nd(NodeContext& ctx) {
  const Tensor& data = ctx.input(0);
  const int64_t batch_dims = ctx.attr_int("batch_dims", 0);
  return {gather_nd(data, coordinates_from_end(ctx.input(1), data, batch_dims), batch_dims)};
}

namespace {

// ScatterND with reduction mul, max or min: one update at a time, each the
// element or slice there combined with it and written back, so that
// repeated indices combine in order as ONNX's reference does. The number of
// updates must be static.
Tensor scatter_nd_reduce(NodeContext& ctx, const std::string& reduction) {
  Tensor data = ctx.input(0);
  const Shape& indices = ctx.static_shape(1, "ScatterND with reduction '" + reduction + "'");
  if (indices.rank() < 1) ctx.invalid("indices must have rank 1 or more");
  const int64_t depth = indices.dim(-1),
                count = indices.num_elements() / std::max<int64_t>(depth, 1);
  const Tensor rows = reshape(coordinates_from_end(ctx.input(1), data, 0), {count, depth});
  const Tensor& updates = ctx.input(2);
  std::vector<int64_t> update_rows{count};
  for (int i = indices.rank() - 1; i < updates.rank(); ++i)
    update_rows.push_back(updates.shape()[i]);
  const Tensor values = reshape(updates, update_rows);
  for (int64_t k = 0; k < count; ++k) {
    const Tensor at = slice(rows, {k, 0}, {1, depth});
    const Tensor old_value = gather_nd(data, at);
    const Tensor update = expand_dims(gather(values, Tensor(k)), 0);
    const Tensor combined = reduction == "mul"   ? old_value * update
                            : reduction == "max" ? maximum(old_value, update)
                                                 : minimum(old_value, update);
    data = tensor_scatter_nd_update(data, at, combined);
  }
  return data;
}

}  // namespace

// Our tensor_scatter_nd_add for reduction "add". Without a reduction, writes
// of whole rows (indices [k, 1]) are the writes of a TensorArray holding
// `data` (our tensor_array_write op, in place in a loop); other indices are
// our tensor_scatter_nd_update.
std::vector<Tensor> import_scatter_nd(NodeContext& ctx) {
  const std::string reduction = ctx.attr_string("reduction", "none");
  const Tensor& data = ctx.input(0);
  if (reduction == "add")
    return {tensor_scatter_nd_add(data, coordinates_from_end(ctx.input(1), data, 0), ctx.input(2))};
  if (reduction == "mul" || reduction == "max" || reduction == "min")
    return {scatter_nd_reduce(ctx, reduction)};
  if (reduction != "none") ctx.unsupported("reduction '" + reduction + "'");
  const Shape& indices_shape = ctx.static_shape(1, "ScatterND");
  if (indices_shape.rank() != 2 || indices_shape[1] != 1 || data.rank() < 1)
    return {
        tensor_scatter_nd_update(data, coordinates_from_end(ctx.input(1), data, 0), ctx.input(2))};
  const Tensor rows = from_end(reshape(ctx.input(1), {indices_shape[0]}), data, 0);
  TensorArray array(data.dtype());
  array.unstack(data);
  for (int64_t k = 0; k < indices_shape[0]; ++k)
    array.write(gather(rows, Tensor(k)), gather(ctx.input(2), Tensor(k)));
  return {array.stack()};
}

namespace {

// For GatherElements and ScatterElements: the coordinates into data of each
// position [i0, .., ik, ..] of indices (k the axis), [i0, .., indices[i0,
// .., ik, ..], ..], ONNX's negative indices counted from the end: a tensor
// of indices' shape plus a last dim of data's rank, for our gather_nd and
// scatters, which check every coordinate.
Tensor element_coordinates(NodeContext& ctx, std::string_view op) {
  const Shape& data = ctx.static_shape(0, op);
  const Shape& shape = ctx.static_shape(1, op);
  const int rank = data.rank();
  if (shape.rank() != rank || rank < 1)
    ctx.invalid("data and indices must have one rank, 1 or more");
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), rank, "axis");
  // Each position's own coordinates, 0 along the axis.
  std::vector<int64_t> positions(size_t(shape.num_elements() * rank));
  for (int64_t flat = 0; flat < shape.num_elements(); ++flat) {
    int64_t rest = flat;
    for (int i = rank - 1; i >= 0; --i) {
      if (i != axis) positions[size_t(flat * rank + i)] = rest % shape[i];
      rest /= shape[i];
    }
  }
  Shape coordinates_shape = shape;
  coordinates_shape.push_back(rank);
  std::vector<int64_t> along_axis(size_t(rank), 0);
  along_axis[size_t(axis)] = 1;
  Tensor index = cast(ctx.input(1), int64);
  index = where(less(index, 0), index + data[int(axis)], index);
  return constant(positions, coordinates_shape) +
         expand_dims(index, -1) * constant(along_axis, Shape{rank});
}

}  // namespace

std::vector<Tensor> import_gather_elements(NodeContext& ctx) {
  return {gather_nd(ctx.input(0), element_coordinates(ctx, "GatherElements"))};
}

// ScatterElements, and Scatter (its name before opset 11): our
// tensor_scatter_nd_update, or _add for reduction "add", at each position's
// coordinates.
std::vector<Tensor> import_scatter_elements(NodeContext& ctx) {
  const std::string reduction = ctx.attr_string("reduction", "none");
  if (reduction != "none" && reduction != "add") ctx.unsupported("reduction '" + reduction + "'");
  const Tensor coordinates = element_coordinates(ctx, ctx.node().op_type());
  if (reduction == "add") return {tensor_scatter_nd_add(ctx.input(0), coordinates, ctx.input(2))};
  return {tensor_scatter_nd_update(ctx.input(0), coordinates, ctx.input(2))};
}

// TopK: our argsort's first K indices along the axis and the values there,
// gathered along the last axis (the axis swapped there and back).
std::vector<Tensor> import_top_k(NodeContext& ctx) {
  Tensor x = ctx.input(0);
  if (x.rank() < 1) ctx.invalid("the input must have rank 1 or more");
  const int64_t k = ctx.opset() < 10 ? ctx.attr_int("k") : ctx.constant_ints(1, "K").at(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", -1), x.rank(), "axis");
  const int64_t last = x.rank() - 1;
  std::vector<int64_t> perm(static_cast<size_t>(x.rank()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[size_t(axis)], perm.back());
  if (axis != last) x = transpose(x, perm);
  ops::Attrs attrs;
  attrs.axis = -1;
  attrs.ints = {ctx.attr_int("largest", 1) != 0 ? 1 : 0, k};
  const Tensor order = ops::apply(ops::OpId::Argsort, {x}, attrs);
  Tensor values = gather_nd(x, expand_dims(order, -1), last);
  Tensor indices = cast(order, int64);
  if (axis != last) {
    values = transpose(values, perm);
    indices = transpose(indices, perm);
  }
  return {values, indices};
}

// ReverseSequence: the input gathered (gather_nd) at, for each position of
// its time and batch dims, the time step lengths[b] - 1 - t where t <
// lengths[b], else t.
std::vector<Tensor> import_reverse_sequence(NodeContext& ctx) {
  const Shape& shape = ctx.static_shape(0, "ReverseSequence");
  const int64_t time_axis = ctx.attr_int("time_axis", 0);
  const int64_t batch_axis = ctx.attr_int("batch_axis", 1);
  if (shape.rank() < 2 || time_axis + batch_axis != 1 || time_axis * batch_axis != 0)
    ctx.invalid(
        "time_axis and batch_axis must be 0 and 1, in either order, of an input of rank 2 or more");
  std::vector<int64_t> time_at, batch_at;
  for (int64_t i = 0; i < shape[0]; ++i) {
    for (int64_t j = 0; j < shape[1]; ++j) {
      time_at.push_back(time_axis == 0 ? i : j);
      batch_at.push_back(time_axis == 0 ? j : i);
    }
  }
  const Shape grid{shape[0], shape[1]};
  const Tensor t = constant(time_at, grid), b = constant(batch_at, grid);
  const Tensor lengths = gather(cast(ctx.input(1), int64), b);
  const Tensor source = where(less(t, lengths), lengths - 1 - t, t);
  const Tensor coordinates = time_axis == 0 ? stack({source, b}, -1) : stack({b, source}, -1);
  return {gather_nd(ctx.input(0), coordinates)};
}

// The upper (upper=1) or lower triangle of the last two dims from diagonal k.
std::vector<Tensor> import_trilu(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Shape& shape = ctx.static_shape(0, "Trilu");
  if (shape.rank() < 2) ctx.invalid("the input must have rank 2 or more");
  const int64_t k = ctx.has_input(1) ? ctx.constant_ints(1, "k").at(0) : 0;
  const bool upper = ctx.attr_int("upper", 1) != 0;
  const int64_t rows = shape.dim(-2), cols = shape.dim(-1);
  std::vector<int32_t> keep(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) keep[size_t(i * cols + j)] = upper ? j - i >= k : j - i <= k;
  Tensor mask = cast(constant(keep, Shape{rows, cols}), bool_);
  return {where(mask, x, cast(Tensor(0), x.dtype()))};
}

namespace {

// Pad's constant: input 2 (opset 11 on) or the attribute "value"; 0 when
// absent. The input must be known when the model is traced.
double pad_constant(NodeContext& ctx) {
  if (ctx.opset() < 11) return ctx.attr_float("value", 0.0f);
  if (!ctx.has_input(2)) return 0.0;
  const std::vector<double> value = ctx.constant_doubles(2, "constant_value");
  if (value.size() != 1) ctx.invalid("constant_value must hold one value");
  return value[0];
}

}  // namespace

// Pad: pads (all befores, then all afters) from input 1 (an attribute
// before opset 11), over `axes` (opset 18) or every dimension. Negative
// pads crop: a slice first, then the non-negative rest padded.
std::vector<Tensor> import_pad(NodeContext& ctx) {
  Tensor x = ctx.input(0);
  const int64_t rank = x.rank();
  const std::vector<int64_t> pads = ctx.opset() < 11
                                        ? ctx.attr_ints(ctx.opset() < 2 ? "paddings" : "pads")
                                        : ctx.constant_ints(1, "pads");
  std::vector<int64_t> axes(static_cast<size_t>(rank));
  std::iota(axes.begin(), axes.end(), 0);
  if (ctx.opset() >= 18 && ctx.has_input(3)) {
    axes = ctx.constant_ints(3, "axes");
    for (int64_t& a : axes) a = ctx.normalize_axis(a, rank, "axis");
  }
  if (pads.size() != 2 * axes.size()) {
    ctx.invalid("pads has " + std::to_string(pads.size()) + " values for " +
                std::to_string(axes.size()) + " axes; it needs a begin and an end per axis");
  }
  std::vector<std::pair<int64_t, int64_t>> paddings(size_t(rank), {0, 0});
  std::vector<int64_t> begin(size_t(rank), 0), size(size_t(rank), -1);
  bool crops = false;
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t before = pads[k], after = pads[k + axes.size()];
    const auto axis = size_t(axes[k]);
    paddings[axis] = {std::max<int64_t>(before, 0), std::max<int64_t>(after, 0)};
    if (before >= 0 && after >= 0) continue;
    const int64_t dim = x.shape()[int(axis)];
    if (dim == kUnknownDim) ctx.unsupported("negative pads on an axis of unknown length");
    begin[axis] = std::max<int64_t>(-before, 0);
    size[axis] = dim - begin[axis] - std::max<int64_t>(-after, 0);
    if (size[axis] < 0)
      ctx.invalid("negative pads remove more than axis " + std::to_string(axis) + " has");
    crops = true;
  }
  if (crops) x = slice(x, begin, size);
  const std::string mode = ctx.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    ctx.unsupported("mode '" + mode + "' (constant, reflect and edge are)");
  return {pad(x, paddings, mode, pad_constant(ctx))};
}

namespace {

// Whether Slice's bounds take a whole axis backwards (how ag::onnx::save
// writes reverse): step -1 from the last element (-1, or a start at or past
// it) to past the first (an end before -length; INT_MIN or less where the
// length is unknown).
bool reverses_whole_axis(int64_t start, int64_t end, int64_t step, int64_t dim) {
  constexpr int64_t kFar = std::numeric_limits<int32_t>::max();
  if (step != -1) return false;
  const bool from_last = start == -1 || start >= (dim == kUnknownDim ? kFar : dim - 1);
  return from_last && end <= (dim == kUnknownDim ? -kFar - 1 : -dim - 1);
}

}  // namespace

namespace {

// Slice whose starts or ends are computed when the graph runs (a loop's
// counter): per axis, the rows range(start, end, step) gathered, the bounds
// counted from the end and clamped as ONNX says, with tensors. The axis's
// length is then unknown while tracing.
Tensor slice_at_run_time(NodeContext& ctx) {
  Tensor x = ctx.input(0);
  const Tensor starts = cast(ctx.input(1), int64), ends = cast(ctx.input(2), int64);
  if (starts.rank() != 1 || ends.rank() != 1 || starts.shape()[0] == kUnknownDim ||
      starts.shape()[0] != ends.shape()[0])
    ctx.invalid("starts and ends must be 1-D, of one length known when the model is loaded");
  const int64_t n = starts.shape()[0];
  std::vector<int64_t> axis_of(static_cast<size_t>(n)), steps(static_cast<size_t>(n), 1);
  std::iota(axis_of.begin(), axis_of.end(), 0);
  if (ctx.has_input(3)) axis_of = ctx.constant_ints(3, "axes");
  if (ctx.has_input(4)) steps = ctx.constant_ints(4, "steps");
  if (axis_of.size() != size_t(n) || steps.size() != size_t(n))
    ctx.invalid("starts, ends, axes and steps must have one length");
  for (int64_t k = 0; k < n; ++k) {
    const int64_t axis = ctx.normalize_axis(axis_of[size_t(k)], x.rank(), "axis");
    const int64_t step = steps[size_t(k)];
    if (step == 0) ctx.invalid("steps must not be 0");
    const Tensor dim = gather(shape(x, int64), Tensor(axis));
    auto bound = [&](const Tensor& v, const Tensor& lo, const Tensor& hi) {
      return minimum(maximum(where(less(v, 0), v + dim, v), lo), hi);
    };
    const Tensor zero(int64_t{0});
    const Tensor start = step > 0 ? bound(gather(starts, Tensor(k)), zero, dim)
                                  : bound(gather(starts, Tensor(k)), zero, dim - 1);
    const Tensor end = step > 0 ? bound(gather(ends, Tensor(k)), zero, dim)
                                : bound(gather(ends, Tensor(k)), Tensor(int64_t{-1}), dim - 1);
    x = gather(x, range(start, end, Tensor(step)), axis);
  }
  return x;
}

}  // namespace

std::vector<Tensor> import_slice(NodeContext& ctx) {
  if (ctx.opset() >= 10 && ctx.has_input(2) &&
      (ctx.input(1).is_symbolic() || ctx.input(2).is_symbolic()))
    return {slice_at_run_time(ctx)};
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    if (ctx.has_attr("axes")) axes = ctx.attr_ints("axes");
  } else {
    starts = ctx.constant_ints(1, "starts");
    ends = ctx.constant_ints(2, "ends");
    if (ctx.has_input(3)) axes = ctx.constant_ints(3, "axes");
    if (ctx.has_input(4)) steps = ctx.constant_ints(4, "steps");
  }
  Tensor x = ctx.input(0);
  const int64_t rank = x.rank();
  if (axes.empty()) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.invalid("starts, ends, axes and steps must have one length");
  for (size_t k = 0; k < starts.size(); ++k) {
    const int64_t axis = ctx.normalize_axis(axes[k], rank, "axis");
    const int64_t dim = x.shape()[int(axis)];
    const int64_t step = steps[k];
    if (reverses_whole_axis(starts[k], ends[k], step, dim)) {
      x = reverse(x, {axis});
      continue;
    }
    if (dim == kUnknownDim) {
      // From a non-negative start to the end (an end of INT_MAX or more, as
      // exporters write it) needs no length; a start past the end is then a
      // run-time error, where ONNX would give no rows.
      if (step != 1 || starts[k] < 0 || ends[k] < std::numeric_limits<int32_t>::max())
        ctx.unsupported("slicing an axis of unknown length other than from a start to the end");
      std::vector<int64_t> begin(size_t(rank), 0), size(size_t(rank), -1);
      begin[size_t(axis)] = starts[k];
      x = slice(x, begin, size);
      continue;
    }
    if (step == 0) ctx.invalid("steps must not be 0");
    // NumPy's rule: negative bounds count from the end, then clamp.
    auto bound = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0) v = v < -dim ? lo : v + dim;
      return std::clamp(v, lo, hi);
    };
    const int64_t start = step > 0 ? bound(starts[k], 0, dim) : bound(starts[k], 0, dim - 1);
    const int64_t end = step > 0 ? bound(ends[k], 0, dim) : bound(ends[k], -1, dim - 1);
    if (step == 1) {
      std::vector<int64_t> begin(size_t(rank), 0), size(size_t(rank), -1);
      begin[size_t(axis)] = start;
      size[size_t(axis)] = std::max<int64_t>(0, end - start);
      x = slice(x, begin, size);
      continue;
    }
    std::vector<int64_t> picked;
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step) picked.push_back(i);
    x = gather(x, int64_vector(picked), axis);
  }
  return {x};
}

std::vector<Tensor> import_split(NodeContext& ctx) {
  const Tensor& x = ctx.input(0);
  const int64_t axis = ctx.normalize_axis(ctx.attr_int("axis", 0), x.rank(), "axis");
  const int64_t dim = ctx.static_shape(0, "Split")[int(axis)];
  std::vector<int64_t> parts;
  if (ctx.has_input(1))
    parts = ctx.constant_ints(1, "split");
  else if (ctx.has_attr("split"))
    parts = ctx.attr_ints("split");
  if (parts.empty()) {
    const int64_t n = ctx.node().output_size();
    if (dim % n != 0)
      ctx.invalid("axis of length " + std::to_string(dim) + " does not split into " +
                  std::to_string(n) + " equal parts");
    parts.assign(size_t(n), dim / n);
  }
  if (std::accumulate(parts.begin(), parts.end(), int64_t{0}) != dim)
    ctx.invalid("the parts do not add up to the axis length " + std::to_string(dim));
  std::vector<Tensor> out;
  std::vector<int64_t> begin(size_t(x.rank()), 0), size(size_t(x.rank()), -1);
  for (int64_t part : parts) {
    size[size_t(axis)] = part;
    out.push_back(slice(x, begin, size));
    begin[size_t(axis)] += part;
  }
  return out;
}

std::vector<Tensor> import_tile(NodeContext& ctx) {
  if (ctx.computed_at_run_time(1))
    return {ops::tile_by(ctx.input(0), cast(ctx.input(1), int64), known_entries(ctx, 1), {})};
  return {tile(ctx.input(0), ctx.constant_ints(1, "repeats"))};
}

std::vector<Tensor> import_gemm(NodeContext& ctx) {
  Tensor a = ctx.input(0), b = ctx.input(1);
  if (ctx.attr_int("transA", 0) != 0) a = transpose(a);
  if (ctx.attr_int("transB", 0) != 0) b = transpose(b);
  Tensor y = matmul(a, b);
  const float alpha = ctx.attr_float("alpha", 1.0f), beta = ctx.attr_float("beta", 1.0f);
  if (alpha != 1.0f) y = y * cast(Tensor(alpha), y.dtype());
  if (ctx.has_input(2)) {
    Tensor c = ctx.input(2);
    if (beta != 1.0f) c = c * cast(Tensor(beta), c.dtype());
    y = y + c;
  }
  return {y};
}

}  // namespace ag::onnx_io
