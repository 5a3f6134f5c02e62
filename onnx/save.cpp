// ag::onnx::save: a traced graph as an ONNX model (onnx/exporter.h), checked
// with ONNX's checker and full shape inference before it is written. What is
// exported is the graph as the function runs it: optimised by the same passes
// (runtime/passes), so nodes whose results nothing uses are left out; only
// TensorArrays keep their rows along axis 0, as sequences (Target::kExport).
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <fstream>
#include <iostream>

#include "ag/error.h"
#include "ag/onnx.h"
#include "exporter.h"
#include "passes/passes.h"

namespace ag::onnx_io {

namespace {
constexpr int64_t kExportOpset = 17;
}  // namespace

::onnx::ModelProto export_model(const Graph& graph, const onnx::SaveOptions& options,
                                ExportedVariables* variables) {
  graph::Body body = graph.body();
  passes::optimize(body, passes::Target::kExport);
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("autograph-cpp");
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(kExportOpset);
  ::onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(options.graph_name);

  onnx_io::Exporter ex(g, kExportOpset);
  std::vector<onnx_io::OnnxValue> inputs;
  for (int32_t p : body.placeholders) {
    const graph::Node& n = body.nodes[size_t(p)];
    inputs.push_back(onnx_io::OnnxValue::of_tensor(n.name));
    onnx_io::set_value_info(*g.add_input(), n.name, n.outputs[0], n.name);
  }
  std::vector<std::string> outputs;
  try {
    // Graph outputs are tensors; a TensorArray's is its stack.
    for (onnx_io::OnnxValue& v : ex.emit(body, g, inputs)) outputs.push_back(ex.tensor(v, g));
  } catch (const UnimplementedError& e) {
    throw UnimplementedError("ag::onnx::save of '" + options.graph_name + "': " + e.message());
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    // A graph output gets its own name, also where it is an input or a constant.
    ::onnx::NodeProto& node = *g.add_node();
    node.set_op_type("Identity");
    node.set_name("output_" + std::to_string(k));
    node.add_input(outputs[k]);
    node.add_output("output_" + std::to_string(k));
    onnx_io::set_value_info(*g.add_output(), "output_" + std::to_string(k),
                            body.type_of(body.outputs[k]), "output_" + std::to_string(k));
  }
  for (const std::string& w : ex.warnings()) std::cerr << "ag::onnx::save: warning: " << w << "\n";
  try {
    ::onnx::checker::check_model(model);
    ::onnx::shape_inference::InferShapes(model, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(true, 1));
  } catch (const std::exception& e) {
    throw InternalError("ag::onnx::save of '" + options.graph_name +
                        "': the exported model fails ONNX's checker (a bug in autograph-cpp; "
                        "please report it with the graph): " +
                        e.what());
  }
  if (variables) *variables = ex.variables();
  return model;
}

}  // namespace ag::onnx_io

namespace ag::onnx {

std::string save_to_bytes(const Graph& graph, const SaveOptions& options) {
  return onnx_io::export_model(graph, options, nullptr).SerializeAsString();
}

void save(const Graph& graph, const std::string& path, const SaveOptions& options) {
  std::string bytes = save_to_bytes(graph, options);
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(bytes.data(), std::streamsize(bytes.size())))
    throw InvalidArgumentError(path + ": cannot write the file");
}

}  // namespace ag::onnx
