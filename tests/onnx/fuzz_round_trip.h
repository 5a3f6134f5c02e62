// The main() of the ONNX round trip of the differential fuzzer's functions
// (the onnx.fuzz_round_trip test): tests/fuzz/gen.py writes the functions and
// their calls, this header replaces tests/fuzz/harness.h (CMake puts a
// harness.h that includes it next to the generated file). For each call, the
// marked function is traced for its arguments, exported, loaded and run; the
// loaded model must return what the trace returns, bit for bit (the
// generated values are small integers, exact in every dtype).
//
// Prints one line per failing call and a summary; exits 1 on a failure, or
// when the sample holds no If, no Loop or no TensorArray write (SequenceInsert):
// it is meant to cover all three.
#pragma once

// The fuzzer's FzCall, FzCase and fz_print, without its fz_run (which runs
// each function eagerly or staged): fz_run here is the round trip.
#define fz_run fz_run_fuzzer
#include "fuzz/harness.h"
#undef fz_run

#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "round_trip.h"

// How many nodes of each op type `graph` and its subgraphs hold.
inline void fz_count_ops(const onnx::GraphProto& graph, std::map<std::string, int>& counts) {
  for (const onnx::NodeProto& node : graph.node()) {
    ++counts[node.op_type()];
    for (const onnx::AttributeProto& attr : node.attribute())
      if (attr.has_g()) fz_count_ops(attr.g(), counts);
  }
}

template <size_t N>
int fz_run(const FzCase (&cases)[N], int, char**) {
  int calls = 0, failures = 0;
  std::map<std::string, int> functions_with;  // op type -> functions whose exports hold it
  for (const FzCase& c : cases) {
    auto traced = ag::function(c.fn, {.name = c.name, .arg_names = {"x", "n", "m"}});
    std::map<std::string, int> ops;
    int k = 0;
    for (const FzCall& in : c.calls) {
      const std::string name = std::string(c.name) + "_" + std::to_string(k++);
      ++calls;
      try {
        ag::Tensor x = fz_input(in);
        ag::Tensor n(in.n);
        auto concrete = traced.get_concrete_function(x, n, in.m);
        const std::string bytes = ag_onnx_test::export_model(concrete.graph(), name);
        onnx::ModelProto model;
        model.ParseFromString(bytes);
        fz_count_ops(model.graph(), ops);
        std::string diff =
            ag_onnx_test::run_and_compare(bytes, name, {x, n}, {concrete(x, n, in.m)});
        if (!diff.empty()) {
          ++failures;
          std::cout << "FAIL " << diff << "\n";
        }
      } catch (const std::exception& e) {
        ++failures;
        std::cout << "FAIL " << name << ": " << e.what() << "\n";
      }
    }
    for (const auto& [op, count] : ops) functions_with[op] += count > 0;
  }
  std::cout << N << " functions, " << calls << " calls: " << calls - failures << " round trips, "
            << failures << " failed\n";
  for (const char* op : {"If", "Loop", "SequenceInsert"}) {
    std::cout << "functions with " << op << ": " << functions_with[op] << "\n";
    if (functions_with[op] == 0) ++failures;
  }
  return failures == 0 ? 0 : 1;
}
