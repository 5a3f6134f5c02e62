// The gradient of a staged While (while_gradient.cpp). Internal to the runtime.
#pragma once

#include <span>
#include <vector>

#include "autodiff/tape.h"
#include "graph/graph.h"

namespace ag::detail {

struct DifferentiableWhile {
  // The loop variables' final values, then, for a loop with stacks, the
  // iteration count and the stacks: the tapes see them all, so that a
  // gradient into the stacks (a gradient of a gradient) is an error, not lost.
  std::vector<Tensor> results;
  // For the node's inputs (loop variables, then captures), from the
  // results' gradients. When the body cannot be differentiated (it has a
  // side effect, a random op, ...), it throws an UnimplementedError saying why.
  autodiff::StagedGradient gradient;
};

// Adds `node`, a While built by stage_while (inputs: `num_vars` loop
// variables, then captures), to the current trace so that a tape can
// differentiate it: the loop also counts its iterations and stacks, per
// iteration, the values its backward needs. Only for a While a tape tracks:
// other loops carry no stacks.
DifferentiableWhile add_differentiable_while(graph::Node node, size_t num_vars,
                                             std::span<const Tensor> captures);

}  // namespace ag::detail
