// Staging of if and while: tracing branches and loop bodies into nested
// bodies, with AutoGraph's checks and messages, and adding the If / While
// node that owns them.
//
// A nested body's inputs are, in order: for While, one placeholder per loop
// variable; then one placeholder per captured outer value. Both bodies of a
// node get the same capture list (the union), so the node's inputs bind them
// positionally.
#include <algorithm>
#include <map>
#include <span>
#include <string>
#include <tuple>

#include "ag/control_flow.h"
#include "autodiff/tape.h"
#include "control/if_gradient.h"
#include "control/variable_reads.h"
#include "control/while_gradient.h"
#include "core/tensor_impl.h"
#include "ops/dispatch.h"
#include "trace/trace_state.h"

namespace ag::detail {
namespace {

using trace::TraceState;
using CaptureKey = std::tuple<const TraceState*, int32_t, int32_t>;

}  // namespace

void check_condition(const Tensor& c, const std::string& construct) {
  if (!c.defined()) throw ValueError(construct + ": the condition is an undefined ag::Tensor");
  // First, as eager operator bool: `t1 && t2` on vectors says the same in both builds.
  if (c.shape().is_fully_defined() && c.shape().num_elements() != 1)
    throw_ambiguous_truth(c.shape(), construct + ": ");
  if (c.dtype() != DType::bool_) {
    throw TypeError(construct + ": the condition must be a bool tensor, got dtype " +
                    std::string(dtype_name(c.dtype())) + "; compare explicitly, e.g. `x != 0`");
  }
  if (c.shape().rank() != 0) {
    throw InvalidArgumentError(
        construct + ": the condition must be a scalar, got a tensor of shape " +
        c.shape().to_string() + "; reduce it first, e.g. with ag::reduce_max");
  }
}

namespace {

// A value of `type` for a path that never defines it (a return value on a
// path that returns nothing): never observed, it only gives the node a type.
Tensor placeholder_value(const ops::ValueType& type) {
  Shape shape;
  if (type.shape.has_unknown_rank()) return ops::zeros_op(Shape{}, type.dtype);
  for (int64_t d : type.shape) shape.push_back(d == kUnknownDim ? 0 : d);
  return ops::zeros_op(shape, type.dtype);
}

// The value a path that never sets `leaf` leaves it with: an unwritten
// TensorArray keeps its initial rows (elements shaped like `type`'s); any
// other leaf gets placeholder_value.
Tensor unset_value(const Leaf& leaf, const ops::ValueType& type) {
  if (leaf.array_rows < 0 || type.shape.has_unknown_rank() || type.shape.rank() < 1)
    return placeholder_value(type);
  Shape shape{leaf.array_rows};
  for (int i = 1; i < type.shape.rank(); ++i)
    shape.push_back(type.shape[i] == kUnknownDim ? 0 : type.shape[i]);
  return ops::zeros_op(shape, type.dtype);
}

std::vector<Tensor> values_of(const std::vector<Leaf>& leaves) {
  std::vector<Tensor> out;
  for (const Leaf& l : leaves) out.push_back(*l.tensor);
  return out;
}

// Re-collects the leaves and checks the structure did not change.
std::vector<Leaf> collect_checked(CollectLeaves collect, size_t expected,
                                  const std::string& construct) {
  std::vector<Leaf> leaves = collect();
  if (leaves.size() != expected) {
    throw ValueError(construct + ": the state changed structure (" + std::to_string(expected) +
                     " tensors before, " + std::to_string(leaves.size()) +
                     " after); containers in control-flow state must keep their size");
  }
  return leaves;
}

void restore(CollectLeaves collect, const std::vector<Tensor>& values,
             const std::string& construct) {
  std::vector<Leaf> leaves = collect_checked(collect, values.size(), construct);
  for (size_t k = 0; k < values.size(); ++k) *leaves[k].tensor = values[k];
}

// The union of the captures of `states`, in first-seen order.
std::vector<std::pair<CaptureKey, Tensor>> union_of_captures(
    std::initializer_list<const TraceState*> states) {
  std::vector<std::pair<CaptureKey, Tensor>> out;
  std::map<CaptureKey, size_t> seen;
  for (const TraceState* s : states) {
    for (const auto& c : s->captures) {
      const auto& impl = *c.outer.impl();
      CaptureKey key{impl.trace.get(), impl.node, impl.output};
      if (seen.emplace(key, out.size()).second) out.push_back({key, c.outer});
    }
  }
  return out;
}

// Makes the body's inputs: its first `fixed` placeholders, then one per
// capture in `captures` order (adding unused ones where missing).
void bind_captures(TraceState& state, size_t fixed,
                   const std::vector<std::pair<CaptureKey, Tensor>>& captures) {
  graph::Body& body = *state.body;
  std::vector<int32_t> inputs(body.placeholders.begin(), body.placeholders.begin() + long(fixed));
  for (const auto& [key, outer] : captures) {
    auto it = state.capture_index.find(key);
    if (it != state.capture_index.end()) {
      inputs.push_back(it->second.node);
      continue;
    }
    graph::Node node;
    node.kind = graph::NodeKind::Placeholder;
    node.name = body.unique_name("capture");
    node.outputs = {{outer.dtype(), outer.shape()}};
    inputs.push_back(body.add(std::move(node)));
  }
  body.placeholders = std::move(inputs);
}

// Tells the gradient tapes about a staged node: what it is and where (its
// function and first user line), and its gradient (null: not implemented).
void tell_tapes(const char* construct, const graph::Node& node, std::span<const Tensor> inputs,
                std::span<const Tensor> results, autodiff::StagedGradient gradient) {
  std::string what = std::string("the staged ") + construct + " '" + node.name + "' in function '" +
                     node.function_name() + "'";
  for (const auto& body : node.subgraphs) {
    auto it = std::find_if(body->nodes.begin(), body->nodes.end(),
                           [](const graph::Node& n) { return n.site.line() != 0; });
    if (it == body->nodes.end()) continue;
    what += " (its body starts at " + std::string(it->site.file_name()) + ":" +
            std::to_string(it->site.line()) + ")";
    break;
  }
  autodiff::on_staged_construct(what, inputs, results, std::move(gradient));
}

struct Branch {
  std::shared_ptr<TraceState> state;
  std::vector<Tensor> values;
};

Branch trace_branch(FnRef<void()> fn, CollectLeaves collect, const std::vector<Tensor>& initial) {
  Branch b{trace::nested_in(*trace::current()), {}};
  {
    trace::ActiveTrace active(b.state, /*finish_on_exit=*/false);
    autodiff::PauseTapes paused;
    fn();
  }
  b.values = values_of(collect_checked(collect, initial.size(), "if"));
  restore(collect, initial, "if");
  return b;
}

}  // namespace

bool eager_truth(const Tensor& cond, const char* construct) {
  if (cond.is_symbolic()) static_cast<void>(cond.item<bool>());  // throws the leak or tracing error
  check_condition(cond, construct);
  return cond.item<bool>();
}

Tensor first_dim(const Tensor& t) {
  if (t.rank() == 0) throw InvalidArgumentError("for: cannot iterate over a scalar tensor");
  if (t.shape()[0] != kUnknownDim) return Tensor(int64_t{t.shape()[0]});
  ops::Attrs attrs;
  attrs.axis = 0;
  return ops::apply(ops::OpId::Dim, {t}, attrs);
}

void stage_if(const Tensor& pred, FnRef<void()> then_fn, FnRef<void()> else_fn,
              CollectLeaves collect) {
  check_condition(pred, "if");
  std::vector<Leaf> leaves = collect();
  std::vector<Tensor> initial = values_of(leaves);
  Branch then_branch = trace_branch(then_fn, collect, initial);
  Branch else_branch = trace_branch(else_fn, collect, initial);

  // Which leaves the node outputs, and their types.
  struct Output {
    size_t leaf;
    ops::ValueType type;
  };
  std::vector<Output> outputs;
  for (size_t k = 0; k < leaves.size(); ++k) {
    Tensor& t = then_branch.values[k];
    Tensor& e = else_branch.values[k];
    if (!t.defined() && !e.defined()) continue;
    const std::string& name = leaves[k].name;
    // A TensorArray written in one branch only keeps its rows in the other.
    if (leaves[k].array_rows >= 0 && t.defined() != e.defined()) {
      const Tensor& written = t.defined() ? t : e;
      (t.defined() ? e : t) = unset_value(leaves[k], {written.dtype(), written.shape()});
    }
    if (t.defined() != e.defined() && !leaves[k].undefined_ok) {
      throw ValueError("'" + name + "' must also be initialized in the " +
                       (t.defined() ? "else" : "main") +
                       " branch: it is undefined before the if and set in the " +
                       (t.defined() ? "main" : "else") +
                       " branch only, so it would have no value when the other branch runs");
    }
    if (t.defined() && e.defined() && t.dtype() != e.dtype()) {
      throw TypeError("'" + name + "' has dtype " + std::string(dtype_name(t.dtype())) +
                      " in the main branch, but dtype " + std::string(dtype_name(e.dtype())) +
                      " in the else branch; both branches must give it one dtype");
    }
    const Tensor& any = t.defined() ? t : e;
    Shape shape = t.defined() && e.defined() ? t.shape().most_specific_common_supertype(e.shape())
                                             : any.shape();
    outputs.push_back({k, {any.dtype(), shape}});
  }

  for (Branch* b : {&then_branch, &else_branch}) {
    trace::ActiveTrace active(b->state, /*finish_on_exit=*/false);
    for (const Output& o : outputs) {
      Tensor v = b->values[o.leaf];
      if (!v.defined()) v = placeholder_value(o.type);
      b->state->body->outputs.push_back(trace::resolve(v));
    }
  }
  auto captures = union_of_captures({then_branch.state.get(), else_branch.state.get()});
  bind_captures(*then_branch.state, 0, captures);
  bind_captures(*else_branch.state, 0, captures);
  then_branch.state->finished = else_branch.state->finished = true;

  graph::Node node;
  node.kind = graph::NodeKind::If;
  node.inputs.push_back(trace::resolve(pred));
  for (const auto& [key, outer] : captures) node.inputs.push_back(trace::resolve(outer));
  node.subgraphs = {then_branch.state->body, else_branch.state->body};
  for (const Output& o : outputs) node.outputs.push_back(o.type);
  std::vector<Tensor> outers;
  for (const auto& [key, outer] : captures) outers.push_back(outer);
  if (autodiff::tape_active()) hoist_variable_reads(node, outers);
  std::vector<Tensor> results = trace::add_node(std::move(node));
  if (autodiff::tape_active()) {
    std::vector<Tensor> inputs = {pred};
    inputs.insert(inputs.end(), outers.begin(), outers.end());
    const graph::Node& if_node = trace::current()->body->nodes.back();
    tell_tapes("if", if_node, inputs, results,
               if_gradient(pred, std::move(outers), if_node.subgraphs[0], if_node.subgraphs[1]));
  }
  std::vector<Leaf> now = collect_checked(collect, leaves.size(), "if");
  for (size_t i = 0; i < outputs.size(); ++i) *now[outputs[i].leaf].tensor = results[i];
}

void stage_while(FnRef<Tensor()> test, FnRef<void()> body, CollectLeaves collect,
                 const WhileOptions& options) {
  std::vector<Leaf> leaves = collect();
  std::vector<Tensor> initial = values_of(leaves);
  size_t n = leaves.size();

  // The loop variables: the defined leaves, plus the undefined ones that
  // may stay undefined but that the body defines (found by tracing it once).
  std::vector<size_t> vars;
  std::vector<ops::ValueType> types;
  bool probe = false;
  for (size_t k = 0; k < n; ++k) {
    if (initial[k].defined()) {
      vars.push_back(k);
      types.push_back({initial[k].dtype(), initial[k].shape()});
    } else if (leaves[k].undefined_ok) {
      probe = true;
    } else {
      throw ValueError("'" + leaves[k].name +
                       "' must be defined before the loop: it is a loop variable (changed by the "
                       "loop and used afterwards), so it needs a value before the first iteration");
    }
  }
  auto bind_placeholders = [&] {
    std::vector<Leaf> now = collect_checked(collect, n, "while");
    for (size_t i = 0; i < vars.size(); ++i)
      *now[vars[i]].tensor = trace::add_placeholder(now[vars[i]].name, types[i]);
  };
  if (probe) {
    auto state = trace::nested_in(*trace::current());
    std::vector<Tensor> defined;
    {
      trace::ActiveTrace active(state);
      autodiff::PauseTapes paused;
      bind_placeholders();
      body();
      defined = values_of(collect_checked(collect, n, "while"));
    }
    for (size_t k = 0; k < n; ++k) {
      if (initial[k].defined() || !defined[k].defined()) continue;
      ops::ValueType type{defined[k].dtype(), defined[k].shape()};
      initial[k] = unset_value(leaves[k], type);
      vars.push_back(k);
      types.push_back({type.dtype, initial[k].shape()});
    }
    restore(collect, initial, "while");
  }

  std::vector<bool> fixed_shape(vars.size(), false);
  for (size_t i = 0; i < vars.size(); ++i) {
    size_t k = vars[i];
    if (k < options.shape_invariants.size() && options.shape_invariants[k]) {
      const Shape& invariant = *options.shape_invariants[k];
      if (!types[i].shape.is_subtype_of(invariant)) {
        throw ValueError("'" + leaves[k].name + "' has shape " + types[i].shape.to_string() +
                         " before the loop, which does not fit its shape invariant " +
                         invariant.to_string());
      }
      types[i].shape = invariant;
      fixed_shape[i] = true;
    }
  }

  std::shared_ptr<TraceState> cond_state, body_state;
  for (int attempt = 0;; ++attempt) {
    cond_state = trace::nested_in(*trace::current());
    {
      trace::ActiveTrace active(cond_state);
      autodiff::PauseTapes paused;
      bind_placeholders();
      Tensor t = test();
      check_condition(t, "while");
      cond_state->body->outputs = {trace::resolve(t)};
    }
    restore(collect, initial, "while");

    body_state = trace::nested_in(*trace::current());
    bool relaxed = false;
    {
      trace::ActiveTrace active(body_state, /*finish_on_exit=*/false);
      autodiff::PauseTapes paused;
      bind_placeholders();
      body();
      std::vector<Tensor> next = values_of(collect_checked(collect, n, "while"));
      for (size_t i = 0; i < vars.size(); ++i) {
        const Tensor& v = next[vars[i]];
        const std::string& name = leaves[vars[i]].name;
        if (!v.defined())
          throw ValueError("'" + name + "' is undefined after an iteration of the loop");
        if (v.dtype() != types[i].dtype) {
          throw TypeError(
              "'" + name + "' has dtype " + std::string(dtype_name(types[i].dtype)) +
              " before the loop, but dtype " + std::string(dtype_name(v.dtype())) +
              " after one iteration; a loop variable must keep its dtype (cast it explicitly)");
        }
        if (!v.shape().is_subtype_of(types[i].shape)) {
          if (fixed_shape[i]) {
            throw ValueError("'" + name + "' has shape " + v.shape().to_string() +
                             " after one iteration, which does not fit its shape invariant " +
                             types[i].shape.to_string());
          }
          // Relax the dims that changed to None and trace the loop again.
          types[i].shape = types[i].shape.most_specific_common_supertype(v.shape());
          relaxed = true;
        }
      }
      if (!relaxed) {
        for (size_t i = 0; i < vars.size(); ++i)
          body_state->body->outputs.push_back(trace::resolve(next[vars[i]]));
      }
    }
    restore(collect, initial, "while");
    if (!relaxed) break;
    body_state->finished = true;
    if (attempt > 2 * Shape::kMaxRank)
      throw InternalError("while: loop shape relaxation did not converge");
  }

  auto captures = union_of_captures({cond_state.get(), body_state.get()});
  bind_captures(*cond_state, vars.size(), captures);
  bind_captures(*body_state, vars.size(), captures);
  body_state->finished = true;

  graph::Node node;
  node.kind = graph::NodeKind::While;
  for (size_t k : vars) node.inputs.push_back(trace::resolve(initial[k]));
  for (const auto& [key, outer] : captures) node.inputs.push_back(trace::resolve(outer));
  node.subgraphs = {cond_state->body, body_state->body};
  node.outputs = types;
  if (options.maximum_iterations) node.attrs.ints = {*options.maximum_iterations};
  std::vector<Tensor> inputs, outers;
  for (size_t k : vars) inputs.push_back(initial[k]);
  for (const auto& [key, outer] : captures) outers.push_back(outer);
  if (autodiff::tape_active()) hoist_variable_reads(node, outers);
  inputs.insert(inputs.end(), outers.begin(), outers.end());
  std::vector<Tensor> results;
  if (autodiff::tapes_track_any(inputs)) {
    // Only a loop a tape differentiates counts its iterations and stacks
    // values for its backward.
    DifferentiableWhile loop = add_differentiable_while(std::move(node), vars.size(), outers);
    results = std::move(loop.results);
    tell_tapes("while", trace::current()->body->nodes.back(), inputs, results,
               std::move(loop.gradient));
  } else {
    results = trace::add_node(std::move(node));
  }
  std::vector<Leaf> now = collect_checked(collect, n, "while");
  for (size_t i = 0; i < vars.size(); ++i) *now[vars[i]].tensor = results[i];
}

}  // namespace ag::detail
