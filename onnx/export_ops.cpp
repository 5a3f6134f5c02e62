// The ONNX form of each op of our registry (runtime/ops/ops.def). export_op
// has one case per op, so that the compiler's -Wswitch names an op added to
// the registry without one here, and sends it to its family's form (unary,
// arithmetic, comparison, reduction, layout, indexing, shape and creation).
// Ops whose semantics ONNX spells differently:
//   floordiv of integers: ONNX's Div truncates, so q = Div(a, b) is lowered
//     by one where the remainder is not 0 and has the other sign than b;
//     of floats: Floor(Div(a, b)).
//   mod of floats: ONNX's Mod(fmod=1) takes the dividend's sign, so b is
//     added where the remainder is not 0 and its sign differs from b's
//     (integers: Mod(fmod=0) is our floor modulo already).
//   not_equal: Not(Equal); stack: Unsqueeze each input, then Concat;
//   reduce_any/reduce_all: ReduceMax/ReduceMin of the input cast to int32;
//   dim: Shape(start=axis, end=axis+1), squeezed to a scalar.
//   reduce_sum_to: ReduceSum (keepdims) reshaped to like's shape; where a dim is
//     unknown, its axes are computed when the model runs (NonZero of where
//     like's shape has 1 and x's has not), which our importer cannot load.
//   clip_by_value: Max(Min(t, max), min), as ONNX's Clip takes scalar bounds only.
//   one_hot: negative indices replaced by depth (ONNX would count them from
//     the end; ours give a row of off values).
//   tensor_array_write: ONNX sequence ops, in onnx/export_sequences.cpp.
//   unsorted_segment_sum: ScatterND(reduction="add", opset 16) of data into
//     zeros of [num_segments] + data's trailing dims, at the ids with a
//     trailing axis of 1 (a negative id, an error for us, would count from
//     the end there). Where the output's shape is not static, the zeros'
//     dims are computed when the model runs, which our importer cannot load.
#include <limits>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "exporter.h"

namespace ag::onnx_io {

using ops::OpId;

namespace {

struct Emit {
  Exporter& ex;
  ::onnx::GraphProto& g;

  std::string op(const std::string& type, std::vector<std::string> in) {
    return ex.node(g, type, in)[0];
  }
  ::onnx::NodeProto& with_attrs(const std::string& type, std::vector<std::string> in,
                                std::string& out) {
    return ex.add(g, type, in, out);
  }
  std::string cast(const std::string& x, DType to) {
    std::string out;
    set_int(ex.add(g, "Cast", {x}, out), "to", onnx_type(to));
    return out;
  }
  std::string zero_like(DType dtype) { return ex.constant(ag::cast(Tensor(0), dtype), "zero"); }
  // (r != 0) and ((r < 0) != (b < 0)): a remainder whose sign is not b's.
  std::string sign_differs(const std::string& r, const std::string& b, DType dtype) {
    std::string zero = zero_like(dtype);
    std::string nonzero = op("Not", {op("Equal", {r, zero})});
    return op("And", {nonzero, op("Xor", {op("Less", {r, zero}), op("Less", {b, zero})})});
  }
  std::string reduce(const std::string& type, const std::string& x, const ops::Attrs& attrs) {
    std::string out;
    std::vector<std::string> in{x};
    // ReduceSum takes its axes as an input from opset 13, the others as an attribute.
    if (type == "ReduceSum" && !attrs.ints.empty()) in.push_back(ex.int64s(attrs.ints));
    ::onnx::NodeProto& node = ex.add(g, type, in, out);
    if (type != "ReduceSum" && !attrs.ints.empty()) set_ints(node, "axes", attrs.ints);
    set_int(node, "keepdims", attrs.keepdims ? 1 : 0);
    return out;
  }
};

// One node's export: the forms of its op, by family, each writing the
// node's ONNX nodes into the graph and returning the names of its outputs.
struct OpExport {
  Emit e;
  Exporter& ex;
  const graph::Body& body;
  const graph::Node& n;
  const std::vector<std::string>& in;
  const ops::Attrs& attrs;
  const DType in_dtype;
  const DType out_dtype;

