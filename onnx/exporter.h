// Writing a traced graph as an ONNX model (ag::onnx::save). The Exporter
// walks a graph body in order and emits ONNX nodes for each of our nodes:
// registry ops through export_op (onnx/export_ops.cpp, one case per op of
// include/ag/ops.def), constants and variables as initializers, If as If,
// While as Loop, TensorArrays as sequences (onnx/export_sequences.cpp).
// Names are unique across the model, so subgraphs can read the values of the
// graphs around them by name.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ag/onnx.h"
#include "ag/tensor.h"
#include "graph/graph.h"

namespace ag::onnx_io {

// One value of our graph in the ONNX graph being written. Our graphs carry a
// TensorArray as the tensor of its stacked elements; in ONNX it is a
// seq(tensor), and a value used both ways has both forms, each converted
// from the other where it is first needed.
struct OnnxValue {
  std::string tensor;    // its name as a tensor; "" until needed
  std::string sequence;  // its name as a sequence of its rows (a TensorArray)
  // Of a value made as a sequence: the type of its rows stacked.
  ops::ValueType stacked;
  bool is_sequence() const { return !sequence.empty(); }

  static OnnxValue of_tensor(std::string name) { return {std::move(name), "", {}}; }
  static OnnxValue of_sequence(std::string name, ops::ValueType stacked) {
    return {"", std::move(name), std::move(stacked)};
  }
};

// Initializers of ag::Variables: (initializer name, variable).
using ExportedVariables =
    std::vector<std::pair<std::string, std::shared_ptr<detail::VariableState>>>;

class Exporter {
 public:
  Exporter(::onnx::GraphProto& top, int64_t opset) : top_(top), opset_(opset) {}

  int64_t opset() const { return opset_; }
  // A name not used anywhere in the model yet, from `base`.
  std::string fresh(const std::string& base);
  // Emits a node into `g`; returns its `num_outputs` output names.
  std::vector<std::string> node(::onnx::GraphProto& g, const std::string& op_type,
                                const std::vector<std::string>& inputs, size_t num_outputs = 1);
  // The same, for one output, with attributes set by the caller on the returned node.
  ::onnx::NodeProto& add(::onnx::GraphProto& g, const std::string& op_type,
                         const std::vector<std::string>& inputs, std::string& output);
  // A top-level initializer holding `value`.
  std::string constant(const Tensor& value, const std::string& base = "const");
  std::string int64s(const std::vector<int64_t>& values);
  // ConstantOfShape: zeros of `dtype` and the static dims.
  std::string zeros(::onnx::GraphProto& g, const std::vector<int64_t>& dims, DType dtype);

  // Emits `body` into `g` with its placeholders bound to `inputs`; returns the
  // body's outputs.
  std::vector<OnnxValue> emit(const graph::Body& body, ::onnx::GraphProto& g,
                              std::vector<OnnxValue> inputs);
  // The tensor form of `v` (its rows stacked, emitted into `g` the first
  // time it is needed) and its sequence form (SplitToSequence).
  const std::string& tensor(OnnxValue& v, ::onnx::GraphProto& g);
  const std::string& sequence(OnnxValue& v, ::onnx::GraphProto& g);

  // What the export leaves out (asserts), for the caller to report.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // The initializer of each ag::Variable the graph reads (one per variable,
  // however often it is read), in the order they were first read.
  const ExportedVariables& variables() const { return variables_; }

 private:
  // The initializer holding variable `v`'s value now, made on its first read.
  std::string variable(const std::shared_ptr<detail::VariableState>& v);
  std::vector<OnnxValue> emit_node(const graph::Body& body, const graph::Node& n,
                                   ::onnx::GraphProto& g, const std::vector<OnnxValue*>& in);
  std::vector<OnnxValue> emit_if(const graph::Node& n, ::onnx::GraphProto& g,
                                 const std::vector<OnnxValue*>& in);
  std::vector<OnnxValue> emit_while(const graph::Node& n, ::onnx::GraphProto& g,
                                    const std::vector<OnnxValue*>& in);
  // A branch of If: `body` with placeholders bound to `inputs`, each output
  // through an Identity, a sequence where `sequences` says so.
  void emit_subgraph(const graph::Body& body, ::onnx::GraphProto& sub,
                     const std::vector<OnnxValue>& inputs, const std::string& name,
                     const std::vector<bool>& sequences);

  ::onnx::GraphProto& top_;
  int64_t opset_;
  size_t next_name_ = 0;
  std::vector<std::string> warnings_;
  ExportedVariables variables_;
};

// The ONNX model of `graph` (what ag::onnx::save writes, checked); with
// `variables`, also the initializer of each ag::Variable it reads.
::onnx::ModelProto export_model(const Graph& graph, const onnx::SaveOptions& options,
                                ExportedVariables* variables);

// Sets `info` to a tensor value of `type` named `name`; unknown dims get a
// symbolic name from `dim_prefix` (or none when it is empty).
void set_value_info(::onnx::ValueInfoProto& info, const std::string& name,
                    const ops::ValueType& type, const std::string& dim_prefix);
// Sets `info` to a seq(tensor) value whose rows stacked have `type`.
void set_sequence_info(::onnx::ValueInfoProto& info, const std::string& name,
                       const ops::ValueType& type);
int32_t onnx_type(DType dtype);
// Adds an INT, FLOAT, INTS or STRING attribute to `node`.
void set_float(::onnx::NodeProto& node, const std::string& name, float v);
void set_int(::onnx::NodeProto& node, const std::string& name, int64_t v);
void set_ints(::onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& v);
void set_string(::onnx::NodeProto& node, const std::string& name, const std::string& v);
void set_strings(::onnx::NodeProto& node, const std::string& name,
                 const std::vector<std::string>& v);
::onnx::TensorProto tensor_to_proto(const Tensor& value, const std::string& name);

// Which outputs of node `n` are TensorArrays, as sequences, when
// `input_sequences` says which of its inputs are: those of tensor_array_write,
// and those of If and While that are, in a branch or the loop body.
std::vector<bool> sequence_outputs(const graph::Node& n, const std::vector<bool>& input_sequences);

// The sequence ops of a TensorArray op (onnx/export_sequences.cpp): a write,
// and a read of one row or the length of a value that is a sequence. Empty
// for other ops, which export_op writes on tensors.
std::optional<std::vector<OnnxValue>> export_array_op(Exporter& ex, const graph::Body& body,
                                                      const graph::Node& n, ::onnx::GraphProto& g,
                                                      const std::vector<OnnxValue*>& in);

// The ONNX nodes of one registry op; throws UnimplementedError naming the op
// when it has no ONNX form.
std::vector<std::string> export_op(Exporter& ex, const graph::Body& body, const graph::Node& n,
                                   ::onnx::GraphProto& g, const std::vector<std::string>& in);

}  // namespace ag::onnx_io
