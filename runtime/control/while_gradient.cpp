// The gradient of a staged While, as TensorFlow computes it: the forward loop
// counts its iterations and pushes, per iteration, the values its backward
// needs onto stacks (extra loop variables, grown a row per iteration as a
// dynamic TensorArray); the backward is a While that runs as many times,
// popping the rows in reverse.
//
// How: the loop body is run again (control/replay.h) into a scratch body G
// under a tape, from placeholders for the loop variables, the captures and
// the gradients of the body's outputs, and differentiated there. G's nodes
// that depend on an output gradient make the backward body; the values they
// use from the rest (the forward's intermediates, not loop-invariant ones)
// are the ones stacked, and G's forward part, plus the pushes, becomes the
// loop's new body. Loop-invariant values the backward uses (captures,
// constants, ops on them only) and pure ops on scalars are recomputed in the
// backward body instead. The body's side effects (prints, a dataset's next
// element, random ops) are staged again in G and stay in the forward,
// which replaces the loop's body, so they still run once per iteration; the
// backward reads their values from the stacks, never runs them again.
// A nested If or While in the body is staged again in G, with its own
// gradient, so the backward body holds their gradients. A value whose row
// count may change between iterations (varying_rows.h: a nested loop's
// stacks, a grown array, a value computed from one) is stacked flat: rows
// appended over all iterations, plus each iteration's row count.
#include "control/while_gradient.h"

#include <algorithm>
#include <exception>
#include <map>
#include <string>
#include <utility>

#include "ag/control_flow.h"
#include "ag/gradients.h"
#include "autodiff/tape.h"
#include "control/body_copy.h"
#include "control/replay.h"
#include "control/varying_rows.h"
#include "graph/partition.h"
#include "trace/trace_state.h"

namespace ag::detail {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;
using Key = std::pair<int32_t, int32_t>;

Key key_of(ValueRef v) {
  return {v.node, v.output};
}

// Marks the nodes of `body` that `roots` need, going through the nodes `pass`
// allows; a needed value of another node is put in `stopped` instead.
std::vector<char> needed(const Body& body, const std::vector<ValueRef>& roots,
                         const std::vector<char>& pass, std::vector<ValueRef>* stopped) {
  std::vector<char> marked(body.nodes.size(), 0);
  std::map<Key, bool> seen;
  auto use = [&](ValueRef v) {
    if (pass[size_t(v.node)]) {
      marked[size_t(v.node)] = 1;
    } else if (stopped && seen.emplace(key_of(v), true).second) {
      stopped->push_back(v);
    }
  };
  for (ValueRef v : roots) use(v);
  for (size_t n = body.nodes.size(); n-- > 0;) {
    if (!marked[n]) continue;
    for (ValueRef in : body.nodes[n].inputs) use(in);
  }
  if (stopped) {
    std::sort(stopped->begin(), stopped->end(),
              [](ValueRef a, ValueRef b) { return key_of(a) < key_of(b); });
  }
  return marked;
}

ops::ValueType stack_type(const ops::ValueType& row) {
  if (row.shape.has_unknown_rank()) {
    throw UnimplementedError(
        "its body computes a value of unknown rank that the gradient needs for every iteration");
  }
  Shape shape{kUnknownDim};
  for (int64_t d : row.shape) shape.push_back(d);
  return {row.dtype, shape};
}

// An empty stack of this type: no rows, and 0 for the other dims unknown
// while tracing (the first push gives them; ops.def's tensor_array_write).
Tensor empty_stack(const ops::ValueType& stack) {
  Shape shape{0};
  for (int d = 1; d < stack.shape.rank(); ++d)
    shape.push_back(stack.shape[d] == kUnknownDim ? 0 : stack.shape[d]);
  return zeros(shape, stack.dtype);
}

// Whether `v`, a value the backward needs, is saved flat: its rows appended
// to one stack over all iterations, with its row count per iteration, because
// its row count may change from one iteration to the next (varying_rows.h).
// Its rows' shape must be known, for the empty stack it starts from.
bool saved_flat(const Body& g, ValueRef v, const VaryingRows& varying) {
  const Shape& shape = g.type_of(v).shape;
  if (shape.has_unknown_rank() || shape.rank() < 1 || !varying.rows_may_vary(v)) return false;
  for (int d = 1; d < shape.rank(); ++d)
    if (shape[d] == kUnknownDim) return false;
  return true;
}

// The loop split into what the forward runs and what the backward runs.
struct Split {
  // Placeholders: the loop variables, the iteration count, the stacks, the
  // captures. Outputs: the next loop variables, the count plus one, the
  // stacks with this iteration's row.
  std::shared_ptr<Body> forward;
  // Placeholders: the stacked values of one iteration, the captures, the
  // gradients of the floating loop variables after the iteration. Outputs:
  // their gradients before it, then those of the `grad_captures`.
  std::shared_ptr<Body> backward;
  std::vector<ops::ValueType> rows;  // the type of each stacked value
  std::vector<char> flat;            // per stacked value: saved flat (saved_flat)
  // The forward's extra loop variables after the count: per stacked value,
  // its stack, and for a flat one its row counts.
  std::vector<ops::ValueType> stacks;
  std::vector<size_t> float_vars;     // the floating loop variables
  std::vector<size_t> grad_captures;  // the captures the loop gives a gradient
};

// The state shared by split_body's phases. G is the scratch body the loop's
// body is replayed into (the current trace's); its placeholders are the
// loop variables, the iteration count, the captures, then the gradients of
// the floating loop variables.
struct BodySplitter {
  const Node& loop;
  const Body& body;  // the loop's body
  size_t num_vars;
  size_t num_caps;
  Split split;
  Tensor count;                        // G's iteration count
  std::vector<ValueRef> forward_out;   // G's values of the body's outputs
  std::vector<ValueRef> backward_out;  // G's values of the backward body's outputs
  std::vector<ValueRef> saved;         // G's values the backward reads from the forward
  std::vector<char> backward_nodes;    // G's nodes the backward body copies
  std::vector<char> forward_nodes;     // G's nodes the forward body copies

