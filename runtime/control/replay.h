// Running a traced body node by node through ops::apply, so that gradient
// tapes record its ops: eagerly (an ag::function called under a tape), or
// into the graph being traced (the gradient of a staged If or While runs its
// bodies again under a tape). Internal to the runtime.
#pragma once

#include <span>
#include <vector>

#include "ag/tensor.h"
#include "graph/graph.h"
#include "graph/variable_state.h"

namespace ag::detail {

// The outputs of `body` for these inputs (one per placeholder). Eagerly an
// If runs its taken branch and a While its iterations. While tracing a
// nested If or While is staged again, and side effects (variable
// assignments, effects, random ops) are an UnimplementedError: running them
// again would change the program.
std::vector<Tensor> replay_body(const graph::Body& body, std::span<const Tensor> inputs);

// Reads `variable` as a ReadVariable node does (a node of the current trace,
// or its value eagerly), telling the tapes.
Tensor read_variable(const std::shared_ptr<VariableState>& variable);

}  // namespace ag::detail
