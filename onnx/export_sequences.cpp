// TensorArrays as ONNX sequences. Our graphs carry a TensorArray as the
// tensor of its stacked rows: tensor_array_write returns the new stack, a
// read is a gather of one row, the size is dim 0, stack is the tensor itself.
// In ONNX the array is a seq(tensor):
//   - a value is a sequence where tensor_array_write returns it, and where an
//     If or While returns it because a branch or the loop body writes it
//     (sequence_outputs, a fixpoint over the loop variables);
//   - write(i, v): SequenceErase at i, then SequenceInsert of v at i. A
//     dynamic-size array is first padded with zero rows to i + 1 by a Loop of
//     SequenceInserts, as our write grows it (an append pads one row and
//     replaces it);
//   - read of one row: SequenceAt; size: SequenceLength;
//   - every other use takes the value as a tensor: ConcatFromSequence with
//     new_axis=1 (stack), behind a zero row where the array may be empty; a
//     tensor written as an array is SplitToSequence'd (Exporter::tensor and
//     Exporter::sequence, emitted once per graph).
#include "ag/error.h"
#include "ag/ops.h"
#include "exporter.h"

namespace ag::onnx_io {

using graph::NodeKind;
using ops::OpId;

namespace {

std::vector<bool> body_sequence_outputs(const graph::Body& body,
                                        const std::vector<bool>& placeholders) {
  std::vector<std::vector<bool>> sequences(body.nodes.size());
  for (size_t k = 0; k < placeholders.size(); ++k)
    sequences[size_t(body.placeholders[k])] = {placeholders[k]};
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const graph::Node& n = body.nodes[i];
    if (n.kind == NodeKind::Placeholder) continue;
    std::vector<bool> in;
    for (graph::ValueRef v : n.inputs) in.push_back(sequences[size_t(v.node)].at(size_t(v.output)));
    sequences[i] = sequence_outputs(n, in);
  }
  std::vector<bool> out;
  for (graph::ValueRef v : body.outputs)
    out.push_back(sequences[size_t(v.node)].at(size_t(v.output)));
  return out;
}

// `seq` with zero rows shaped like `value` appended up to length index + 1.
std::string pad_to_index(Exporter& ex, ::onnx::GraphProto& g, const std::string& seq,
                         const std::string& index, const std::string& value,
                         const ops::ValueType& row) {
  // Where(false, value, 0): zeros of the value's shape, also where its dims
  // are only known at run time.
  std::string zero_row = ex.node(g, "Where",
                                 {ex.constant(Tensor(false), "false"), value,
                                  ex.constant(ag::cast(Tensor(0), row.dtype), "zero")})[0];
  std::string missing =
      ex.node(g, "Sub",
              {ex.node(g, "Add", {index, ex.constant(Tensor(int64_t{1}), "one")})[0],
               ex.node(g, "SequenceLength", {seq})[0]})[0];
  std::string trips = ex.node(g, "Max", {missing, ex.constant(Tensor(int64_t{0}), "zero")})[0];

  std::string padded;
  ::onnx::NodeProto& loop = ex.add(g, "Loop", {trips, "", seq}, padded);
  auto* attr = loop.add_attribute();
  attr->set_name("body");
  attr->set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto& body = *attr->mutable_g();
  body.set_name(ex.fresh("pad_body"));
  const ops::ValueType stacked{row.dtype, [&] {
                                 if (row.shape.has_unknown_rank()) return Shape::unknown_rank();
                                 Shape s{kUnknownDim};
                                 for (int64_t d : row.shape) s.push_back(d);
                                 return s;
                               }()};
  const std::string rows_in = ex.fresh("rows");
  const std::string cond_in = ex.fresh("condition");
  set_value_info(*body.add_input(), ex.fresh("iteration"), {DType::int64, Shape{}}, "");
  set_value_info(*body.add_input(), cond_in, {DType::bool_, Shape{}}, "");
  set_sequence_info(*body.add_input(), rows_in, stacked);
  std::string cond_out = ex.node(body, "Identity", {cond_in})[0];
  set_value_info(*body.add_output(), cond_out, {DType::bool_, Shape{}}, "");
  std::string rows_out = ex.node(body, "SequenceInsert", {rows_in, zero_row})[0];
  set_sequence_info(*body.add_output(), rows_out, stacked);
  return padded;
}

}  // namespace