  std::vector<std::string> unary(const char* type) { return {e.op(type, {in[0]})}; }
  std::vector<std::string> binary(const char* type) { return {e.op(type, {in[0], in[1]})}; }

  // The families export_op dispatches to.
  std::vector<std::string> elementwise_unary();
  std::vector<std::string> arithmetic();
  std::vector<std::string> comparison();
  std::vector<std::string> reduction();
  std::vector<std::string> layout();
  std::vector<std::string> indexing();
  std::vector<std::string> shape_and_creation();
  [[noreturn]] void not_exported();
  [[noreturn]] void no_op();

  // The ops whose form is more than one ONNX op or needs attributes.
  std::vector<std::string> floor_div();
  std::vector<std::string> mod();
  std::vector<std::string> arg_extreme();
  std::vector<std::string> cumsum();
  std::vector<std::string> reduce_sum_to();
  std::vector<std::string> reduce_sum_to_at_run_time(int leading_dims);
  std::vector<std::string> transpose();
  std::vector<std::string> reshape();
  std::vector<std::string> stack();
  std::vector<std::string> slice();
  std::vector<std::string> unsorted_segment_sum();
  std::vector<std::string> one_hot();
  std::vector<std::string> dim();
};

// Ops of one input, each one ONNX op.
std::vector<std::string> OpExport::elementwise_unary() {
  switch (n.op) {
    case OpId::Neg:
      return unary("Neg");
    case OpId::Abs:
      return unary("Abs");
    case OpId::Exp:
      return unary("Exp");
    case OpId::Log:
      return unary("Log");
    case OpId::Sqrt:
      return unary("Sqrt");
    case OpId::Tanh:
      return unary("Tanh");
    case OpId::Sigmoid:
      return unary("Sigmoid");
    case OpId::Relu:
      return unary("Relu");
    case OpId::Round:
      // ONNX's Round takes floats only; an integer is its own rounding.
      return is_floating(in_dtype) ? unary("Round") : unary("Identity");
    case OpId::Floor:
      return unary("Floor");
    case OpId::Ceil:
      return unary("Ceil");
    case OpId::Sign:
      return unary("Sign");
    case OpId::LogicalNot:
      return unary("Not");
    case OpId::Identity:
      return unary("Identity");
    case OpId::Cast:
      return {e.cast(in[0], attrs.dtype)};
    default:
      no_op();
  }
}

// Arithmetic of two inputs, matmul, and clip_by_value (a min and a max).
std::vector<std::string> OpExport::arithmetic() {
  switch (n.op) {
    case OpId::Add:
      return binary("Add");
    case OpId::Sub:
      return binary("Sub");
    case OpId::Mul:
      return binary("Mul");
    case OpId::Div:
      if (in_dtype != out_dtype)
        return {e.op("Div", {e.cast(in[0], out_dtype), e.cast(in[1], out_dtype)})};
      return binary("Div");
    case OpId::FloorDiv:
      return floor_div();
    case OpId::Mod:
      return mod();
    case OpId::Pow:
      return binary("Pow");
    case OpId::Maximum:
      return binary("Max");
    case OpId::Minimum:
      return binary("Min");
    case OpId::ClipByValue:
      // ONNX's Clip takes scalar bounds only; ours broadcast.
      return {e.op("Max", {e.op("Min", {in[0], in[2]}), in[1]})};
    case OpId::MatMul:
      return binary("MatMul");
    default:
      no_op();
  }
}

// ONNX's Div of integers truncates, so its quotient is lowered by one where
// the remainder is not 0 and has the other sign than b; of floats it is
// floored.
std::vector<std::string> OpExport::floor_div() {
  std::string q = e.op("Div", {in[0], in[1]});
  if (is_floating(in_dtype)) return {e.op("Floor", {q})};
  std::string r = e.op("Sub", {in[0], e.op("Mul", {q, in[1]})});
  std::string adjust = e.cast(e.sign_differs(r, in[1], in_dtype), in_dtype);
  return {e.op("Sub", {q, adjust})};
}

// ONNX's Mod(fmod=1) of floats takes the dividend's sign, so b is added
// where the remainder's sign differs from b's; Mod(fmod=0) of integers is
// our floor modulo already.
std::vector<std::string> OpExport::mod() {
  if (!is_floating(in_dtype)) return binary("Mod");
  std::string out;
  set_int(e.with_attrs("Mod", {in[0], in[1]}, out), "fmod", 1);
  std::string fixed = e.op("Add", {out, in[1]});
  return {e.op("Where", {e.sign_differs(out, in[1], in_dtype), fixed, out})};
}

// Comparisons, logical and/or, and where.
std::vector<std::string> OpExport::comparison() {
  switch (n.op) {
    case OpId::Equal:
      return binary("Equal");
    case OpId::NotEqual:
      return {e.op("Not", {e.op("Equal", {in[0], in[1]})})};
    case OpId::Less:
      return binary("Less");
    case OpId::LessEqual:
      return binary("LessOrEqual");
    case OpId::Greater:
      return binary("Greater");
    case OpId::GreaterEqual:
      return binary("GreaterOrEqual");
    case OpId::LogicalAnd:
      return binary("And");
    case OpId::LogicalOr:
      return binary("Or");
    case OpId::Where:
      return {e.op("Where", {in[0], in[1], in[2]})};
    default:
      no_op();
  }
}

// Reductions over axes (reduce_any/reduce_all: ReduceMax/ReduceMin of the
// input cast to int32), arg max/min, cumsum and reduce_sum_to.
std::vector<std::string> OpExport::reduction() {
  switch (n.op) {
    case OpId::ReduceSum:
      return {e.reduce("ReduceSum", in[0], attrs)};
    case OpId::ReduceMean:
      return {e.reduce("ReduceMean", in[0], attrs)};
    case OpId::ReduceMax:
      return {e.reduce("ReduceMax", in[0], attrs)};
    case OpId::ReduceMin:
      return {e.reduce("ReduceMin", in[0], attrs)};
    case OpId::ReduceProd:
      return {e.reduce("ReduceProd", in[0], attrs)};
    case OpId::ReduceAny:
      return {e.cast(e.reduce("ReduceMax", e.cast(in[0], DType::int32), attrs), DType::bool_)};
    case OpId::ReduceAll:
      return {e.cast(e.reduce("ReduceMin", e.cast(in[0], DType::int32), attrs), DType::bool_)};
    case OpId::ArgMax:
    case OpId::ArgMin:
      return arg_extreme();
    case OpId::Cumsum:
      return cumsum();
    case OpId::ReduceSumTo:
      return reduce_sum_to();
    default:
      no_op();
  }
}

std::vector<std::string> OpExport::arg_extreme() {
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs(n.op == OpId::ArgMax ? "ArgMax" : "ArgMin", {in[0]}, out);
  set_int(node, "axis", attrs.axis);
  set_int(node, "keepdims", 0);
  return {out};
}

std::vector<std::string> OpExport::cumsum() {
  std::string out;
  ::onnx::NodeProto& node =
      e.with_attrs("CumSum", {in[0], ex.constant(Tensor(int64_t{attrs.axis}), "axis")}, out);
  set_int(node, "exclusive", attrs.ints.at(0));
  set_int(node, "reverse", attrs.ints.at(1));
  return {out};
}

// ReduceSum (keepdims) over the axes where like's dim is 1 and x's is not,
// and x's leading axes, reshaped to like's shape; with both shapes static,
// the axes are constants.
std::vector<std::string> OpExport::reduce_sum_to() {
  const Shape& x_shape = body.type_of(n.inputs[0]).shape;
  const Shape& like_shape = body.type_of(n.inputs[1]).shape;
  const int leading_dims = x_shape.rank() - like_shape.rank();
  if (!x_shape.is_fully_defined() || !like_shape.is_fully_defined())
    return reduce_sum_to_at_run_time(leading_dims);
  std::vector<int64_t> axes;
  for (int d = 0; d < x_shape.rank(); ++d)
    if (d < leading_dims || (like_shape[d - leading_dims] == 1 && x_shape[d] != 1))
      axes.push_back(d);
  if (axes.empty()) return unary("Identity");
  ops::Attrs sum;
  sum.ints = axes;
  sum.keepdims = true;
  return {e.op("Reshape", {e.reduce("ReduceSum", in[0], sum),
                           ex.int64s({like_shape.dims().begin(), like_shape.dims().end()})})};
}

// Dims known only at run time: the axes where like's shape (padded with
// leading 1s to x's rank) has 1 and x's has not, by NonZero, which our
// importer cannot load.
std::vector<std::string> OpExport::reduce_sum_to_at_run_time(int leading_dims) {
  std::string like_dims = e.op("Shape", {in[1]});
  std::string padded;
  if (leading_dims > 0) {
    set_int(
        e.with_attrs("Concat",
                     {ex.int64s(std::vector<int64_t>(size_t(leading_dims), 1)), like_dims}, padded),
        "axis", 0);
  } else {
    padded = like_dims;
  }
  std::string one = ex.int64s({1});
  std::string summed_axes = e.op(
      "And",
      {e.op("Equal", {padded, one}), e.op("Not", {e.op("Equal", {e.op("Shape", {in[0]}), one})})});
  std::string axes = e.op("Reshape", {e.op("NonZero", {summed_axes}), ex.int64s({-1})});
  std::string summed;
  ::onnx::NodeProto& node = e.with_attrs("ReduceSum", {in[0], axes}, summed);
  set_int(node, "keepdims", 1);
  set_int(node, "noop_with_empty_axes", 1);
  return {e.op("Reshape", {summed, like_dims})};
}

// Ops that move elements between dims or join tensors.
std::vector<std::string> OpExport::layout() {
  std::string out;
  switch (n.op) {
    case OpId::Transpose:
      return transpose();
    case OpId::Reshape:
      return reshape();
    case OpId::ExpandDims:
      return {e.op("Unsqueeze", {in[0], ex.int64s({attrs.axis})})};
    case OpId::BroadcastTo:
      return {e.op("Expand", {in[0], ex.int64s(attrs.ints)})};
    case OpId::Squeeze:
      if (attrs.ints.empty()) return unary("Squeeze");
      return {e.op("Squeeze", {in[0], ex.int64s(attrs.ints)})};
    case OpId::Concat:
      set_int(e.with_attrs("Concat", in, out), "axis", attrs.axis);
      return {out};
    case OpId::Stack:
      return stack();
    default:
      no_op();
  }
}

std::vector<std::string> OpExport::transpose() {
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs("Transpose", {in[0]}, out);
  if (!attrs.ints.empty()) {
    // ONNX's perm has no negative axes; ours count from the end.
    const auto rank = int64_t(attrs.ints.size());
    std::vector<int64_t> perm = attrs.ints;
    for (int64_t& axis : perm) axis = axis < 0 ? axis + rank : axis;
    set_ints(node, "perm", perm);
  }
  return {out};
}

// Our reshape has no "0 copies the dim" rule; allowzero keeps a 0 a 0.
std::vector<std::string> OpExport::reshape() {
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs("Reshape", {in[0], ex.int64s(attrs.ints)}, out);
  set_int(node, "allowzero", 1);
  return {out};
}

// Unsqueeze each input, then Concat.
std::vector<std::string> OpExport::stack() {
  std::string out;
  std::vector<std::string> rows;
  for (const std::string& x : in) rows.push_back(e.op("Unsqueeze", {x, ex.int64s({attrs.axis})}));
  set_int(e.with_attrs("Concat", rows, out), "axis", attrs.axis);
  return {out};
}

// Ops that read or write elements at indices.
std::vector<std::string> OpExport::indexing() {
  std::string out;
  switch (n.op) {
    case OpId::Gather:
      set_int(e.with_attrs("Gather", {in[0], in[1]}, out), "axis", attrs.axis);
      return {out};
    case OpId::Slice:
      return slice();
    case OpId::UnsortedSegmentSum:
      return unsorted_segment_sum();
    case OpId::OneHot:
      return one_hot();
    default:
      no_op();
  }
}

// Our slice's ints are the begins, then the sizes (-1: to the end).
std::vector<std::string> OpExport::slice() {
  const size_t rank = attrs.ints.size() / 2;
  std::vector<int64_t> starts, ends;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t begin = attrs.ints[i], size = attrs.ints[i + rank];
    starts.push_back(begin);
    ends.push_back(size == -1 ? std::numeric_limits<int64_t>::max() : begin + size);
  }
  return {e.op("Slice", {in[0], ex.int64s(starts), ex.int64s(ends)})};
}

// ScatterND(reduction="add") of data into zeros of [num_segments] + data's
// trailing dims, at the ids with a trailing axis of 1.
std::vector<std::string> OpExport::unsorted_segment_sum() {
  // The zeros' dims: constants when the output's shape is static, else
  // [num_segments] + Shape(data, start = ids' rank) when the model runs.
  const Shape& out_shape = n.outputs[0].shape;
  std::string dims;
  if (out_shape.is_fully_defined()) {
    dims = ex.int64s({out_shape.dims().begin(), out_shape.dims().end()});
  } else {
    const int ids_rank = body.type_of(n.inputs[1]).shape.rank();
    std::string count = e.op("Reshape", {e.cast(in[2], DType::int64), ex.int64s({1})});
    std::string trailing;
    set_int(e.with_attrs("Shape", {in[0]}, trailing), "start", ids_rank);
    set_int(e.with_attrs("Concat", {count, trailing}, dims), "axis", 0);
  }
  std::string zeros = e.op("Expand", {e.zero_like(out_dtype), dims});
  std::string indices = e.op("Unsqueeze", {e.cast(in[1], DType::int64), ex.int64s({-1})});
  std::string out;
  set_string(e.with_attrs("ScatterND", {zeros, indices, in[0]}, out), "reduction", "add");
  return {out};
}

// ONNX counts negative indices from the end; ours give a row of off values,
// so they are replaced by depth.
std::vector<std::string> OpExport::one_hot() {
  const DType index_dtype = body.type_of(n.inputs[0]).dtype;
  const Tensor depth_value = ag::cast(Tensor(int64_t{attrs.ints.at(0)}), index_dtype);
  std::string depth = ex.constant(depth_value, "depth");
  std::string negative = e.op("Less", {in[0], e.zero_like(index_dtype)});
  std::string indices = e.op("Where", {negative, depth, in[0]});
  std::string values;  // [off, on]
  set_int(e.with_attrs("Concat",
                       {e.op("Unsqueeze", {in[2], ex.int64s({0})}),
                        e.op("Unsqueeze", {in[1], ex.int64s({0})})},
                       values),
          "axis", 0);
  std::string out;
  set_int(e.with_attrs("OneHot", {indices, depth, values}, out), "axis", attrs.axis);
  return {out};
}

// Ops that read a shape, and ops that make a tensor.
std::vector<std::string> OpExport::shape_and_creation() {
  switch (n.op) {
    case OpId::Shape:
      return {e.cast(e.op("Shape", {in[0]}), attrs.dtype)};
    case OpId::Size:
      return {e.cast(e.op("Size", {in[0]}), attrs.dtype)};
    case OpId::Rank:
      return {e.cast(e.op("Size", {e.op("Shape", {in[0]})}), out_dtype)};
    case OpId::Dim:
      return dim();
    case OpId::Range:
      return {e.op("Range", {in[0], in[1], in[2]})};
    case OpId::Zeros:
      return {ex.zeros(e.g, attrs.ints, attrs.dtype)};
    default:
      no_op();
  }
}

// Shape(start=axis, end=axis+1), squeezed to a scalar.
std::vector<std::string> OpExport::dim() {
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs("Shape", {in[0]}, out);
  set_int(node, "start", attrs.axis);
  set_int(node, "end", attrs.axis + 1);
  return {e.op("Squeeze", {out, ex.int64s({0})})};
}

// A TensorArray write, which export_array_op emits, and the random ops.
void OpExport::not_exported() {
  if (n.op == OpId::TensorArrayWrite)
    throw InternalError("onnx export: node '" + n.name + "' is a TensorArray write");
  throw UnimplementedError("node '" + n.name + "' (" + n.op_name() +
                           ") draws random numbers; ONNX's random ops give other values, so "
                           "it is not exported");
}

void OpExport::no_op() {
  throw InternalError("onnx export: node '" + n.name + "' has no op");
}

}  // namespace

