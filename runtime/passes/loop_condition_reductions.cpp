// A While's condition that reduces a loop variable (collatz: while
// reduce_max(x) > 1) reads the reduction as a loop variable of its own
// instead: computed once before the loop from the variable's initial value,
// then by the body from each new value, where fusion computes it in the same
// pass over the elements as the value (a fused node's second output,
// passes/fusion.cpp), instead of the condition reading the whole variable
// again on every iteration.
//
// Needs: a valid body whose While bodies are as tracing staged them (the
// pipeline runs this first, before the nested bodies are optimised).
// Guarantees: for each While W of the body and each node R of W's condition
// that is a reduction over all axes (reduce_max, _min, _sum, _prod, _mean,
// _any, _all) of a loop variable k (the condition's placeholder k, past
// Identity), where k has an integer or bool dtype and a fully defined shape
// of more than ops::kMaxFlatElements elements, and R is no output of the
// condition:
// - W gets a new loop variable v after its others (input v, before the
//   captured values; output v, last): its initial value is a copy of R
//   reading W's input k, placed right before W; the body's output v is an
//   Identity of a copy of R reading the body's output k (past Identity),
//   both added last; the body gets a placeholder v that nothing reads;
// - R itself becomes the condition's placeholder v (its uses read it).
// The copies have R's op, attributes, site and function, and R's name made
// unique in their body. Integer and bool reductions give the same result
// in any order, and cannot fail on a value of known shape with elements, so
// the loop runs the same iterations with the same values; the reduction
// runs before each test of the condition, as before (and once more after
// an iteration that maximum_iterations ends). Nested bodies shared with
// another owner are copied first. Nothing else changes.

#include <algorithm>
#include <memory>
#include <vector>

#include "ops/kernels.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;

// The loop variable whose reduction the condition's node `r` is, or -1.
int32_t carried_variable(const Body& cond, const Node& r, size_t num_vars) {
  if (!reduces_all_axes(cond, r)) return -1;
  const ValueRef in = graph::through_identity(cond, r.inputs[0]);
  const ops::ValueType& type = cond.type_of(in);
  if (is_floating(type.dtype) || !type.shape.is_fully_defined() ||
      type.shape.num_elements() <= ops::kMaxFlatElements) {
    return -1;
  }
  for (size_t k = 0; k < num_vars; ++k) {
    if (cond.placeholders[k] == in.node) return int32_t(k);
  }
  return -1;
}

// A copy of reduction `r` in `body`, reading `input`.
Node reduction_copy(Body& body, const Node& r, ValueRef input) {
  Node copy;
  copy.kind = NodeKind::Op;
  copy.op = r.op;
  copy.name = body.unique_name(r.name);
  copy.inputs = {input};
  copy.outputs = r.outputs;
  copy.attrs = r.attrs;
  copy.site = r.site;
  copy.function = r.function;
  return copy;
}

// Inserts `node` at index `at`; the nodes from `at` on move up by one.
void insert_node(Body& body, int32_t at, Node node) {
  body.nodes.insert(body.nodes.begin() + at, std::move(node));
  auto shift = [at](ValueRef v) { return v.node >= at ? ValueRef{v.node + 1, v.output} : v; };
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    if (int32_t(i) == at) continue;
    for (ValueRef& in : body.nodes[i].inputs) in = shift(in);
  }
  for (ValueRef& out : body.outputs) out = shift(out);
  for (int32_t& p : body.placeholders) p += p >= at ? 1 : 0;
}

}  // namespace

void carry_loop_condition_reductions(Body& body) {
  for (size_t w = 0; w < body.nodes.size(); ++w) {
    if (body.nodes[w].kind != NodeKind::While) continue;
    const size_t num_vars = body.nodes[w].outputs.size();
    std::vector<int32_t> carried;   // condition nodes
    std::vector<int32_t> variable;  // the loop variable each reduces
    {
      const Body& cond = *body.nodes[w].subgraphs[0];
      for (size_t r = 0; r < cond.nodes.size(); ++r) {
        const int32_t k = carried_variable(cond, cond.nodes[r], num_vars);
        const bool is_output = std::any_of(cond.outputs.begin(), cond.outputs.end(),
                                           [&](ValueRef o) { return o.node == int32_t(r); });
        if (k < 0 || is_output) continue;
        carried.push_back(int32_t(r));
        variable.push_back(k);
      }
    }
    if (carried.empty()) continue;
    for (std::shared_ptr<Body>& subgraph : body.nodes[w].subgraphs) {
      if (subgraph.use_count() > 1) subgraph = std::make_shared<Body>(*subgraph);
    }
    for (size_t j = 0; j < carried.size(); ++j) {
      const size_t v = num_vars + j;
      Body& cond = *body.nodes[w].subgraphs[0];
      Body& loop = *body.nodes[w].subgraphs[1];
      Node& r = cond.nodes[size_t(carried[j])];
      const auto k = size_t(variable[j]);

      ValueRef next = graph::through_identity(loop, loop.outputs[k]);
      const int32_t reduced = loop.add(reduction_copy(loop, r, next));
      Node identity;
      identity.kind = NodeKind::Op;
      identity.op = ops::OpId::Identity;
      identity.name = loop.unique_name(r.name);
      identity.inputs = {{reduced, 0}};
      identity.outputs = r.outputs;
      loop.outputs.push_back({loop.add(std::move(identity)), 0});
      Node placeholder;
      placeholder.kind = NodeKind::Placeholder;
      placeholder.name = loop.unique_name(r.name);
      placeholder.outputs = r.outputs;
      loop.placeholders.insert(loop.placeholders.begin() + std::ptrdiff_t(v),
                               loop.add(std::move(placeholder)));

      Node initial = reduction_copy(body, r, body.nodes[w].inputs[k]);
      r.kind = NodeKind::Placeholder;
      r.op = ops::OpId::kCount;
      r.inputs = {};
      r.attrs = {};
      cond.placeholders.insert(cond.placeholders.begin() + std::ptrdiff_t(v), carried[j]);

      insert_node(body, int32_t(w), std::move(initial));
      Node& loop_node = body.nodes[++w];
      std::vector<ValueRef> inputs(loop_node.inputs.begin(), loop_node.inputs.end());
      inputs.insert(inputs.begin() + std::ptrdiff_t(v), ValueRef{int32_t(w) - 1, 0});
      loop_node.inputs = inputs;
      loop_node.outputs.push_back(loop_node.subgraphs[0]->nodes[size_t(carried[j])].outputs[0]);
    }
  }
}

}  // namespace ag::passes
