// Shared by the passes that replace a node's value by another value
// (algebraic simplification, CSE): a forward sweep records replacements and
// rewrites each later node's inputs through them. The replaced nodes are left
// in place, unused; dead-code elimination removes them.
// Internal to the passes.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace ag::passes {

class ValueForwarding {
 public:
  explicit ValueForwarding(const graph::Body& body)
      : replacement_(body.nodes.size()), is_output_(body.nodes.size(), false) {
    for (graph::ValueRef out : body.outputs) is_output_[size_t(out.node)] = true;
  }

  // A node named by body.outputs keeps its identity: the outputs' names are
  // part of the function's interface (the tracer's "Identity" nodes).
  bool can_replace(int32_t node) const { return !is_output_[size_t(node)]; }

  // Every later use of `node`'s output 0 reads `value` instead. `value` must
  // be final, i.e. not itself replaced, which holds when it comes from the
  // rewritten inputs of a node or from a node that was not replaced.
  void replace(int32_t node, graph::ValueRef value) { replacement_[size_t(node)] = value; }

  void rewrite_inputs(graph::Node& node) const {
    for (graph::ValueRef& in : node.inputs) {
      const graph::ValueRef& to = replacement_[size_t(in.node)];
      if (to.node >= 0) in = to;
    }
  }

 private:
  std::vector<graph::ValueRef> replacement_;  // node -1: not replaced
  std::vector<bool> is_output_;
};

}  // namespace ag::passes
