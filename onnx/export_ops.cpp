// The ONNX form of each op of our registry, as its ag/ops.def row's onnx
// column says: one ONNX op on the same inputs (onnx("Type")), a comparison
// (onnx_compare("Type"), bool operands cast to int32), a reduction
// (onnx_reduce("Type")), a form written here (onnx_by(form)), or none
// (onnx_none("why")). The forms, for ops ONNX spells differently:
//   floor_div of integers: ONNX's Div truncates, so q = Div(a, b) is lowered
//     by one where the remainder is not 0 and has the other sign than b;
//     of floats: Floor(Div(a, b)).
//   mod of floats: ONNX's Mod(fmod=1) takes the dividend's sign, so b is
//     added where the remainder is not 0 and its sign differs from b's
//     (integers: Mod(fmod=0) is our floor modulo already).
//   not_equal: Not(Equal); is_finite: Not(Or(IsNaN, IsInf));
//   stack: Unsqueeze each input, then Concat;
//   reduce_any/reduce_all: ReduceMax/ReduceMin of the input cast to int32;
//   dim: Shape(start=axis, end=axis+1), squeezed to a scalar.
//   reduce_sum_to: ReduceSum (keepdims) reshaped to like's shape; where a dim is
//     unknown, its axes are computed when the model runs (NonZero of where
//     like's shape has 1 and x's has not), which our importer cannot load.
//   clip_by_value: Max(Min(t, max), min), as ONNX's Clip takes scalar bounds only.
//   one_hot: negative indices replaced by depth (ONNX would count them from
//     the end; ours give a row of off values).
//   tensor_array_write: ONNX sequence ops, in onnx/export_sequences.cpp.
//   log1p: Log(Add(x, 1)); expm1: Sub(Exp(x), 1); rsqrt: Reciprocal(Sqrt(x));
//   gelu: Mul(Mul(x, 0.5), Add(Erf(Mul(x, 1/sqrt(2))), 1)) (ONNX's Gelu is
//     from opset 20).
//   softmax, log_softmax: Softmax and LogSoftmax of opset 13 on, along one axis.
//   batch_norm: BatchNormalization for channels at axis 1, else its formula
//     with the parameters reshaped to broadcast; layer_norm:
//     LayerNormalization (opset 17). Where epsilon is not a float (a float64
//     op's), the formulas, in the input's dtype. fused_batch_norm (by the
//     batch's statistics): its formula with ReduceMean.
//   lstm_sequence, gru_sequence, simple_rnn_sequence: LSTM, GRU and RNN,
//     their weights transposed (an LSTM's gates reordered from i, f, c, o to
//     ONNX's i, o, f, c); the packed output a Concat of Y_h (Y_c) and Y.
//   conv: Conv in ONNX's NCHW layout, by the filter transposed from
//     [kernel..., in/groups, out] to [out, in/groups, kernel...]; a
//     channels-last input and output are transposed to and from NCHW. SAME
//     padding becomes explicit pads where the input's spatial dims are
//     known, else auto_pad SAME_UPPER (TensorFlow's rule).
//   pad: Pad with the pads as an input (all befores, then all afters), the
//     constant in the input's dtype, mode constant, reflect or edge;
//     SYMMETRIC, which ONNX's Pad has no mode for, as Concat of the edge
//     rows reversed by Slice (step -1) and the input, axis by axis.
//   leaky_relu, hard_sigmoid: LeakyRelu and HardSigmoid, whose float32
//     attributes hold alpha and beta exactly for a float32 input (or when
//     they are floats); otherwise Where(Greater(x, 0), x, Mul(x, alpha))
//     and Max(Min(Add(Mul(x, alpha), beta), 1), 0), in the input's dtype.
//   max_pool, avg_pool: MaxPool and AveragePool (count_include_pad 0),
//     transposed and padded as conv is.
//   conv_backprop_input: ConvTranspose, its filter transposed as conv's (the
//     layouts agree), with explicit pads and the output_padding that gives
//     the input's spatial dims.
//   unsorted_segment_sum: ScatterND(reduction="add", opset 16) of data into
//     zeros of [num_segments] + data's trailing dims, at the ids with a
//     trailing axis of 1 (a negative id, an error for us, would count from
//     the end there). Where the output's shape is not static, the zeros'
//     dims are computed when the model runs (an Expand by them).
//   dynamic_reshape, dynamic_broadcast_to, dynamic_tile: Reshape (allowzero
//     1), Expand (which broadcasts both ways: the same for a shape x
//     broadcasts to) and Tile, their shape input cast to int64.
//   tile: Tile; reverse: Slice with step -1 on each axis; gather_nd,
//     tensor_scatter_nd_update/add: GatherND and ScatterND (reduction add)
//     of int64 indices (ONNX would count negative ones from the end; ours
//     are errors); a scatter with batch dims (gather_nd's gradient) puts
//     each tuple's batch coordinates in front of it (a constant: the
//     tuples' dims must be static).
//   argsort: TopK's indices, cast to int32 (TopK breaks ties by index too).
//   cumprod: ONNX has none; a Mul per row along the axis (its length must be
//     static), the rows sliced and the products concatenated.
//   non_max_suppression: NonMaxSuppression of one batch and class (float32
//     only: float64 scores pass as their ranks, which keep their order
//     exactly; float64 boxes are cast), column 2 of its picks cast to int32.
//   unique_first_indices: Unique's output 1 (its axis where the op has one).
//   matmul: MatMul, an operand flagged transposed through a Transpose first.
//   dropout_mask: Dropout (training_mode true, our ratio and seed) of ones of
//     x's shape, whose output is the scaled mask; ONNX runtimes draw other
//     random numbers for the same seed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ag/error.h"
#include "ag/ops.h"
#include "exporter.h"
#include "ops/conv_geometry.h"
#include "ops/pad_attrs.h"
#include "ops/rnn_kernels.h"

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

  // The forms of the onnx column of ag/ops.def.
  std::vector<std::string> same(const char* type) { return {e.op(type, in)}; }
  std::vector<std::string> reduce(const char* type);
  std::vector<std::string> compare(const char* type) {
    if (in_dtype != DType::bool_) return binary(type);
    return {e.op(type, {e.cast(in[0], DType::int32), e.cast(in[1], DType::int32)})};
  }
  [[noreturn]] std::vector<std::string> not_exported(const char* why);
  // onnx_by(form): the ops whose form is more than one ONNX op or needs attributes.
  std::vector<std::string> round();
  std::vector<std::string> cast() { return {e.cast(in[0], attrs.dtype)}; }
  std::vector<std::string> div();
  std::vector<std::string> floor_div();
  std::vector<std::string> mod();
  std::vector<std::string> not_equal() { return {e.op("Not", {e.op("Equal", {in[0], in[1]})})}; }
  std::vector<std::string> clip_by_value();
  std::vector<std::string> is_finite() {
    return {e.op("Not", {e.op("Or", {unary("IsNaN")[0], unary("IsInf")[0]})})};
  }
  std::vector<std::string> reduce_any();
  std::vector<std::string> reduce_all();
  std::vector<std::string> arg_max() { return arg_extreme("ArgMax"); }
  std::vector<std::string> arg_min() { return arg_extreme("ArgMin"); }
  std::vector<std::string> arg_extreme(const char* type);
  std::vector<std::string> cumsum();
  std::vector<std::string> reduce_sum_to();
  std::vector<std::string> reduce_sum_to_at_run_time(int leading_dims);
  std::vector<std::string> transpose();
  std::vector<std::string> reshape();
  std::vector<std::string> expand_dims();
  std::vector<std::string> squeeze();
  std::vector<std::string> broadcast_to();
  std::vector<std::string> concat();
  std::vector<std::string> stack();
  std::vector<std::string> gather();
  std::vector<std::string> slice();
  std::vector<std::string> unsorted_segment_sum();
  std::vector<std::string> one_hot();
  std::vector<std::string> quantize_linear() { return with_axis("QuantizeLinear"); }
  std::vector<std::string> dequantize_linear() { return with_axis("DequantizeLinear"); }
  std::vector<std::string> with_axis(const char* type) {
    std::string out;
    set_int(e.with_attrs(type, {in[0], in[1], in[2]}, out), "axis", attrs.axis);
    return {out};
  }
  std::vector<std::string> shape();
  std::vector<std::string> size();
  std::vector<std::string> rank();
  std::vector<std::string> dim();
  std::vector<std::string> zeros();
  std::vector<std::string> log1p() { return {e.op("Log", {e.op("Add", {in[0], number(1)})})}; }
  std::vector<std::string> expm1() { return {e.op("Sub", {unary("Exp")[0], number(1)})}; }
  std::vector<std::string> rsqrt() { return {e.op("Reciprocal", {unary("Sqrt")[0]})}; }
  std::vector<std::string> gelu();
  std::vector<std::string> softmax() { return along_axis("Softmax"); }
  std::vector<std::string> log_softmax() { return along_axis("LogSoftmax"); }
  std::vector<std::string> batch_norm();
  std::vector<std::string> fused_batch_norm();
  std::vector<std::string> layer_norm();
  std::vector<std::string> lstm_sequence();
  std::vector<std::string> gru_sequence();
  std::vector<std::string> simple_rnn_sequence();
  std::vector<std::string> recurrent_sequence(const char* type,
                                              const std::vector<int64_t>& gate_order,
                                              const std::string& bias);
  std::string onnx_gate_order(const std::string& w, const std::vector<int64_t>& gate_order,
                              int64_t units);
  std::vector<std::string> along_axis(const char* type) {
    std::string out;
    set_int(e.with_attrs(type, {in[0]}, out), "axis", attrs.axis);
    return {out};
  }
  // A constant of the input's dtype.
  // (Made as float64 first: Tensor(v) would round v to float32.)
  std::string number(double v) {
    return ex.constant(ag::cast(ag::fill({}, v, DType::float64), in_dtype), "number");
  }
  std::vector<std::string> conv();
  std::vector<std::string> conv_transpose();
  std::vector<std::string> max_pool() { return pool("MaxPool"); }
  std::vector<std::string> avg_pool() { return pool("AveragePool"); }
  std::vector<std::string> pool(const char* type);
  std::vector<std::string> pad();
  std::vector<std::string> pad_symmetric(const ops::PadAttrs& a);
  std::vector<std::string> leaky_relu();
  std::vector<std::string> hard_sigmoid();
  // Whether ONNX's float attributes hold these parameters of an op on the
  // input exactly (the op rounds them to the input's dtype).
  bool float_attrs_exact(std::initializer_list<double> values) const {
    if (in_dtype == DType::float32) return true;
    for (double v : values) {
      if (double(float(v)) != v) return false;
    }
    return true;
  }
  [[noreturn]] std::vector<std::string> tensor_array_write();
  // Layout and selection.
  std::vector<std::string> tile() {
    if (attrs.ints.empty()) return unary("Identity");  // a scalar, which Tile needs not take
    return {e.op("Tile", {in[0], ex.int64s(attrs.ints)})};
  }
  std::vector<std::string> reverse();
  std::vector<std::string> gather_nd();
  std::vector<std::string> scatter_nd_update() { return scatter_nd("none"); }
  std::vector<std::string> scatter_nd_add() { return scatter_nd("add"); }
  std::vector<std::string> scatter_nd(const char* reduction);
  std::vector<std::string> argsort();
  std::vector<std::string> cumprod();
  std::vector<std::string> non_max_suppression();
  std::string nms_rank_scores(bool has_threshold);
  std::vector<std::string> unique_first_indices();
  // Shapes given as tensors: ONNX's Reshape (allowzero: our 0 is a 0),
  // Expand and Tile, which take int64 shapes.
  std::string int64_input(size_t k) {
    return body.type_of(n.inputs[k]).dtype == DType::int64 ? in[k] : e.cast(in[k], DType::int64);
  }
  std::vector<std::string> dynamic_reshape() {
    std::string out;
    set_int(e.with_attrs("Reshape", {in[0], int64_input(1)}, out), "allowzero", 1);
    return {out};
  }
  std::vector<std::string> dynamic_broadcast_to() {
    return {e.op("Expand", {in[0], int64_input(1)})};
  }
  std::vector<std::string> dynamic_tile() { return {e.op("Tile", {in[0], int64_input(1)})}; }
  // Linear algebra and dropout.
  std::vector<std::string> matmul();
  std::vector<std::string> dropout_mask();

  // Convolutions' shared parts.
  std::string to_channels_first(const std::string& x, int rank, bool inverse);
  std::string onnx_filter(const std::string& w, int rank);
  void set_conv_attrs(::onnx::NodeProto& node, const ops::ConvGeometry& g, bool pads_known,
                      bool groups = true);
};

