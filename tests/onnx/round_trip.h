// The round trip of the exporting tests (save_test.cpp, guide_examples.cpp,
// the fuzzer's sample in fuzz_round_trip.h): a traced graph is exported with
// ag::onnx::save (which runs ONNX's checker with full shape inference), loaded
// back with ag::onnx::load, run, and compared with the trace's own results.
//
// With AG_ONNX_SAVE_DIR set, every exported model is also written there as
// <name>.onnx, for check_models.py to check with python3-onnx (the
// onnx.python_check test).
#pragma once

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "ag/onnx.h"

namespace ag_onnx_test {

// The model's bytes; the graph is named `name` (a valid file name).
inline std::string export_model(const ag::Graph& graph, const std::string& name) {
  std::string bytes = ag::onnx::save_to_bytes(graph, {.graph_name = name});
  if (const char* dir = std::getenv("AG_ONNX_SAVE_DIR")) {
    std::ofstream file(std::string(dir) + "/" + name + ".onnx", std::ios::binary);
    if (!file.write(bytes.data(), std::streamsize(bytes.size())))
      throw std::runtime_error(std::string(dir) + ": cannot write " + name + ".onnx");
  }
  return bytes;
}

// Empty when `got` equals `want`: the same dtype and shape, integers and
// bools exactly, floats within `rtol` of each other (relative, or absolute
// near 0); otherwise what differs.
inline std::string mismatch(const ag::Tensor& got, const ag::Tensor& want, double rtol) {
  std::ostringstream out;
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    out << "got " << got.spec().to_string() << ", want " << want.spec().to_string();
    return out.str();
  }
  if (want.dtype() == ag::string) {
    if (ag::strings::to_vector(got) != ag::strings::to_vector(want))
      out << "got\n" << got << "\nwant\n" << want;
    return out.str();
  }
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    const bool same = ag::is_floating(want.dtype())
                          ? (std::isnan(g[i]) && std::isnan(w[i])) || g[i] == w[i] ||
                                std::abs(g[i] - w[i]) <= rtol * std::max(1.0, std::abs(w[i]))
                          : g[i] == w[i];
    if (!same) {
      out << "element " << i << ": got " << g[i] << ", want " << w[i] << "\ngot\n"
          << got << "\nwant\n"
          << want;
      return out.str();
    }
  }
  return "";
}

// Loads the model `bytes`, runs it on `inputs` (the traced graph's tensor
// arguments, in order) and compares each output with `want`. Empty when they
// agree; otherwise what differs.
inline std::string run_and_compare(const std::string& bytes, const std::string& name,
                                   const std::vector<ag::Tensor>& inputs,
                                   const std::vector<ag::Tensor>& want, double rtol = 0) {
  std::vector<ag::Tensor> got = ag::onnx::load_from_bytes(bytes, name)(inputs);
  if (got.size() != want.size())
    return name + ": " + std::to_string(got.size()) + " outputs, want " +
           std::to_string(want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    std::string diff = mismatch(got[k], want[k], rtol);
    if (!diff.empty()) return name + ": output " + std::to_string(k) + ": " + diff;
  }
  return "";
}

// Exports `graph` as `name`, then run_and_compare.
inline std::string round_trip(const ag::Graph& graph, const std::string& name,
                              const std::vector<ag::Tensor>& inputs,
                              const std::vector<ag::Tensor>& want, double rtol = 0) {
  return run_and_compare(export_model(graph, name), name, inputs, want, rtol);
}

}  // namespace ag_onnx_test
