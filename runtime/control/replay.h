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
  // They are an UnimplementedError (a graph that may stand in for the body's
  // would lose them or run them twice).
  NoSideEffects,
  // The replay recomputes the values of a body that has run (an If's
  // gradient runs the taken branch again): an effect without results (a
  // print, an assert) is left out, since the body's run did it; any other
  // would change the program and is an UnimplementedError.
  RecomputeValues,
  // The replay becomes the body, replacing it (a differentiable While's new
  // forward body): they are staged again, in program order, and still run
  // once per iteration. Variable assignments stay an UnimplementedError: the
  // tapes would not see the construct's reads of the variables.
  Restage,
};

// The outputs of `body` for these inputs (one per placeholder). Eagerly an
// If runs its taken branch and a While its iterations, side effects
// included. While tracing a nested If or While is staged again, and side
// effects are as `purpose` says.
std::vector<Tensor> replay_body(const graph::Body& body, std::span<const Tensor> inputs,
                                ReplayPurpose purpose = ReplayPurpose::NoSideEffects);

// Reads `variable` as a ReadVariable node does (a node of the current trace,
// or its value eagerly), telling the tapes.
Tensor read_variable(const std::shared_ptr<VariableState>& variable);

}  // namespace ag::detail
