// A staged `for` over ag::range without the range: ag::for_stmt stages
// `for (i : range(start, limit, delta))` as a While over an index k = 0, 1,
// ... that runs while k < dim(range, 0) and whose body reads
// gather(range, k). This pass has the body compute start + cast(k) * delta
// instead, exactly as range's kernel computes element k, so no iteration
// gathers; the range is then read only for its length, which the executor
// takes from range's shape rule without computing its elements
// (exec/plan_compile.cpp, "shape-only steps").
//
// Needs: a valid body whose While bodies are as tracing staged them (the
// pipeline runs this first, before the nested bodies are optimised).
// Guarantees: a While that counts its iterations with a loop variable k
// (it starts at the int64 constant 0, the body advances it to k + 1, and the
// condition is k < m, or that and another test) has its gathers from a range
// rewritten, where the range is a captured input p that is
// range(start, limit, delta) with m = dim(input p, 0), or a vector constant
// (captured, or a constant of the body: tracing computes a range of known
// values eagerly) with m its length that range(start, ., delta) gives bit
// for bit; and the body reads the range only as gather(range, k, axis 0),
// none of them a body output, and the condition does not read it. Then for
// a range node, input p becomes `start` and `delta` is appended as a new
// last input (a new last placeholder of the condition and the body), or,
// when both are constants of the parent, they become constants of the body
// and input p is removed (neither body reads it then); for a constant,
// start and delta become constants of the body. Each gather is
// replaced by add(start, mul(cast(k), delta)) (no cast for an int64 range),
// the add taking the gather's name and site. Results are bit for bit those
// of the gather: k < the range's length on every iteration. Nested bodies
// shared with another owner are copied first. Nothing else changes.

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/scalar_ops.h"
#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;
using ops::OpId;

bool is_op(const Body& body, ValueRef v, OpId op) {
  return body.nodes[size_t(v.node)].is_op(op);
}

using graph::through_identity;

// A constant with a value (an undefined initial loop variable is a Const
// without one).
bool is_constant(const Node& n) {
  return n.kind == NodeKind::Const && n.value.defined();
}

bool is_int64_scalar_constant(const Node& n) {
  return is_constant(n) && n.value.dtype() == DType::int64 && n.value.rank() == 0;
}

bool is_int64_constant(const Body& body, ValueRef v, int64_t value) {
  const Node& n = body.nodes[size_t(through_identity(body, v).node)];
  return is_int64_scalar_constant(n) && n.value.item<int64_t>() == value;
}

// The input number of placeholder value `v`, or -1.
int32_t placeholder_number(const Body& body, ValueRef v) {
  v = through_identity(body, v);
  for (size_t k = 0; k < body.placeholders.size(); ++k) {
    if (body.placeholders[k] == v.node) return int32_t(k);
  }
  return -1;
}

bool reads(const Node& n, int32_t node) {
  for (ValueRef in : n.inputs) {
    if (in.node == node) return true;
  }
  return false;
}

// The loop variable k of `cond`'s "k < m" (also under a logical_and), -1 if
// the condition is not of that form. `bound` is m's input number, or -1 when
// m is a constant of `cond`, whose value is then `length`.
int32_t compared_index(const Body& cond, int32_t& bound, int64_t& length) {
  ValueRef v = through_identity(cond, cond.outputs[0]);
  if (is_op(cond, v, OpId::LogicalAnd))
    v = through_identity(cond, cond.nodes[size_t(v.node)].inputs[0]);
  if (!is_op(cond, v, OpId::Less)) return -1;
  const Node& less = cond.nodes[size_t(v.node)];
  bound = placeholder_number(cond, less.inputs[1]);
  const Node& m = cond.nodes[size_t(through_identity(cond, less.inputs[1]).node)];
  length = is_int64_scalar_constant(m) ? m.value.item<int64_t>() : -1;
  return placeholder_number(cond, less.inputs[0]);
}

