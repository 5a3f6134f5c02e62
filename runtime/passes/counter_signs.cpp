// Loop counters are not negative: a `where` on a counter's sign folds.
//
// A While's loop variable j that starts at a non-negative integer constant,
// steps by a non-negative constant c (its next value is j + c) and bounds
// the loop (the condition is j < n, n a constant with n - 1 + c within j's
// dtype, so j + c cannot wrap) is never negative in the body. There,
// `where(j < k, a, b)` with a constant k <= 0 is b. That is how an imported
// ONNX loop writes a SequenceInsert at the counter (a position counted from
// the end when negative: where(i < 0, i + length, i)); once folded, the
// array's write is at the counter itself, as in the traced loop, and the
// executor's views of the loop's rows apply (exec/plan_views.cpp).
//
// Needs: a valid body; the While's initial values folded into constants
// (the pipeline runs this in its rounds, after constant folding).
// Guarantees: for each such While of `body`, each node of its body that is a
// `where` whose predicate is `less(j, k)` (j the body's placeholder of the
// counter, past Identity; k a constant whose every element is <= 0), whose
// output type equals its else input's, and that is no output of the body,
// has its uses read the else input instead; the body's dead nodes are then
// removed. The body computes the same values.

#include <cstdint>
#include <limits>
#include <optional>

#include "passes/passes.h"
#include "passes/value_forwarding.h"

namespace ag::passes {
namespace {

// Whether every element of the constant `v` is at most 0.
bool at_most_zero(const graph::Body& body, graph::ValueRef v) {
  const graph::Node& n = graph::producer(body, v);
  if (n.kind != graph::NodeKind::Const || !is_integer(n.value.dtype())) return false;
  for (int64_t e : n.value.to_vector<int64_t>()) {
    if (e > 0) return false;
  }
  return true;
}

// Whether loop variable j of `w` (in `parent`) is never negative in the body.
bool never_negative(const graph::Body& parent, const graph::Node& w, size_t j) {
  const DType dtype = w.outputs[j].dtype;
  if ((dtype != DType::int32 && dtype != DType::int64) || w.outputs[j].shape.rank() != 0)
    return false;
  const std::optional<graph::LoopCounter> counter = graph::loop_counter(parent, w, j);
  if (!counter || counter->start < 0 || counter->step < 0) return false;
  const int64_t max = dtype == DType::int32 ? std::numeric_limits<int32_t>::max()
                                            : std::numeric_limits<int64_t>::max();
  // The largest value j + c reaches: (bound - 1) + c, which must not wrap
  // (with bound <= 0 the body never runs).
  return counter->step <= max && (counter->bound <= 0 || counter->bound - 1 <= max - counter->step);
}

// Forwards `where(j < k, a, b)` to b in `body` for the counter j; returns
// whether any was.
bool fold_sign_tests(graph::Body& body, size_t j) {
  ValueForwarding forwarding(body);
  bool changed = false;
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    graph::Node& n = body.nodes[i];
    forwarding.rewrite_inputs(n);
    if (!n.is_op(ops::OpId::Where) || !forwarding.can_replace(int32_t(i))) continue;
    const graph::Node& test = graph::producer(body, n.inputs[0]);
    if (!test.is_op(ops::OpId::Less) || !graph::is_placeholder(body, test.inputs[0], j) ||
        !at_most_zero(body, test.inputs[1]) ||
        body.type_of(n.inputs[2]).dtype != n.outputs[0].dtype ||
        body.type_of(n.inputs[2]).shape != n.outputs[0].shape)
      continue;
    forwarding.replace(int32_t(i), n.inputs[2]);
    changed = true;
  }
  return changed;
}

}  // namespace

void fold_counter_sign_tests(graph::Body& body) {
  for (graph::Node& w : body.nodes) {
    if (w.kind != graph::NodeKind::While) continue;
    for (size_t j = 0; j < w.outputs.size(); ++j) {
      if (!never_negative(body, w, j)) continue;
      graph::Body& loop_body = *w.subgraphs[1];
      if (fold_sign_tests(loop_body, j)) eliminate_dead_code(loop_body);
    }
  }
}

}  // namespace ag::passes