  std::vector<Tensor> add_placeholders(std::vector<Tensor>& output_grads);
  void trace_gradients(const trace::TraceState& state, std::span<const Tensor> captures);
  void collect_outputs(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grads,
                       const std::vector<Tensor>& output_grads, const std::vector<size_t>& watched);
  void partition(const Body& g);
  void copy_backward(const Body& g);
  void choose_stacks(const Body& g);
  void copy_forward(const Body& g);
  ValueRef add_next_count(BodyCopy& fw, ValueRef count_in) const;
  void push_saved(BodyCopy& fw, ValueRef count_in, const std::vector<ValueRef>& stacks) const;
  void push_row(BodyCopy& fw, ValueRef stack, ValueRef count_in, ValueRef row,
                const ops::ValueType& type) const;
  ValueRef append_rows(BodyCopy& fw, ValueRef stack, ValueRef value,
                       const ops::ValueType& type) const;
  ValueRef row_count(BodyCopy& fw, ValueRef value) const;
};

// G's placeholders, in their order; returns the body's inputs (the loop
// variables' and the captures') and sets the output gradients'.
std::vector<Tensor> BodySplitter::add_placeholders(std::vector<Tensor>& output_grads) {
  auto type_of_input = [&](size_t i) { return body.type_of({body.placeholders[i], 0}); };
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < num_vars; ++i) {
    inputs.push_back(trace::add_placeholder("loop_var", loop.outputs[i]));
    if (is_floating(loop.outputs[i].dtype)) split.float_vars.push_back(i);
  }
  count = trace::add_placeholder("iterations", {DType::int64, Shape{}});
  for (size_t j = 0; j < num_caps; ++j)
    inputs.push_back(trace::add_placeholder("capture", type_of_input(num_vars + j)));
  for (size_t i : split.float_vars)
    output_grads.push_back(trace::add_placeholder("grad", loop.outputs[i]));
  return inputs;
}