// Whether `loop` advances loop variable k to k + 1.
bool counts_up(const Body& loop, int32_t k) {
  ValueRef next = through_identity(loop, loop.outputs[size_t(k)]);
  if (!is_op(loop, next, OpId::Add)) return false;
  const Node& add = loop.nodes[size_t(next.node)];
  return through_identity(loop, add.inputs[0]).node == loop.placeholders[size_t(k)] &&
         is_int64_constant(loop, add.inputs[1], 1);
}

// Whether `loop` reads node `range` (a placeholder or a constant) only
// through gathers at loop variable k (axis 0, none of them an output).
bool gathers_only_at_index(const Body& loop, int32_t range, int32_t k) {
  const int32_t index = loop.placeholders[size_t(k)];
  bool any = false;
  for (const Node& n : loop.nodes) {
    if (!reads(n, range)) continue;
    if (n.kind != NodeKind::Op || n.op != OpId::Gather || n.attrs.axis != 0 ||
        n.inputs[0].node != range || n.inputs[1].node != index) {
      return false;
    }
    any = true;
  }
  for (ValueRef out : loop.outputs) {
    if (out.node == range || is_op(loop, out, OpId::Gather)) return false;
  }
  return any;
}

// Where the rewritten loop gets start and delta: from the range node's
// inputs, which become captured inputs of the While, or as constants.
struct Progression {
  ops::ValueType start_type, delta_type;
  Tensor start_value, delta_value;  // defined for a constant progression
};

// Rebuilds `body`, and when `index` >= 0 replaces each gather of node
// `range` by start + cast(input `index`) * delta. For a range node's
// placeholder, it is retyped to start and a new last placeholder holds
// delta; for a constant progression, start and delta are new constants,
// placed after the cast (where the importer of an exported loop puts its
// constant, so that both optimise to the same body).
void rewrite_body(Body& body, int32_t range, int32_t index, const Progression& progression) {
  const DType dtype = progression.start_type.dtype;
  const bool constant = progression.start_value.defined();
  // The new nodes' names, taken while every old name is in place.
  std::vector<Node> nodes;
  if (!constant) {
    Node delta;
    delta.kind = NodeKind::Placeholder;
    delta.name = body.unique_name("range_delta");
    delta.outputs = {progression.delta_type};
    nodes.push_back(std::move(delta));
  }
  struct Names {
    std::string cast, start, delta, mul;
  };
  std::vector<Names> names;
  for (const Node& n : body.nodes) {
    if (index < 0 || n.kind != NodeKind::Op || n.op != OpId::Gather || n.inputs[0].node != range) {
      continue;
    }
    names.push_back({body.unique_name("range_index"),
                     constant ? body.unique_name("range_start") : std::string(),
                     constant ? body.unique_name("range_delta") : std::string(),
                     body.unique_name("range_offset")});
  }
  size_t gathers = 0;
  std::vector<int32_t> moved(body.nodes.size(), -1);  // old node -> new node
  auto remap = [&](ValueRef v) { return ValueRef{moved[size_t(v.node)], v.output}; };
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    Node& n = body.nodes[i];
    for (ValueRef& in : n.inputs) in = remap(in);
    if (int32_t(i) == range && !constant) n.outputs = {progression.start_type};
    const bool gather = index >= 0 && n.kind == NodeKind::Op && n.op == OpId::Gather &&
                        n.inputs[0].node == moved[size_t(range)];
    if (!gather) {
      moved[i] = int32_t(nodes.size());
      nodes.push_back(std::move(n));
      continue;
    }
    auto push = [&](Node m, const std::string& name) {
      m.name = name;
      m.outputs = {{dtype, Shape{}}};
      m.site = n.site;
      m.function = n.function;
      nodes.push_back(std::move(m));
      return ValueRef{int32_t(nodes.size() - 1), 0};
    };
    auto op_node = [&](OpId op, std::vector<ValueRef> inputs, const std::string& name) {
      Node m;
      m.op = op;
      m.inputs = std::move(inputs);
      return push(std::move(m), name);
    };
    auto constant_node = [&](const Tensor& value, const std::string& name) {
      Node c;
      c.kind = NodeKind::Const;
      c.value = value;
      return push(std::move(c), name);
    };
    const Names& name = names[gathers];
    ValueRef k = n.inputs[1];
    if (nodes[size_t(k.node)].outputs[size_t(k.output)].dtype != dtype) {
      k = op_node(OpId::Cast, {k}, name.cast);
      nodes.back().attrs.dtype = dtype;
    }
    const ValueRef start =
        constant ? constant_node(progression.start_value, name.start) : n.inputs[0];
    const ValueRef delta =
        constant ? constant_node(progression.delta_value, name.delta) : ValueRef{0, 0};
    ValueRef offset = op_node(OpId::Mul, {k, delta}, name.mul);
    op_node(OpId::Add, {start, offset}, n.name);
    ++gathers;
    moved[i] = int32_t(nodes.size() - 1);
  }
  for (int32_t& ph : body.placeholders) ph = moved[size_t(ph)];
  if (!constant) body.placeholders.push_back(0);
  for (ValueRef& out : body.outputs) out = remap(out);
  body.nodes = std::move(nodes);
}

