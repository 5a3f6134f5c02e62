// The ONNX form of each op of our registry (runtime/ops/ops.def): one case
// per op, so that the compiler's -Wswitch names an op added to the registry
// without one here. Ops whose semantics ONNX spells differently:
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

}  // namespace

std::vector<std::string> export_op(Exporter& ex, const graph::Body& body, const graph::Node& n,
                                   ::onnx::GraphProto& g, const std::vector<std::string>& in) {
  Emit e{ex, g};
  const ops::Attrs& attrs = n.attrs;
  const DType in_dtype = n.inputs.empty() ? DType::float32 : body.type_of(n.inputs[0]).dtype;
  const DType out_dtype = n.outputs[0].dtype;
  std::string out;
  auto unary = [&](const char* type) { return std::vector<std::string>{e.op(type, {in[0]})}; };
  auto binary = [&](const char* type) {
    return std::vector<std::string>{e.op(type, {in[0], in[1]})};
  };
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
    case OpId::FloorDiv: {
      std::string q = e.op("Div", {in[0], in[1]});
      if (is_floating(in_dtype)) return {e.op("Floor", {q})};
      std::string r = e.op("Sub", {in[0], e.op("Mul", {q, in[1]})});
      std::string adjust = e.cast(e.sign_differs(r, in[1], in_dtype), in_dtype);
      return {e.op("Sub", {q, adjust})};
    }
    case OpId::Mod: {
      if (!is_floating(in_dtype)) return binary("Mod");
      set_int(e.with_attrs("Mod", {in[0], in[1]}, out), "fmod", 1);
      std::string fixed = e.op("Add", {out, in[1]});
      return {e.op("Where", {e.sign_differs(out, in[1], in_dtype), fixed, out})};
    }
    case OpId::Pow:
      return binary("Pow");
    case OpId::Maximum:
      return binary("Max");
    case OpId::Minimum:
      return binary("Min");
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
    case OpId::ClipByValue:
      // ONNX's Clip takes scalar bounds only; ours broadcast.
      return {e.op("Max", {e.op("Min", {in[0], in[2]}), in[1]})};
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
    case OpId::ArgMin: {
      ::onnx::NodeProto& node =
          e.with_attrs(n.op == OpId::ArgMax ? "ArgMax" : "ArgMin", {in[0]}, out);
      set_int(node, "axis", attrs.axis);
      set_int(node, "keepdims", 0);
      return {out};
    }
    case OpId::Cumsum: {
      ::onnx::NodeProto& node =
          e.with_attrs("CumSum", {in[0], ex.constant(Tensor(int64_t{attrs.axis}), "axis")}, out);
      set_int(node, "exclusive", attrs.ints.at(0));
      set_int(node, "reverse", attrs.ints.at(1));
      return {out};
    }
    case OpId::ReduceSumTo: {
      const Shape& x_shape = body.type_of(n.inputs[0]).shape;
      const Shape& like_shape = body.type_of(n.inputs[1]).shape;
      const int lead = x_shape.rank() - like_shape.rank();
      std::string summed;
      if (x_shape.is_fully_defined() && like_shape.is_fully_defined()) {
        std::vector<int64_t> axes;
        for (int d = 0; d < x_shape.rank(); ++d)
          if (d < lead || (like_shape[d - lead] == 1 && x_shape[d] != 1)) axes.push_back(d);
        if (axes.empty()) return unary("Identity");
        ops::Attrs sum;
        sum.ints = axes;
        sum.keepdims = true;
        return {e.op("Reshape", {e.reduce("ReduceSum", in[0], sum),
                                 ex.int64s({like_shape.dims().begin(), like_shape.dims().end()})})};
      }
      // Dims known only at run time: the axes where like's shape (padded
      // with leading 1s to x's rank) has 1 and x's has not, by NonZero.
      std::string like_dims = e.op("Shape", {in[1]});
      std::string padded;
      if (lead > 0) {
        set_int(e.with_attrs("Concat",
                             {ex.int64s(std::vector<int64_t>(size_t(lead), 1)), like_dims}, padded),
                "axis", 0);
      } else {
        padded = like_dims;
      }
      std::string one = ex.int64s({1});
      std::string summed_axes =
          e.op("And", {e.op("Equal", {padded, one}),
                       e.op("Not", {e.op("Equal", {e.op("Shape", {in[0]}), one})})});
      std::string axes = e.op("Reshape", {e.op("NonZero", {summed_axes}), ex.int64s({-1})});
      ::onnx::NodeProto& node = e.with_attrs("ReduceSum", {in[0], axes}, summed);
      set_int(node, "keepdims", 1);
      set_int(node, "noop_with_empty_axes", 1);
      return {e.op("Reshape", {summed, like_dims})};
    }
    case OpId::MatMul:
      return binary("MatMul");
    case OpId::Transpose: {
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
    case OpId::Reshape: {
      // Our reshape has no "0 copies the dim" rule; allowzero keeps a 0 a 0.
      ::onnx::NodeProto& node = e.with_attrs("Reshape", {in[0], ex.int64s(attrs.ints)}, out);
      set_int(node, "allowzero", 1);
      return {out};
    }
    case OpId::ExpandDims:
      return {e.op("Unsqueeze", {in[0], ex.int64s({attrs.axis})})};
    case OpId::BroadcastTo:
      return {e.op("Expand", {in[0], ex.int64s(attrs.ints)})};
    case OpId::Squeeze:
      if (attrs.ints.empty()) return unary("Squeeze");
      return {e.op("Squeeze", {in[0], ex.int64s(attrs.ints)})};
    case OpId::Concat: {
      set_int(e.with_attrs("Concat", in, out), "axis", attrs.axis);
      return {out};
    }
    case OpId::Stack: {
      std::vector<std::string> rows;
      for (const std::string& x : in)
        rows.push_back(e.op("Unsqueeze", {x, ex.int64s({attrs.axis})}));
      set_int(e.with_attrs("Concat", rows, out), "axis", attrs.axis);
      return {out};
    }
    case OpId::Gather: {
      set_int(e.with_attrs("Gather", {in[0], in[1]}, out), "axis", attrs.axis);
      return {out};
    }
    case OpId::UnsortedSegmentSum: {
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
      set_string(e.with_attrs("ScatterND", {zeros, indices, in[0]}, out), "reduction", "add");
      return {out};
    }
    case OpId::Slice: {
      const size_t rank = attrs.ints.size() / 2;
      std::vector<int64_t> starts, ends;
      for (size_t i = 0; i < rank; ++i) {
        const int64_t begin = attrs.ints[i], size = attrs.ints[i + rank];
        starts.push_back(begin);
        ends.push_back(size == -1 ? std::numeric_limits<int64_t>::max() : begin + size);
      }
      return {e.op("Slice", {in[0], ex.int64s(starts), ex.int64s(ends)})};
    }
    case OpId::OneHot: {
      // ONNX counts negative indices from the end; ours give a row of off values.
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
      set_int(e.with_attrs("OneHot", {indices, depth, values}, out), "axis", attrs.axis);
      return {out};
    }
    case OpId::Shape:
      return {e.cast(e.op("Shape", {in[0]}), attrs.dtype)};
    case OpId::Size:
      return {e.cast(e.op("Size", {in[0]}), attrs.dtype)};
    case OpId::Rank:
      return {e.cast(e.op("Size", {e.op("Shape", {in[0]})}), out_dtype)};
    case OpId::Dim: {
      ::onnx::NodeProto& node = e.with_attrs("Shape", {in[0]}, out);
      set_int(node, "start", attrs.axis);
      set_int(node, "end", attrs.axis + 1);
      return {e.op("Squeeze", {out, ex.int64s({0})})};
    }
    case OpId::Range:
      return {e.op("Range", {in[0], in[1], in[2]})};
    case OpId::Zeros:
      return {ex.zeros(g, attrs.ints, attrs.dtype)};
    case OpId::TensorArrayWrite:
      // A write makes a sequence, which export_array_op emits.
      throw InternalError("onnx export: node '" + n.name + "' is a TensorArray write");
    case OpId::RandomUniform:
    case OpId::RandomNormal:
      throw UnimplementedError("node '" + n.name + "' (" + n.op_name() +
                               ") draws random numbers; ONNX's random ops give other values, so "
                               "it is not exported");
    case OpId::kCount:
      break;
  }
  throw InternalError("onnx export: node '" + n.name + "' has no op");
}

}  // namespace ag::onnx_io
