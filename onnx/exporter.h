// Writing a traced graph as an ONNX model (ag::onnx::save). The Exporter
// walks a graph body in order and emits ONNX nodes for each of our nodes:
// registry ops through export_op (onnx/export_ops.cpp, one case per op of
// runtime/ops/ops.def), constants and variables as initializers, If as If,
// While as Loop. Names are unique across the model, so subgraphs can read
// the values of the graphs around them by name.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "ag/tensor.h"
#include "graph/graph.h"

namespace ag::onnx_io {

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

  // Emits `body` into `g` with its placeholders bound to `inputs`; returns the
  // names of the body's outputs.
  std::vector<std::string> emit(const graph::Body& body, ::onnx::GraphProto& g,
                                const std::vector<std::string>& inputs);

  // What the export leaves out (asserts), for the caller to report.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  std::vector<std::string> emit_node(const graph::Body& body, const graph::Node& n,
                                     ::onnx::GraphProto& g, const std::vector<std::string>& in);
  std::vector<std::string> emit_if(const graph::Node& n, ::onnx::GraphProto& g,
                                   const std::vector<std::string>& in);
  std::vector<std::string> emit_while(const graph::Node& n, ::onnx::GraphProto& g,
                                      const std::vector<std::string>& in);
  // A subgraph of If or Loop: `body` with placeholders bound to `inputs`,
  // each output through an Identity typed `types`.
  void emit_subgraph(const graph::Body& body, ::onnx::GraphProto& sub,
                     const std::vector<std::string>& inputs, const std::string& name);

  ::onnx::GraphProto& top_;
  int64_t opset_;
  size_t next_name_ = 0;
  std::vector<std::string> warnings_;
};

// Sets `info` to a tensor value of `type` named `name`; unknown dims get a
// symbolic name from `dim_prefix` (or none when it is empty).
void set_value_info(::onnx::ValueInfoProto& info, const std::string& name,
                    const ops::ValueType& type, const std::string& dim_prefix);
int32_t onnx_type(DType dtype);
::onnx::TensorProto tensor_to_proto(const Tensor& value, const std::string& name);

// The ONNX nodes of one registry op; throws UnimplementedError naming the op
// when it has no ONNX form.
std::vector<std::string> export_op(Exporter& ex, const graph::Body& body, const graph::Node& n,
                                   ::onnx::GraphProto& g, const std::vector<std::string>& in);

}  // namespace ag::onnx_io