std::vector<bool> sequence_outputs(const graph::Node& n, const std::vector<bool>& input_sequences) {
  switch (n.kind) {
    case NodeKind::Op:
      return std::vector<bool>(n.outputs.size(), n.op == OpId::TensorArrayWrite);
    case NodeKind::If: {
      // The branches read the If's inputs after the condition.
      std::vector<bool> captures(input_sequences.begin() + 1, input_sequences.end());
      std::vector<bool> out(n.outputs.size(), false);
      for (const auto& branch : n.subgraphs) {
        std::vector<bool> b = body_sequence_outputs(*branch, captures);
        for (size_t k = 0; k < out.size() && k < b.size(); ++k) out[k] = out[k] || b[k];
      }
      return out;
    }
    case NodeKind::While: {
      // A loop variable is a sequence when it enters as one or the body
      // returns one for it, given the variables that are: a fixpoint, as a
      // variable can become a sequence through another.
      const size_t num_vars = n.outputs.size();
      std::vector<bool> placeholders = input_sequences;
      for (bool changed = true; changed;) {
        changed = false;
        std::vector<bool> next = body_sequence_outputs(*n.subgraphs[1], placeholders);
        for (size_t k = 0; k < num_vars; ++k) {
          if (next[k] && !placeholders[k]) placeholders[k] = changed = true;
        }
      }
      return std::vector<bool>(placeholders.begin(), placeholders.begin() + long(num_vars));
    }
    default:
      return std::vector<bool>(n.outputs.size(), false);
  }
}

std::optional<std::vector<OnnxValue>> export_array_op(Exporter& ex, const graph::Body& body,
                                                      const graph::Node& n, ::onnx::GraphProto& g,
                                                      const std::vector<OnnxValue*>& in) {
  switch (n.op) {
    case OpId::TensorArrayWrite: {
      // in: the array, the index, the value; keepdims: dynamic size. (Rows
      // along another axis are the executor's layout, which an export's
      // optimisation does not choose: passes::Target::kExport.)
      if (n.attrs.axis != 0)
        throw InternalError("tensor_array_write along axis " + std::to_string(n.attrs.axis) +
                            " reached the ONNX exporter; export with passes::Target::kExport");
      const std::string& array = ex.sequence(*in[0], g);
      std::string index = ex.tensor(*in[1], g);
      if (body.type_of(n.inputs[1]).dtype != DType::int64) {
        std::string cast;
        set_int(ex.add(g, "Cast", {index}, cast), "to", ::onnx::TensorProto::INT64);
        index = cast;
      }
      const std::string& value = ex.tensor(*in[2], g);
      std::string rows = n.attrs.keepdims
                             ? pad_to_index(ex, g, array, index, value, body.type_of(n.inputs[2]))
                             : array;
      std::string erased = ex.node(g, "SequenceErase", {rows, index})[0];
      return std::vector<OnnxValue>{OnnxValue::of_sequence(
          ex.node(g, "SequenceInsert", {erased, value, index})[0], n.outputs[0])};
    }
    case OpId::Gather:
      // TensorArray::read: one row of an array.
      if (n.attrs.axis == 0 && in[0]->is_sequence() && body.type_of(n.inputs[1]).shape.rank() == 0)
        return std::vector<OnnxValue>{OnnxValue::of_tensor(
            ex.node(g, "SequenceAt", {in[0]->sequence, ex.tensor(*in[1], g)})[0])};
      return std::nullopt;
    case OpId::Dim:
      // TensorArray::size of an array whose length is known at run time only.
      if (n.attrs.axis == 0 && in[0]->is_sequence())
        return std::vector<OnnxValue>{
            OnnxValue::of_tensor(ex.node(g, "SequenceLength", {in[0]->sequence})[0])};
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace ag::onnx_io
