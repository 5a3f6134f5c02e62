#include "exporter.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "ag/error.h"
#include "ag/strings.h"
#include "graph/variable_state.h"

namespace ag::onnx_io {

using graph::NodeKind;

int32_t onnx_type(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return ::onnx::TensorProto::FLOAT;
    case DType::float64:
      return ::onnx::TensorProto::DOUBLE;
    case DType::int32:
      return ::onnx::TensorProto::INT32;
    case DType::int64:
      return ::onnx::TensorProto::INT64;
    case DType::bool_:
      return ::onnx::TensorProto::BOOL;
    case DType::uint8:
      return ::onnx::TensorProto::UINT8;
    case DType::int8:
      return ::onnx::TensorProto::INT8;
    case DType::int16:
      return ::onnx::TensorProto::INT16;
    case DType::uint16:
      return ::onnx::TensorProto::UINT16;
    case DType::uint32:
      return ::onnx::TensorProto::UINT32;
    case DType::uint64:
      return ::onnx::TensorProto::UINT64;
    case DType::float16:
      return ::onnx::TensorProto::FLOAT16;
    case DType::bfloat16:
      return ::onnx::TensorProto::BFLOAT16;
    case DType::string:
      return ::onnx::TensorProto::STRING;
  }
  throw InternalError("onnx_type: unknown dtype");
}

::onnx::TensorProto tensor_to_proto(const Tensor& value, const std::string& name) {
  ::onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx_type(value.dtype()));
  for (int i = 0; i < value.rank(); ++i) proto.add_dims(value.shape()[i]);
  // ONNX keeps strings in string_data only (raw_data cannot hold them).
  if (value.dtype() == DType::string) {
    for (const std::string& s : strings::to_vector(value)) proto.add_string_data(s);
    return proto;
  }
  const size_t bytes = size_t(value.num_elements()) * dtype_size(value.dtype());
  proto.set_raw_data(std::string(static_cast<const char*>(value.raw_data()), bytes));
  return proto;
}

void set_value_info(::onnx::ValueInfoProto& info, const std::string& name,
                    const ops::ValueType& type, const std::string& dim_prefix) {
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx_type(type.dtype));
  if (type.shape.has_unknown_rank()) return;
  auto* shape = tensor->mutable_shape();
  for (int i = 0; i < type.shape.rank(); ++i) {
    auto* dim = shape->add_dim();
    if (type.shape[i] != kUnknownDim)
      dim->set_dim_value(type.shape[i]);
    else if (!dim_prefix.empty())
      dim->set_dim_param(dim_prefix + "_dim" + std::to_string(i));
  }
}

void set_sequence_info(::onnx::ValueInfoProto& info, const std::string& name,
                       const ops::ValueType& type) {
  info.set_name(name);
  auto* tensor =
      info.mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx_type(type.dtype));
  if (type.shape.has_unknown_rank()) return;
  auto* shape = tensor->mutable_shape();
  for (int i = 1; i < type.shape.rank(); ++i) {
    auto* dim = shape->add_dim();
    if (type.shape[i] != kUnknownDim) dim->set_dim_value(type.shape[i]);
  }
}

