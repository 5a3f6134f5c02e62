// Reading the variables a staged If or While reads before it, so that the
// gradient tapes see the reads. Internal to the runtime.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace ag::detail {

// For an If or While staged under a tape: the variables its bodies read, at
// any depth, are read once before it instead and passed in as captures,
// appended to `node`'s inputs and to `captures` (and threaded through the
// nested If and While nodes as captures of theirs), so that the tapes see the
// reads and the gradient reaches the variables. The construct reads the same
// values, as it assigns no variable: one that does is left as it is (its
// gradient is an error anyway: replay.h).
void hoist_variable_reads(graph::Node& node, std::vector<Tensor>& captures);

}  // namespace ag::detail