// ONNX's Round takes floats only; an integer is its own rounding.
std::vector<std::string> OpExport::round() {
  return is_floating(in_dtype) ? unary("Round") : unary("Identity");
}

// True division of operands cast to the output's floating dtype.
std::vector<std::string> OpExport::div() {
  if (in_dtype != out_dtype)
    return {e.op("Div", {e.cast(in[0], out_dtype), e.cast(in[1], out_dtype)})};
  return binary("Div");
}

// ONNX's Clip takes scalar bounds only; ours broadcast.
std::vector<std::string> OpExport::clip_by_value() {
  return {e.op("Max", {e.op("Min", {in[0], in[2]}), in[1]})};
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

// ONNX's ReduceMax and ReduceMin take no bool: a bool input is reduced as
// int32 and cast back, as reduce_any and reduce_all are.
std::vector<std::string> OpExport::reduce(const char* type) {
  if (in_dtype != DType::bool_) return {e.reduce(type, in[0], attrs)};
  return {e.cast(e.reduce(type, e.cast(in[0], DType::int32), attrs), DType::bool_)};
}

// ReduceMax/ReduceMin of the input cast to int32.
std::vector<std::string> OpExport::reduce_any() {
  return {e.cast(e.reduce("ReduceMax", e.cast(in[0], DType::int32), attrs), DType::bool_)};
}
std::vector<std::string> OpExport::reduce_all() {
  return {e.cast(e.reduce("ReduceMin", e.cast(in[0], DType::int32), attrs), DType::bool_)};
}

std::vector<std::string> OpExport::arg_extreme(const char* type) {
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs(type, {in[0]}, out);
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

std::vector<std::string> OpExport::expand_dims() {
  return {e.op("Unsqueeze", {in[0], ex.int64s({attrs.axis})})};
}

std::vector<std::string> OpExport::squeeze() {
  if (attrs.ints.empty()) return unary("Squeeze");
  return {e.op("Squeeze", {in[0], ex.int64s(attrs.ints)})};
}

std::vector<std::string> OpExport::broadcast_to() {
  return {e.op("Expand", {in[0], ex.int64s(attrs.ints)})};
}

std::vector<std::string> OpExport::concat() {
  std::string out;
  set_int(e.with_attrs("Concat", in, out), "axis", attrs.axis);
  return {out};
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

std::vector<std::string> OpExport::gather() {
  std::string out;
  set_int(e.with_attrs("Gather", {in[0], in[1]}, out), "axis", attrs.axis);
  return {out};
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

// A tensor's shape, element count and rank in the op's dtype.
std::vector<std::string> OpExport::shape() {
  return {e.cast(e.op("Shape", {in[0]}), attrs.dtype)};
}
std::vector<std::string> OpExport::size() {
  return {e.cast(e.op("Size", {in[0]}), attrs.dtype)};
}
std::vector<std::string> OpExport::rank() {
  return {e.cast(e.op("Size", {e.op("Shape", {in[0]})}), out_dtype)};
}

// Shape(start=axis, end=axis+1), squeezed to a scalar.
std::vector<std::string> OpExport::dim() {
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs("Shape", {in[0]}, out);
  set_int(node, "start", attrs.axis);
  set_int(node, "end", attrs.axis + 1);
  return {e.op("Squeeze", {out, ex.int64s({0})})};
}

std::vector<std::string> OpExport::zeros() {
  return {ex.zeros(e.g, attrs.ints, attrs.dtype)};
}

std::vector<std::string> OpExport::gelu() {
  const std::string erf = e.op("Erf", {e.op("Mul", {in[0], number(0.70710678118654752440)})});
  return {e.op("Mul", {e.op("Mul", {in[0], number(0.5)}), e.op("Add", {erf, number(1)})})};
}

// [batch, spatial..., channels] to [batch, channels, spatial...], or back.
std::string OpExport::to_channels_first(const std::string& x, int rank, bool inverse) {
  std::vector<int64_t> perm = {0};
  if (inverse) {
    for (int i = 0; i < rank; ++i) perm.push_back(i + 2);
    perm.push_back(1);
  } else {
    perm.push_back(rank + 1);
    for (int i = 0; i < rank; ++i) perm.push_back(i + 1);
  }
  std::string out;
  set_ints(e.with_attrs("Transpose", {x}, out), "perm", perm);
  return out;
}

// Our [kernel..., in/groups, out] as ONNX's [out, in/groups, kernel...].
std::string OpExport::onnx_filter(const std::string& w, int rank) {
  std::vector<int64_t> perm = {rank + 1, rank};
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  std::string out;
  set_ints(e.with_attrs("Transpose", {w}, out), "perm", perm);
  return out;
}

// The window's attributes, and a convolution's with `groups`.
void OpExport::set_conv_attrs(::onnx::NodeProto& node, const ops::ConvGeometry& g, bool pads_known,
                              bool groups) {
  set_ints(node, "kernel_shape", g.kernel);
  set_ints(node, "strides", g.strides);
  if (groups) {
    set_ints(node, "dilations", g.dilations);
    set_int(node, "group", g.groups);
  }
  if (!pads_known) {
    set_string(node, "auto_pad", "SAME_UPPER");
    return;
  }
  std::vector<int64_t> pads = g.pad_before;
  pads.insert(pads.end(), g.pad_after.begin(), g.pad_after.end());
  set_ints(node, "pads", pads);
}

std::vector<std::string> OpExport::conv() {
  const ops::ConvAttrs a = ops::ConvAttrs::decode(attrs);
  const ops::ConvGeometry g = ops::conv_geometry(n.op_name(), a, body.type_of(n.inputs[0]).shape,
                                                 body.type_of(n.inputs[1]).shape);
  if (g.groups == kUnknownDim) return not_exported("has input channels unknown when traced");
  const bool pads_known =
      std::find(g.pad_before.begin(), g.pad_before.end(), kUnknownDim) == g.pad_before.end();
  const std::string x = a.channels_first ? in[0] : to_channels_first(in[0], a.rank, false);
  std::string y;
  set_conv_attrs(e.with_attrs("Conv", {x, onnx_filter(in[1], a.rank)}, y), g, pads_known);
  return {a.channels_first ? y : to_channels_first(y, a.rank, true)};
}

std::vector<std::string> OpExport::pad() {
  const ops::PadAttrs a = ops::PadAttrs::decode(attrs);
  const bool pads_anything = std::any_of(a.paddings.begin(), a.paddings.end(), [](const auto& p) {
    return p.first != 0 || p.second != 0;
  });
  if (!pads_anything)
    return {e.op("Identity", {in[0]})};  // (ONNX Runtime rejects a Pad of a scalar)
  if (a.mode == ops::PadMode::kSymmetric) return pad_symmetric(a);
  std::vector<int64_t> pads;
  for (const auto& p : a.paddings) pads.push_back(p.first);
  for (const auto& p : a.paddings) pads.push_back(p.second);
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs("Pad", {in[0], ex.int64s(pads), number(a.constant)}, out);
  set_string(node, "mode",
             a.mode == ops::PadMode::kReflect ? "reflect"
             : a.mode == ops::PadMode::kEdge  ? "edge"
                                              : "constant");
  return {out};
}

// Axis by axis: Concat(the first `before` rows reversed, x, the last
// `after` rows reversed), each reversal a Slice with step -1 whose bounds
// count from the end, so that the axis's length need not be known.
std::vector<std::string> OpExport::pad_symmetric(const ops::PadAttrs& a) {
  constexpr int64_t kPastTheFront = std::numeric_limits<int64_t>::min();
  std::string x = in[0];
  for (size_t d = 0; d < a.paddings.size(); ++d) {
    const auto [before, after] = a.paddings[d];
    if (before == 0 && after == 0) continue;
    auto reversed = [&](int64_t start, int64_t end) {
      return e.op("Slice", {x, ex.int64s({start}), ex.int64s({end}), ex.int64s({int64_t(d)}),
                            ex.int64s({-1})});
    };
    std::vector<std::string> parts;
    if (before > 0) parts.push_back(reversed(before - 1, kPastTheFront));
    parts.push_back(x);
    if (after > 0) parts.push_back(reversed(-1, -after - 1));
    std::string padded;
    set_int(e.with_attrs("Concat", parts, padded), "axis", int64_t(d));
    x = padded;
  }
  return {x};
}

std::vector<std::string> OpExport::leaky_relu() {
  if (!float_attrs_exact({attrs.lo})) {
    return {e.op("Where", {e.op("Greater", {in[0], number(0)}), in[0],
                           e.op("Mul", {in[0], number(attrs.lo)})})};
  }
  std::string out;
  set_float(e.with_attrs("LeakyRelu", {in[0]}, out), "alpha", float(attrs.lo));
  return {out};
}

std::vector<std::string> OpExport::hard_sigmoid() {
  if (!float_attrs_exact({attrs.lo, attrs.hi})) {
    const std::string y = e.op("Add", {e.op("Mul", {in[0], number(attrs.lo)}), number(attrs.hi)});
    return {e.op("Max", {e.op("Min", {y, number(1)}), number(0)})};
  }
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs("HardSigmoid", {in[0]}, out);
  set_float(node, "alpha", float(attrs.lo));
  set_float(node, "beta", float(attrs.hi));
  return {out};
}

std::vector<std::string> OpExport::pool(const char* type) {
  const ops::ConvAttrs a = ops::ConvAttrs::decode(attrs);
  const ops::ConvGeometry g = ops::pool_geometry(n.op_name(), a, body.type_of(n.inputs[0]).shape);
  const bool pads_known =
      std::find(g.pad_before.begin(), g.pad_before.end(), kUnknownDim) == g.pad_before.end();
  const bool dilated =
      std::any_of(g.dilations.begin(), g.dilations.end(), [](int64_t d) { return d != 1; });
  if (dilated && std::string_view(type) == "AveragePool") {
    return not_exported(
        "is an average pool with dilations, which ONNX's AveragePool has from opset 19 on; "
        "ag::onnx::save writes opset 17");
  }
  const std::string x = a.channels_first ? in[0] : to_channels_first(in[0], a.rank, false);
  std::string y;
  ::onnx::NodeProto& node = e.with_attrs(type, {x}, y);
  set_conv_attrs(node, g, pads_known, /*groups=*/false);
  if (dilated) set_ints(node, "dilations", g.dilations);
  return {a.channels_first ? y : to_channels_first(y, a.rank, true)};
}

// ConvTranspose of dy: out = stride * (dy - 1) + output_padding + the
// kernel's span - pads, which output_padding makes the input's dims.
std::vector<std::string> OpExport::conv_transpose() {
  const ops::ConvAttrs a = ops::ConvAttrs::decode(attrs);
  const ops::ConvGeometry g = ops::conv_backprop_input_geometry(
      n.op_name(), a, body.type_of(n.inputs[1]).shape, body.type_of(n.inputs[0]).shape);
  if (!g.input_spatial_dims_known())
    return not_exported("has a result whose spatial dims are unknown while tracing");
  std::vector<int64_t> output_padding;
  for (size_t i = 0; i < size_t(a.rank); ++i) {
    const int64_t span = g.dilations[i] * (g.kernel[i] - 1) + 1;
    output_padding.push_back(
        g.in[i] - (g.strides[i] * (g.out[i] - 1) + span - g.pad_before[i] - g.pad_after[i]));
  }
  const std::string dy = a.channels_first ? in[0] : to_channels_first(in[0], a.rank, false);
  std::string dx;
  ::onnx::NodeProto& node = e.with_attrs("ConvTranspose", {dy, onnx_filter(in[1], a.rank)}, dx);
  set_conv_attrs(node, g, true);
  set_ints(node, "output_padding", output_padding);
  return {a.channels_first ? dx : to_channels_first(dx, a.rank, true)};
}

// Slice with step -1 over each axis, from its last element past its first.
std::vector<std::string> OpExport::reverse() {
  if (attrs.ints.empty()) return unary("Identity");
  const size_t count = attrs.ints.size();
  return {
      e.op("Slice", {in[0], ex.int64s(std::vector<int64_t>(count, -1)),
                     ex.int64s(std::vector<int64_t>(count, std::numeric_limits<int64_t>::min())),
                     ex.int64s(attrs.ints), ex.int64s(std::vector<int64_t>(count, -1))})};
}

// ONNX's GatherND and ScatterND take int64 indices only.
std::vector<std::string> OpExport::gather_nd() {
  const bool int64_indices = body.type_of(n.inputs[1]).dtype == DType::int64;
  std::string out;
  set_int(
      e.with_attrs("GatherND", {in[0], int64_indices ? in[1] : e.cast(in[1], DType::int64)}, out),
      "batch_dims", attrs.axis);
  return {out};
}

// ScatterND has no batch dims (our scatters have them as gather_nd's
// gradient): each index tuple gets its batch position's coordinates in
// front, a constant where the tuples' dims are static.
std::vector<std::string> OpExport::scatter_nd(const char* reduction) {
  const bool int64_indices = body.type_of(n.inputs[1]).dtype == DType::int64;
  std::string indices = int64_indices ? in[1] : e.cast(in[1], DType::int64);
  if (attrs.axis != 0) {
    const Shape& shape = body.type_of(n.inputs[1]).shape;
    Shape tuples(shape.dims().first(size_t(shape.rank() - 1)));
    if (!tuples.is_fully_defined())
      return not_exported("has batch dims and index tuples of a shape unknown when traced");
    const auto batch_dims = int(attrs.axis);
    std::vector<int64_t> coordinates;
    for (int64_t t = 0; t < tuples.num_elements(); ++t) {
      std::vector<int64_t> at(size_t(tuples.rank()));
      for (int64_t d = tuples.rank() - 1, rest = t; d >= 0; --d) {
        at[size_t(d)] = rest % tuples[int(d)];
        rest /= tuples[int(d)];
      }
      coordinates.insert(coordinates.end(), at.begin(), at.begin() + batch_dims);
    }
    Shape grid_shape = tuples;
    grid_shape.push_back(batch_dims);
    const std::string grid =
        ex.constant(ag::constant(coordinates, grid_shape), "batch_coordinates");
    std::string full;
    set_int(e.with_attrs("Concat", {grid, indices}, full), "axis", -1);
    indices = full;
  }
  std::string out;
  ::onnx::NodeProto& node = e.with_attrs("ScatterND", {in[0], indices, in[2]}, out);
  if (std::string_view(reduction) != "none") set_string(node, "reduction", reduction);
  return {out};
}

// TopK's indices (k of them, or the axis's length) cast to int32. TopK
// breaks ties by the lower index, as argsort does.
std::vector<std::string> OpExport::argsort() {
  const Shape& shape = body.type_of(n.inputs[0]).shape;
  const int64_t axis = attrs.axis < 0 ? attrs.axis + shape.rank() : attrs.axis;
  std::string k;
  if (attrs.ints[1] >= 0 || shape[int(axis)] != kUnknownDim) {
    k = ex.int64s({attrs.ints[1] >= 0 ? attrs.ints[1] : shape[int(axis)]});
  } else {
    ::onnx::NodeProto& length = e.with_attrs("Shape", {in[0]}, k);
    set_int(length, "start", axis);
    set_int(length, "end", axis + 1);
  }
  const std::vector<std::string> outs = ex.node(e.g, "TopK", {in[0], k}, 2);
  ::onnx::NodeProto& node = *e.g.mutable_node(e.g.node_size() - 1);
  set_int(node, "axis", axis);
  set_int(node, "largest", attrs.ints[0]);
  set_int(node, "sorted", 1);
  return {e.cast(outs[1], DType::int32)};
}

// ONNX's NonMaxSuppression of one batch and class ([1, n, 4] boxes, [1, 1,
// n] scores, which ONNX takes as float32 only) and column 2 of its [k, 3]
// selected (batch, class, box) rows, as int32. A score_threshold of -inf is
// ONNX's absent one. float16 and bfloat16 are float32 values exactly; of
// float64 scores, rounding to float32 could tie or swap close ones, so they
// pass as their ranks instead (nms_rank_scores). So the scores' order and
// threshold are exact. float64 boxes and the IoU threshold are rounded to
// float32, and ONNX runtimes compute the IoU in float32 (the op, in
// float64): a pair whose IoU is within float32's rounding of the threshold
// may be decided otherwise.
std::vector<std::string> OpExport::non_max_suppression() {
  auto as_float = [&](const std::string& x) {
    return in_dtype == DType::float32 ? x : e.cast(x, DType::float32);
  };
  auto float_input = [&](double v, const char* name) {
    return ex.constant(ag::constant(std::vector<float>{float(v)}, Shape{1}), name);
  };
  const bool has_threshold = attrs.hi != -std::numeric_limits<double>::infinity();
  const bool ranked = in_dtype == DType::float64;
  const std::string scores = ranked ? nms_rank_scores(has_threshold) : as_float(in[1]);
  std::vector<std::string> inputs{e.op("Unsqueeze", {as_float(in[0]), ex.int64s({0})}),
                                  e.op("Unsqueeze", {scores, ex.int64s({0, 1})}),
                                  ex.int64s({attrs.ints[0]}),
                                  float_input(attrs.lo, "iou_threshold")};
  // Ranked scores are n - rank above the threshold and 0 below it. A float
  // score s is above a double t exactly when it is above the largest float
  // not above t.
  if (has_threshold) {
    float below = float(attrs.hi);
    if (double(below) > attrs.hi)
      below = std::nextafter(below, -std::numeric_limits<float>::infinity());
    inputs.push_back(float_input(ranked ? 0.5 : double(below), "score_threshold"));
  }
  const std::string selected = e.op("NonMaxSuppression", inputs);
  std::string column;
  set_int(e.with_attrs("Gather", {selected, ex.constant(Tensor(int64_t{2}), "box")}, column),
          "axis", 1);
  return {e.cast(column, DType::int32)};
}

// float64 scores [n] as float32 numbers in exactly their order: n - rank,
// the rank by descending score, equal scores by index (TopK's order, and the
// op's), exact below 2^24 boxes; with a score threshold, 0 for scores not
// above it (compared in float64).
std::string OpExport::nms_rank_scores(bool has_threshold) {
  const std::string count = e.op("Shape", {in[1]});
  const std::vector<std::string> top = ex.node(e.g, "TopK", {in[1], count}, 2);
  ::onnx::NodeProto& node = *e.g.mutable_node(e.g.node_size() - 1);
  set_int(node, "axis", 0);
  set_int(node, "largest", 1);
  set_int(node, "sorted", 1);
  const std::string n = e.op("Squeeze", {count, ex.int64s({0})});
  const std::string positions = e.op("Range", {ex.constant(Tensor(int64_t{0}), "zero"), n,
                                               ex.constant(Tensor(int64_t{1}), "one")});
  // rank[order[j]] = j (every position is written: order is a permutation).
  std::string rank;
  set_int(e.with_attrs("ScatterElements", {positions, top[1], positions}, rank), "axis", 0);
  std::string ranked = e.cast(e.op("Sub", {n, rank}), DType::float32);
  if (!has_threshold) return ranked;
  const std::string above = e.op(
      "Greater", {in[1], ex.constant(ag::fill({}, attrs.hi, DType::float64), "score_threshold")});
  return e.op("Where", {above, ranked, ex.constant(ag::fill({}, 0.0, DType::float32), "zero")});
}

// ONNX's Unique, with the axis where the op has one (else of the flattened
// input, as ONNX's without one), its output 1: the first occurrences.
std::vector<std::string> OpExport::unique_first_indices() {
  const std::vector<std::string> outs = ex.node(e.g, "Unique", {in[0]}, 4);
  ::onnx::NodeProto& node = *e.g.mutable_node(e.g.node_size() - 1);
  if (attrs.ints[1] != 0) set_int(node, "axis", attrs.axis);
  set_int(node, "sorted", attrs.ints[0]);
  return {outs[1]};
}

// ONNX has no cumulative product: the rows along the axis (a static
// length) multiplied one by one in the scan's order, then concatenated.
std::vector<std::string> OpExport::cumprod() {
  const Shape& shape = body.type_of(n.inputs[0]).shape;
  const int64_t axis = attrs.axis < 0 ? attrs.axis + shape.rank() : attrs.axis;
  const int64_t length = shape[int(axis)];
  if (length == kUnknownDim) return not_exported("runs along an axis of unknown length");
  if (length == 0) return unary("Identity");
  const bool exclusive = attrs.ints[0] != 0, reverse = attrs.ints[1] != 0;
  auto row = [&](int64_t i) {
    return e.op("Slice", {in[0], ex.int64s({i}), ex.int64s({i + 1}), ex.int64s({axis})});
  };
  // An exclusive scan starts from ones of a row's shape: constant dims where
  // they are static, which our importer needs.
  Shape row_shape = shape;
  row_shape.set_dim(int(axis), 1);
  auto ones_row = [&](int64_t at) {
    const std::string dims = row_shape.is_fully_defined()
                                 ? ex.int64s({row_shape.begin(), row_shape.end()})
                                 : e.op("Shape", {row(at)});
    return e.op("Expand", {number(1), dims});
  };
  std::vector<std::string> rows(static_cast<size_t>(length));
  for (int64_t step = 0; step < length; ++step) {
    const int64_t at = reverse ? length - 1 - step : step;
    const int64_t before = reverse ? at + 1 : at - 1;
    if (step == 0) {
      rows[size_t(at)] = exclusive ? ones_row(at) : row(at);
    } else {
      rows[size_t(at)] = e.op("Mul", {rows[size_t(before)], row(exclusive ? before : at)});
    }
  }
  if (length == 1) return {rows[0]};
  std::string out;
  set_int(e.with_attrs("Concat", rows, out), "axis", axis);
  return {out};
}

// BatchNormalization where the channels are axis 1 of a rank of 2 or more
// (and epsilon is a float), else (x - mean) * scale / sqrt(variance +
// epsilon) + offset, the parameters reshaped to [channels, 1, ...].
std::vector<std::string> OpExport::batch_norm() {
  const int rank = body.type_of(n.inputs[0]).shape.rank();
  if (attrs.axis == 1 && rank >= 2 && float_attrs_exact({attrs.lo})) {
    std::string y;
    set_float(e.with_attrs("BatchNormalization", {in[0], in[4], in[3], in[1], in[2]}, y), "epsilon",
              float(attrs.lo));
    return {y};
  }
  std::vector<int64_t> dims(size_t(rank - attrs.axis), 1);
  dims[0] = -1;
  const std::string shape = ex.int64s(dims);
  auto channel = [&](const std::string& v) { return e.op("Reshape", {v, shape}); };
  const std::string factor =
      e.op("Div", {in[4], e.op("Sqrt", {e.op("Add", {in[2], number(attrs.lo)})})});
  const std::string centered = e.op("Sub", {in[0], channel(in[1])});
  return {e.op("Add", {e.op("Mul", {centered, channel(factor)}), channel(in[3])})};
}

// ONNX's BatchNormalization in training mode outputs running statistics,
// not the batch's: the formula, with ReduceMean over every axis but the
// channels'.
std::vector<std::string> OpExport::fused_batch_norm() {
  const int rank = body.type_of(n.inputs[0]).shape.rank();
  ops::Attrs over;
  for (int64_t i = 0; i < rank; ++i)
    if (i != attrs.axis) over.ints.push_back(i);
  over.keepdims = true;
  std::vector<int64_t> dims(size_t(rank - attrs.axis), 1);
  dims[0] = -1;
  const std::string shape = ex.int64s(dims);
  const std::string centered = e.op("Sub", {in[0], e.reduce("ReduceMean", in[0], over)});
  const std::string variance = e.reduce("ReduceMean", e.op("Mul", {centered, centered}), over);
  const std::string normalised =
      e.op("Div", {centered, e.op("Sqrt", {e.op("Add", {variance, number(attrs.lo)})})});
  return {e.op("Add", {e.op("Mul", {normalised, e.op("Reshape", {in[1], shape})}),
                       e.op("Reshape", {in[2], shape})})};
}

// LayerNormalization (opset 17) where epsilon is a float, else its formula
// with ReduceMean over the normalised axes.
std::vector<std::string> OpExport::layer_norm() {
  if (float_attrs_exact({attrs.lo})) {
    std::string y;
    ::onnx::NodeProto& node = e.with_attrs("LayerNormalization", {in[0], in[1], in[2]}, y);
    set_int(node, "axis", attrs.axis);
    set_float(node, "epsilon", float(attrs.lo));
    return {y};
  }
  ops::Attrs over;
  for (int64_t i = attrs.axis; i < body.type_of(n.inputs[0]).shape.rank(); ++i)
    over.ints.push_back(i);
  over.keepdims = true;
  const std::string centered = e.op("Sub", {in[0], e.reduce("ReduceMean", in[0], over)});
  const std::string variance = e.reduce("ReduceMean", e.op("Mul", {centered, centered}), over);
  const std::string normalised =
      e.op("Div", {centered, e.op("Sqrt", {e.op("Add", {variance, number(attrs.lo)})})});
  return {e.op("Add", {e.op("Mul", {normalised, in[1]}), in[2]})};
}

// ONNX's recurrent node of a sequence op (LSTM, GRU, RNN), from x, the
// initial states, the weights in Keras's layout ([input, gates * units]) and
// ONNX's bias ([2 * gates * units], the input then the recurrent one): the
// weights transposed to ONNX's [1, gates * units, input], and gathered into
// ONNX's gate order where it differs (`gate_order`, ONNX's gates by ours);
// the packed output is Concat(Y_h[, Y_c], Y without its directions axis).
std::vector<std::string> OpExport::recurrent_sequence(const char* type,
                                                      const std::vector<int64_t>& gate_order,
                                                      const std::string& bias) {
  const ops::rnn_kernels::Cell cell = ops::rnn_kernels::cell_of(attrs);
  const size_t states = cell == ops::rnn_kernels::Cell::lstm ? 2 : 1;
  const int64_t units = body.type_of(n.inputs[states + 2]).shape[0];
  const std::string first = ex.int64s({0});
  auto onnx_weights = [&](const std::string& keras) {
    std::string transposed;
    set_ints(e.with_attrs("Transpose", {keras}, transposed), "perm", {1, 0});
    return e.op("Unsqueeze", {onnx_gate_order(transposed, gate_order, units), first});
  };
  std::vector<std::string> inputs{in[0], onnx_weights(in[states + 1]), onnx_weights(in[states + 2]),
                                  e.op("Unsqueeze", {bias, first}), ""};
  for (size_t s = 1; s <= states; ++s) inputs.push_back(e.op("Unsqueeze", {in[s], first}));
  const std::vector<std::string> outs = ex.node(e.g, type, inputs, int(states) + 1);
  ::onnx::NodeProto& node = *e.g.mutable_node(e.g.node_size() - 1);
  set_int(node, "hidden_size", units);
  if (ops::rnn_kernels::is_reverse(attrs)) set_string(node, "direction", "reverse");
  if (ops::rnn_kernels::is_gru(cell))
    set_int(node, "linear_before_reset", cell == ops::rnn_kernels::Cell::gru ? 1 : 0);
  if (cell == ops::rnn_kernels::Cell::rnn_relu) set_strings(node, "activations", {"Relu"});
  if (cell == ops::rnn_kernels::Cell::rnn_sigmoid) set_strings(node, "activations", {"Sigmoid"});
  std::vector<std::string> parts(outs.begin() + 1, outs.end());
  parts.push_back(e.op("Squeeze", {outs[0], ex.int64s({1})}));
  std::string packed;
  set_int(e.with_attrs("Concat", parts, packed), "axis", 0);
  return {packed};
}

// `w`'s rows in ONNX's gate order: gate blocks of `units` rows gathered by
// `gate_order`, or `w` as it is where that is empty.
std::string OpExport::onnx_gate_order(const std::string& w, const std::vector<int64_t>& gate_order,
                                      int64_t units) {
  if (gate_order.empty()) return w;
  std::vector<int64_t> rows;
  for (int64_t gate : gate_order)
    for (int64_t k = 0; k < units; ++k) rows.push_back(gate * units + k);
  return e.op("Gather", {w, ex.int64s(rows)});
}

// LSTM: the gates from Keras's i, f, c, o to ONNX's i, o, f, c; the bias
// followed by a zero recurrent bias.
std::vector<std::string> OpExport::lstm_sequence() {
  const int64_t units = body.type_of(n.inputs[4]).shape[0];
  const std::vector<int64_t> order{0, 3, 1, 2};
  std::string bias;
  set_int(e.with_attrs("Concat",
                       {onnx_gate_order(in[5], order, units), ex.zeros(e.g, {4 * units}, in_dtype)},
                       bias),
          "axis", 0);
  return recurrent_sequence("LSTM", order, bias);
}

// GRU: gates z, r, h in both; the bias's two rows are ONNX's Wb and Rb, and
// reset_after is linear_before_reset.
std::vector<std::string> OpExport::gru_sequence() {
  return recurrent_sequence("GRU", {}, e.op("Reshape", {in[4], ex.int64s({-1})}));
}

// RNN: the activation named; the bias followed by a zero recurrent bias.
std::vector<std::string> OpExport::simple_rnn_sequence() {
  const int64_t units = body.type_of(n.inputs[3]).shape[0];
  std::string bias;
  set_int(e.with_attrs("Concat", {in[4], ex.zeros(e.g, {units}, in_dtype)}, bias), "axis", 0);
  return recurrent_sequence("RNN", {}, bias);
}

// export_array_op (onnx/export_sequences.cpp) writes TensorArray writes as
// sequence ops before a node reaches export_op.
std::vector<std::string> OpExport::tensor_array_write() {
  throw InternalError("onnx export: node '" + n.name + "' is a TensorArray write");
}

std::vector<std::string> OpExport::not_exported(const char* why) {
  throw UnimplementedError("node '" + n.name + "' (" + n.op_name() + ") " + why +
                           "; it is not exported");
}

}  // namespace

// The ONNX nodes of `n`, from the onnx column of its op's ag/ops.def row.
// MatMul, each operand flagged transposed first by a Transpose of its last two dims.
std::vector<std::string> OpExport::matmul() {
  std::vector<std::string> operands = in;
  for (size_t i = 0; i < 2; ++i) {
    if (attrs.ints.empty() || attrs.ints[i] == 0) continue;
    const int rank = body.type_of(n.inputs[i]).shape.rank();
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    for (int d = 0; d < rank; ++d) perm[size_t(d)] = d;
    std::swap(perm[size_t(rank - 2)], perm[size_t(rank - 1)]);
    std::string out;
    set_ints(e.with_attrs("Transpose", {in[i]}, out), "perm", perm);
    operands[i] = out;
  }
  return {e.op("MatMul", operands)};
}

// Dropout in training mode (seed and ratio as ours) of ones of x's shape:
// its output is the mask scaled, as ours is.
std::vector<std::string> OpExport::dropout_mask() {
  const std::string ones = e.op("Expand", {number(1), e.op("Shape", {in[0]})});
  const std::string ratio = ex.constant(ag::fill({}, attrs.lo, DType::float64), "ratio");
  const std::string training = ex.constant(Tensor(true), "training_mode");
  std::string out;
  set_int(e.with_attrs("Dropout", {ones, ratio, training}, out), "seed", int64_t(attrs.seed));
  return {out};
}

std::vector<std::string> export_op(Exporter& ex, const graph::Body& body, const graph::Node& n,
                                   ::onnx::GraphProto& g, const std::vector<std::string>& in) {
  const DType in_dtype = n.inputs.empty() ? DType::float32 : body.type_of(n.inputs[0]).dtype;
  OpExport x{{ex, g}, ex, body, n, in, n.attrs, in_dtype, n.outputs[0].dtype};
#define AG_EXPORT_onnx(type) same(type)
#define AG_EXPORT_onnx_compare(type) compare(type)
#define AG_EXPORT_onnx_reduce(type) reduce(type)
#define AG_EXPORT_onnx_by(form) form()
#define AG_EXPORT_onnx_none(why) not_exported(why)
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx) \
  case OpId::id:                                                     \
    return x.AG_EXPORT_##onnx;
  switch (n.op) {
#include "ag/ops.def"
    case OpId::kCount:
      break;
  }
#undef AG_OP
#undef AG_EXPORT_onnx
#undef AG_EXPORT_onnx_compare
#undef AG_EXPORT_onnx_reduce
#undef AG_EXPORT_onnx_by
#undef AG_EXPORT_onnx_none
  throw InternalError("onnx export: node '" + n.name + "' has no op");
}

}  // namespace ag::onnx_io
