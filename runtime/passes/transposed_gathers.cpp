// Gathers of one index from a transposed tensor, read from the tensor itself.
// transpose(x, p) gathered at a scalar index i on axis a is x with axis p[a]
// fixed at i, and its other axes in the order p lists them: when that order is
// x's own (p without its entry a is increasing), it is gather(x, i, axis =
// p[a]), which copies the one slice instead of transposing all of x first
// (`transpose(x, {1, 0, 2})[i]` becomes x[:, i, :]).
//
// Only within one body. A While body's gather of its captured transpose is
// left alone: the plan runs a leading-index gather of a captured value as a
// view of the row (exec/plan_views.cpp), free, while a gather on another
// axis copies the slice on every iteration, as many bytes as the transpose
// when the loop reads every row; dynamic_rnn measured 10-20% slower that way
// (docs/benchmarks.md, "dynamic_rnn input transpose"). Rewriting across the
// loop pays once the executor can read such a slice in place.
//
// Needs: a valid body.
// Guarantees: a gather of a rank-0 index from transpose(x, p) (also through
// Identity) whose other axes keep x's order reads x on axis p[a] instead,
// keeping its name, site, index and output type; the transpose is left for
// dead code elimination when nothing else reads it. An index out of range
// fails with gather's own message, naming the same length (x's dim p[a] is
// the transposed axis's). Other axis orders and index ranks are left alone.
// Nothing else changes.

#include <cstdint>
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

bool is_op(const Node& n, OpId op) {
  return n.kind == NodeKind::Op && n.op == op;
}

const Node& producer(const Body& body, ValueRef v) {
  const Node* n = &body.nodes[size_t(v.node)];
  while (is_op(*n, OpId::Identity)) n = &body.nodes[size_t(n->inputs[0].node)];
  return *n;
}

// transpose's permutation with its defaults spelt out: an empty one reverses
// the axes, a negative entry counts from the end.
std::vector<int64_t> permutation(const Node& transpose, int rank) {
  std::vector<int64_t> perm = transpose.attrs.ints;
  if (perm.empty()) {
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  for (int64_t& d : perm) d = d < 0 ? d + rank : d;
  return perm;
}

// The axis of x that gather `g` reads when its params are transpose(x, p)
// (node `transpose`), if the gather's result is x with that axis removed:
// a rank-0 index, and p without the gathered entry increasing.
std::optional<int64_t> axis_in_source(const Body& body, const Node& g, const Node& transpose) {
  const int rank = transpose.outputs[0].shape.rank();
  if (body.type_of(g.inputs[1]).shape.rank() != 0 || rank < 1) return std::nullopt;
  const int64_t axis = g.attrs.axis < 0 ? g.attrs.axis + rank : g.attrs.axis;
  const std::vector<int64_t> perm = permutation(transpose, rank);
  int64_t previous = -1;
  for (int d = 0; d < rank; ++d) {
    if (d == axis) continue;
    if (perm[size_t(d)] < previous) return std::nullopt;
    previous = perm[size_t(d)];
  }
  return perm[size_t(axis)];
}

}  // namespace

void gather_through_transposes(Body& body) {
  for (Node& g : body.nodes) {
    if (!is_op(g, OpId::Gather)) continue;
    const Node& transpose = producer(body, g.inputs[0]);
    if (!is_op(transpose, OpId::Transpose)) continue;
    if (const std::optional<int64_t> axis = axis_in_source(body, g, transpose)) {
      g.inputs[0] = transpose.inputs[0];
      g.attrs.axis = *axis;
    }
  }
}

}  // namespace ag::passes
