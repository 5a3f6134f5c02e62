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
// values, as it assigns no variable. One that does keeps its reads (they see
// its assignments) and gets the values read before it as unused captures:
// the tapes then know that it depends on the variables, and a gradient that
// reaches them through it is its gradient's error (replay.h), never a
// missing term.
void hoist_variable_reads(graph::Node& node, std::vector<Tensor>& captures);

}  // namespace ag::detail
