// The shared state behind ag::Variable, and the updates that eager mode and
// the executor both use. Internal to the runtime.
#pragma once

#include <mutex>
#include <string>

#include "ag/tensor.h"
#include "graph/graph.h"

namespace ag::detail {

struct VariableState {
  std::mutex mu;
  Tensor value;  // always eager
  DType dtype;
  Shape shape;
  uint64_t id = 0;
  std::string name;
  bool trainable = true;  // watched by the gradient tapes it is read under

  Tensor read();
  // Replaces, adds to or subtracts from the value; returns the new value.
  // The dtype and shape never change.
  Tensor update(graph::NodeKind kind, const Tensor& operand);
};

}  // namespace ag::detail
