// ag-onnx: look at and run an ONNX model with our runtime.
//
//   ag-onnx info  model.onnx              signature, opset, the graph as traced,
//                                         the optimised graph and its plan
//   ag-onnx dot   model.onnx [--optimized] the traced (or optimised) graph in Graphviz DOT
//   ag-onnx run   model.onnx in_0.pb ...  run on serialized TensorProtos, print outputs
//   ag-onnx check model.onnx              ONNX's checker with full shape inference
//
// Exit status: 0 success, 1 the model is invalid or cannot be loaded or run,
// 2 bad usage.
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ag/ag.h"
#include "ag/onnx.h"
#include "tensor_proto.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ag::InvalidArgumentError(path + ": cannot open the file");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ag::Tensor read_tensor(const std::string& path) {
  onnx::TensorProto proto;
  if (!proto.ParseFromString(read_file(path)))
    throw ag::InvalidArgumentError(path + ": not a serialized onnx.TensorProto");
  return ag::onnx_io::tensor_from_proto(proto, path);
}

int check(const std::string& path) {
  onnx::ModelProto model;
  if (!model.ParseFromString(read_file(path)))
    throw ag::InvalidArgumentError(path + ": not an ONNX model (the protobuf does not parse)");
  try {
    onnx::checker::check_model(model);
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(),
        onnx::ShapeInferenceOptions(/*check_type_val=*/true, /*strict_mode_val=*/1));
  } catch (const std::exception& e) {
    std::cerr << path << ": invalid: " << e.what() << "\n";
    return 1;
  }
  std::cout << path << ": valid (checker and full shape inference)\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ag-onnx: look at, check and run an ONNX model with autograph-cpp's runtime"};
  app.require_subcommand(1);
  std::string model_path;
  std::vector<std::string> inputs;
  bool optimized = false;
  auto* info = app.add_subcommand(
      "info", "print the signature, the opset, the traced and the optimised graph, and the plan");
  auto* dot = app.add_subcommand("dot", "print the traced graph in Graphviz DOT");
  dot->add_flag("--optimized", optimized, "the graph after the optimisation passes (fused nodes)");
  auto* run = app.add_subcommand("run", "run the model on serialized TensorProto inputs");
  auto* chk = app.add_subcommand("check", "run ONNX's checker with full shape inference");
  for (auto* sub : {info, dot, run, chk})
    sub->add_option("model", model_path, "the .onnx file")->required();
  run->add_option("inputs", inputs, "one input_K.pb per graph input, in order");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error& error) {
    return app.exit(error) == 0 ? 0 : 2;
  }

  try {
    if (chk->parsed()) return check(model_path);
    ag::onnx::Model model = ag::onnx::load(model_path);
    if (info->parsed()) {
      std::cout << model.signature() << "\nopset " << model.opset() << "\n"
                << model.graph().to_string() << "optimised:\n"
                << model.optimized_graph().to_string() << "plan: " << model.plan_stats().to_string()
                << "\n";
    } else if (dot->parsed()) {
      std::cout << (optimized ? model.optimized_graph() : model.graph()).to_dot();
    } else {
      std::vector<ag::Tensor> values;
      for (const std::string& p : inputs) values.push_back(read_tensor(p));
      std::vector<ag::Tensor> outputs = model(values);
      for (size_t k = 0; k < outputs.size(); ++k)
        std::cout << model.output_names()[k] << " = " << outputs[k] << "\n";
    }
  } catch (const ag::Error& e) {
    std::cerr << "ag-onnx: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