// Replays the body into G under a tape and differentiates it there.
void BodySplitter::trace_gradients(const trace::TraceState& state,
                                   std::span<const Tensor> captures) {
  std::vector<Tensor> output_grads;
  std::vector<Tensor> inputs = add_placeholders(output_grads);
  // The floating loop variables, and the captures the outer tapes track.
  GradientTape tape;
  std::vector<GradientSource> sources;
  std::vector<size_t> watched;
  for (size_t k = 0; k < inputs.size(); ++k) {
    if (!is_floating(inputs[k].dtype())) continue;
    if (k >= num_vars && !autodiff::tapes_track_any(captures.subspan(k - num_vars, 1))) continue;
    tape.watch(inputs[k]);
    sources.push_back({inputs[k], 0, inputs[k].dtype(), inputs[k].shape()});
    watched.push_back(k);
  }
  // The replay becomes the loop's body: its side effects are staged again.
  std::vector<Tensor> outputs = replay_body(body, inputs, ReplayPurpose::Restage);
  // Each floating output seeded by its gradient (no product with the output,
  // whose gradient would need the output, or its shape, in the backward).
  std::vector<Tensor> targets;
  for (size_t i : split.float_vars) targets.push_back(outputs[i]);
  std::vector<Tensor> grads = autodiff::gradient_of_targets(tape, targets, output_grads, sources);
  if (!state.captures.empty())
    throw InternalError("while gradient: the replayed body captured an outer value");
  collect_outputs(outputs, grads, output_grads, watched);
}

// The forward's outputs: the body's. The backward's: the floating loop
// variables' gradients (0 where undefined), then the defined ones of the
// watched captures, which make grad_captures.
void BodySplitter::collect_outputs(const std::vector<Tensor>& outputs,
                                   const std::vector<Tensor>& grads,
                                   const std::vector<Tensor>& output_grads,
                                   const std::vector<size_t>& watched) {
  for (const Tensor& t : outputs) forward_out.push_back(trace::resolve(t));
  size_t source = 0;
  for (size_t f = 0; f < split.float_vars.size(); ++f, ++source) {
    const Tensor& g = grads[source];
    backward_out.push_back(trace::resolve(g.defined() ? g : zeros_like(output_grads[f])));
  }
  for (; source < watched.size(); ++source) {
    size_t j = watched[source] - num_vars;
    const Tensor& g = grads[source];
    if (!g.defined()) continue;
    backward_out.push_back(trace::resolve(g));
    split.grad_captures.push_back(j);
  }
}

// G's loop-invariant nodes: the captures, constants and pure ops on them
// only, outside the backward part.
std::vector<char> loop_invariant(const Body& g, const std::vector<char>& backward,
                                 std::span<const int32_t> capture_placeholders) {
  std::vector<char> invariant(g.nodes.size(), 0);
  for (int32_t p : capture_placeholders) invariant[size_t(p)] = 1;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (node.kind == NodeKind::Placeholder) continue;
    bool all_invariant = true;
    for (ValueRef in : node.inputs) all_invariant &= invariant[size_t(in.node)] != 0;
    invariant[n] =
        !backward[n] && all_invariant &&
        (node.kind == NodeKind::Const || (node.kind == NodeKind::Op && !node.is_stateful()));
  }
  return invariant;
}

// The nodes the backward body may hold: the backward part, loop-invariant
// nodes, and pure ops on scalars (and loop-invariant values), recomputed
// from their stacked scalars: a range over an array's rows stacks the count,
// not the range, whose length may change between iterations.
std::vector<char> backward_may_hold(const Body& g, const std::vector<char>& backward,
                                    const std::vector<char>& invariant) {
  std::vector<char> in_backward(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    bool from_scalars = node.kind == NodeKind::Op && !node.is_stateful();
    for (ValueRef in : node.inputs)
      from_scalars &= invariant[size_t(in.node)] || g.type_of(in).shape.rank() == 0;
    in_backward[n] = backward[n] || invariant[n] || from_scalars;
  }
  return in_backward;
}

// Which of G's nodes depend on an output gradient (the backward,
// graph/partition.h), which of the others the backward recomputes, and so
// which values it reads from the forward (`saved`).
void BodySplitter::partition(const Body& g) {
  const std::vector<int32_t>& ph = g.placeholders;
  size_t first_grad = num_vars + 1 + num_caps;
  std::vector<char> backward = graph::backward_part(g, std::span(ph).subspan(first_grad));
  std::vector<char> invariant =
      loop_invariant(g, backward, std::span(ph).subspan(num_vars + 1, num_caps));
  std::vector<char> in_backward = backward_may_hold(g, backward, invariant);
  backward_nodes = needed(g, backward_out, in_backward, &saved);
  std::vector<ValueRef> forward_roots = forward_out;
  forward_roots.insert(forward_roots.end(), saved.begin(), saved.end());
  // Side effects run every iteration, whether or not a value of theirs is used.
  for (size_t n = 0; n < g.nodes.size(); ++n)
    if (!backward[n] && g.nodes[n].is_stateful()) forward_roots.push_back({int32_t(n), 0});
  std::vector<char> not_backward(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) not_backward[n] = !backward[n];
  forward_nodes = needed(g, forward_roots, not_backward, nullptr);
}

