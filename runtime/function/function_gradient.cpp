// function_gradient (function/function_gradient.h): the joint trace and its
// split into a forward that exports intermediates and a backward.
//
// Joint trace: the function's traced body replayed (control/replay.h), its
// effects staged again, into a new graph under a tape of its own that
// watches every floating input and every variable read; placeholders seed
// the floating outputs' gradients. A node belongs to the backward iff it
// depends on one of those placeholders (graph/partition.h); every other node
// is the forward's. A forward value a backward node (or a gradient) uses
// becomes a forward output and a backward placeholder, except a constant
// (copied) and an input of the function (the backward reads the call's own
// input). The passes then optimise both graphs.
#include "function/function_gradient.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>

#include "ag/error.h"
#include "autodiff/tape.h"
#include "control/replay.h"
#include "function/concrete.h"
#include "function/logging.h"
#include "graph/partition.h"
#include "graph/variable_state.h"
#include "passes/passes.h"
#include "trace/trace_state.h"

namespace ag::detail {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;

// The variables `body` reads, each once, in order. A variable node nested in
// a staged construct, or an assignment, is an UnimplementedError: the
// construct's gradient would not see it as a source, and a replayed
// assignment would change the program.
void collect_variables(const Body& body, bool nested,
                       std::vector<std::shared_ptr<VariableState>>& out) {
  for (const Node& n : body.nodes) {
    for (const auto& sub : n.subgraphs) collect_variables(*sub, true, out);
    if (!n.variable) continue;
    if (nested || n.kind != NodeKind::ReadVariable) {
      throw UnimplementedError(
          "the gradient of a traced function that " +
          std::string(nested ? "uses a variable inside a staged construct" : "assigns a variable") +
          " ('" + n.name + "') is not traced as one op");
    }
    if (std::find(out.begin(), out.end(), n.variable) == out.end()) out.push_back(n.variable);
  }
}

// A stateful op (a random op, a collective) anywhere in `body` is an
// UnimplementedError: the gradient's forward would hold a second copy of it,
// whose random state would start anew beside the function's own plan.
// (Effects, such as prints and a dataset's pulls, are staged again in it.)
void reject_stateful_ops(const Body& body) {
  for (const Node& n : body.nodes) {
    for (const auto& sub : n.subgraphs) reject_stateful_ops(*sub);
    if (n.kind == NodeKind::Op && n.is_stateful()) {
      throw UnimplementedError("the gradient of a traced function that holds a stateful op ('" +
                               n.name + "') is not traced as one op");
    }
  }
}

struct JointTrace {
  std::shared_ptr<Body> body;
  size_t num_inputs = 0;
  std::vector<ValueRef> outputs;
  std::vector<int32_t> seed_nodes;  // the output-gradient placeholders
  std::vector<size_t> seeded_outputs;
  std::vector<ValueRef> gradients;  // the defined ones
  std::vector<int> gradient_of;     // per source
};

JointTrace trace_joint(const ConcreteCore& core,
                       const std::vector<std::shared_ptr<VariableState>>& variables) {
  const Body& traced = *core.traced;
  auto state = std::make_shared<trace::TraceState>();
  state->function_name = core.name;
  state->code_function = std::make_shared<const std::string>(core.name);
  state->body = std::make_shared<Body>();
  JointTrace joint;
  joint.body = state->body;
  joint.num_inputs = traced.placeholders.size();

  autodiff::TapesSetAside aside;  // the user's tapes do not see this trace
  trace::ActiveTrace active(state);
  std::vector<Tensor> inputs;
  for (int32_t p : traced.placeholders) {
    const Node& n = traced.nodes[size_t(p)];
    inputs.push_back(trace::add_placeholder(n.name, n.outputs[0]));
  }
  GradientTape tape(/*persistent=*/false, /*watch_accessed_variables=*/false);
  std::vector<GradientSource> sources;
  std::vector<int> source_of;  // per input and variable: its index in sources, or -1
  for (const Tensor& x : inputs) {
    source_of.push_back(-1);
    if (!is_floating(x.dtype())) continue;
    tape.watch(x);
    source_of.back() = int(sources.size());
    sources.push_back({x, 0, x.dtype(), x.shape()});
  }
  for (const auto& v : variables) {
    autodiff::watch_variable(tape, v->id);
    source_of.push_back(int(sources.size()));
    sources.push_back({Tensor(), v->id, v->dtype, v->shape});
  }

  // The joint forward replaces the function's plan under a tape: effects
  // are staged again in it, to run once per call.
  std::vector<Tensor> outputs = replay_body(traced, inputs, ReplayPurpose::Restage);
  std::vector<Tensor> targets, seeds;
  for (size_t k = 0; k < outputs.size(); ++k) {
    joint.outputs.push_back(trace::resolve(outputs[k]));
    if (!is_floating(outputs[k].dtype())) continue;
    Tensor seed =
        trace::add_placeholder("output_gradient", {outputs[k].dtype(), outputs[k].shape()});
    joint.seed_nodes.push_back(trace::resolve(seed).node);
    joint.seeded_outputs.push_back(k);
    targets.push_back(outputs[k]);
    seeds.push_back(seed);
  }
  std::vector<Tensor> grads = autodiff::gradient_of_targets(tape, targets, seeds, sources);
  for (int s : source_of) {
    joint.gradient_of.push_back(-1);
    if (s < 0 || !grads[size_t(s)].defined()) continue;
    joint.gradient_of.back() = int(joint.gradients.size());
    joint.gradients.push_back(trace::resolve(grads[size_t(s)]));
  }
  return joint;
}

// The split of the joint trace into gradient's forward and backward bodies.
void split(const JointTrace& joint, FunctionGradient& gradient) {
  const Body& body = *joint.body;
  const size_t n = body.nodes.size();
  std::vector<char> backward = graph::backward_part(body, joint.seed_nodes);
  std::vector<int> input_index(n, -1);
  for (size_t i = 0; i < joint.num_inputs; ++i) input_index[size_t(body.placeholders[i])] = int(i);

  // The forward values the backward reads, by kind, in order of first use.
  std::vector<ValueRef> exports, inputs_read;
  auto note = [&](ValueRef v) {
    if (backward[size_t(v.node)] || body.nodes[size_t(v.node)].kind == NodeKind::Const) return;
    std::vector<ValueRef>& list = input_index[size_t(v.node)] >= 0 ? inputs_read : exports;
    if (std::find(list.begin(), list.end(), v) == list.end()) list.push_back(v);
  };
  for (size_t i = 0; i < n; ++i) {
    if (!backward[i]) continue;
    for (const ValueRef& v : body.nodes[i].inputs) note(v);
  }
  for (const ValueRef& g : joint.gradients) note(g);

  // Backward: seeds, exports, inputs read; then its nodes, with the
  // constants they use copied in.
  auto bwd = std::make_shared<Body>();
  std::map<std::pair<int32_t, int32_t>, ValueRef> to_bwd;
  auto add_placeholder = [&](ValueRef v, const std::string& name) {
    Node p;
    p.kind = NodeKind::Placeholder;
    p.name = bwd->unique_name(name);
    p.outputs = {body.type_of(v)};
    int32_t index = bwd->add(std::move(p));
    bwd->placeholders.push_back(index);
    to_bwd[{v.node, v.output}] = {index, 0};
  };
  for (int32_t s : joint.seed_nodes) add_placeholder({s, 0}, body.nodes[size_t(s)].name);
  for (ValueRef v : exports) add_placeholder(v, body.nodes[size_t(v.node)].name);
  for (ValueRef v : inputs_read) {
    add_placeholder(v, body.nodes[size_t(v.node)].name);
    gradient.read_inputs.push_back(size_t(input_index[size_t(v.node)]));
  }
  auto resolve = [&](ValueRef v) {
    auto it = to_bwd.find({v.node, v.output});
    if (it != to_bwd.end()) return it->second;
    const Node& c = body.nodes[size_t(v.node)];
    if (c.kind != NodeKind::Const)
      throw InternalError("function gradient: unsplit value " + c.name);
    Node copy = c;
    copy.name = bwd->unique_name(c.name);
    ValueRef r{bwd->add(std::move(copy)), 0};
    to_bwd[{v.node, v.output}] = r;
    return r;
  };
  for (size_t i = 0; i < n; ++i) {
    const Node& node = body.nodes[i];
    if (!backward[i] || node.kind == NodeKind::Placeholder) continue;
    Node copy = node;
    for (ValueRef& v : copy.inputs) v = resolve(v);
    copy.name = bwd->unique_name(node.name);
    int32_t index = bwd->add(std::move(copy));
    for (size_t k = 0; k < node.outputs.size(); ++k)
      to_bwd[{int32_t(i), int32_t(k)}] = {index, int32_t(k)};
  }
  for (const ValueRef& g : joint.gradients) {
    // Outputs are Identity nodes, as the tracer makes them.
    Node identity;
    identity.kind = NodeKind::Op;
    identity.op = ops::OpId::Identity;
    identity.name = bwd->unique_name("Identity");
    identity.inputs = {resolve(g)};
    identity.outputs = {body.type_of(g)};
    bwd->outputs.push_back({bwd->add(std::move(identity)), 0});
  }

  // Forward: the joint body without the backward, returning the exports too.
  auto fwd = std::make_shared<Body>(body);
  fwd->placeholders.resize(joint.num_inputs);
  fwd->outputs = joint.outputs;
  fwd->outputs.insert(fwd->outputs.end(), exports.begin(), exports.end());
  std::vector<bool> keep(n);
  for (size_t i = 0; i < n; ++i) keep[i] = !backward[i];
  graph::compact(*fwd, keep);

  gradient.num_outputs = joint.outputs.size();
  gradient.seeded_outputs = joint.seeded_outputs;
  gradient.gradient_of = joint.gradient_of;
  gradient.forward_traced = fwd;
  gradient.backward_traced = bwd;
}

std::shared_ptr<const graph::Body> optimized(const Body& body) {
  auto copy = std::make_shared<Body>(body);
  passes::optimize(*copy);
  return copy;
}

std::shared_ptr<const FunctionGradient> build(const ConcreteCore& core) {
  auto gradient = std::make_shared<FunctionGradient>();
  collect_variables(*core.traced, false, gradient->variables);
  reject_stateful_ops(*core.traced);
  split(trace_joint(core, gradient->variables), *gradient);
  gradient->forward_optimized = optimized(*gradient->forward_traced);
  gradient->forward = std::make_unique<exec::Plan>(gradient->forward_optimized);
  gradient->backward_optimized = optimized(*gradient->backward_traced);
  gradient->backward = std::make_unique<exec::Plan>(gradient->backward_optimized);
  return gradient;
}

}  // namespace

std::shared_ptr<const FunctionGradient> function_gradient(const ConcreteCore& core) {
  std::lock_guard lock(core.gradient_mu);
  if (core.gradient_error) std::rethrow_exception(core.gradient_error);
  if (core.gradient) return core.gradient;
  log_message(LogLevel::Debug, "ag::function '" + core.name + "': tracing the backward of " +
                                   concrete_function_type(core));
  try {
    core.gradient = build(core);
  } catch (const UnimplementedError&) {
    core.gradient_error = std::current_exception();
    throw;
  } catch (const InvalidArgumentError&) {
    core.gradient_error = std::current_exception();
    throw;
  }
  return core.gradient;
}

std::pair<Graph, Graph> concrete_gradient_graphs(const ConcreteCore& core) {
  std::shared_ptr<const FunctionGradient> g = function_gradient(core);
  return {Graph(g->forward_optimized, core.name + "_forward"),
          Graph(g->backward_optimized, core.name + "_backward")};
}

}  // namespace ag::detail
