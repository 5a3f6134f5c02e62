// The split of a joint graph into its forward and backward parts. A gradient
// is traced by running a body again under a tape, with placeholders (the
// seeds) for the gradients of its outputs, into one graph that computes both
// the forward values and their gradients; the gradient of a staged While
// (control/while_gradient.cpp) and of a traced function called under a tape
// (function/function_gradient.cpp) split that graph with backward_part.
// Internal to the runtime.
//
// Needs: `body`'s nodes in topological order (a node reads only earlier
// nodes), as tracing adds them; `seeds` are node indices in `body`.
// Guarantees: node n is in the backward part exactly when it is a seed or
// reads, directly or through other nodes, a seed's output; so no node of the
// forward part reads one of the backward part, and the forward part runs
// without the seeds.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graph/graph.h"

namespace ag::graph {

// Per node of `body`: 1 in the backward part, 0 in the forward part.
std::vector<char> backward_part(const Body& body, std::span<const int32_t> seeds);

}  // namespace ag::graph