std::vector<std::string> export_op(Exporter& ex, const graph::Body& body, const graph::Node& n,
                                   ::onnx::GraphProto& g, const std::vector<std::string>& in) {
  const DType in_dtype = n.inputs.empty() ? DType::float32 : body.type_of(n.inputs[0]).dtype;
  OpExport x{{ex, g}, ex, body, n, in, n.attrs, in_dtype, n.outputs[0].dtype};
  switch (n.op) {
    case OpId::Neg:
    case OpId::Abs:
    case OpId::Exp:
    case OpId::Log:
    case OpId::Sqrt:
    case OpId::Tanh:
    case OpId::Sigmoid:
    case OpId::Relu:
    case OpId::Round:
    case OpId::Floor:
    case OpId::Ceil:
    case OpId::Sign:
    case OpId::LogicalNot:
    case OpId::Identity:
    case OpId::Cast:
      return x.elementwise_unary();
    case OpId::Add:
    case OpId::Sub:
    case OpId::Mul:
    case OpId::Div:
    case OpId::FloorDiv:
    case OpId::Mod:
    case OpId::Pow:
    case OpId::Maximum:
    case OpId::Minimum:
    case OpId::ClipByValue:
    case OpId::MatMul:
      return x.arithmetic();
    case OpId::Equal:
    case OpId::NotEqual:
    case OpId::Less:
    case OpId::LessEqual:
    case OpId::Greater:
    case OpId::GreaterEqual:
    case OpId::LogicalAnd:
    case OpId::LogicalOr:
    case OpId::Where:
      return x.comparison();
    case OpId::ReduceSum:
    case OpId::ReduceMean:
    case OpId::ReduceMax:
    case OpId::ReduceMin:
    case OpId::ReduceProd:
    case OpId::ReduceAny:
    case OpId::ReduceAll:
    case OpId::ArgMax:
    case OpId::ArgMin:
    case OpId::Cumsum:
    case OpId::ReduceSumTo:
      return x.reduction();
    case OpId::Transpose:
    case OpId::Reshape:
    case OpId::ExpandDims:
    case OpId::BroadcastTo:
    case OpId::Squeeze:
    case OpId::Concat:
    case OpId::Stack:
      return x.layout();
    case OpId::Gather:
    case OpId::Slice:
    case OpId::UnsortedSegmentSum:
    case OpId::OneHot:
      return x.indexing();
    case OpId::Shape:
    case OpId::Size:
    case OpId::Rank:
    case OpId::Dim:
    case OpId::Range:
    case OpId::Zeros:
      return x.shape_and_creation();
    case OpId::TensorArrayWrite:
    case OpId::RandomUniform:
    case OpId::RandomNormal:
      x.not_exported();
    case OpId::kCount:
      break;
  }
  x.no_op();
}

}  // namespace ag::onnx_io
