// The graph IR. A Body is a list of nodes in creation order, which is also a
// topological order (a node's inputs always come before it) and, for stateful
// nodes, program order. Functional control flow nodes (If, While) own their
// branch and loop bodies as nested Bodies. Internal to the runtime; the public
// face is ag::Graph (ag/graph.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ag/tensor.h"
#include "graph/small_vector.h"
#include "ops/op_registry.h"

namespace ag::detail {
struct VariableState;
}

namespace ag::graph {

// Output `output` of node `node`.
struct ValueRef {
  int32_t node = -1;
  int32_t output = 0;
  bool operator==(const ValueRef&) const = default;
};

enum class NodeKind : uint8_t {
  Placeholder,        // an input of the body: a function argument or a captured value
  Const,              // an eager tensor baked into the graph (Node::value)
  Op,                 // a registry op (Node::op, Node::attrs)
  ReadVariable,       // the current value of Node::variable
  AssignVariable,     // Node::variable = input 0; outputs the new value
  AssignAddVariable,  // Node::variable += input 0
  AssignSubVariable,  // Node::variable -= input 0
  Effect,             // a side effect run on every call: print, assert, host function
  If,                 // inputs: pred, captures...; subgraphs: then, else
  While,              // inputs: loop vars..., captures...; subgraphs: cond, body
  // Elementwise ops fused into one node by passes/fusion.cpp. subgraphs[0]
  // holds its members: one placeholder per input, the member op nodes in
  // order, and the last member (the node's output) as its output; or the
  // value and a reduction of it as outputs 0 and 1.
  Fused,
};

struct Body;

// What an Effect node runs: gets its inputs' values, returns its outputs.
using EffectFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

struct Node {
  NodeKind kind = NodeKind::Op;
  ops::OpId op = ops::OpId::kCount;
  std::string name;  // unique in its body: "add", "add_1", ...
  // Inline up to the usual counts (select and where read three values).
  SmallVector<ValueRef, 3> inputs;
  SmallVector<ops::ValueType, 1> outputs;
  ops::Attrs attrs;
  Tensor value;                                     // Const
  std::shared_ptr<detail::VariableState> variable;  // variable nodes
  std::shared_ptr<const EffectFn> effect;           // Effect
  std::vector<std::shared_ptr<Body>> subgraphs;     // If, While, Fused
  // Where the user's code called the op, for "defined at" in errors; empty
  // (line 0) for nodes the runtime adds on its own.
  CallSite site = {};
  // The marked function whose trace recorded the node, shared by the nodes
  // it recorded (a node is copied often: by the optimiser, into fused
  // subgraphs); null for nodes made outside a trace.
  std::shared_ptr<const std::string> function;

  // An op node of op `id`.
  bool is_op(ops::OpId id) const { return kind == NodeKind::Op && op == id; }
  // Must run on every call in program order, even when nothing uses it.
  bool is_stateful() const;
  // "add", "Const", "Placeholder", "If", "Fused", ...
  std::string op_name() const;
  // A Fused node's members' names, "sub, mul, reduce_mean"; empty otherwise.
  std::string member_names() const;
  // *function, or "" when there is none.
  const std::string& function_name() const;
};

struct Body {
  std::vector<Node> nodes;
  // The node index of each input, in order.
  std::vector<int32_t> placeholders;
  std::vector<ValueRef> outputs;

  const ops::ValueType& type_of(ValueRef v) const {
    return nodes[size_t(v.node)].outputs[size_t(v.output)];
  }
  // A name not yet used in this body, derived from `base`: "add", "add_1".
  std::string unique_name(const std::string& base);
  // Adds a node and returns its index.
  int32_t add(Node node);

  // The TensorFlow guide's listing: one line per node, "['a', 'a'] -> add"; a
  // fused node lists its members: "['a', 'b'] -> fused {sub, mul,
  // reduce_mean}". graph/graph_text.h prints the complete form, which parses.
  std::string to_string() const;
  // Graphviz DOT, with dtype and shape on every edge; an If's branches and a
  // While's condition and body are clusters next to their node.
  std::string to_dot(const std::string& graph_name) const;

 private:
  bool is_base_in_use(const std::string& name) const;
  bool name_in_use(const std::string& name) const;
  // Per base name asked for: the next number to try (see unique_name).
  std::unordered_map<std::string, int> name_counts_;
};

// Identity nodes alias their input (tensors are immutable): the value `v`
// stands for, past any Identity, and the node that computes it.
inline ValueRef through_identity(const Body& body, ValueRef v) {
  while (body.nodes[size_t(v.node)].is_op(ops::OpId::Identity))
    v = body.nodes[size_t(v.node)].inputs[0];
  return v;
}
inline const Node& producer(const Body& body, ValueRef v) {
  return body.nodes[size_t(through_identity(body, v).node)];
}

// Whether `v` is the body's placeholder `k` (input k of a loop's body or
// condition), past Identity.
inline bool is_placeholder(const Body& body, ValueRef v, size_t k) {
  return through_identity(body, v).node == body.placeholders[k];
}

// The value of an integer scalar constant, if `v` is one (past Identity).
inline std::optional<int64_t> integer_constant(const Body& body, ValueRef v) {
  const Node& n = producer(body, v);
  if (n.kind != NodeKind::Const || !is_integer(n.value.dtype()) || n.value.rank() != 0)
    return std::nullopt;
  return n.value.item<int64_t>();
}

// Loop variable j of While `w` (a node of `parent`) as a counter: it starts
// at an integer constant, its next value is j + step or step + j for an
// integer constant step, and the loop's condition is exactly j < bound, an
// integer constant. Null when it is not one. The executor's row loops
// (exec/plan_views.cpp) and the counter-sign pass (passes/counter_signs.cpp)
// ask this of the loops they change.
struct LoopCounter {
  int64_t start;
  int64_t step;
  int64_t bound;
};
std::optional<LoopCounter> loop_counter(const Body& parent, const Node& w, size_t j);

// How often node `node`'s outputs are read: by nodes (an Identity counts as
// a reader) and as the body's outputs.
inline int count_reads(const Body& body, int32_t node) {
  int reads = 0;
  for (const Node& n : body.nodes) {
    for (ValueRef in : n.inputs) reads += in.node == node;
  }
  for (ValueRef out : body.outputs) reads += out.node == node;
  return reads;
}

// A Transpose node's permutation with its defaults spelt out: an empty one
// reverses the axes, a negative entry counts from the end.
std::vector<int64_t> transpose_permutation(const Node& transpose);
// Whether `perm` without its entry `axis` is increasing: the transpose then
// keeps the other axes in their order, and only moves axis perm[axis] to
// position `axis`.
bool moves_only_one_axis(const std::vector<int64_t>& perm, int64_t axis);

// Rewrites every input reference with `remap(old) -> new`, in this body only.
void remap_inputs(Body& body, const std::function<ValueRef(ValueRef)>& remap);

// Removes the nodes not marked `keep` and renumbers the rest. Kept nodes must
// not refer to removed ones.
void compact(Body& body, const std::vector<bool>& keep);

}  // namespace ag::graph