// The backward body: placeholders for the saved values, the captures and
// the output gradients, then the backward's nodes.
void BodySplitter::copy_backward(const Body& g) {
  const std::vector<int32_t>& ph = g.placeholders;
  BodyCopy bw(g);
  for (ValueRef v : saved) bw.give(v, "saved");
  for (size_t k = num_vars + 1; k < ph.size(); ++k)
    bw.give({ph[k], 0}, g.nodes[size_t(ph[k])].name);
  bw.copy(backward_nodes);
  for (ValueRef v : backward_out) bw.body()->outputs.push_back(bw.map(v));
  split.backward = bw.body();
}

// Per saved value, its row type and its stacks: one grown a row per
// iteration, or, saved flat, one of its rows and one of its row counts.
void BodySplitter::choose_stacks(const Body& g) {
  VaryingRows varying(g, std::span(g.placeholders).subspan(num_vars + 1, num_caps));
  for (ValueRef v : saved) {
    split.rows.push_back(g.type_of(v));
    split.flat.push_back(saved_flat(g, v, varying));
    if (split.flat.back()) {
      split.stacks.push_back(split.rows.back());
      split.stacks.push_back({DType::int64, Shape{kUnknownDim}});
    } else {
      split.stacks.push_back(stack_type(split.rows.back()));
    }
  }
}

// The forward body: placeholders for the loop variables, the count, the
// stacks and the captures; the forward's nodes; outputs the next loop
// variables, the count plus one and the stacks with this iteration's rows.
void BodySplitter::copy_forward(const Body& g) {
  const std::vector<int32_t>& ph = g.placeholders;
  BodyCopy fw(g);
  choose_stacks(g);
  for (size_t i = 0; i <= num_vars; ++i) fw.give({ph[i], 0}, g.nodes[size_t(ph[i])].name);
  std::vector<ValueRef> stacks;
  for (const ops::ValueType& type : split.stacks)
    stacks.push_back(fw.add_placeholder("stack", type));
  for (size_t j = 0; j < num_caps; ++j)
    fw.give({ph[num_vars + 1 + j], 0}, g.nodes[size_t(ph[num_vars + 1 + j])].name);
  fw.copy(forward_nodes);
  Body& f = *fw.body();
  for (ValueRef v : forward_out) f.outputs.push_back(fw.map(v));
  ValueRef count_in = fw.map(trace::resolve(count));
  f.outputs.push_back(add_next_count(fw, count_in));
  push_saved(fw, count_in, stacks);
  split.forward = fw.body();
}

// count + 1.
ValueRef BodySplitter::add_next_count(BodyCopy& fw, ValueRef count_in) const {
  Node one;
  one.kind = NodeKind::Const;
  one.name = "one";
  one.value = Tensor(int64_t{1});
  one.outputs = {{DType::int64, Shape{}}};
  one.function = loop.function;
  Node next;
  next.op = ops::OpId::Add;
  next.name = "iterations_next";
  next.inputs = {count_in, fw.add(std::move(one))};
  next.outputs = {{DType::int64, Shape{}}};
  next.function = loop.function;
  return fw.add(std::move(next));
}

// Each saved value onto its stacks, as outputs of the forward body: a row
// pushed, or, saved flat, its rows appended and its row count pushed.
void BodySplitter::push_saved(BodyCopy& fw, ValueRef count_in,
                              const std::vector<ValueRef>& stacks) const {
  Body& f = *fw.body();
  for (size_t s = 0, k = 0; s < saved.size(); ++s) {
    ValueRef value = fw.map(saved[s]);
    if (!split.flat[s]) {
      push_row(fw, stacks[k], count_in, value, split.stacks[k]);
      ++k;
      continue;
    }
    f.outputs.push_back(append_rows(fw, stacks[k], value, split.stacks[k]));
    push_row(fw, stacks[k + 1], count_in, row_count(fw, value), split.stacks[k + 1]);
    k += 2;
  }
}

