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

// What a replay while tracing makes of the body's side effects (variable
// assignments, effects, stateful ops such as random ops and collectives).
enum class ReplayPurpose {
  // The replay recomputes values beside the body, which still runs (an If's
  // gradient runs its branch again): they would run twice, and are an
  // UnimplementedError.
  Recompute,
  // The replay becomes the body, replacing it (a differentiable While's new
  // forward body): they are staged again, in program order, and still run
  // once per iteration.
  Restage,
};

// The outputs of `body` for these inputs (one per placeholder). Eagerly an
// If runs its taken branch and a While its iterations, side effects
// included. While tracing a nested If or While is staged again, and side
// effects are as `purpose` says.
std::vector<Tensor> replay_body(const graph::Body& body, std::span<const Tensor> inputs,
                                ReplayPurpose purpose = ReplayPurpose::Recompute);

// Reads `variable` as a ReadVariable node does (a node of the current trace,
// or its value eagerly), telling the tapes.
Tensor read_variable(const std::shared_ptr<VariableState>& variable);

}  // namespace ag::detail
