// The cases of the op tests: for every op of ag/ops.def, calls of its public
// function on sample inputs of each dtype the op supports. The eager-against-graph
// test (tests/runtime/equivalence_test.cpp) runs each traced and eagerly;
// the ONNX round trip (tests/onnx/op_round_trip_test.cpp) exports each trace
// and loads it back.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <ag/ag.h>

namespace ag_test {

struct OpCase {
  std::string name;
  std::vector<ag::DType> dtypes;  // the dtypes the op supports
  std::function<std::vector<ag::Tensor>(ag::DType)> inputs;
  std::function<ag::Tensor(const std::vector<ag::Tensor>&)> op;
};

// Every dtype, for the rejection tests.
inline constexpr auto& kAllDtypes = ag::kAllDTypes;

// The cases, made once.
const std::vector<OpCase>& all_op_cases();

}  // namespace ag_test
