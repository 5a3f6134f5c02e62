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
#include "core/type_name.h"
#include "ops/dispatch.h"
#include "trace/trace_state.h"

namespace ag::detail {
namespace {

using trace::TraceState;
using CaptureKey = std::tuple<const TraceState*, int32_t, int32_t>;

}  // namespace

namespace {

// Where the user's code computed `t`: its node's call site for a symbolic
// tensor, the op's for an eager one; unknown for inputs and constants.
CallSite defined_at(const Tensor& t) {
  const auto& impl = *t.impl();
  if (!impl.trace) return impl.site;
  return impl.trace->body->nodes[size_t(impl.node)].site;
}

// " (set at FILE:LINE)" for a value an op of the user's code computed.
std::string set_at(const Tensor& t) {
  CallSite site = defined_at(t);
  if (site.line() == 0) return "";
  return " (set at " + std::string(site.file_name()) + ":" + std::to_string(site.line()) + ")";
}

}  // namespace

void throw_unstageable_state(const char* name, const std::type_info& type) {
  throw TypeError("'" + std::string(name) + "' has type " + type_name(type) +
                  ", which cannot be the state of a staged if or loop: state must be ag::Tensor, "
                  "ag::TensorArray, or tuples, vectors and structs of them (give a struct `auto "
                  "ag_fields(S&)` returning std::tie of its fields); a C++ scalar changed in a "
                  "staged branch or loop would change only while tracing: make it an ag::Tensor");
}

void check_condition(const Tensor& c, const std::string& construct) {
  if (!c.defined()) throw ValueError(construct + ": the condition is an undefined ag::Tensor");
  // First, as eager operator bool: `if (t)` and `t1 && t2` on vectors say
  // the same in both builds.
  if (c.shape().has_unknown_rank() || c.shape().rank() != 0)
    throw_non_scalar_condition(c.shape(), defined_at(c));
  if (c.dtype() != DType::bool_) {
    throw TypeError("a condition must be a scalar bool, but this one has dtype " +
                    std::string(dtype_name(c.dtype())) + "; compare explicitly, e.g. `x != 0`" +
                    condition_defined_at(defined_at(c)));
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

void stage_if(const Tensor& condition, FnRef<void()> then_fn, FnRef<void()> else_fn,
              CollectLeaves collect) {
  // The condition's value when the `if` is reached: `condition` may name a
  // local that a branch assigns (`if (b) { b = x > 5; }`), and the branches
  // are traced before the node is built.
  const Tensor pred = condition;
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
                      " in the main branch" + set_at(t) + ", but dtype " +
                      std::string(dtype_name(e.dtype())) + " in the else branch" + set_at(e) +
                      "; both branches must give it one dtype");
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

namespace {

// The state shared by stage_while's phases: the leaves and their values
// before the loop, the loop variables (indices of leaves) with their types,
// and the traced condition and body.
struct WhileStager {
  CollectLeaves collect;
  std::vector<Leaf> leaves;
  std::vector<Tensor> initial;
  size_t n;
  std::vector<size_t> vars;
  std::vector<ops::ValueType> types;  // per loop variable
  std::vector<bool> fixed_shape;      // per loop variable: set by a shape invariant
  std::shared_ptr<TraceState> cond_state, body_state;

  // Copied from a const reference: FnRef's constructor from a non-const
  // callable would refer to `c` itself, which ends with this constructor.
  explicit WhileStager(const CollectLeaves& c)
      : collect(c), leaves(collect()), initial(values_of(leaves)), n(leaves.size()) {}

  bool choose_variables();
  void bind_placeholders();
  void probe_body(FnRef<void()> body);
  void apply_shape_invariants(const WhileOptions& options);
  void trace_until_shapes_fit(FnRef<Tensor()> test, FnRef<void()> body);
  void trace_condition(FnRef<Tensor()> test);
  bool trace_body(FnRef<void()> body);
  bool check_next(const std::vector<Tensor>& next);
  std::vector<Tensor> add_loop(const WhileOptions& options);
  graph::Node while_node(const std::vector<std::pair<CaptureKey, Tensor>>& captures,
                         const WhileOptions& options) const;
};

// The loop variables: the defined leaves. Returns whether an undefined leaf
// may stay undefined, so that the body must be traced once to find whether
// it defines it.
bool WhileStager::choose_variables() {
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
  return probe;
}

// Sets each loop variable's leaf to a placeholder of its type in the
// current trace.
void WhileStager::bind_placeholders() {
  std::vector<Leaf> now = collect_checked(collect, n, "while");
  for (size_t i = 0; i < vars.size(); ++i)
    *now[vars[i]].tensor = trace::add_placeholder(now[vars[i]].name, types[i]);
}

// Traces the body once, and makes loop variables of the undefined leaves it
// defines, starting from unset_value.
void WhileStager::probe_body(FnRef<void()> body) {
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

// A loop variable with a shape invariant takes it as its type's shape,
// which must hold its initial value's.
void WhileStager::apply_shape_invariants(const WhileOptions& options) {
  fixed_shape.assign(vars.size(), false);
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
}

// Traces the condition and the body until the body's loop variables fit
// their types, the dims that changed relaxed each time.
void WhileStager::trace_until_shapes_fit(FnRef<Tensor()> test, FnRef<void()> body) {
  for (int attempt = 0;; ++attempt) {
    trace_condition(test);
    restore(collect, initial, "while");
    const bool relaxed = trace_body(body);
    restore(collect, initial, "while");
    if (!relaxed) break;
    body_state->finished = true;
    if (attempt > 2 * Shape::kMaxRank)
      throw InternalError("while: loop shape relaxation did not converge");
  }
}

void WhileStager::trace_condition(FnRef<Tensor()> test) {
  cond_state = trace::nested_in(*trace::current());
  trace::ActiveTrace active(cond_state);
  autodiff::PauseTapes paused;
  bind_placeholders();
  Tensor t = test();
  check_condition(t, "while");
  cond_state->body->outputs = {trace::resolve(t)};
}

// Traces one iteration of the body; its outputs are the loop variables'
// next values unless a type was relaxed (returns true: trace again).
bool WhileStager::trace_body(FnRef<void()> body) {
  body_state = trace::nested_in(*trace::current());
  trace::ActiveTrace active(body_state, /*finish_on_exit=*/false);
  autodiff::PauseTapes paused;
  bind_placeholders();
  body();
  std::vector<Tensor> next = values_of(collect_checked(collect, n, "while"));
  const bool relaxed = check_next(next);
  if (!relaxed) {
    for (size_t i = 0; i < vars.size(); ++i)
      body_state->body->outputs.push_back(trace::resolve(next[vars[i]]));
  }
  return relaxed;
}

// Checks each loop variable's value after an iteration against its type,
// relaxing a shape that does not fit it (returns whether one was).
bool WhileStager::check_next(const std::vector<Tensor>& next) {
  bool relaxed = false;
  for (size_t i = 0; i < vars.size(); ++i) {
    const Tensor& v = next[vars[i]];
    const std::string& name = leaves[vars[i]].name;
    if (!v.defined())
      throw ValueError("'" + name + "' is undefined after an iteration of the loop");
    if (v.dtype() != types[i].dtype) {
      throw TypeError("'" + name + "' has dtype " + std::string(dtype_name(types[i].dtype)) +
                      " before the loop, but dtype " + std::string(dtype_name(v.dtype())) +
                      " after one iteration" + set_at(v) +
                      "; a loop variable must keep its dtype (cast it explicitly)");
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
  return relaxed;
}

// The While node's inputs: the loop variables' initial values, then the
// captures of both bodies.
graph::Node WhileStager::while_node(const std::vector<std::pair<CaptureKey, Tensor>>& captures,
                                    const WhileOptions& options) const {
  graph::Node node;
  node.kind = graph::NodeKind::While;
  for (size_t k : vars) node.inputs.push_back(trace::resolve(initial[k]));
  for (const auto& [key, outer] : captures) node.inputs.push_back(trace::resolve(outer));
  node.subgraphs = {cond_state->body, body_state->body};
  node.outputs = types;
  if (options.maximum_iterations) node.attrs.ints = {*options.maximum_iterations};
  return node;
}

// Adds the While node to the current trace, told to the tapes that track
// its inputs; returns the loop variables' final values.
std::vector<Tensor> WhileStager::add_loop(const WhileOptions& options) {
  auto captures = union_of_captures({cond_state.get(), body_state.get()});
  bind_captures(*cond_state, vars.size(), captures);
  bind_captures(*body_state, vars.size(), captures);
  body_state->finished = true;

  graph::Node node = while_node(captures, options);
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
  return results;
}

}  // namespace

void stage_while(FnRef<Tensor()> test, FnRef<void()> body, CollectLeaves collect,
                 const WhileOptions& options) {
  WhileStager loop(collect);
  // The undefined leaves that may stay undefined are loop variables if the
  // body defines them.
  if (loop.choose_variables()) loop.probe_body(body);
  loop.apply_shape_invariants(options);
  loop.trace_until_shapes_fit(test, body);
  std::vector<Tensor> results = loop.add_loop(options);
  std::vector<Leaf> now = collect_checked(collect, loop.n, "while");
  for (size_t i = 0; i < loop.vars.size(); ++i) *now[loop.vars[i]].tensor = results[i];
}

}  // namespace ag::detail