// `row` written at row `count_in` of `stack`, which grows a row, as an
// output of the forward body.
void BodySplitter::push_row(BodyCopy& fw, ValueRef stack, ValueRef count_in, ValueRef row,
                            const ops::ValueType& type) const {
  Node push;
  push.op = ops::OpId::TensorArrayWrite;
  push.name = "stack_push";
  push.attrs.keepdims = true;  // grows a row
  push.inputs = {stack, count_in, row};
  push.outputs = {type};
  push.function = loop.function;
  fw.body()->outputs.push_back(fw.add(std::move(push)));
}

// `value`'s rows after `stack`'s.
ValueRef BodySplitter::append_rows(BodyCopy& fw, ValueRef stack, ValueRef value,
                                   const ops::ValueType& type) const {
  Node append;
  append.op = ops::OpId::Concat;
  append.name = "stack_append";
  append.attrs.axis = 0;
  append.inputs = {stack, value};
  append.outputs = {type};
  append.function = loop.function;
  return fw.add(std::move(append));
}

// `value`'s dim 0.
ValueRef BodySplitter::row_count(BodyCopy& fw, ValueRef value) const {
  Node rows;
  rows.op = ops::OpId::Dim;
  rows.name = "stack_rows";
  rows.attrs.axis = 0;
  rows.inputs = {value};
  rows.outputs = {{DType::int64, Shape{}}};
  rows.function = loop.function;
  return fw.add(std::move(rows));
}

// The loop's body split in its phases, in a trace nested in the current one
// whose body is G.
Split split_body(const Node& loop, size_t num_vars, std::span<const Tensor> captures) {
  const Body& body = *loop.subgraphs[1];
  size_t num_caps = body.placeholders.size() - num_vars;
  auto state = trace::nested_in(*trace::current());
  state->allow_variable_creation = false;  // a gradient creates none
  trace::ActiveTrace active(state);

  BodySplitter splitter{loop, body, num_vars, num_caps, {}, {}, {}, {}, {}, {}, {}};
  splitter.trace_gradients(*state, captures);
  const Body& g = *state->body;
  splitter.partition(g);
  splitter.copy_backward(g);
  splitter.copy_forward(g);
  return std::move(splitter.split);
}

// The loop's condition body, taking the count and the stacks too (unused).
std::shared_ptr<Body> condition_with_stacks(const Body& cond, size_t num_vars,
                                            const std::vector<ops::ValueType>& stacks) {
  auto out = std::make_shared<Body>(cond);
  std::vector<int32_t> extra;
  auto add = [&](const std::string& name, const ops::ValueType& type) {
    Node node;
    node.kind = NodeKind::Placeholder;
    node.name = out->unique_name(name);
    node.outputs = {type};
    extra.push_back(out->add(std::move(node)));
  };
  add("iterations", {DType::int64, Shape{}});
  for (const ops::ValueType& stack : stacks) add("stack", stack);
  out->placeholders.insert(out->placeholders.begin() + std::ptrdiff_t(num_vars), extra.begin(),
                           extra.end());
  return out;
}

