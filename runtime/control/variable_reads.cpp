// hoist_variable_reads (control/variable_reads.h).
#include "control/variable_reads.h"

#include <algorithm>

#include "control/body_copy.h"
#include "control/replay.h"
#include "trace/trace_state.h"

namespace ag::detail {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;

bool assigns_a_variable(const Body& body) {
  for (const Node& node : body.nodes) {
    if (node.kind == NodeKind::AssignVariable || node.kind == NodeKind::AssignAddVariable ||
        node.kind == NodeKind::AssignSubVariable)
      return true;
    for (const auto& sub : node.subgraphs)
      if (assigns_a_variable(*sub)) return true;
  }
  return false;
}

bool is_control_flow(const Node& node) {
  return node.kind == NodeKind::If || node.kind == NodeKind::While;
}

// Appends to `reads` the first read of each variable `body` reads, at any depth.
void collect_reads(const Body& body, std::vector<const Node*>& reads) {
  for (const Node& n : body.nodes) {
    if (is_control_flow(n)) {
      for (const auto& sub : n.subgraphs) collect_reads(*sub, reads);
    }
    if (n.kind != NodeKind::ReadVariable) continue;
    bool seen = std::any_of(reads.begin(), reads.end(),
                            [&](const Node* r) { return r->variable == n.variable; });
    if (!seen) reads.push_back(&n);
  }
}

// `body` with one placeholder per read variable appended to its inputs, its
// reads of them replaced by those where `replace_reads`, and the nested If
// and While nodes given them as captures the same way.
std::shared_ptr<Body> with_reads_as_inputs(const Body& body, const std::vector<const Node*>& reads,
                                           bool replace_reads) {
  BodyCopy copy(body);
  for (int32_t p : body.placeholders) copy.give({p, 0}, body.nodes[size_t(p)].name);
  std::vector<ValueRef> given;
  for (const Node* read : reads)
    given.push_back(copy.add_placeholder(read->name, read->outputs[0]));
  for (size_t n = 0; n < body.nodes.size(); ++n) {
    const Node& node = body.nodes[n];
    if (node.kind == NodeKind::Placeholder) continue;
    if (node.kind == NodeKind::ReadVariable && replace_reads) {
      for (size_t k = 0; k < reads.size(); ++k)
        if (reads[k]->variable == node.variable) copy.alias({int32_t(n), 0}, given[k]);
      continue;
    }
    if (!is_control_flow(node)) {
      copy.copy_node(n);
      continue;
    }
    Node nested = node;
    for (auto& sub : nested.subgraphs) sub = with_reads_as_inputs(*sub, reads, replace_reads);
    for (ValueRef& in : nested.inputs) in = copy.map(in);
    nested.inputs.insert(nested.inputs.end(), given.begin(), given.end());
    ValueRef added = copy.add(std::move(nested));
    for (size_t o = 0; o < node.outputs.size(); ++o)
      copy.alias({int32_t(n), int32_t(o)}, {added.node, int32_t(o)});
  }
  for (ValueRef v : body.outputs) copy.body()->outputs.push_back(copy.map(v));
  return copy.body();
}

}  // namespace

void hoist_variable_reads(graph::Node& node, std::vector<Tensor>& captures) {
  std::vector<const Node*> reads;
  bool assigns = false;
  for (const auto& body : node.subgraphs) {
    assigns = assigns || assigns_a_variable(*body);
    collect_reads(*body, reads);
  }
  if (reads.empty()) return;
  std::vector<std::shared_ptr<Body>> bodies;
  for (const auto& body : node.subgraphs)
    bodies.push_back(with_reads_as_inputs(*body, reads, /*replace_reads=*/!assigns));
  for (const Node* read : reads) {
    Tensor value = read_variable(read->variable);
    node.inputs.push_back(trace::resolve(value));
    captures.push_back(value);
  }
  node.subgraphs = std::move(bodies);
}

}  // namespace ag::detail
