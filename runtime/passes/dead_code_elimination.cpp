// Dead-code elimination: what makes graph execution non-strict. An op whose
// value nothing needs is not run, so an unused gather that would raise eagerly
// is simply gone from the graph.
//
// Needs: a valid body (nodes in topological order, inputs referring to earlier
// nodes).
// Guarantees: keeps exactly the nodes that body.outputs, the stateful nodes
// (Node::is_stateful(): effects, variable writes, random ops, If/While with a
// stateful node inside) and the placeholders depend on, including those roots
// themselves. Kept nodes keep their order and names; placeholders and outputs
// are remapped. Nested bodies are not touched (an If/While node is a unit).

#include <algorithm>
#include <vector>

#include "passes/passes.h"

namespace ag::passes {

void eliminate_dead_code(graph::Body& body) {
  const size_t count = body.nodes.size();
  std::vector<bool> live(count, false);
  for (graph::ValueRef out : body.outputs) live[size_t(out.node)] = true;
  for (int32_t placeholder : body.placeholders) live[size_t(placeholder)] = true;
  for (size_t i = 0; i < count; ++i) {
    const graph::Node& node = body.nodes[i];
    if (node.kind == graph::NodeKind::Placeholder || node.is_stateful()) live[i] = true;
  }
  // Inputs come before their users, so one backward sweep reaches everything.
  for (size_t i = count; i-- > 0;) {
    if (!live[i]) continue;
    for (graph::ValueRef in : body.nodes[i].inputs) live[size_t(in.node)] = true;
  }
  if (std::find(live.begin(), live.end(), false) != live.end()) graph::compact(body, live);
}

}  // namespace ag::passes