// The backward loop: from the last iteration to the first, the gradients of
// the loop variables before an iteration from those after it, and the sum
// over the iterations of the captures' gradients.
autodiff::StagedGradient loop_gradient(std::shared_ptr<const Split> split, std::string what,
                                       std::vector<Tensor> results, Tensor count,
                                       std::vector<Tensor> stacks, std::vector<Tensor> captures) {
  return [=](std::span<const Tensor> output_grads) {
    const Split& s = *split;
    // A gradient into the stacks comes from a tape around the one whose
    // backward read them (a gradient of a gradient): it would have to flow
    // back through the forward body to the values stacked, which is not built.
    for (size_t k = results.size(); k < output_grads.size(); ++k) {
      if (output_grads[k].defined()) {
        throw UnimplementedError(
            "GradientTape.gradient: a higher-order gradient (a tape around the tape that "
            "differentiated it) through " +
            what +
            " is not implemented: take it eagerly, or put the inner tape in an ag::function "
            "and the outer tape around its call");
      }
    }
    std::vector<Tensor> var_grads, capture_grads;
    for (size_t i : s.float_vars) {
      const Tensor& g = output_grads[i];
      var_grads.push_back(g.defined() ? g : zeros_like(results[i]));
    }
    for (size_t j : s.grad_captures) capture_grads.push_back(zeros_like(captures[j]));
    // Per flat stack, the end of the rows of the iteration to come.
    std::vector<Tensor> flat_ends;
    for (size_t v = 0, k = 0; v < s.rows.size(); k += s.flat[v++] ? 2 : 1) {
      if (s.flat[v]) flat_ends.push_back(first_dim(stacks[k]));
    }
    Tensor iteration = count;
    api::while_stmt(
        [&] { return greater(iteration, int64_t{0}); },
        [&] {
          iteration = iteration - int64_t{1};
          std::vector<Tensor> in;
          for (size_t v = 0, k = 0, e = 0; v < s.rows.size(); ++v) {
            if (!s.flat[v]) {
              in.push_back(gather(stacks[k++], iteration));
              continue;
            }
            Tensor begin = flat_ends[e] - gather(stacks[k + 1], iteration);
            in.push_back(gather(stacks[k], range(begin, flat_ends[e], Tensor(int64_t{1}))));
            flat_ends[e++] = begin;
            k += 2;
          }
          in.insert(in.end(), captures.begin(), captures.end());
          in.insert(in.end(), var_grads.begin(), var_grads.end());
          std::vector<Tensor> out = replay_body(*s.backward, in);
          size_t k = 0;
          for (Tensor& g : var_grads) g = out[k++];
          for (Tensor& g : capture_grads) g = g + out[k++];
        },
        api::state({"iteration", "loop_var_grads", "capture_grads", "flat_stack_ends"}, iteration,
                   var_grads, capture_grads, flat_ends));
    std::vector<Tensor> grads(results.size() + captures.size());
    for (size_t f = 0; f < s.float_vars.size(); ++f) grads[s.float_vars[f]] = var_grads[f];
    for (size_t c = 0; c < s.grad_captures.size(); ++c)
      grads[results.size() + s.grad_captures[c]] = capture_grads[c];
    return grads;
  };
}

// "the staged while 'While_1' in function 'f'", for errors.
std::string described(const Node& loop) {
  return "the staged while '" + loop.name + "' in function '" + loop.function_name() + "'";
}

}  // namespace

DifferentiableWhile add_differentiable_while(graph::Node node, size_t num_vars,
                                             std::span<const Tensor> captures) {
  // A body that cannot be differentiated is an error only for a gradient
  // through the loop, not for the forward.
  std::shared_ptr<Split> split;
  std::string why;
  std::exception_ptr error;
  try {
    split = std::make_shared<Split>(split_body(node, num_vars, captures));
  } catch (const UnimplementedError& e) {
    why = e.what();
  } catch (const Error&) {
    error = std::current_exception();
  }
  if (!split || split->float_vars.empty()) {
    std::vector<Tensor> results = trace::add_node(std::move(node));
    std::string what = described(trace::current()->body->nodes.back());
    autodiff::StagedGradient gradient;
    if (!why.empty()) {
      gradient = [what, why](std::span<const Tensor>) -> std::vector<Tensor> {
        throw UnimplementedError("GradientTape.gradient: " + what + " has no gradient: " + why);
      };
    } else if (error) {
      gradient = [error](std::span<const Tensor>) -> std::vector<Tensor> {
        std::rethrow_exception(error);
      };
    }
    return {std::move(results), std::move(gradient)};
  }

  node.subgraphs = {condition_with_stacks(*node.subgraphs[0], num_vars, split->stacks),
                    split->forward};
  std::vector<graph::ValueRef> inputs(node.inputs.begin(), node.inputs.begin() + long(num_vars));
  inputs.push_back(trace::resolve(Tensor(int64_t{0})));
  for (const ops::ValueType& stack : split->stacks)
    inputs.push_back(trace::resolve(empty_stack(stack)));
  inputs.insert(inputs.end(), node.inputs.begin() + long(num_vars), node.inputs.end());
  node.inputs = std::move(inputs);
  node.outputs.push_back({DType::int64, Shape{}});
  for (const ops::ValueType& stack : split->stacks) node.outputs.push_back(stack);
  std::vector<Tensor> all = trace::add_node(std::move(node));

  std::vector<Tensor> results(all.begin(), all.begin() + long(num_vars));
  std::vector<Tensor> stacks(all.begin() + long(num_vars) + 1, all.end());
  return {all, loop_gradient(split, described(trace::current()->body->nodes.back()), results,
                             all[num_vars], std::move(stacks), {captures.begin(), captures.end()})};
}

}  // namespace ag::detail