// The start and delta of a range node, or of a constant vector whose
// elements are exactly what range would compute from its first element and
// the difference of its first two.
std::optional<Progression> progression_of(const Body& body, const Node& range) {
  if (range.kind == NodeKind::Op && range.op == OpId::Range) {
    return Progression{body.type_of(range.inputs[0]), body.type_of(range.inputs[2]), {}, {}};
  }
  if (!is_constant(range)) return std::nullopt;
  const Tensor& v = range.value;
  const int64_t n = v.num_elements();
  if (v.rank() != 1 || n < 1 || v.dtype() == DType::bool_) return std::nullopt;
  std::optional<Progression> found;
  visit_dtype(v.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* x = v.data<T>();
      const T start = x[0];
      const T delta = n > 1 ? ops::scalar::SubOp{}(x[1], x[0]) : T(1);
      for (int64_t i = 0; i < n; ++i) {
        const T element = ops::scalar::AddOp{}(start, ops::scalar::MulOp{}(T(i), delta));
        if (std::memcmp(&element, &x[i], sizeof(T)) != 0) return;
      }
      const ops::ValueType scalar{v.dtype(), Shape{}};
      found = Progression{scalar, scalar, Tensor(start), Tensor(delta)};
    }
  });
  return found;
}

// The loop variable k that counts While `w`'s iterations: it starts at the
// int64 constant 0, the body advances it by 1, and the condition is k < m;
// -1 otherwise. `bound` is m's value in `body` when m is a captured input
// (else node -1), and `length` m's value when it is a known constant (else
// -1).
int32_t iteration_counter(const Body& body, const Node& w, ValueRef& bound, int64_t& length) {
  const Body& cond = *w.subgraphs[0];
  int32_t bound_input = -1;
  const int32_t k = compared_index(cond, bound_input, length);
  const size_t num_vars = w.outputs.size();
  if (k < 0 || size_t(k) >= num_vars || !is_int64_constant(body, w.inputs[size_t(k)], 0) ||
      !counts_up(*w.subgraphs[1], k)) {
    return -1;
  }
  if (bound_input >= 0) {
    if (size_t(bound_input) < num_vars) return -1;  // a loop variable
    bound = through_identity(body, w.inputs[size_t(bound_input)]);
    const Node& m = body.nodes[size_t(bound.node)];
    if (is_int64_scalar_constant(m)) {
      length = m.value.item<int64_t>();
    }
  }
  return k;
}

void copy_shared_subgraphs(Node& w) {
  for (std::shared_ptr<Body>& sub : w.subgraphs) {
    if (sub.use_count() > 1) sub = std::make_shared<Body>(*sub);
  }
}

// Removes captured input p of While `w`, which neither of its bodies reads.
void drop_input(Node& w, int32_t p) {
  for (const std::shared_ptr<Body>& sub : w.subgraphs) {
    std::vector<bool> keep(sub->nodes.size(), true);
    keep[size_t(sub->placeholders[size_t(p)])] = false;
    sub->placeholders.erase(sub->placeholders.begin() + p);
    graph::compact(*sub, keep);
  }
  w.inputs.erase(w.inputs.begin() + p);
}

