// replay_body (control/replay.h).
#include "control/replay.h"

#include <string>

#include "ag/control_flow.h"
#include "autodiff/tape.h"
#include "graph/variable_state.h"
#include "ops/dispatch.h"
#include "trace/trace_state.h"

namespace ag::detail {
namespace {

[[noreturn]] void throw_not_replayable(const graph::Node& node, const std::string& what) {
  throw UnimplementedError("a gradient through a staged if or while whose body holds " + what +
                           " ('" + node.name +
                           "') is not implemented yet: running it again for the "
                           "gradient would change the program");
}

}  // namespace

Tensor read_variable(const std::shared_ptr<VariableState>& variable) {
  VariableState& v = *variable;
  Tensor value;
  if (trace::current()) {
    graph::Node read;
    read.kind = graph::NodeKind::ReadVariable;
    read.variable = variable;
    read.outputs = {{v.dtype, v.shape}};
    value = trace::add_node(std::move(read))[0];
  } else {
    value = v.read();
  }
  return autodiff::on_variable_read(v.id, v.trainable, value);
}

namespace {

std::vector<Tensor> replay_if(const graph::Node& node, std::span<const Tensor> in,
                              ReplayPurpose purpose) {
  if (!in[0].is_symbolic())
    return replay_body(*node.subgraphs[in[0].item<bool>() ? 0 : 1], in.subspan(1), purpose);
  std::vector<Tensor> outputs(node.outputs.size());
  auto branch = [&](size_t which) {
    return [&, which] {
      std::vector<Tensor> values = replay_body(*node.subgraphs[which], in.subspan(1), purpose);
      for (size_t k = 0; k < outputs.size(); ++k) outputs[k] = values[k];
    };
  };
  if_stmt(in[0], branch(0), branch(1), state({AG_RETVAL_PREFIX "if"}, outputs));
  return outputs;
}

// While tracing, the loop is staged again (and so, under a tape, made
// differentiable: control/while_gradient.h).
std::vector<Tensor> stage_while_again(const graph::Node& node, std::span<const Tensor> in,
                                      ReplayPurpose purpose) {
  size_t num_vars = node.outputs.size();
  std::vector<Tensor> vars(in.begin(), in.begin() + long(num_vars));
  std::vector<Tensor> args(in.begin(), in.end());
  WhileOptions options;
  if (!node.attrs.ints.empty()) options.maximum_iterations = node.attrs.ints[0];
  auto current_args = [&] {
    std::copy(vars.begin(), vars.end(), args.begin());
    return args;
  };
  while_stmt([&] { return replay_body(*node.subgraphs[0], current_args(), purpose)[0]; },
             [&] { vars = replay_body(*node.subgraphs[1], current_args(), purpose); },
             state({"loop_vars"}, vars), options);
  return vars;
}

std::vector<Tensor> replay_while(const graph::Node& node, std::span<const Tensor> in,
                                 ReplayPurpose purpose) {
  if (trace::current()) return stage_while_again(node, in, purpose);
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

// An effect staged again on the values `in`, as its trace recorded it.
std::vector<Tensor> stage_again(const graph::Node& node, std::span<const Tensor> in) {
  graph::Node copy = node;
  copy.name = trace::current()->body->unique_name(node.name);
  copy.inputs.clear();
  for (const Tensor& t : in) copy.inputs.push_back(trace::resolve(t));
  return trace::add_node(std::move(copy));
}

// A side effect: run (eagerly), staged again (ReplayPurpose::Restage) or,
// without results, left out of a recomputation.
std::vector<Tensor> replay_effect(const graph::Node& node, std::span<const Tensor> in,
                                  ReplayPurpose purpose) {
  bool tracing = trace::current() != nullptr;
  if (tracing && purpose == ReplayPurpose::RecomputeValues && node.outputs.empty()) return {};
  if (tracing && purpose != ReplayPurpose::Restage) throw_not_replayable(node, "a side effect");
  std::vector<Tensor> results =
      tracing ? stage_again(node, in) : (*node.effect)({in.begin(), in.end()});
  // A host function's C++ is opaque to the tapes (as in ag::host_function).
  if (!results.empty())
    autodiff::on_staged_construct("the host function '" + node.name + "'", in, results);
  return results;
}

std::vector<Tensor> replay_node(const graph::Node& node, std::span<const Tensor> in,
                                ReplayPurpose purpose) {
  using graph::NodeKind;
  // Side effects are staged again only for ReplayPurpose::Restage.
  bool tracing_without_restaging = trace::current() != nullptr && purpose != ReplayPurpose::Restage;
  switch (node.kind) {
    case NodeKind::Const:
      return {node.value};
    case NodeKind::Op:
      if (tracing_without_restaging && (ops::op_def(node.op).flags & ops::kStateful))
        throw_not_replayable(node, "a stateful op");
      return {ops::apply(node.op, in, node.attrs, node.site)};
    case NodeKind::ReadVariable:
      return {read_variable(node.variable)};
    case NodeKind::AssignVariable:
    case NodeKind::AssignAddVariable:
    case NodeKind::AssignSubVariable:
      // Not even restaged: the construct's reads of the variable are not
      // hoisted where the tapes see them (control/variable_reads.h).
      if (trace::current()) throw_not_replayable(node, "a variable assignment");
      return {node.variable->update(node.kind, in[0])};
    case NodeKind::Effect:
      return replay_effect(node, in, purpose);
    case NodeKind::If:
      return replay_if(node, in, purpose);
    case NodeKind::While:
      return replay_while(node, in, purpose);
    case NodeKind::Placeholder:
    case NodeKind::Fused:  // only optimised graphs hold them; replay reads traced bodies
      break;
  }
  throw InternalError("replay: unexpected node '" + node.name + "'");
}

}  // namespace

std::vector<Tensor> replay_body(const graph::Body& body, std::span<const Tensor> inputs,
                                ReplayPurpose purpose) {
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
    values[n] = replay_node(node, in, purpose);
  }
  std::vector<Tensor> outputs;
  outputs.reserve(body.outputs.size());
  for (const graph::ValueRef& v : body.outputs)
    outputs.push_back(values[size_t(v.node)][size_t(v.output)]);
  return outputs;
}

}  // namespace ag::detail
