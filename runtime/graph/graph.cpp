#include "graph/graph.h"

#include <sstream>
#include <string_view>

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
    case NodeKind::Fused:
      return "Fused";
  }
  return "?";
}

std::string Node::member_names() const {
  std::string out;
  if (kind != NodeKind::Fused) return out;
  for (const Node& member : subgraphs[0]->nodes) {
    if (member.kind == NodeKind::Placeholder) continue;
    if (!out.empty()) out += ", ";
    out += member.name;
  }
  return out;
}

const std::string& Node::function_name() const {
  static const std::string kNone;
  return function ? *function : kNone;
}

namespace {
// The base and number of a name unique_name makes from a base: "add_12" ->
// ("add", 12). Numbers are written without leading zeros.
bool split_numbered(const std::string& name, std::string_view& base, int& number) {
  size_t underscore = name.rfind('_');
  if (underscore == std::string::npos || underscore + 1 == name.size()) return false;
  std::string_view digits = std::string_view(name).substr(underscore + 1);
  if (digits.size() > 9 || (digits[0] == '0' && digits.size() > 1)) return false;
  number = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    number = number * 10 + (c - '0');
  }
  base = std::string_view(name).substr(0, underscore);
  return true;
}
}  // namespace

// The names in use are the bases asked for (name_counts_'s keys with a count
// above 0) and, per base, base_1 ... base_{count-1}. Numbered names of two
// bases never collide (the digits after the last '_' give the base back), so
// only the bases are stored: the table stays as small as the set of op names,
// however large the body.
bool Body::is_base_in_use(const std::string& name) const {
  auto it = name_counts_.find(name);
  return it != name_counts_.end() && it->second > 0;
}

bool Body::name_in_use(const std::string& name) const {
  if (is_base_in_use(name)) return true;
  std::string_view base;
  int number = 0;
  if (!split_numbered(name, base, number) || number == 0) return false;
  auto it = name_counts_.find(std::string(base));
  return it != name_counts_.end() && number < it->second;
}

std::string Body::unique_name(const std::string& base) {
  auto it = name_counts_.find(base);
  if (it == name_counts_.end() || it->second == 0) {
    bool taken = name_in_use(base);  // as another base's numbered name
    int& next = name_counts_[base];
    next = 1;
    if (!taken) return base;
    it = name_counts_.find(base);
  }
  // base_N is not another base's numbered name; it may be a base in use.
  std::string name;
  do {
    name = base + "_" + std::to_string(it->second++);
  } while (is_base_in_use(name));
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
      out += '\'';
      out += value_name(*this, n.inputs[i]);
      out += '\'';
    }
    out += "] -> " + n.name;
    if (n.kind == NodeKind::Fused) out += " {" + n.member_names() + "}";
    out += "\n";
  }
  return out;
}

namespace {

const char* subgraph_role(const Node& n, size_t k) {
  if (n.kind == NodeKind::If) return k == 0 ? "then" : "else";
  return k == 0 ? "cond" : "body";
}

// The nodes and edges of `body`, each node's id `prefix` + its index. An If's
// branches and a While's condition and body follow their node as dashed
// clusters: dashed edges bind the node's inputs to their placeholders (an
// If's from its second input on: the first is the predicate) and lead their
// outputs back to the node. A fused node stays one box listing its members.
void write_dot_body(const Body& body, const std::string& prefix, const std::string& indent,
                    std::ostringstream& os) {
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const Node& n = body.nodes[i];
    std::string shape = n.kind == NodeKind::Placeholder ? "ellipse"
                        : n.kind == NodeKind::Const     ? "note"
                        : n.is_stateful()               ? "octagon"
                                                        : "box";
    os << indent << prefix << i << " [label=\"" << n.name << "\\n" << n.op_name();
    if (n.kind == NodeKind::Fused) os << "\\n" << n.member_names();
    os << "\", shape=" << shape << "];\n";
    for (ValueRef in : n.inputs) {
      const ops::ValueType& t = body.type_of(in);
      os << indent << prefix << in.node << " -> " << prefix << i << " [label=\""
         << dtype_name(t.dtype) << " " << t.shape.to_string() << "\"];\n";
    }
    if (n.kind != NodeKind::If && n.kind != NodeKind::While) continue;
    const size_t first_bound = n.kind == NodeKind::If ? 1 : 0;
    for (size_t k = 0; k < n.subgraphs.size(); ++k) {
      const Body& sub = *n.subgraphs[k];
      const std::string role = subgraph_role(n, k);
      const std::string sub_prefix = prefix + std::to_string(i) + "_" + role + "_n";
      os << indent << "subgraph \"cluster_" << sub_prefix << "\" {\n"
         << indent << "  label=\"" << n.name << ": " << role << "\";\n"
         << indent << "  style=dashed;\n";
      write_dot_body(sub, sub_prefix, indent + "  ", os);
      os << indent << "}\n";
      for (size_t p = 0; p < sub.placeholders.size() && first_bound + p < n.inputs.size(); ++p) {
        os << indent << prefix << n.inputs[first_bound + p].node << " -> " << sub_prefix
           << sub.placeholders[p] << " [style=dashed];\n";
      }
      for (ValueRef out : sub.outputs)
        os << indent << sub_prefix << out.node << " -> " << prefix << i << " [style=dashed];\n";
    }
  }
}

}  // namespace