// Rewrites the gathers of While `w` from its captured input p, if that is a
// range node or a constant progression as long as the loop runs. Returns
// whether input p is gone.
bool rewrite_captured(Body& body, Node& w, int32_t p, int32_t k, ValueRef bound, int64_t length) {
  const Node& range = body.nodes[size_t(w.inputs[size_t(p)].node)];
  const bool is_range = is_op(body, w.inputs[size_t(p)], OpId::Range);
  if (!is_range && !is_constant(range)) return false;
  const Shape& shape = range.outputs[0].shape;
  const bool dim_of_range = is_range && bound.node >= 0 && is_op(body, bound, OpId::Dim) &&
                            body.nodes[size_t(bound.node)].attrs.axis == 0 &&
                            body.nodes[size_t(bound.node)].inputs[0] == w.inputs[size_t(p)];
  const bool known_length = shape.rank() == 1 && shape.is_fully_defined() && length == shape[0];
  if (!(dim_of_range || known_length)) return false;
  const Body& cond = *w.subgraphs[0];
  for (const Node& n : cond.nodes) {
    if (reads(n, cond.placeholders[size_t(p)])) return false;
  }
  if (!gathers_only_at_index(*w.subgraphs[1], w.subgraphs[1]->placeholders[size_t(p)], k)) {
    return false;
  }
  const std::optional<Progression> progression = progression_of(body, range);
  if (!progression) return false;
  copy_shared_subgraphs(w);
  Body& loop = *w.subgraphs[1];
  if (!is_range) {
    rewrite_body(loop, loop.placeholders[size_t(p)], k, *progression);
    return false;
  }
  const Node& start = body.nodes[size_t(through_identity(body, range.inputs[0]).node)];
  const Node& delta = body.nodes[size_t(through_identity(body, range.inputs[2]).node)];
  if (is_constant(start) && is_constant(delta)) {
    // range(1, n + 1): start and delta become constants of the body, so
    // that its simplification sees them (1 + k * 1 is k + 1); input p, read
    // by neither body now, goes.
    rewrite_body(loop, loop.placeholders[size_t(p)], k,
                 {progression->start_type, progression->delta_type, start.value, delta.value});
    drop_input(w, p);
    return true;
  }
  rewrite_body(*w.subgraphs[0], w.subgraphs[0]->placeholders[size_t(p)], -1, *progression);
  rewrite_body(loop, loop.placeholders[size_t(p)], k, *progression);
  w.inputs[size_t(p)] = range.inputs[0];
  w.inputs.push_back(range.inputs[2]);
  return false;
}

// Rewrites the gathers of While `w`'s body from a constant of the body (an
// eager range that tracing recorded there) that is a progression as long as
// the loop runs.
void rewrite_body_constants(Node& w, int32_t k, int64_t length) {
  if (length < 0) return;
  for (bool changed = true; changed;) {
    changed = false;
    const Body& loop = *w.subgraphs[1];
    for (size_t c = 0; c < loop.nodes.size() && !changed; ++c) {
      const Node& n = loop.nodes[c];
      if (!is_constant(n) || n.value.rank() != 1 || n.value.num_elements() != length ||
          !gathers_only_at_index(loop, int32_t(c), k)) {
        continue;
      }
      const std::optional<Progression> progression = progression_of(loop, n);
      if (!progression) continue;
      copy_shared_subgraphs(w);
      rewrite_body(*w.subgraphs[1], int32_t(c), k, *progression);
      changed = true;
    }
  }
}

}  // namespace

void index_ranges_directly(Body& body) {
  for (Node& w : body.nodes) {
    if (w.kind != NodeKind::While) continue;
    ValueRef bound{-1, 0};
    int64_t length = -1;
    const int32_t k = iteration_counter(body, w, bound, length);
    if (k < 0) continue;
    // The inputs as captured (not a delta this appends).
    size_t end = w.inputs.size();
    for (size_t p = w.outputs.size(); p < end;) {
      if (rewrite_captured(body, w, int32_t(p), k, bound, length)) {
        --end;
      } else {
        ++p;
      }
    }
    rewrite_body_constants(w, k, length);
  }
}

}  // namespace ag::passes
