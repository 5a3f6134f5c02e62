// The gradient of a staged While (while_gradient.cpp). Internal to the runtime.
#pragma once

#include <span>
#include <vector>

#include "autodiff/tape.h"
#include "graph/graph.h"

namespace ag::detail {

struct DifferentiableWhile {
  std::vector<Tensor> results;  // the loop variables' final values
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
// For a While staged under a tape, before add_differentiable_while: the
// variables its bodies read (at their top level) are read once before the
// loop instead and passed in as captures, appended to `node`'s inputs and to
// `captures`, so that the tapes see the reads and the gradient reaches the
// variables. The loop reads the same values, as it assigns nothing: a body
// with a stateful node is left as it is (its gradient is an error anyway).
void hoist_variable_reads(graph::Node& node, std::vector<Tensor>& captures);

DifferentiableWhile add_differentiable_while(graph::Node node, size_t num_vars,
                                             std::span<const Tensor> captures);

}  // namespace ag::detail
