// Writes every op case of tests/runtime/op_cases.h, on each dtype its op
// supports, as an ONNX backend test (the layout of ONNX's own test data):
//
//   DIR/<case>_<dtype>/model.onnx                    the trace, by ag::onnx::save
//   DIR/<case>_<dtype>/test_data_set_0/input_<k>.pb  its inputs, TensorProtos
//   DIR/<case>_<dtype>/test_data_set_0/output_<k>.pb what the eager call gives
//
// so that another runtime (ort_judge.py: ONNX Runtime) or our own
// onnx_conformance can run the models and compare. Cases whose trace has an
// op marked onnx_none in ag/ops.def are left out, as the round trip leaves
// them (op_round_trip_test.cpp).
//
// usage: export_op_cases DIR
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <ag/ag.h>
#include <ag/onnx.h>

#include "exporter.h"
#include "op_cases.h"

namespace fs = std::filesystem;

namespace {

using ag::Tensor;
using Tensors = std::vector<Tensor>;

// The ops whose row in ag/ops.def says onnx_none.
std::set<std::string> ops_without_onnx_form() {
  std::set<std::string> names;
#define AG_ROW_onnx(type) false
#define AG_ROW_onnx_compare(type) false
#define AG_ROW_onnx_reduce(type) false
#define AG_ROW_onnx_by(form) false
#define AG_ROW_onnx_none(why) true
#define AG_OP(id, name, arity, infer, kernel, flags, gradient, onnx) \
  if (AG_ROW_##onnx) names.insert(name);
#include "ag/ops.def"
#undef AG_OP
#undef AG_ROW_onnx
#undef AG_ROW_onnx_compare
#undef AG_ROW_onnx_reduce
#undef AG_ROW_onnx_by
#undef AG_ROW_onnx_none
  return names;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream file(path, std::ios::binary);
  if (!file.write(bytes.data(), std::streamsize(bytes.size())))
    throw std::runtime_error(path.string() + ": cannot write");
}

void write_tensor(const fs::path& path, const Tensor& value, const std::string& name) {
  write_file(path, ag::onnx_io::tensor_to_proto(value, name).SerializeAsString());
}

// The names of the model's inputs that are not initializers, in order.
std::vector<std::string> input_names(const ::onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  std::vector<std::string> names;
  for (const auto& input : graph.input())
    if (!initializers.count(input.name())) names.push_back(input.name());
  return names;
}

// Writes the test of `c` on `inputs` to `dir`.
void write_test(const ag_test::OpCase& c, const Tensors& inputs, const ag::Graph& graph,
                const std::string& name, const fs::path& dir) {
  const Tensor eager = c.op(inputs);
  const std::string model = ag::onnx::save_to_bytes(graph, {.graph_name = name});
  ::onnx::ModelProto proto;
  if (!proto.ParseFromString(model)) throw std::runtime_error(name + ": unreadable model");
  const std::vector<std::string> names = input_names(proto.graph());
  if (names.size() != inputs.size() || proto.graph().output_size() != 1)
    throw std::runtime_error(name + ": the model has " + std::to_string(names.size()) +
                             " inputs and " + std::to_string(proto.graph().output_size()) +
                             " outputs, the case " + std::to_string(inputs.size()) + " and 1");
  const fs::path data = dir / "test_data_set_0";
  fs::create_directories(data);
  write_file(dir / "model.onnx", model);
  for (size_t k = 0; k < inputs.size(); ++k)
    write_tensor(data / ("input_" + std::to_string(k) + ".pb"), inputs[k], names[k]);
  write_tensor(data / "output_0.pb", eager, proto.graph().output(0).name());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " DIR\n";
    return 2;
  }
  const fs::path root = argv[1];
  const std::set<std::string> not_exportable = ops_without_onnx_form();
  int written = 0, skipped = 0, failed = 0;
  for (const ag_test::OpCase& c : ag_test::all_op_cases()) {
    for (ag::DType dtype : c.dtypes) {
      const std::string name = c.name + "_" + std::string(ag::dtype_name(dtype));
      try {
        const Tensors inputs = c.inputs(dtype);
        auto traced = ag::function([op = c.op](const Tensors& xs) { return op(xs); });
        const ag::Graph graph = traced.get_concrete_function(inputs).graph();
        bool exportable = true;
        for (const std::string& op : graph.ops()) exportable &= !not_exportable.count(op);
        if (!exportable) {
          ++skipped;
          continue;
        }
        write_test(c, inputs, graph, name, root / name);
        ++written;
      } catch (const std::exception& e) {
        ++failed;
        std::cerr << name << ": " << e.what() << "\n";
      }
    }
  }
  std::cout << "export_op_cases: " << written << " models written to " << root.string() << ", "
            << skipped << " cases with an op that has no ONNX form left out, " << failed
            << " failed\n";
  return failed ? 1 : 0;
}
