// Gathers of one index from a transposed tensor, read from the tensor itself.
// transpose(x, p) gathered at a scalar index i on axis a is x with axis p[a]
// fixed at i, and its other axes in the order p lists them: when that order is
// x's own (p without its entry a is increasing), it is gather(x, i, axis =
// p[a]), which reads the one slice instead of transposing all of x. The
// TensorFlow guide's dynamic_rnn transposes its input to [time, batch, features] and
// reads row i in its loop: that becomes x[:, i, :], and the transpose, a full
// pass over the input, goes. The plan runs such a slice of a captured value
// as a strided view when only binary elementwise kernels read it
// (exec/plan_views.cpp); otherwise each iteration copies its slice, in all
// as many bytes as the transpose copied when the loop reads every row.
//
// Needs: a valid body whose nested bodies are optimised (the pipeline's
// order: a While body's gathers are then read as they will run).
// Guarantees:
//  - in the body, a gather of a rank-0 index from transpose(x, p) whose other
//    axes keep x's order reads x on axis p[a] instead (the transpose is left
//    for dead code elimination when nothing else reads it);
//  - a While whose captured input c is transpose(x, p) (also through
//    Identity), which its condition does not read and its body reads only
//    through such gathers of static slices of more than 16 elements (none of
//    them from a nested body, the input not a body output), captures x
//    instead: input c of the condition and the body gets x's type, and each
//    of those gathers reads axis p[a] of it.
// Every rewritten gather keeps its name, site, index and output type; an
// index out of range fails with gather's own message (the length it names is
// x's dim p[a], the transposed axis's length). Other axis orders, index ranks
// and readers are left alone. Nothing else changes.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "passes/passes.h"

namespace ag::passes {
namespace {

using graph::Body;
using graph::Node;
using graph::NodeKind;
using graph::ValueRef;
using ops::OpId;

using graph::producer;

// The axis of x that gather `g` reads when its params are transpose(x, p)
// (node `transpose`), if the gather's result is x with that axis removed:
// a rank-0 index, and p without the gathered entry increasing.
std::optional<int64_t> axis_in_source(const Body& body, const Node& g, const Node& transpose) {
  const int rank = transpose.outputs[0].shape.rank();
  if (body.type_of(g.inputs[1]).shape.rank() != 0 || rank < 1) return std::nullopt;
  const int64_t axis = g.attrs.axis < 0 ? g.attrs.axis + rank : g.attrs.axis;
  const std::vector<int64_t> perm = graph::transpose_permutation(transpose);
  if (!graph::moves_only_one_axis(perm, axis)) return std::nullopt;
  return perm[size_t(axis)];
}

// Gathers from a transpose of the same body.
void rewrite_local(Body& body) {
  for (Node& g : body.nodes) {
    if (!g.is_op(OpId::Gather)) continue;
    const Node& transpose = producer(body, g.inputs[0]);
    if (!transpose.is_op(OpId::Transpose)) continue;
    if (const std::optional<int64_t> axis = axis_in_source(body, g, transpose)) {
      g.inputs[0] = transpose.inputs[0];
      g.attrs.axis = *axis;
    }
  }
}

// Whether node `node` of `body` is read at all, or is a body output.
bool is_read(const Body& body, int32_t node) {
  for (const Node& n : body.nodes) {
    for (ValueRef in : n.inputs) {
      if (in.node == node) return true;
    }
  }
  for (ValueRef out : body.outputs) {
    if (out.node == node) return true;
  }
  return false;
}

// A loop's slices of at most this many elements stay rows of the transpose:
// the plan runs elementwise ops this small as flat steps (exec/
// plan_internal.h, kMaxFlatElements), which need a slice copied contiguous
// on every iteration, where a row of the transpose is a view; for slices
// that small, one transpose per call costs less (dynamic_rnn 2x3x4: 173-179
// ns with the transpose, 200-207 ns with a gather of x per iteration).
constexpr int64_t kMaxLoopSliceElementsKept = 16;

// The axes of x each reader of the loop body's input `c` gathers, in node
// order, when every reader is such a gather of a static slice of more than
// kMaxLoopSliceElementsKept elements and `c` is no output; else empty.
std::vector<int64_t> loop_gather_axes(const Body& loop, size_t c, const Node& transpose) {
  const int32_t input = loop.placeholders[c];
  std::vector<int64_t> axes;
  for (const Node& n : loop.nodes) {
    bool reads = false;
    for (ValueRef in : n.inputs) reads = reads || in.node == input;
    if (!reads) continue;
    const bool gather_of_input =
        n.is_op(OpId::Gather) && n.inputs[0].node == input && n.inputs[1].node != input;
    const std::optional<int64_t> axis =
        gather_of_input ? axis_in_source(loop, n, transpose) : std::nullopt;
    const Shape& slice = n.outputs[0].shape;
    if (!axis || !slice.is_fully_defined() || slice.num_elements() <= kMaxLoopSliceElementsKept)
      return {};
    axes.push_back(*axis);
  }
  for (ValueRef out : loop.outputs) {
    if (out.node == input) return {};
  }
  return axes;
}

// While `w`'s captured input c, transpose(x, p) in `body`, replaced by x.
void rewrite_capture(const Body& body, Node& w, size_t c) {
  const Node& transpose = producer(body, w.inputs[c]);
  if (!transpose.is_op(OpId::Transpose)) return;
  const Body& cond = *w.subgraphs[0];
  if (is_read(cond, cond.placeholders[c])) return;
  const std::vector<int64_t> axes = loop_gather_axes(*w.subgraphs[1], c, transpose);
  if (axes.empty()) return;
  for (std::shared_ptr<Body>& sub : w.subgraphs) {
    if (sub.use_count() > 1) sub = std::make_shared<Body>(*sub);
    sub->nodes[size_t(sub->placeholders[c])].outputs = {body.type_of(transpose.inputs[0])};
  }
  Body& loop = *w.subgraphs[1];
  const int32_t input = loop.placeholders[c];
  size_t next = 0;
  for (Node& n : loop.nodes) {
    if (!n.inputs.empty() && n.inputs[0].node == input) n.attrs.axis = axes[next++];
  }
  w.inputs[c] = transpose.inputs[0];
}

}  // namespace

void gather_through_transposes(Body& body) {
  rewrite_local(body);
  for (Node& w : body.nodes) {
    if (w.kind != NodeKind::While) continue;
    for (size_t c = w.outputs.size(); c < w.inputs.size(); ++c) rewrite_capture(body, w, c);
  }
}

}  // namespace ag::passes