std::string Body::to_dot(const std::string& graph_name) const {
  std::ostringstream os;
  os << "digraph \"" << graph_name
     << "\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  write_dot_body(*this, "n", "  ", os);
  for (size_t k = 0; k < outputs.size(); ++k) {
    os << "  out" << k << " [label=\"output " << k << "\", shape=ellipse];\n";
    os << "  n" << outputs[k].node << " -> out" << k << ";\n";
  }
  os << "}\n";
  return os.str();
}

std::optional<LoopCounter> loop_counter(const Body& parent, const Node& w, size_t j) {
  const Body& cond = *w.subgraphs[0];
  const Body& body = *w.subgraphs[1];
  const std::optional<int64_t> start = integer_constant(parent, w.inputs[j]);
  const Node& next = producer(body, body.outputs[j]);
  std::optional<int64_t> step;
  if (next.is_op(ops::OpId::Add) && is_placeholder(body, next.inputs[0], j))
    step = integer_constant(body, next.inputs[1]);
  else if (next.is_op(ops::OpId::Add) && is_placeholder(body, next.inputs[1], j))
    step = integer_constant(body, next.inputs[0]);
  const Node& test = producer(cond, cond.outputs[0]);
  const std::optional<int64_t> bound =
      test.is_op(ops::OpId::Less) && is_placeholder(cond, test.inputs[0], j)
          ? integer_constant(cond, test.inputs[1])
          : std::nullopt;
  if (!start || !step || !bound) return std::nullopt;
  return LoopCounter{*start, *step, *bound};
}

std::vector<int64_t> transpose_permutation(const Node& transpose) {
  const int rank = transpose.outputs[0].shape.rank();
  std::vector<int64_t> perm = transpose.attrs.ints;
  if (perm.empty()) {
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  for (int64_t& d : perm) d = d < 0 ? d + rank : d;
  return perm;
}

bool moves_only_one_axis(const std::vector<int64_t>& perm, int64_t axis) {
  int64_t previous = -1;
  for (size_t d = 0; d < perm.size(); ++d) {
    if (int64_t(d) == axis) continue;
    if (perm[d] < previous) return false;
    previous = perm[d];
  }
  return true;
}

void remap_inputs(Body& body, const std::function<ValueRef(ValueRef)>& remap) {
  for (Node& n : body.nodes) {
    for (ValueRef& in : n.inputs) in = remap(in);
  }
  for (ValueRef& out : body.outputs) out = remap(out);
}

void compact(Body& body, const std::vector<bool>& keep) {
  // In place: kept nodes move down, so no second node array is allocated.
  std::vector<int32_t> new_index(body.nodes.size(), -1);
  size_t kept = 0;
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    if (!keep[i]) continue;
    new_index[i] = int32_t(kept);
    if (kept != i) body.nodes[kept] = std::move(body.nodes[i]);
    ++kept;
  }
  body.nodes.erase(body.nodes.begin() + std::ptrdiff_t(kept), body.nodes.end());
  remap_inputs(body, [&](ValueRef v) { return ValueRef{new_index[size_t(v.node)], v.output}; });
  for (int32_t& p : body.placeholders) p = new_index[size_t(p)];
}

}  // namespace ag::graph
