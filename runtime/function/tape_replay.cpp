// Calling a traced function while a gradient tape is alive on this thread:
// its traced body runs node by node through ops::apply, the taken branch of
// an If and the iterations of a While included, so that the tape records
// every op as if the function had run eagerly (the executor's plan would
// hide them from it). The backward is then the ops' own gradients.
#include "function/tape_replay.h"
#include "autodiff/tape.h"
#include "function/concrete.h"
#include "graph/variable_state.h"
#include "ops/dispatch.h"

namespace ag::detail {
namespace {

std::vector<Tensor> replay_body(const graph::Body& body, std::span<const Tensor> inputs);

std::vector<Tensor> replay_node(const graph::Node& node, std::span<const Tensor> in) {
  using graph::NodeKind;
  switch (node.kind) {
    case NodeKind::Const:
      return {node.value};
    case NodeKind::Op:
      return {ops::apply(node.op, in, node.attrs, node.site)};
    case NodeKind::ReadVariable: {
      const VariableState& v = *node.variable;
      return {autodiff::on_variable_read(v.id, v.trainable, node.variable->read())};
    }
    case NodeKind::AssignVariable:
    case NodeKind::AssignAddVariable:
    case NodeKind::AssignSubVariable:
      return {node.variable->update(node.kind, in[0])};
    case NodeKind::Effect:
      return (*node.effect)({in.begin(), in.end()});
    case NodeKind::If: {
      const graph::Body& branch = *node.subgraphs[in[0].item<bool>() ? 0 : 1];
      return replay_body(branch, in.subspan(1));
    }
    case NodeKind::While: {
      size_t num_vars = node.outputs.size();
      std::vector<Tensor> args(in.begin(), in.end());
      int64_t maximum = node.attrs.ints.empty() ? -1 : node.attrs.ints[0];
      for (int64_t iteration = 0;; ++iteration) {
        if (!replay_body(*node.subgraphs[0], args)[0].item<bool>()) break;
        if (maximum >= 0 && iteration >= maximum) break;
        std::vector<Tensor> next = replay_body(*node.subgraphs[1], args);
        std::copy(next.begin(), next.end(), args.begin());
      }
      args.resize(num_vars);
      return args;
    }
    case NodeKind::Placeholder:
      break;
  }
  throw InternalError("tape replay: unexpected node '" + node.name + "'");
}

std::vector<Tensor> replay_body(const graph::Body& body, std::span<const Tensor> inputs) {
  std::vector<std::vector<Tensor>> values(body.nodes.size());
  for (size_t i = 0; i < body.placeholders.size(); ++i)
    values[size_t(body.placeholders[i])] = {inputs[i]};
  std::vector<Tensor> in;
  for (size_t n = 0; n < body.nodes.size(); ++n) {
    const graph::Node& node = body.nodes[n];
    if (node.kind == graph::NodeKind::Placeholder) continue;
    in.clear();
    for (const graph::ValueRef& v : node.inputs)
      in.push_back(values[size_t(v.node)][size_t(v.output)]);
    values[n] = replay_node(node, in);
  }
  std::vector<Tensor> outputs;
  outputs.reserve(body.outputs.size());
  for (const graph::ValueRef& v : body.outputs)
    outputs.push_back(values[size_t(v.node)][size_t(v.output)]);
  return outputs;
}

}  // namespace

bool must_replay_for_tape() {
  return autodiff::tape_active();
}

void replay_for_tape(const ConcreteCore& core, std::span<const Tensor* const> inputs,
                     std::vector<Tensor>& outputs) {
  std::vector<Tensor> args;
  args.reserve(inputs.size());
  for (const Tensor* t : inputs) args.push_back(*t);
  outputs = replay_body(*core.traced, args);
}

}  // namespace ag::detail