void set_int(::onnx::NodeProto& node, const std::string& name, int64_t v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_ints(::onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_float(::onnx::NodeProto& node, const std::string& name, float v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

void set_string(::onnx::NodeProto& node, const std::string& name, const std::string& v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

void set_strings(::onnx::NodeProto& node, const std::string& name,
                 const std::vector<std::string>& v) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (const std::string& s : v) a->add_strings(s);
}

std::string Exporter::fresh(const std::string& base) {
  return base + "__" + std::to_string(next_name_++);
}

::onnx::NodeProto& Exporter::add(::onnx::GraphProto& g, const std::string& op_type,
                                 const std::vector<std::string>& inputs, std::string& output) {
  ::onnx::NodeProto& node = *g.add_node();
  node.set_op_type(op_type);
  node.set_name(fresh(op_type));
  for (const std::string& in : inputs) node.add_input(in);
  output = fresh(op_type);
  node.add_output(output);
  return node;
}

std::vector<std::string> Exporter::node(::onnx::GraphProto& g, const std::string& op_type,
                                        const std::vector<std::string>& inputs,
                                        size_t num_outputs) {
  std::vector<std::string> outputs(1);
  ::onnx::NodeProto& node = add(g, op_type, inputs, outputs[0]);
  for (size_t k = 1; k < num_outputs; ++k) {
    outputs.push_back(fresh(op_type));
    node.add_output(outputs.back());
  }
  return outputs;
}

std::string Exporter::constant(const Tensor& value, const std::string& base) {
  std::string name = fresh(base);
  *top_.add_initializer() = tensor_to_proto(value, name);
  return name;
}

std::string Exporter::int64s(const std::vector<int64_t>& values) {
  return constant(ag::constant(values, Shape{int64_t(values.size())}), "ints");
}

std::string Exporter::zeros(::onnx::GraphProto& g, const std::vector<int64_t>& dims, DType dtype) {
  std::string out;
  auto* value = add(g, "ConstantOfShape", {int64s(dims)}, out).add_attribute();
  value->set_name("value");
  value->set_type(::onnx::AttributeProto::TENSOR);
  *value->mutable_t() = tensor_to_proto(ag::zeros(Shape{1}, dtype), "value");
  return out;
}

namespace {

std::vector<OnnxValue> tensors(const std::vector<std::string>& names) {
  std::vector<OnnxValue> out;
  for (const std::string& name : names) out.push_back(OnnxValue::of_tensor(name));
  return out;
}

std::vector<bool> sequences_of(const std::vector<OnnxValue*>& values) {
  std::vector<bool> out;
  for (const OnnxValue* v : values) out.push_back(v->is_sequence());
  return out;
}

}  // namespace

const std::string& Exporter::tensor(OnnxValue& v, ::onnx::GraphProto& g) {
  if (!v.tensor.empty()) return v.tensor;
  // The rows stacked along a new first axis, as TensorArray::stack. An
  // empty sequence has no row shape for ConcatFromSequence to give (ONNX
  // leaves it unspecified), so an array that may be empty and whose row
  // shape is static is stacked behind a zero row, which is sliced off.
  const Shape& shape = v.stacked.shape;
  const bool may_be_empty =
      shape.has_unknown_rank() || shape.rank() == 0 || shape[0] == kUnknownDim || shape[0] == 0;
  std::vector<int64_t> row;
  for (int i = 1; !shape.has_unknown_rank() && i < shape.rank(); ++i) row.push_back(shape[i]);
  const bool static_row = !shape.has_unknown_rank() && shape.rank() > 0 &&
                          std::find(row.begin(), row.end(), kUnknownDim) == row.end();
  std::string rows = v.sequence;
  if (may_be_empty && static_row) {
    const std::string zero_row = zeros(g, row, v.stacked.dtype);
    rows = node(g, "SequenceInsert", {rows, zero_row, constant(Tensor(int64_t{0}), "zero")})[0];
  }
  std::string stacked;
  ::onnx::NodeProto& concat = add(g, "ConcatFromSequence", {rows}, stacked);
  set_int(concat, "axis", 0);
  set_int(concat, "new_axis", 1);
  if (rows != v.sequence) {
    stacked =
        node(g, "Slice",
             {stacked, int64s({1}), int64s({std::numeric_limits<int64_t>::max()}), int64s({0})})[0];
  }
  v.tensor = stacked;
  return v.tensor;
}

const std::string& Exporter::sequence(OnnxValue& v, ::onnx::GraphProto& g) {
  if (v.sequence.empty()) {
    // The rows along the first axis, as TensorArray::unstack.
    ::onnx::NodeProto& node = add(g, "SplitToSequence", {v.tensor}, v.sequence);
    set_int(node, "axis", 0);
    set_int(node, "keepdims", 0);
  }
  return v.sequence;
}

std::vector<OnnxValue> Exporter::emit(const graph::Body& body, ::onnx::GraphProto& g,
                                      std::vector<OnnxValue> inputs) {
  if (inputs.size() != body.placeholders.size())
    throw InternalError("onnx export: a body's inputs do not match its placeholders");
  std::vector<std::vector<OnnxValue>> values(body.nodes.size());
  for (size_t k = 0; k < inputs.size(); ++k)
    values[size_t(body.placeholders[k])] = {std::move(inputs[k])};
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const graph::Node& n = body.nodes[i];
    if (n.kind == NodeKind::Placeholder) continue;
    // Pointers, so that a form converted for one use is there for the next.
    std::vector<OnnxValue*> in;
    for (graph::ValueRef v : n.inputs) in.push_back(&values[size_t(v.node)].at(size_t(v.output)));
    values[i] = emit_node(body, n, g, in);
  }
  std::vector<OnnxValue> outputs;
  for (graph::ValueRef v : body.outputs)
    outputs.push_back(values[size_t(v.node)].at(size_t(v.output)));
  return outputs;
}

// A variable is exported with the value it holds now, once.
std::string Exporter::variable(const std::shared_ptr<detail::VariableState>& v) {
  for (const auto& [name, state] : variables_) {
    if (state == v) return name;
  }
  variables_.emplace_back(constant(v->read(), v->name.empty() ? "variable" : v->name), v);
  return variables_.back().first;
}

std::vector<OnnxValue> Exporter::emit_node(const graph::Body& body, const graph::Node& n,
                                           ::onnx::GraphProto& g,
                                           const std::vector<OnnxValue*>& in) {
  switch (n.kind) {
    case NodeKind::Placeholder:
      break;
    case NodeKind::Const:
      return tensors({constant(n.value, n.name)});
    case NodeKind::ReadVariable:
      return tensors({variable(n.variable)});
    case NodeKind::Op: {
      if (auto out = export_array_op(*this, body, n, g, in)) return *out;
      std::vector<std::string> names;
      for (OnnxValue* v : in) names.push_back(tensor(*v, g));
      return tensors(export_op(*this, body, n, g, names));
    }
    case NodeKind::If:
      return emit_if(n, g, in);
    case NodeKind::While:
      return emit_while(n, g, in);
    case NodeKind::Fused: {
      // Only optimised bodies have fused nodes (save exports the traced
      // one); the members are ordinary ops.
      std::vector<OnnxValue> inputs;
      for (OnnxValue* v : in) inputs.push_back(*v);
      return emit(*n.subgraphs[0], g, inputs);
    }
    case NodeKind::AssignVariable:
    case NodeKind::AssignAddVariable:
    case NodeKind::AssignSubVariable:
      throw UnimplementedError("node '" + n.name + "' (" + n.op_name() +
                               ") updates an ag::Variable; an ONNX graph has no state, so a "
                               "function that assigns variables cannot be exported");
    case NodeKind::Effect:
      // An assertion only checks; TensorFlow's converters drop it too.
      if (n.name == "assert" || n.name.rfind("assert_", 0) == 0) {
        warnings_.push_back("node '" + n.name + "': an ag::assert_that is not exported");
        return {};
      }
      throw UnimplementedError("node '" + n.name +
                               "' runs C++ code (ag::print or ag::host_function), which an ONNX "
                               "model cannot hold; leave it out of the exported function");
  }
  throw InternalError("onnx export: a placeholder in the node list");
}

void Exporter::emit_subgraph(const graph::Body& body, ::onnx::GraphProto& sub,
                             const std::vector<OnnxValue>& inputs, const std::string& name,
                             const std::vector<bool>& sequences) {
  sub.set_name(fresh(name));
  std::vector<OnnxValue> outputs = emit(body, sub, inputs);
  for (size_t k = 0; k < outputs.size(); ++k) {
    const ops::ValueType& type = body.type_of(body.outputs[k]);
    if (sequences[k]) {
      std::string out = node(sub, "Identity", {sequence(outputs[k], sub)})[0];
      set_sequence_info(*sub.add_output(), out, type);
    } else {
      std::string out = node(sub, "Identity", {tensor(outputs[k], sub)})[0];
      set_value_info(*sub.add_output(), out, type, "");
    }
  }
}

std::vector<OnnxValue> Exporter::emit_if(const graph::Node& n, ::onnx::GraphProto& g,
                                         const std::vector<OnnxValue*>& in) {
  std::vector<OnnxValue> captures;
  for (size_t k = 1; k < in.size(); ++k) captures.push_back(*in[k]);
  if (n.outputs.empty()) {
    // An If that returns nothing is kept for what it runs: asserts, which are
    // not exported, or print and variable updates, which are errors. ONNX's
    // If must have an output, so it is left out; its branches are emitted
    // aside for those errors and warnings.
    ::onnx::GraphProto aside;
    for (const auto& branch : n.subgraphs) emit(*branch, aside, captures);
    return {};
  }
  // An output is a sequence where either branch returns a TensorArray.
  const std::vector<bool> sequences = sequence_outputs(n, sequences_of(in));
  const std::string& pred = tensor(*in[0], g);
  ::onnx::NodeProto& node = *g.add_node();
  node.set_op_type("If");
  node.set_name(fresh("If"));
  node.add_input(pred);
  std::vector<OnnxValue> outputs;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    std::string name = fresh("If");
    node.add_output(name);
    outputs.push_back(sequences[k] ? OnnxValue::of_sequence(name, n.outputs[k])
                                   : OnnxValue::of_tensor(name));
  }
  const char* names[] = {"then_branch", "else_branch"};
  for (size_t b = 0; b < 2; ++b) {
    auto* attr = node.add_attribute();
    attr->set_name(names[b]);
    attr->set_type(::onnx::AttributeProto::GRAPH);
    emit_subgraph(*n.subgraphs[b], *attr->mutable_g(), captures, names[b], sequences);
  }
  return outputs;
}

// Our While tests its condition before each iteration; ONNX's Loop takes the
// first test as an input and computes the next one in its body. So the
// condition body is emitted twice: before the Loop, and after the loop body.
// A loop variable that the body writes as a TensorArray is a sequence.
std::vector<OnnxValue> Exporter::emit_while(const graph::Node& n, ::onnx::GraphProto& g,
                                            const std::vector<OnnxValue*>& in) {
  const graph::Body& cond = *n.subgraphs[0];
  const graph::Body& body = *n.subgraphs[1];
  const size_t num_vars = n.outputs.size();
  const std::vector<bool> sequences = sequence_outputs(n, sequences_of(in));
  // Each variable in the form it has in the loop.
  auto as_state = [&](OnnxValue& v, ::onnx::GraphProto& graph, size_t k) {
    return sequences[k] ? sequence(v, graph) : tensor(v, graph);
  };
  std::vector<std::string> initial;
  for (size_t k = 0; k < num_vars; ++k) initial.push_back(as_state(*in[k], g, k));
  std::vector<OnnxValue> vars, captures;
  for (size_t k = 0; k < in.size(); ++k) (k < num_vars ? vars : captures).push_back(*in[k]);
  auto with_captures = [&](std::vector<OnnxValue> v) {
    v.insert(v.end(), captures.begin(), captures.end());
    return v;
  };
  std::vector<OnnxValue> first = emit(cond, g, with_captures(vars));
  const std::string first_test = tensor(first.at(0), g);

  ::onnx::NodeProto& loop = *g.add_node();
  loop.set_op_type("Loop");
  loop.set_name(fresh("Loop"));
  // M, the trip count: maximum_iterations, if the loop has one.
  loop.add_input(
      n.attrs.ints.empty() ? "" : constant(Tensor(int64_t{n.attrs.ints[0]}), "max_iterations"));
  loop.add_input(first_test);
  for (const std::string& v : initial) loop.add_input(v);
  std::vector<OnnxValue> outputs;
  for (size_t k = 0; k < num_vars; ++k) {
    std::string name = fresh("Loop");
    loop.add_output(name);
    outputs.push_back(sequences[k] ? OnnxValue::of_sequence(name, n.outputs[k])
                                   : OnnxValue::of_tensor(name));
  }
  auto* attr = loop.add_attribute();
  attr->set_name("body");
  attr->set_type(::onnx::AttributeProto::GRAPH);
  ::onnx::GraphProto& sub = *attr->mutable_g();
  sub.set_name(fresh("loop_body"));
  set_value_info(*sub.add_input(), fresh("iteration"), {DType::int64, Shape{}}, "");
  set_value_info(*sub.add_input(), fresh("condition"), {DType::bool_, Shape{}}, "");
  std::vector<OnnxValue> in_vars;
  for (size_t k = 0; k < num_vars; ++k) {
    std::string name = fresh("loop_var");
    if (sequences[k]) {
      in_vars.push_back(OnnxValue::of_sequence(name, n.outputs[k]));
      set_sequence_info(*sub.add_input(), name, n.outputs[k]);
    } else {
      in_vars.push_back(OnnxValue::of_tensor(name));
      set_value_info(*sub.add_input(), name, n.outputs[k], "");
    }
  }
  std::vector<OnnxValue> next = emit(body, sub, with_captures(in_vars));
  std::vector<OnnxValue> next_cond = emit(cond, sub, with_captures(next));
  std::string test_out = node(sub, "Identity", {tensor(next_cond.at(0), sub)})[0];
  set_value_info(*sub.add_output(), test_out, {DType::bool_, Shape{}}, "");
  for (size_t k = 0; k < num_vars; ++k) {
    std::string out = node(sub, "Identity", {as_state(next[k], sub, k)})[0];
    if (sequences[k])
      set_sequence_info(*sub.add_output(), out, n.outputs[k]);
    else
      set_value_info(*sub.add_output(), out, n.outputs[k], "");
  }
  return outputs;
}

}  // namespace ag::onnx_io
