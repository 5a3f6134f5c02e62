#include "graph/graph.h"

#include <sstream>

namespace ag::graph {

bool Node::is_stateful() const {
  switch (kind) {
    case NodeKind::AssignVariable:
    case NodeKind::AssignAddVariable:
    case NodeKind::AssignSubVariable:
    case NodeKind::Effect:
      return true;
    case NodeKind::Op:
      return (ops::op_def(op).flags & ops::kStateful) != 0;
    case NodeKind::If:
    case NodeKind::While:
      for (const auto& sub : subgraphs) {
        for (const Node& n : sub->nodes) {
          if (n.is_stateful()) return true;
        }
      }
      return false;
    default:
      return false;
  }
}

std::string Node::op_name() const {
  switch (kind) {
    case NodeKind::Placeholder:
      return "Placeholder";
    case NodeKind::Const:
      return "Const";
    case NodeKind::Op:
      return std::string(ops::op_def(op).name);
    case NodeKind::ReadVariable:
      return "ReadVariableOp";
    case NodeKind::AssignVariable:
      return "AssignVariableOp";
    case NodeKind::AssignAddVariable:
      return "AssignAddVariableOp";
    case NodeKind::AssignSubVariable:
      return "AssignSubVariableOp";
    case NodeKind::Effect:
      return name;
    case NodeKind::If:
      return "If";
    case NodeKind::While:
      return "While";
  }
  return "?";
}

std::string Body::unique_name(const std::string& base) {
  // name_counts_ holds every name in use, each with the next suffix to try.
  int& next = name_counts_[base];
  std::string name = base;
  if (next > 0) {
    do {
      name = base + "_" + std::to_string(next++);
    } while (name_counts_.count(name));
    name_counts_.emplace(name, 1);
  } else {
    next = 1;
  }
  return name;
}

int32_t Body::add(Node node) {
  nodes.push_back(std::move(node));
  return int32_t(nodes.size() - 1);
}

namespace {
std::string value_name(const Body& body, ValueRef v) {
  const Node& n = body.nodes[size_t(v.node)];
  return v.output == 0 ? n.name : n.name + ":" + std::to_string(v.output);
}
}  // namespace

std::string Body::to_string() const {
  std::string out;
  for (const Node& n : nodes) {
    out += "[";
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (i) out += ", ";
      out += "'" + value_name(*this, n.inputs[i]) + "'";
    }
    out += "] -> " + n.name + "\n";
  }
  return out;
}

std::string Body::to_dot(const std::string& graph_name) const {
  std::ostringstream os;
  os << "digraph \"" << graph_name
     << "\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    std::string shape = n.kind == NodeKind::Placeholder ? "ellipse"
                        : n.kind == NodeKind::Const     ? "note"
                        : n.is_stateful()               ? "octagon"
                                                        : "box";
    os << "  n" << i << " [label=\"" << n.name << "\\n"
       << n.op_name() << "\", shape=" << shape << "];\n";
    for (ValueRef in : n.inputs) {
      const ops::ValueType& t = type_of(in);
      os << "  n" << in.node << " -> n" << i << " [label=\"" << dtype_name(t.dtype) << " "
         << t.shape.to_string() << "\"];\n";
    }
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    os << "  out" << k << " [label=\"output " << k << "\", shape=ellipse];\n";
    os << "  n" << outputs[k].node << " -> out" << k << ";\n";
  }
  os << "}\n";
  return os.str();
}

void remap_inputs(Body& body, const std::function<ValueRef(ValueRef)>& remap) {
  for (Node& n : body.nodes) {
    for (ValueRef& in : n.inputs) in = remap(in);
  }
  for (ValueRef& out : body.outputs) out = remap(out);
}

void compact(Body& body, const std::vector<bool>& keep) {
  std::vector<int32_t> new_index(body.nodes.size(), -1);
  std::vector<Node> kept;
  kept.reserve(body.nodes.size());
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    if (!keep[i]) continue;
    new_index[i] = int32_t(kept.size());
    kept.push_back(std::move(body.nodes[i]));
  }
  body.nodes = std::move(kept);
  remap_inputs(body, [&](ValueRef v) { return ValueRef{new_index[size_t(v.node)], v.output}; });
  for (int32_t& p : body.placeholders) p = new_index[size_t(p)];
}

}  // namespace ag::graph
